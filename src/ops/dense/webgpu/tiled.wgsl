// The product for GPUs: out[z] = op(A)[z] · op(B)[z] over BATCH pairs, each with its K split into
// SPLITS ranges of SPLIT_LEN. The output is [BATCH, SPLITS, ROWS, N]: with one range the product
// itself, with more the range's partial products, which the partials kernel sums afterwards
// (split-K: a weight gradient's K is every token of the batch, far too long for one invocation).
//
// Each workgroup of 16×16 invocations computes a TILE×TILE tile of the output, each invocation
// BLOCK4×BLOCK4 blocks of 4×4 in it, 64 rows or columns apart: a 64×64 tile of 4×4 blocks, or a
// 128×128 tile of four (8×8 an invocation, half the reads from workgroup memory per
// multiply-add, for products with workgroups to spare; product.rs chooses). A and B pass
// through workgroup memory DEPTH steps of K at a time, each loaded so that neighbouring
// invocations read neighbouring addresses whatever the layout, and kept K-major so that an
// invocation reads each block's four rows of A and four columns of B as one vec4 each, and
// neighbouring invocations neighbouring vec4s:
// A stored [A_ROWS, K] or, transposed, [K, A_ROWS]; B stored [K, N] or, transposed, [N, K].
// With ONES_ROW, op(A) has one more row, of ones, after its stored ones: the output's last row is
// then the sum of B's rows over the range (a bias's gradient, beside its weight's), which the
// first row of invocations of the first row of tiles adds up from the B tiles they read anyway,
// so no tile is launched for that one row.
// The epilogue the plan has (a bias, GELU, GELU's slope, a residual; product.rs) is applied as
// the output is written.
const A_ROWS: u32 = {{a_rows}}u;
const ROWS: u32 = {{rows}}u;
const N: u32 = {{n}}u;
const K: u32 = {{k}}u;
const SPLITS: u32 = {{splits}}u;
const SPLIT_LEN: u32 = {{split_len}}u;
const A_TRANSPOSED: bool = {{a_transposed}};
const B_TRANSPOSED: bool = {{b_transposed}};
const ONES_ROW: bool = {{ones_row}};

const BLOCK4: u32 = {{block4}}u;
const TILE: u32 = 64u * BLOCK4;
// TILE × DEPTH = 1024 values of each operand per step: four loads an invocation.
const DEPTH: u32 = 16u / BLOCK4;
// A row of a tile in workgroup memory, in vec4s: one longer than the tile, so that lanes storing
// one column of it spread over the banks.
const STRIDE4: u32 = TILE / 4u + 1u;

@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
{{bias_binding}}
{{slope_binding}}
{{residual_binding}}
{{pre_binding}}
@group(0) @binding({{out_binding}}) var<storage, read_write> out: array<f32>;

{{gelu_functions}}

// a_tile[k * STRIDE4 + row / 4][row % 4], b_tile[k * STRIDE4 + column / 4][column % 4]
var<workgroup> a_tile: array<vec4<f32>, {{tile_vec4s}}>;
var<workgroup> b_tile: array<vec4<f32>, {{tile_vec4s}}>;

fn a_value(batch: u32, row: u32, k: u32, k_end: u32) -> f32 {
    if (k >= k_end || row >= A_ROWS) {
        return 0.0;
    }
    let base = batch * A_ROWS * K;
    if (A_TRANSPOSED) {
        return a[base + k * A_ROWS + row];
    }
    return a[base + row * K + k];
}

fn b_value(batch: u32, k: u32, col: u32, k_end: u32) -> f32 {
    if (k >= k_end || col >= N) {
        return 0.0;
    }
    let base = batch * K * N;
    if (B_TRANSPOSED) {
        return b[base + col * K + k];
    }
    return b[base + k * N + col];
}

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let batch = group.z / SPLITS;
    let split = group.z % SPLITS;
    let row0 = group.y * TILE;
    let col0 = group.x * TILE;
    let k_begin = split * SPLIT_LEN;
    let k_end = min(K, k_begin + SPLIT_LEN);
    // Whether this invocation adds up the row of ones' products: B's columns it reads.
    let sums_ones = ONES_ROW && group.y == 0u && local.y == 0u;

    // sum[(r * BLOCK4 + c) * 4 + i][j]: row row0 + 4·(local.y + 16r) + i,
    // column col0 + 4·(local.x + 16c) + j
    var sum: array<vec4<f32>, {{sums}}>;
    var ones: array<vec4<f32>, BLOCK4>;
    for (var k0 = k_begin; k0 < k_end; k0 += DEPTH) {
        for (var step = 0u; step < 4u; step++) {
            let e = lane + step * 256u;
            var row: u32;
            var ka: u32;
            if (A_TRANSPOSED) {
                ka = e / TILE;
                row = e % TILE;
            } else {
                row = e / DEPTH;
                ka = e % DEPTH;
            }
            a_tile[ka * STRIDE4 + row / 4u][row % 4u] = a_value(batch, row0 + row, k0 + ka, k_end);
            var col: u32;
            var kb: u32;
            if (B_TRANSPOSED) {
                col = e / DEPTH;
                kb = e % DEPTH;
            } else {
                kb = e / TILE;
                col = e % TILE;
            }
            b_tile[kb * STRIDE4 + col / 4u][col % 4u] = b_value(batch, k0 + kb, col0 + col, k_end);
        }
        workgroupBarrier();
        for (var k = 0u; k < DEPTH; k++) {
            var a4: array<vec4<f32>, BLOCK4>;
            var b4: array<vec4<f32>, BLOCK4>;
            for (var v = 0u; v < BLOCK4; v++) {
                a4[v] = a_tile[k * STRIDE4 + local.y + 16u * v];
                b4[v] = b_tile[k * STRIDE4 + local.x + 16u * v];
            }
            for (var r = 0u; r < BLOCK4; r++) {
                for (var c = 0u; c < BLOCK4; c++) {
                    let s = (r * BLOCK4 + c) * 4u;
                    sum[s] += a4[r].x * b4[c];
                    sum[s + 1u] += a4[r].y * b4[c];
                    sum[s + 2u] += a4[r].z * b4[c];
                    sum[s + 3u] += a4[r].w * b4[c];
                }
            }
            if (sums_ones) {
                for (var c = 0u; c < BLOCK4; c++) {
                    ones[c] += b4[c];
                }
            }
        }
        workgroupBarrier();
    }

    let base = group.z * ROWS * N;
    for (var r = 0u; r < BLOCK4; r++) {
        for (var c = 0u; c < BLOCK4; c++) {
            for (var i = 0u; i < 4u; i++) {
                let row = row0 + 4u * (local.y + 16u * r) + i;
                for (var j = 0u; j < 4u; j++) {
                    let col = col0 + 4u * (local.x + 16u * c) + j;
                    if (row < A_ROWS && col < N) {
                        var value = sum[(r * BLOCK4 + c) * 4u + i][j];
                        {{add_bias}}
                        {{keep_pre}}
                        {{apply_gelu}}
                        {{apply_slope}}
                        {{add_residual}}
                        out[base + row * N + col] = value;
                    }
                }
            }
        }
    }
    if (sums_ones) {
        for (var c = 0u; c < BLOCK4; c++) {
            for (var j = 0u; j < 4u; j++) {
                let col = col0 + 4u * (local.x + 16u * c) + j;
                if (col < N) {
                    out[base + A_ROWS * N + col] = ones[c][j];
                }
            }
        }
    }
}
