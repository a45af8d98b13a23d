// The attention core's backward pass: ∂qkv from ∂attended (`grad` [BATCH, TOKENS, D]), the
// saved qkv and the softmax weights P. One workgroup per (image, head), one invocation per
// token, in four phases, each with the rows every invocation reads in workgroup memory:
//   1. (values)  query i: ∂P_ij = ∂out_i·V_j, ∂S_ij = P_ij·(∂P_ij − Σ_j' P_ij'·∂P_ij'), to
//                `score_grads` [BATCH, HEADS, TOKENS, TOKENS];
//   2. (keys)    query i: ∂Q_i = Σ_j ∂S_ij·K_j/√d;
//   3. (queries) key j: ∂K_j = Σ_i ∂S_ij·Q_i/√d;
//   4. (∂out)    value j: ∂V_j = Σ_i P_ij·∂out_i.
// ∂S crosses invocations through storage, behind a storage barrier.
const TOKENS: u32 = {{tokens}}u;
const HEADS: u32 = {{heads}}u;
const HEAD_DIM4: u32 = {{head_dim4}}u;
const SCALE: f32 = {{scale}};
const D4: u32 = HEADS * HEAD_DIM4;
const PAIRS: u32 = {{pairs}}u;

@group(0) @binding(0) var<storage, read_write> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> grad: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grad_qkv: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> score_grads: array<f32>;

{{head_rows}}

@compute @workgroup_size({{tokens}})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let pair = group.x + group.y * groups.x;  // uniform across the workgroup
    if (pair >= PAIRS) {
        return;
    }
    let image = pair / HEADS;
    let head = pair % HEADS;
    let map_at = pair * TOKENS * TOKENS;
    let grad_at = (image * TOKENS + t) * D4 + head * HEAD_DIM4;

    // 1. The scores' gradient of query t, against every value.
    var grad_out: array<vec4<f32>, HEAD_DIM4>;
    for (var c = 0u; c < HEAD_DIM4; c++) {
        grad_out[c] = grad[grad_at + c];
        rows[t * HEAD_DIM4 + c] = qkv[at(image, t, 2u, head) + c];
    }
    workgroupBarrier();
    var weight_grads: array<f32, TOKENS>;
    var weighted = 0.0;
    for (var j = 0u; j < TOKENS; j++) {
        var sum = 0.0;
        for (var c = 0u; c < HEAD_DIM4; c++) {
            sum += dot(grad_out[c], rows[j * HEAD_DIM4 + c]);
        }
        weight_grads[j] = sum;
        weighted += weights[map_at + t * TOKENS + j] * sum;
    }
    for (var j = 0u; j < TOKENS; j++) {
        let at_ij = map_at + t * TOKENS + j;
        score_grads[at_ij] = weights[at_ij] * (weight_grads[j] - weighted);
    }

    // 2. Query t's gradient, against every key.
    workgroupBarrier();
    for (var c = 0u; c < HEAD_DIM4; c++) {
        rows[t * HEAD_DIM4 + c] = qkv[at(image, t, 1u, head) + c];
    }
    workgroupBarrier();
    var sum4: array<vec4<f32>, HEAD_DIM4>;
    for (var j = 0u; j < TOKENS; j++) {
        let score_grad = score_grads[map_at + t * TOKENS + j];
        for (var c = 0u; c < HEAD_DIM4; c++) {
            sum4[c] += score_grad * rows[j * HEAD_DIM4 + c];
        }
    }
    for (var c = 0u; c < HEAD_DIM4; c++) {
        grad_qkv[at(image, t, 0u, head) + c] = sum4[c] * SCALE;
        sum4[c] = vec4<f32>();
    }

    // 3. Key t's gradient, over every query (∂S's column t, written by every invocation in 1).
    storageBarrier();
    workgroupBarrier();
    for (var c = 0u; c < HEAD_DIM4; c++) {
        rows[t * HEAD_DIM4 + c] = qkv[at(image, t, 0u, head) + c];
    }
    workgroupBarrier();
    for (var i = 0u; i < TOKENS; i++) {
        let score_grad = score_grads[map_at + i * TOKENS + t];
        for (var c = 0u; c < HEAD_DIM4; c++) {
            sum4[c] += score_grad * rows[i * HEAD_DIM4 + c];
        }
    }
    for (var c = 0u; c < HEAD_DIM4; c++) {
        grad_qkv[at(image, t, 1u, head) + c] = sum4[c] * SCALE;
        sum4[c] = vec4<f32>();
    }

    // 4. Value t's gradient, over every query's ∂out.
    workgroupBarrier();
    for (var c = 0u; c < HEAD_DIM4; c++) {
        rows[t * HEAD_DIM4 + c] = grad_out[c];
    }
    workgroupBarrier();
    for (var i = 0u; i < TOKENS; i++) {
        let weight = weights[map_at + i * TOKENS + t];
        for (var c = 0u; c < HEAD_DIM4; c++) {
            sum4[c] += weight * rows[i * HEAD_DIM4 + c];
        }
    }
    for (var c = 0u; c < HEAD_DIM4; c++) {
        grad_qkv[at(image, t, 2u, head) + c] = sum4[c];
    }
}
