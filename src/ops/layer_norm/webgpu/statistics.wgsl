// The row at `base` of x's WIDTH4 vec4s: its mean and 1/√(variance + ε), the biased variance as
// PyTorch and burn take it, in two passes. Shared by forward.wgsl and backward_rows.wgsl.
fn statistics_of(base: u32) -> vec2<f32> {
    let width = f32(WIDTH4 * 4u);
    var sum = vec4<f32>();
    for (var c = 0u; c < WIDTH4; c++) {
        sum += x[base + c];
    }
    let mean = (sum.x + sum.y + sum.z + sum.w) / width;
    var squares = vec4<f32>();
    for (var c = 0u; c < WIDTH4; c++) {
        let d = x[base + c] - mean;
        squares += d * d;
    }
    return vec2<f32>(mean, inverseSqrt((squares.x + squares.y + squares.z + squares.w) / width + EPSILON));
}
