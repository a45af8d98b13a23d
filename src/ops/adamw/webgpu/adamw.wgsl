// One AdamW step of one parameter tensor, elementwise, in burn's AdamW's order of operations:
// m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², p ← p·(1 − lr·λ) − lr·(m/c₁)/(√(v/c₂) + ε), with the
// bias corrections cᵢ = 1 − βᵢᵗ. The step's numbers come in a uniform, so one pipeline serves
// every step of a parameter's shape.
const LEN: u32 = {{len}}u;

struct Step {
    learning_rate: f32,
    decay: f32,
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    correction_1: f32,
    correction_2: f32,
    unused: f32,
}

@group(0) @binding(0) var<storage, read_write> param: array<f32>;
@group(0) @binding(1) var<storage, read_write> grad: array<f32>;
@group(0) @binding(2) var<storage, read_write> moment_1: array<f32>;
@group(0) @binding(3) var<storage, read_write> moment_2: array<f32>;
@group(0) @binding(4) var<storage, read_write> param_out: array<f32>;
@group(0) @binding(5) var<storage, read_write> moment_1_out: array<f32>;
@group(0) @binding(6) var<storage, read_write> moment_2_out: array<f32>;
@group(0) @binding(7) var<uniform> step: Step;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = id.x + id.y * groups.x * 64u;
    if (index >= LEN) {
        return;
    }
    let g = grad[index];
    let m = moment_1[index] * step.beta_1 + g * (1.0 - step.beta_1);
    let v = moment_2[index] * step.beta_2 + (g * g) * (1.0 - step.beta_2);
    let delta = (m / step.correction_1) / (sqrt(v / step.correction_2) + step.epsilon);
    param_out[index] = param[index] * (1.0 - step.decay) - delta * step.learning_rate;
    moment_1_out[index] = m;
    moment_2_out[index] = v;
}
