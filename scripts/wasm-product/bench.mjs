// Times the page's matrix product against gemm's in the module scripts/bench-wasm-product.sh
// builds, on one thread in node, on the products of a training step of the tiny preset for a slice
// of IMAGES images (32: batch 64 on two threads). Prints one JSON line per shape; fails when the
// two disagree.
import { readFileSync } from "node:fs";

const { instance } = await WebAssembly.instantiate(readFileSync(process.argv[2]));
const wasm = instance.exports;
const images = Number(process.env.IMAGES ?? 32);
const tokens = images * 65;
// [name, m, n, k, which operand is read transposed]
const shapes = [
    ["qkv forward", tokens, 384, 128, ""],
    ["mlp in forward", tokens, 256, 128, ""],
    ["mlp out forward", tokens, 128, 256, ""],
    ["qkv input gradient", tokens, 128, 384, "rhs"],
    ["qkv weight gradient", 128, 384, tokens, "lhs"],
    ["attention scores", 65, 65, 32, "rhs"],
    ["attention values", 65, 32, 65, ""],
];
const [PAGE, GEMM] = [0, 1];

for (const [name, m, n, k, transposed] of shapes) {
    const [lhs, rhs] = [wasm.floats(m * k), wasm.floats(k * n)];
    const outs = [wasm.floats(m * n), wasm.floats(m * n)];
    const view = () => new Float32Array(wasm.memory.buffer);
    for (const [at, len] of [[lhs, m * k], [rhs, k * n]]) {
        view().subarray(at / 4, at / 4 + len).forEach((_, i, values) => (values[i] = Math.random() - 0.5));
    }
    const lhsStrides = transposed === "lhs" ? [1, m] : [k, 1];
    const rhsStrides = transposed === "rhs" ? [1, k] : [n, 1];
    const run = (kernel) => wasm.product(kernel, m, n, k, outs[kernel], lhs, ...lhsStrides, rhs, ...rhsStrides);

    run(PAGE);
    run(GEMM);
    const [page, gemm] = outs.map((at) => view().subarray(at / 4, at / 4 + m * n));
    const error = page.reduce((worst, value, i) => Math.max(worst, Math.abs(value - gemm[i])), 0);
    if (!(error <= 1e-4 * Math.sqrt(k))) {
        console.error(`${name}: the page's product differs from gemm's by ${error}`);
        process.exit(1);
    }

    // The best of five timings of enough products for about a tenth of a second each.
    const repeats = Math.max(3, Math.round(1e8 / (m * n * k)));
    const gflops = (kernel) => {
        let best = Infinity;
        for (let round = 0; round < 5; round++) {
            const start = performance.now();
            for (let i = 0; i < repeats; i++) run(kernel);
            best = Math.min(best, (performance.now() - start) / repeats);
        }
        return (2 * m * n * k) / best / 1e6;
    };
    const [pageGflops, gemmGflops] = [gflops(PAGE), gflops(GEMM)];
    console.log(JSON.stringify({
        shape: name, m, n, k,
        page_gflops: +pageGflops.toFixed(1), gemm_gflops: +gemmGflops.toFixed(1),
        page_over_gemm: +(pageGflops / gemmGflops).toFixed(2),
    }));
}
