// The tokens' gradient taken apart: ∂patches[b][t − 1] = ∂tokens[b][t], and for each range of
// RANGE images sums[range][t] = Σ_b ∂tokens[b][t], the positions' gradient (or, over several
// ranges, its partial sums, which partials.wgsl adds). An invocation per range and vec4 of a
// token's row: it walks its range's images in turn, neighbouring invocations reading
// neighbouring values.
const BATCH: u32 = {{batch}}u;
const RANGE: u32 = {{range}}u;
const ROW4: u32 = {{row4}}u;      // one image's tokens, in vec4s
const WIDTH4: u32 = {{width4}}u;  // one token's, in vec4s
const LEN: u32 = {{len}}u;        // ranges · ROW4

@group(0) @binding(0) var<storage, read_write> grad: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> patches: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> sums: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= LEN) {
        return;
    }
    let within = index % ROW4;
    let first = (index / ROW4) * RANGE;
    let last = min(first + RANGE, BATCH);
    var sum = vec4<f32>(0.0);
    for (var image = first; image < last; image++) {
        let value = grad[image * ROW4 + within];
        sum += value;
        if (within >= WIDTH4) {
            patches[image * (ROW4 - WIDTH4) + within - WIDTH4] = value;
        }
    }
    sums[index] = sum;
}
