// The browser's learning curve and memory, for comparison with the native trainer on the same
// data and named recipe, its schedule shortened to [epochs] (scripts/bench.sh runs both). Not a
// test: it prints JSON lines, one per epoch, with the page's metrics and the worker's wasm memory
// after the epoch.
//   node tests/e2e/curve.mjs [dataset manifest URL] [epochs] [recipe: best-10-epochs]
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { ISOLATION, serve } from "./server.mjs";

const [dataset = "data/curve/manifest.json", epochs = "10", recipe = "best-10-epochs"] = process.argv.slice(2);
const server = await serve(resolve(import.meta.dirname, "../../dist"), { headers: ISOLATION });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--no-first-run"],
});
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}?compute=cpu&dataset=${dataset}&recipe=${recipe}`);
  await page.waitForSelector("#data-status[data-source]", { timeout: 600_000 });
  await page.fill("#recipe-form [name=epochs]", epochs);
  const batch = await page.locator("#recipe-form [name=batch]").inputValue();
  await page.click("#train-start");
  await page.waitForSelector("#train-status:has-text('finished'), #train-status:has-text('failed')", { timeout: 24 * 3_600_000 });
  const rows = await page.$$eval("#epoch-table tbody tr", (rows) => rows.map((row) => ({
    cells: [...row.cells].map((cell) => cell.textContent), heap: Number(row.dataset.heapBytes),
    gpu: Number(row.dataset.gpuBytes) || null })));
  for (const { cells, heap, gpu } of rows) {
    const [epoch, trainLoss, trainAccuracy, testLoss, testAccuracy, imagesPerSecond] = cells;
    console.log(JSON.stringify({ bench: "browser_curve", dataset, recipe, batch: Number(batch), epoch: Number(epoch),
      train_loss: Number(trainLoss), train_accuracy: trainAccuracy, test_loss: Number(testLoss),
      test_accuracy: testAccuracy, images_per_second: Number(imagesPerSecond), wasm_heap_bytes: heap, gpu_bytes: gpu }));
  }
} finally {
  await browser.close();
  server.close();
}
