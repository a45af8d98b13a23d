// GELU, x·Φ(x), or with BACKWARD its gradient grad·(Φ(x) + x·φ(x)), elementwise on VALUEs
// (vec4s where the length allows, so a launch has a quarter of the invocations). erf is the
// rational approximation the CPU path uses (ops/gelu/cpu/values.rs, after Eigen and XLA:
// x·P(x²)/Q(x²) on x clamped to ±4), so both paths compute the same function.
const LEN: u32 = {{len}}u;  // in VALUEs
const BACKWARD: bool = {{backward}};
alias Value = {{value}};

@group(0) @binding(0) var<storage, read_write> x: array<Value>;
{{bindings}}

fn erf(value: Value) -> Value {
    let x = clamp(value, Value(-4.0), Value(4.0));
    let x2 = x * x;
    var p = Value(-2.7261423e-10);
    p = p * x2 + 2.7706814e-8;
    p = p * x2 - 2.101024e-6;
    p = p * x2 - 5.6925064e-5;
    p = p * x2 - 7.3499063e-4;
    p = p * x2 - 2.9546e-3;
    p = p * x2 - 1.6096033e-2;
    var q = Value(-1.4566072e-5);
    q = q * x2 - 2.1337406e-4;
    q = q * x2 - 1.682827e-3;
    q = q * x2 - 7.373329e-3;
    q = q * x2 - 1.4264739e-2;
    return x * p / q;
}

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
