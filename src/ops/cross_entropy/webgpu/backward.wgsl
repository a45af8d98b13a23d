// The logits' gradient of the mean (smoothed) cross-entropy: grad · (softmax − target)/ROWS, one
// invocation per row; `grad` [1] is the loss's upstream gradient.
const ROWS: u32 = {{rows}}u;
const CLASSES: u32 = {{classes}}u;
const SMOOTHING: f32 = {{smoothing}};

@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> grad_logits: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let row = id.x + id.y * groups.x * 64u;
    if (row >= ROWS) {
        return;
    }
    let base = row * CLASSES;
    var largest = logits[base];
    for (var c = 1u; c < CLASSES; c++) {
        largest = max(largest, logits[base + c]);
    }
    var total = 0.0;
    for (var c = 0u; c < CLASSES; c++) {
        total += exp(logits[base + c] - largest);
    }
    let label = u32(labels[row]);
    let scale = grad[0] / f32(ROWS);
    for (var c = 0u; c < CLASSES; c++) {
        var wanted = SMOOTHING / f32(CLASSES);
        if (c == label) {
            wanted += 1.0 - SMOOTHING;
        }
        grad_logits[base + c] = scale * (exp(logits[base + c] - largest) / total - wanted);
    }
}
