// Self-attention's core, softmax(Q·Kᵀ/√d)·V per head, read straight from the QKV projection's
// output qkv [BATCH, TOKENS, 3·D] (queries, keys, values side by side, each head's HEAD_DIM
// columns in turn). One workgroup per (image, head), one invocation per query token: the head's
// keys, then its values, pass through workgroup memory, where every invocation reads the same
// row at once. Each invocation writes its row of the softmax weights to `weights`
// [BATCH, HEADS, TOKENS, TOKENS] (the heatmaps, and the backward pass's input) and its output to
// `attended` [BATCH, TOKENS, D], the heads side by side as the projection after reads them.
const TOKENS: u32 = {{tokens}}u;
const HEADS: u32 = {{heads}}u;
const HEAD_DIM4: u32 = {{head_dim4}}u;
const SCALE: f32 = {{scale}};
const D4: u32 = HEADS * HEAD_DIM4;
const PAIRS: u32 = {{pairs}}u;

@group(0) @binding(0) var<storage, read_write> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> attended: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> weights: array<f32>;

{{head_rows}}

@compute @workgroup_size({{tokens}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) i: u32) {
    let pair = group.x + group.y * groups.x;  // uniform across the workgroup
    if (pair >= PAIRS) {
        return;
    }
    let image = pair / HEADS;
    let head = pair % HEADS;

    var query: array<vec4<f32>, HEAD_DIM4>;
    for (var c = 0u; c < HEAD_DIM4; c++) {
        query[c] = qkv[at(image, i, 0u, head) + c];
        rows[i * HEAD_DIM4 + c] = qkv[at(image, i, 1u, head) + c];
    }
    workgroupBarrier();

    var scores: array<f32, TOKENS>;
    var largest = -3.4e38;
    for (var j = 0u; j < TOKENS; j++) {
        var sum = 0.0;
        for (var c = 0u; c < HEAD_DIM4; c++) {
            sum += dot(query[c], rows[j * HEAD_DIM4 + c]);
        }
        scores[j] = sum * SCALE;
        largest = max(largest, scores[j]);
    }
    var total = 0.0;
    for (var j = 0u; j < TOKENS; j++) {
        scores[j] = exp(scores[j] - largest);
        total += scores[j];
    }
    let weights_at = (pair * TOKENS + i) * TOKENS;
    for (var j = 0u; j < TOKENS; j++) {
        scores[j] /= total;
        weights[weights_at + j] = scores[j];
    }

    workgroupBarrier();
    for (var c = 0u; c < HEAD_DIM4; c++) {
        rows[i * HEAD_DIM4 + c] = qkv[at(image, i, 2u, head) + c];
    }
    workgroupBarrier();
    var out: array<vec4<f32>, HEAD_DIM4>;
    for (var j = 0u; j < TOKENS; j++) {
        for (var c = 0u; c < HEAD_DIM4; c++) {
            out[c] += scores[j] * rows[j * HEAD_DIM4 + c];
        }
    }
    let out_at = (image * TOKENS + i) * D4 + head * HEAD_DIM4;
    for (var c = 0u; c < HEAD_DIM4; c++) {
        attended[out_at + c] = out[c];
    }
}
