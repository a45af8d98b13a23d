// Several tabs of one browser profile: each run keeps its own record and checkpoint, a run being
// trained in one tab shows as such in the others, with no way to train it twice, and a run whose
// tab closed can be resumed from its own checkpoint.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { ARGS, CHROMIUM, MINUTES, PATIENCE, SMALL, datasetReady, shared } from "./harness.mjs";

/** A new tab of `profile` on the page with the small dataset loaded; fails on any page error. */
async function openTab(profile) {
  const page = await profile.newPage();
  page.errors = [];
  page.on("pageerror", (error) => page.errors.push(error.message));
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  return page;
}

/** Starts a run and returns its id once it trains. */
async function start(page, { epochs, batch }) {
  await page.fill("#recipe-form [name=epochs]", String(epochs));
  await page.fill("#recipe-form [name=batch]", String(batch));
  await page.evaluate(() => { document.querySelector("#checkpoint-status").textContent = ""; }); // not the last run's
  await page.click("#train-start");
  await page.waitForSelector("#train-status:has-text('training')");
  return page.evaluate(() => sessionStorage.getItem("vit-web-run"));
}

/** Waits until the tab has saved its run's checkpoint after `epoch`, then pauses the run there. */
async function pauseAfter(page, epoch) {
  await page.waitForFunction((epoch) => document.querySelector("#checkpoint-status").textContent.startsWith(`Saved in this browser after epoch ${epoch}`), epoch);
  await page.click("#train-pause");
  await page.waitForSelector("#train-status:text-is('paused')");
}

/** The runs table as `id → status` (its data-status), and each run's label. */
const table = (page) => page.$$eval("#runs-body tr", (rows) => Object.fromEntries(rows.map((row) => [row.dataset.run, { status: row.dataset.status, label: row.dataset.label }])));

/** Waits until the tab's table shows exactly these runs with these statuses. */
async function tableShows(page, expected) {
  const shows = (expected) => {
    const rows = [...document.querySelectorAll("#runs-body tr")];
    return rows.length === Object.keys(expected).length && rows.every((row) => expected[row.dataset.run] === row.dataset.status);
  };
  try {
    await page.waitForFunction(shows, expected, { timeout: Number(process.env.E2E_TABS_WAIT ?? PATIENCE) });
  } catch (error) {
    const seen = Object.fromEntries(Object.entries(await table(page)).map(([id, row]) => [id, row.status]));
    assert.deepEqual(seen, expected, `${error.message}; the table: ${await page.locator("#runs-error").textContent()}`);
    throw error;
  }
}

const offered = (page) => page.locator("#checkpoint-offer").getAttribute("data-run");

