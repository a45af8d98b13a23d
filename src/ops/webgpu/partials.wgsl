// out[o][e] = Σ_s parts[o][s][e]: the second pass of a sum split over the batch's rows, one
// invocation per output value, neighbouring invocations reading neighbouring values.
const OUTER: u32 = {{outer}}u;
const SPLITS: u32 = {{splits}}u;
const INNER: u32 = {{inner}}u;

@group(0) @binding(0) var<storage, read_write> parts: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= OUTER * INNER) {
        return;
    }
    let o = index / INNER;
    let e = index % INNER;
    var sum = 0.0;
    for (var s = 0u; s < SPLITS; s++) {
        sum += parts[(o * SPLITS + s) * INNER + e];
    }
    out[index] = sum;
}
