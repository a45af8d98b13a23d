// out[b] = lhs[b] · rhs[b] for row-major lhs [BATCH, M, K], rhs [BATCH, K, N], out [BATCH, M, N].
//
// Each invocation computes a 4×4 block of out from vec4 loads: four rows of lhs against four
// rows of rhs per step of 4 along K, with no workgroup memory and no barriers. On SwiftShader
// (WebGPU on the CPU) invocations and barriers are expensive and arithmetic per invocation is
// cheap, so this runs several times faster than a tiled shared-memory kernel.
// K and N are multiples of 4; M is not, so the last block's missing rows are clamped on load
// and skipped on store.
const M: u32 = {{m}}u;
const K4: u32 = {{k4}}u;
const N4: u32 = {{n4}}u;
const BATCH: u32 = {{batch}}u;
const ROW_BLOCKS: u32 = (M + 3u) / 4u;
const BLOCKS: u32 = ROW_BLOCKS * N4;

// All three read_write although two are only read: burn's memory pool may place an operand and
// the output in one GPU buffer, and WebGPU forbids a buffer bound both read-only and writable in
// one dispatch (two writable bindings of disjoint ranges are allowed).
@group(0) @binding(0) var<storage, read_write> lhs: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> rhs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= BATCH * BLOCKS) {
        return;
    }
    let batch = index / BLOCKS;
    let block = index % BLOCKS;
    let r0 = (block / N4) * 4u;
    let col = block % N4;
    let r1 = min(r0 + 1u, M - 1u);
    let r2 = min(r0 + 2u, M - 1u);
    let r3 = min(r0 + 3u, M - 1u);
    let lhs_base = batch * M * K4;
    let rhs_base = batch * K4 * 4u * N4;

    var s0 = vec4<f32>();
    var s1 = vec4<f32>();
    var s2 = vec4<f32>();
    var s3 = vec4<f32>();
    for (var k = 0u; k < K4; k++) {
        let a0 = lhs[lhs_base + r0 * K4 + k];
        let a1 = lhs[lhs_base + r1 * K4 + k];
        let a2 = lhs[lhs_base + r2 * K4 + k];
        let a3 = lhs[lhs_base + r3 * K4 + k];
        let b = rhs_base + k * 4u * N4 + col;
        let b0 = rhs[b];
        let b1 = rhs[b + N4];
        let b2 = rhs[b + 2u * N4];
        let b3 = rhs[b + 3u * N4];
        s0 += a0.x * b0 + a0.y * b1 + a0.z * b2 + a0.w * b3;
        s1 += a1.x * b0 + a1.y * b1 + a1.z * b2 + a1.w * b3;
        s2 += a2.x * b0 + a2.y * b1 + a2.z * b2 + a2.w * b3;
        s3 += a3.x * b0 + a3.y * b1 + a3.z * b2 + a3.w * b3;
    }

    let o = batch * M * N4 + r0 * N4 + col;
    out[o] = s0;
    if (r0 + 1u < M) { out[o + N4] = s1; }
    if (r0 + 2u < M) { out[o + 2u * N4] = s2; }
    if (r0 + 3u < M) { out[o + 3u * N4] = s3; }
}
