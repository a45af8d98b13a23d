// The input's gradient of a layer norm, one invocation per row of x [ROWS · EVERY, WIDTH]: with x̂
// the normalised row and g = ∂out·gamma, ∂x = (g − mean(g) − x̂·mean(g·x̂))/√(variance + ε) on
// every EVERY-th row, whose ∂out is row / EVERY of grad [ROWS, WIDTH], and 0 on the rows between,
// which the forward pass skipped. Each normalised row's mean and 1/√(variance + ε) go to
// `statistics` [ROWS, 2] for the columns' pass (backward_columns.wgsl).
const ROWS: u32 = {{rows}}u;
const EVERY: u32 = {{every}}u;
const WIDTH4: u32 = {{width4}}u;
const EPSILON: f32 = {{epsilon}};

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> gamma: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> grad: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grad_x: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> statistics: array<vec2<f32>>;

fn total(v: vec4<f32>) -> f32 {
    return v.x + v.y + v.z + v.w;
}

{{statistics}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let input_row = id.x + id.y * groups.x * 64u;
    if (input_row >= ROWS * EVERY) {
        return;
    }
    let base = input_row * WIDTH4;
    if (input_row % EVERY != 0u) {
        for (var c = 0u; c < WIDTH4; c++) {
            grad_x[base + c] = vec4<f32>();
        }
        return;
    }
    let row = input_row / EVERY;
    let grad_base = row * WIDTH4;
    let width = f32(WIDTH4 * 4u);
    let row_statistics = statistics_of(base);
    let mean = row_statistics.x;
    let inverse_deviation = row_statistics.y;
    statistics[row] = vec2<f32>(mean, inverse_deviation);

    var g_sum = vec4<f32>();
    var gx_sum = vec4<f32>();
    for (var c = 0u; c < WIDTH4; c++) {
        let g = grad[grad_base + c] * gamma[c];
        g_sum += g;
        gx_sum += g * (x[base + c] - mean) * inverse_deviation;
    }
    let g_mean = total(g_sum) / width;
    let gx_mean = total(gx_sum) / width;
    for (var c = 0u; c < WIDTH4; c++) {
        let normalised = (x[base + c] - mean) * inverse_deviation;
        grad_x[base + c] = (grad[grad_base + c] * gamma[c] - g_mean - normalised * gx_mean) * inverse_deviation;
    }
}
