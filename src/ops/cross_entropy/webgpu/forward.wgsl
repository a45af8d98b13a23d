// The mean cross-entropy of a batch's logits [ROWS, CLASSES] against its labels, with labels
// smoothed by SMOOTHING (targets (1 − α)·onehot + α/C), and how many rows' largest logit is
// their label's, each in its own one-value output (one buffer of both would need slices to
// part, and a slice at an unaligned offset is a copying launch). One workgroup: each invocation
// takes every 64th row and the workgroup adds their sums in workgroup memory, so no invocation
// sums more than ROWS/64.
const ROWS: u32 = {{rows}}u;
const CLASSES: u32 = {{classes}}u;
const SMOOTHING: f32 = {{smoothing}};

@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> loss_out: array<f32>;
@group(0) @binding(3) var<storage, read_write> correct_out: array<f32>;

var<workgroup> losses: array<f32, 64>;
var<workgroup> corrects: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lane: u32) {
    var loss = 0.0;
    var correct = 0.0;
    for (var row = lane; row < ROWS; row += 64u) {
        let base = row * CLASSES;
        var largest = logits[base];
        var best = 0u;
        for (var c = 1u; c < CLASSES; c++) {
            if (logits[base + c] > largest) {
                largest = logits[base + c];
                best = c;
            }
        }
        var total = 0.0;
        var logit_sum = 0.0;
        for (var c = 0u; c < CLASSES; c++) {
            total += exp(logits[base + c] - largest);
            logit_sum += logits[base + c];
        }
        let log_total = largest + log(total);
        let label = u32(labels[row]);
        let label_log_probability = logits[base + label] - log_total;
        let mean_log_probability = logit_sum / f32(CLASSES) - log_total;
        loss -= (1.0 - SMOOTHING) * label_log_probability + SMOOTHING * mean_log_probability;
        if (best == label) {
            correct += 1.0;
        }
    }
    losses[lane] = loss;
    corrects[lane] = correct;
    workgroupBarrier();
    for (var half = 32u; half > 0u; half /= 2u) {
        if (lane < half) {
            losses[lane] += losses[lane + half];
            corrects[lane] += corrects[lane + half];
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        loss_out[0] = losses[0] / f32(ROWS);
        correct_out[0] = corrects[0];
    }
}
