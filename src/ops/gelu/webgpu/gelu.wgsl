// GELU, x·Φ(x), or with BACKWARD its gradient grad·(Φ(x) + x·φ(x)), elementwise on VALUEs
// (vec4s where the length allows, so a launch has a quarter of the invocations), with erf from
// functions.wgsl.
const LEN: u32 = {{len}}u;  // in VALUEs
const BACKWARD: bool = {{backward}};

@group(0) @binding(0) var<storage, read_write> x: array<Value>;
{{bindings}}

{{functions}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 256u;
    if (index >= LEN) {
        return;
    }
    let v = x[index];
    let cdf = 0.5 * (1.0 + erf(v * 0.70710678));
    {{store}}
}
