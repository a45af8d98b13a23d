// The product for software renderers: the same output as tiled.wgsl (out[z] = op(A)[z] · op(B)[z]
// over BATCH pairs, K split into SPLITS ranges of SPLIT_LEN, output [BATCH, SPLITS, ROWS, N]),
// computed as a software renderer (SwiftShader: WebGPU on the CPU) runs fastest: each invocation
// computes a 4×4 block of the output from vec4 loads, looping over its whole range of K, with no
// workgroup memory and no barriers. There invocations and barriers are dear and arithmetic per
// invocation cheap, so this runs several times faster than a tiled kernel.
//
// Three layouts, each loading whole vec4s:
// - A [A_ROWS, K] · B [K, N]: four rows of A against four rows of B per step of 4 along K;
// - A transposed, stored [K, A_ROWS], · B [K, N] (a weight's gradient): per step of K, four
//   values of A's row times four of B's, added to the block; A_ROWS is a multiple of 4, and with
//   ONES_ROW the block after A's last row is a row of ones (the bias's gradient);
// - A [A_ROWS, K] · B transposed, stored [N, K] (an input's gradient): dot products of four rows
//   of A with four rows of B, 4 along K at a time.
// K (along which A or B is read in vec4s) and N are multiples of 4; A_ROWS is not in the first
// and last layouts, so the last block's missing rows are clamped on load and skipped on store.
const A_ROWS: u32 = {{a_rows}}u;
const ROWS: u32 = {{rows}}u;
const N4: u32 = {{n4}}u;
const K: u32 = {{k}}u;
const BATCH: u32 = {{batch}}u;
const SPLITS: u32 = {{splits}}u;
const SPLIT_LEN: u32 = {{split_len}}u;
const A_TRANSPOSED: bool = {{a_transposed}};
const B_TRANSPOSED: bool = {{b_transposed}};
const ONES_ROW: bool = {{ones_row}};
const ROW_BLOCKS: u32 = (ROWS + 3u) / 4u;
const BLOCKS: u32 = ROW_BLOCKS * N4;

@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
{{bias_binding}}
{{slope_binding}}
{{residual_binding}}
{{pre_binding}}
@group(0) @binding({{out_binding}}) var<storage, read_write> out: array<vec4<f32>>;

{{gelu_functions}}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= BATCH * SPLITS * BLOCKS) {
        return;
    }
    let z = index / BLOCKS;
    let block = index % BLOCKS;
    let batch = z / SPLITS;
    let split = z % SPLITS;
    let r0 = (block / N4) * 4u;
    let col = block % N4;
    let k_begin = split * SPLIT_LEN;
    let k_end = min(K, k_begin + SPLIT_LEN);

    var s0 = vec4<f32>();
    var s1 = vec4<f32>();
    var s2 = vec4<f32>();
    var s3 = vec4<f32>();
    if (A_TRANSPOSED) {
        let a4 = A_ROWS / 4u;
        let a_base = batch * K * a4;
        let b_base = batch * K * N4;
        let ones = ONES_ROW && r0 == A_ROWS;
        for (var k = k_begin; k < k_end; k++) {
            var x = vec4<f32>(1.0, 0.0, 0.0, 0.0);
            if (!ones) {
                x = a[a_base + k * a4 + r0 / 4u];
            }
            let y = b[b_base + k * N4 + col];
            s0 += x.x * y;
            s1 += x.y * y;
            s2 += x.z * y;
            s3 += x.w * y;
        }
    } else {
        let k4 = K / 4u;
        let r1 = min(r0 + 1u, A_ROWS - 1u);
        let r2 = min(r0 + 2u, A_ROWS - 1u);
        let r3 = min(r0 + 3u, A_ROWS - 1u);
        let a_base = batch * A_ROWS * k4;
        let b_base = batch * K * N4;
        for (var k = k_begin / 4u; k < (k_end + 3u) / 4u; k++) {
            let a0 = a[a_base + r0 * k4 + k];
            let a1 = a[a_base + r1 * k4 + k];
            let a2 = a[a_base + r2 * k4 + k];
            let a3 = a[a_base + r3 * k4 + k];
            if (B_TRANSPOSED) {
                let c = col * 4u;
                let b0 = b[b_base + c * k4 + k];
                let b1 = b[b_base + (c + 1u) * k4 + k];
                let b2 = b[b_base + (c + 2u) * k4 + k];
                let b3 = b[b_base + (c + 3u) * k4 + k];
                s0 += vec4<f32>(dot(a0, b0), dot(a0, b1), dot(a0, b2), dot(a0, b3));
                s1 += vec4<f32>(dot(a1, b0), dot(a1, b1), dot(a1, b2), dot(a1, b3));
                s2 += vec4<f32>(dot(a2, b0), dot(a2, b1), dot(a2, b2), dot(a2, b3));
                s3 += vec4<f32>(dot(a3, b0), dot(a3, b1), dot(a3, b2), dot(a3, b3));
            } else {
                let at = b_base + k * 4u * N4 + col;
                let b0 = b[at];
                let b1 = b[at + N4];
                let b2 = b[at + 2u * N4];
                let b3 = b[at + 3u * N4];
                s0 += a0.x * b0 + a0.y * b1 + a0.z * b2 + a0.w * b3;
                s1 += a1.x * b0 + a1.y * b1 + a1.z * b2 + a1.w * b3;
                s2 += a2.x * b0 + a2.y * b1 + a2.z * b2 + a2.w * b3;
                s3 += a3.x * b0 + a3.y * b1 + a3.z * b2 + a3.w * b3;
            }
        }
    }

    let o = z * ROWS * N4 + r0 * N4 + col;
    {{add_bias}}
    {{keep_pre}}
    {{apply_gelu}}
    {{apply_slope}}
    {{add_residual}}
    out[o] = s0;
    if (r0 + 1u < ROWS) { out[o + N4] = s1; }
    if (r0 + 2u < ROWS) { out[o + 2u * N4] = s2; }
    if (r0 + 3u < ROWS) { out[o + 3u * N4] = s3; }
}
