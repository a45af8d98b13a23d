// out[b] = lhs[b] · rhs[b] for row-major lhs [BATCH, M, K], rhs [BATCH, K, N], out [BATCH, M, N],
// of any M, K, N: the attention products, whose sides are the 65 tokens.
//
// The same 4×4 register blocking as blocked_4x4.wgsl, from scalar loads: per step along K, four
// values of lhs and four of rhs make sixteen products. Rows and columns past the edge are clamped
// on load and skipped on store.
const M: u32 = {{m}}u;
const K: u32 = {{k}}u;
const N: u32 = {{n}}u;
const BATCH: u32 = {{batch}}u;
const COL_BLOCKS: u32 = (N + 3u) / 4u;
const BLOCKS: u32 = ((M + 3u) / 4u) * COL_BLOCKS;

@group(0) @binding(0) var<storage, read> lhs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= BATCH * BLOCKS) {
        return;
    }
    let batch = index / BLOCKS;
    let block = index % BLOCKS;
    let r0 = (block / COL_BLOCKS) * 4u;
    let c0 = (block % COL_BLOCKS) * 4u;
    let rows = vec4<u32>(r0, min(r0 + 1u, M - 1u), min(r0 + 2u, M - 1u), min(r0 + 3u, M - 1u));
    let cols = vec4<u32>(c0, min(c0 + 1u, N - 1u), min(c0 + 2u, N - 1u), min(c0 + 3u, N - 1u));
    let a = batch * M * K + rows * K;
    let b = batch * K * N + cols;

    var s0 = vec4<f32>();
    var s1 = vec4<f32>();
    var s2 = vec4<f32>();
    var s3 = vec4<f32>();
    for (var k = 0u; k < K; k++) {
        let bk = b + k * N;
        let rhs_k = vec4<f32>(rhs[bk.x], rhs[bk.y], rhs[bk.z], rhs[bk.w]);
        s0 += lhs[a.x + k] * rhs_k;
        s1 += lhs[a.y + k] * rhs_k;
        s2 += lhs[a.z + k] * rhs_k;
        s3 += lhs[a.w + k] * rhs_k;
    }

    let o = batch * M * N;
    store_row(o, r0, c0, s0);
    store_row(o, r0 + 1u, c0, s1);
    store_row(o, r0 + 2u, c0, s2);
    store_row(o, r0 + 3u, c0, s3);
}

fn store_row(base: u32, row: u32, c0: u32, values: vec4<f32>) {
    if (row >= M) {
        return;
    }
    let o = base + row * N + c0;
    out[o] = values.x;
    if (c0 + 1u < N) { out[o + 1u] = values.y; }
    if (c0 + 2u < N) { out[o + 2u] = values.z; }
    if (c0 + 3u < N) { out[o + 3u] = values.w; }
}
