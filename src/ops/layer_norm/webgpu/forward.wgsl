// out = (x − mean)/√(variance + ε) · gamma + beta over every EVERY-th row of x
// [ROWS · EVERY, WIDTH] (EVERY = 1: each row; the tokens per image: each image's [CLS]), into
// out [ROWS, WIDTH]: one invocation per row, its WIDTH values read in vec4s (a row is short: 128
// values in the model).
const ROWS: u32 = {{rows}}u;
const EVERY: u32 = {{every}}u;
const WIDTH4: u32 = {{width4}}u;
const EPSILON: f32 = {{epsilon}};

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> gamma: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> beta: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;

{{statistics}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = id.x + id.y * groups.x * 64u;
    if (row >= ROWS) {
        return;
    }
    let base = row * EVERY * WIDTH4;
    let statistics = statistics_of(base);
    let mean = statistics.x;
    let inverse_deviation = statistics.y;
    for (var c = 0u; c < WIDTH4; c++) {
        out[row * WIDTH4 + c] = (x[base + c] - mean) * inverse_deviation * gamma[c] + beta[c];
    }
}