test("tabs of one profile: both runs kept, a run in another tab shown as training, a closed tab's run resumed from its own checkpoint", async () => {
  const profileDir = await mkdtemp(join(tmpdir(), "vit-web-tabs-"));
  const profile = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, args: ARGS, viewport: { width: 1100, height: 1600 } });
  profile.setDefaultTimeout(10 * MINUTES);
  try {
    // Tab A: a finished run, then a second run paused after its first epoch.
    const a = await openTab(profile);
    const first = await start(a, { epochs: 1, batch: 64 });
    await a.waitForSelector("#train-status:has-text('finished')");
    const runA = await start(a, { epochs: 8, batch: 64 });
    await pauseAfter(a, 1);

    // Tab B trains its own run at the same time; tab A sees it appear, trained elsewhere.
    const b = await openTab(profile);
    const runB = await start(b, { epochs: 6, batch: 32 });
    assert.notEqual(runA, runB);
    await tableShows(a, { [first]: "finished", [runA]: "running", [runB]: "elsewhere" });
    await pauseAfter(b, 1);

    // Tab C, opened while both train, shows both as training in other tabs, and offers neither to resume.
    const c = await openTab(profile);
    await tableShows(c, { [first]: "finished", [runA]: "elsewhere", [runB]: "elsewhere" });
    const labels = await table(c);
    assert.equal(labels[runA].label, "epochs 1 → 8", "each run keeps its own label");
    assert.equal(labels[runB].label, "epochs 8 → 6, batch 64 → 32");
    await c.waitForSelector("#checkpoint-offer:not([hidden])");
    assert.equal(await offered(c), runB, "the newest run first");
    assert.match(await c.locator("#checkpoint-text").textContent(), /^Run 3 \(epochs 8 → 6, batch 64 → 32\) is training in another tab \(epoch 2 of 6\)/);
    assert.equal(await c.locator("#checkpoint-resume").isHidden(), true, "no Resume for a run another tab trains");
    assert.equal(await c.locator("#checkpoint-discard").isHidden(), true);
    const others = await c.$$eval("#checkpoint-others li", (items) => items.map((item) => ({ run: item.dataset.run, state: item.dataset.state, resume: !!item.querySelector("[data-action=resume]"), text: item.textContent })));
    assert.deepEqual(others.map(({ run, state, resume }) => ({ run, state, resume })), [
      { run: runA, state: "elsewhere", resume: false },
      { run: first, state: "finished", resume: false },
    ]);
    assert.match(others[0].text, /Run 2 \(epochs 1 → 8\): training in another tab \(epoch 2 of 8\)/);

    // Closing tab B frees its run: tab C offers it, from B's own checkpoint, and resumes it.
    await b.close();
    await tableShows(c, { [first]: "finished", [runA]: "elsewhere", [runB]: "interrupted" });
    await c.waitForFunction((runB) => document.querySelector("#checkpoint-offer").dataset.run === runB && !document.querySelector("#checkpoint-resume").hidden, runB);
    assert.match(await c.locator("#checkpoint-text").textContent(), /stopped after epoch 1 of 6 \(tiny preset, test accuracy \d+\.\d%\)\. Resume it, or use its weights/);
    await c.click("#checkpoint-resume");
    await c.waitForSelector("#train-status:has-text('training')");
    assert.equal(await c.locator("#epoch-table tbody tr").count(), 1, "the resumed run goes on from its own epoch 1");
    await tableShows(c, { [first]: "finished", [runA]: "elsewhere", [runB]: "running" });
    await tableShows(a, { [first]: "finished", [runA]: "running", [runB]: "elsewhere" });
    await pauseAfter(c, 2);
    const files = await c.evaluate(async () => {
      const names = [];
      for await (const name of (await navigator.storage.getDirectory()).keys()) names.push(name);
      return names.filter((name) => name.startsWith("checkpoint-")).sort();
    });
    assert.deepEqual(files, [`checkpoint-${first}.vitckpt`, `checkpoint-${runA}.vitckpt`, `checkpoint-${runB}.vitckpt`].sort(), "one checkpoint per run");

    // Tab A stops its run while tab C deletes the finished one: nothing else is lost. The moment
    // tab A lets its run go, storage already says it stopped: no tab can find it "running" with
    // no tab training it.
    await c.evaluate((runA) => {
      window.storedAsFreed = navigator.locks.request(`vit-web-run-${runA}`, async () => {
        const file = await (await navigator.storage.getDirectory()).getFileHandle("runs.json");
        return JSON.parse(await (await file.getFile()).text()).find((run) => String(run.id) === runA)?.status.state;
      });
    }, runA);
    await Promise.all([a.click("#train-stop"), c.click(`#runs-body tr[data-run="${first}"] [data-action=delete]`)]);
    await a.waitForSelector("#train-status:has-text('stopped')");
    assert.equal(await c.evaluate(() => window.storedAsFreed), "stopped", "run A's final record is stored before its lock is freed");
    const d = await openTab(profile);
    await tableShows(d, { [runA]: "stopped", [runB]: "elsewhere" });
    await tableShows(a, { [runA]: "stopped", [runB]: "elsewhere" });
    await tableShows(c, { [runA]: "stopped", [runB]: "running" });
    await d.close();

    // A reload of each tab offers that tab's own run first, though another is newer.
    await a.reload();
    await datasetReady(a);
    await a.waitForSelector("#checkpoint-offer:not([hidden])");
    assert.equal(await offered(a), runA, "tab A's own run, before tab C's newer one");
    assert.match(await a.locator("#checkpoint-text").textContent(), /^Run 1 \(first run\) stopped after epoch 1 of 8/);
    await c.reload();
    await datasetReady(c);
    await c.waitForFunction((runB) => document.querySelector("#checkpoint-offer").dataset.run === runB && !document.querySelector("#checkpoint-resume").hidden, runB);
    assert.match(await c.locator("#checkpoint-text").textContent(), /stopped after epoch 2 of 6/);
    for (const page of [a, c]) assert.deepEqual(page.errors, []);
  } finally {
    await profile.close();
    await rm(profileDir, { recursive: true, force: true });
  }
});
