// out[o][e] = Σ_s parts[o][s][e] for few outputs and many partial sums (a layer norm's scale and
// shift gradients): one workgroup per output value, its 64 invocations each adding every 64th
// partial sum, then the 64 sums added in workgroup memory.
const OUTER: u32 = {{outer}}u;
const SPLITS: u32 = {{splits}}u;
const INNER: u32 = {{inner}}u;

@group(0) @binding(0) var<storage, read_write> parts: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

var<workgroup> sums: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let index = group.x + group.y * groups.x;  // uniform across the workgroup
    if (index >= OUTER * INNER) {
        return;
    }
    let o = index / INNER;
    let e = index % INNER;
    var sum = 0.0;
    for (var s = lane; s < SPLITS; s += 64u) {
        sum += parts[(o * SPLITS + s) * INNER + e];
    }
    sums[lane] = sum;
    for (var half = 32u; half > 0u; half /= 2u) {
        workgroupBarrier();
        if (lane < half) {
            sums[lane] += sums[lane + half];
        }
    }
    if (lane == 0u) {
        out[index] = sums[0];
    }
}
