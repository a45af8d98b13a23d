// Experimenting with the page: every run is kept in a table in browser storage, labelled by what
// changed, overlaid on the charts, exported and reloaded; the probe image's attention is kept at
// every capture and scrubbed or played back; any picture can be the probe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { MINUTES, SCREENSHOTS, SMALL, datasetReady, shared, waitForAsync } from "./harness.mjs";

/** Trains `epochs` epochs at `batch` (and `lr` when given) on the small dataset and waits for the end. */
async function train(page, { epochs, batch, lr }) {
  await page.fill("#recipe-form [name=epochs]", String(epochs));
  await page.fill("#recipe-form [name=batch]", String(batch));
  if (lr) await page.fill("#recipe-form [name=lr]", lr);
  await page.click("#train-start");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
}

const rows = (page) => page.$$eval("#runs-body tr", (rows) => rows.map((row) => ({
  id: row.dataset.run, label: row.dataset.label, status: row.dataset.status,
  accuracy: row.querySelector("[data-accuracy]").dataset.accuracy, load: !!row.querySelector("[data-action=load]"),
})));

/** Waits until the runs in browser storage are `count`, none still running, as the table shows them. */
async function storageHolds(page, count) {
  await waitForAsync(page, async (count) => {
    const root = await navigator.storage.getDirectory();
    const runs = JSON.parse(await (await (await root.getFileHandle("runs.json")).getFile()).text());
    const kept = runs.filter((run) => run.weights_kept).length;
    return runs.length === count && kept === document.querySelectorAll("#runs-body [data-action=load]").length
      && runs.every((run) => run.status.state !== "running");
  }, count);
}

async function download(page, selector) {
  const [file] = await Promise.all([page.waitForEvent("download"), page.click(selector)]);
  return { name: file.suggestedFilename(), text: await readFile(await file.path(), "utf8") };
}

test("runs are kept in a table labelled by what changed: overlaid, exported, loaded, deleted, and still there after a reload", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  assert.match(await page.locator("#runs-summary").textContent(), /No runs yet/);

  await train(page, { epochs: 1, batch: 64 });
  await train(page, { epochs: 1, batch: 128 });
  // A third run, stopped after its first steps.
  await page.fill("#recipe-form [name=epochs]", "3");
  await page.fill("#recipe-form [name=lr]", "3e-3");
  await page.click("#train-start");
  await page.waitForSelector("#step-text:has-text('of 12')", { timeout: 5 * MINUTES });
  await page.click("#train-stop");
  await page.waitForSelector("#train-status:has-text('stopped')", { timeout: 5 * MINUTES });
  await page.waitForFunction(() => document.querySelectorAll("#runs-body tr").length === 3);
  let table = await rows(page);
  assert.deepEqual(table.map((row) => [row.label, row.status]), [
    ["epochs 1 → 3, lr 1e-3 → 3e-3", "stopped"],
    ["batch 64 → 128", "finished"],
    ["first run", "finished"],
  ], "newest first, each against the run before it");
  assert.ok(Number(table[1].accuracy) > 0 && Number(table[2].accuracy) > 0, "finished runs show their test accuracy");
  await page.waitForFunction(() => document.querySelectorAll("#runs-body [data-action=load]").length === 2);

  // Overlay the first run's curves on the charts: its epoch of test accuracy joins the current run's.
  const points = async () => Number(await page.locator("#accuracy-chart").getAttribute("data-points"));
  const before = await points();
  await page.check(`#runs-body tr[data-run="${table[2].id}"] [data-action=overlay]`);
  assert.equal(await points(), before + 1);
  assert.match(await page.locator("#accuracy-legend").textContent(), /run 1 \(first run\): test accuracy/);
  if (SCREENSHOTS) {
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.locator("section:has(#runs-table)").screenshot({ path: `${SCREENSHOTS}/runs.png` });
  }

  // The table as CSV, a run as JSON.
  const csv = await download(page, "#runs-csv");
  assert.equal(csv.name, "vit-runs.csv");
  const lines = csv.text.trim().split("\n");
  assert.equal(lines.length, 4);
  assert.match(lines[0], /^run,started_ms,label,status,preset,epochs,batch,lr/);
  assert.match(lines[2], /,batch 64 → 128,finished,tiny,1,128,/);
  const json = await download(page, `#runs-body tr[data-run="${table[1].id}"] [data-action=json]`);
  const run = JSON.parse(json.text);
  assert.equal(run.recipe.batch_size, 128);
  assert.equal(run.history.epochs.length, 1);
  assert.ok(run.history.steps.length >= 1 && /^[0-9a-f]{64}$/.test(run.weights_sha256));

  // A run's weights come back from browser storage.
  await page.click(`#runs-body tr[data-run="${table[2].id}"] [data-action=load]`);
  await page.waitForFunction(() => document.querySelector("#weights-note").textContent.startsWith("From run 1: tiny preset, 1 epoch,"));

  // Browser storage has caught up (the page writes it after each change, one write at a time).
  await storageHolds(page, 3);
  await page.reload();
  await datasetReady(page);
  await page.waitForFunction(() => document.querySelectorAll("#runs-body tr").length === 3);
  assert.deepEqual(await rows(page), table, "the table survives a reload");
  await page.click(`#runs-body tr[data-run="${table[2].id}"] [data-action=delete]`);
  await page.waitForFunction(() => document.querySelectorAll("#runs-body tr").length === 2);
  table = await rows(page);
  assert.deepEqual(table.map((row) => row.label), ["epochs 1 → 3, lr 1e-3 → 3e-3", "first run"], "labels follow the runs that remain");
  await storageHolds(page, 2);
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll("#runs-body tr").length === 2);
  await context.close();
});

