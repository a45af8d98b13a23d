// tokens[b][t] = (t == 0 ? class_token : patches[b][t − 1]) + positions[t]: a vec4 of a row
// per invocation, neighbouring invocations writing neighbouring values.
const TOKENS: u32 = {{tokens}}u;
const WIDTH4: u32 = {{width4}}u;  // a row's vec4s
const LEN: u32 = {{len}}u;        // batch · TOKENS · WIDTH4

@group(0) @binding(0) var<storage, read_write> patches: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> class_token: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> positions: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> tokens: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= LEN) {
        return;
    }
    let within = index % (TOKENS * WIDTH4);  // the value's place in its image's tokens
    let token = within / WIDTH4;
    var value: vec4<f32>;
    if (token == 0u) {
        value = class_token[within];
    } else {
        let image = index / (TOKENS * WIDTH4);
        value = patches[image * (TOKENS - 1u) * WIDTH4 + within - WIDTH4];
    }
    tokens[index] = value + positions[within];
}
