// erf and GELU on a `Value` (f32 or vec4<f32>) that the including kernel names: this kernel's
// and, as their epilogue, the dense products'. erf is the rational approximation the CPU path
// uses (ops/gelu/cpu/values.rs, after Eigen and XLA: x·P(x²)/Q(x²) on x clamped to ±4), so every
// path computes the same function.
fn erf(value: Value) -> Value {
    let x = clamp(value, Value(-4.0), Value(4.0));
    let x2 = x * x;
    var p = Value(-2.7261423e-10);
    p = p * x2 + 2.7706814e-8;
    p = p * x2 - 2.101024e-6;
    p = p * x2 - 5.6925064e-5;
    p = p * x2 - 7.3499063e-4;
    p = p * x2 - 2.9546e-3;
    p = p * x2 - 1.6096033e-2;
    var q = Value(-1.4566072e-5);
    q = q * x2 - 2.1337406e-4;
    q = q * x2 - 1.682827e-3;
    q = q * x2 - 7.373329e-3;
    q = q * x2 - 1.4264739e-2;
    return x * p / q;
}

// x·Φ(x), as gelu.wgsl computes it.
fn gelu(v: Value) -> Value {
    return v * (0.5 * (1.0 + erf(v * 0.70710678)));
}

// Φ(x) + x·φ(x), GELU's derivative, as gelu.wgsl's backward pass computes it.
fn gelu_slope(v: Value) -> Value {
    let cdf = 0.5 * (1.0 + erf(v * 0.70710678));
    let pdf = 0.39894228 * exp(-0.5 * v * v);
    return cdf + v * pdf;
}