test("the probe's attention is kept at every capture: the slider shows an earlier one, play animates them, and any picture can be watched", async () => {
  const page = await shared.browser.newPage({ viewport: { width: 1100, height: 1600 } });
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await page.waitForSelector("#predictions-grid figure[data-index='3']", { timeout: 5 * MINUTES });
  await page.click("#predictions-grid figure[data-index='3']");
  await page.waitForFunction(() => document.querySelector("#attention-caption").textContent.includes("test image 4"));
  await page.click("#probe-use");
  assert.match(await page.locator("#probe-name").textContent(), /^test image 4 \(\w+\)$/, "named with its true class");

  // 2 epochs of 32 steps: a capture at step 1 and every 10 steps.
  await page.fill("#recipe-form [name=epochs]", "2");
  await page.fill("#recipe-form [name=batch]", "16");
  await page.click("#train-start");
  await page.waitForSelector("#probe-canvas[data-step]", { timeout: 5 * MINUTES });
  // Mid-run, another picture becomes the probe.
  await page.click("#predictions-grid figure[data-index='5']");
  await page.waitForFunction(() => document.querySelector("#attention-caption").textContent.includes("test image 6"));
  await page.click("#probe-use");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });

  const slider = page.locator("#probe-slider");
  const captures = Number(await slider.getAttribute("max")) + 1;
  assert.ok(captures >= 7, `${captures} captures of 64 steps`);
  const shown = async () => [
    await page.locator("#probe-canvas").getAttribute("data-step"),
    (await page.locator("#probe-canvas").getAttribute("data-probe")).split(" (")[0],
  ];
  assert.deepEqual(await shown(), ["60", "test image 6"], "the slider follows the run to its latest capture");
  await slider.fill("0");
  assert.deepEqual(await shown(), ["1", "test image 4"], "the first capture, of the first probe");
  assert.match(await page.locator("#probe-position").textContent(), new RegExp(`^capture 1 of ${captures} · step 1 · epoch 1 · test image 4 \\(\\w+\\) · .* kept$`));
  assert.match(await page.locator("#probe-text").textContent(), /^step 1: “\w+” at \d+%$/);

  if (SCREENSHOTS) await page.locator(".probe-scrub").evaluate((scrub) => scrub.scrollIntoView({ block: "center" }));
  if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/probe-scrub.png`, clip: await page.locator(".probe").evaluate((probe) => {
    const box = probe.getBoundingClientRect(); return { x: box.left, y: box.top, width: box.width, height: box.height + 110 };
  }) });
  await page.click("#probe-play");
  await page.waitForFunction(() => document.querySelector("#probe-canvas").dataset.step !== "1");
  await page.waitForFunction(() => document.querySelector("#probe-canvas").dataset.step === "60");
  assert.equal(await page.locator("#probe-play").textContent(), "▶ Play", "playing stops at the latest capture");
  await page.close();
});
