// The page in the other engines people use: Firefox (geckodriver) and WebKit, Safari's engine
// (WebKitGTK's MiniBrowser through WebKitWebDriver, under Xvfb), driven through plain W3C
// WebDriver (webdriver.mjs). One browser session per engine runs the set in order, as one person
// would: start-up, a photo, the dataset and its cache, training with pause and resume, the
// checkpoint after a reload, the weights out and back in, threads, and an offline reload. Each
// engine's figures are printed beside Chromium's from the same run (`# engine …` lines), for the
// browser table in docs/browsers.md. An engine that is not installed is skipped with the reason.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MINUTES, SMALL, datasetReady, shared } from "./harness.mjs";
import { engines, launch } from "./webdriver.mjs";

const PHOTO = process.env.TEST_PHOTO;
/** The small dataset on whichever path the page picks (no WebGPU in these engines here). */
const QUERY = "?dataset=data/small/manifest.json";

const ready = "return document.body.dataset.ready === 'true';";

/** The top five as the page lists them. */
const topFive = (session) => session.run(`return [...document.querySelectorAll("#probabilities li")]
  .map((row) => ({ name: row.dataset.class, p: Number(row.dataset.probability) }));`);

/** Starts a run of `epochs` of the small dataset at batch 64 from the form. */
async function startRun(session, epochs) {
  await session.waitFor("return !document.querySelector('#train-start').disabled;", { what: "the Start button" });
  await session.fill("#recipe-form [name=epochs]", String(epochs));
  await session.fill("#recipe-form [name=batch]", "64");
  await session.click("#train-start");
}

const finished = "return document.querySelector('#train-status').textContent === 'finished';";

/** What each engine measured, printed at the end beside Chromium's. */
const figures = {};

/** `E2E_ENGINES=firefox` (or `webkit`) runs one engine's set alone. */
const chosen = process.env.E2E_ENGINES?.split(",");
for (const [key, engine] of Object.entries(engines()).filter(([key]) => !chosen || chosen.includes(key))) {
  describe(engine.name, { skip: engine.reason ?? false }, () => {
    let session;
    before(async () => { session = await launch(engine); });
    after(async () => { await session?.close(); });

    test("starts, says which paths it has, and explains the sample photo", async () => {
      await session.goto(`${shared.server.url}${QUERY}`);
      await session.waitFor(ready, { what: "the page to be ready" });
      const rows = await topFive(session);
      assert.equal(rows.length, 5);
      assert.equal(rows[0].name, "horse", JSON.stringify(rows));
      const seen = await session.run(`return { agent: navigator.userAgent, adapter: document.querySelector("#adapter").textContent,
        path: document.querySelector("#compute-path").textContent, reason: document.querySelector("#compute-reason").textContent };`);
      figures[key] = { ...seen };
      console.log(`# ${engine.name}: ${seen.agent}\n#   adapter: ${seen.adapter}; path: ${seen.path}; ${seen.reason}`);
    });

    test("threads: one per core where the page is cross-origin isolated, and the selector offers only what runs", async () => {
      const threads = Number(await session.waitFor("return document.querySelector('#compute-threads').dataset.threads;", { what: "the worker's threads" }));
      const state = await session.run(`return { isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency,
        text: document.querySelector("#compute-threads").textContent,
        choiceHidden: document.querySelector("#threads-choice").hidden,
        offered: [...document.querySelectorAll("#threads-select option")].map((option) => option.value) };`);
      Object.assign(figures[key], { threads, isolated: state.isolated, threadsText: state.text });
      console.log(`#   threads: ${threads}, cross-origin isolated: ${state.isolated}: ${state.text}`);
      if (threads === 1) {
        assert.equal(state.choiceHidden, true, `one thread runs, so no other count is offered: ${JSON.stringify(state)}`);
        assert.doesNotMatch(state.text, /Error|cloned|exception/i, "said in words, not a DOM exception's");
      } else {
        assert.equal(state.isolated, true);
        assert.equal(state.choiceHidden, false);
        assert.deepEqual(state.offered, ["", ...Array.from({ length: Math.max(threads, state.cores) }, (_, i) => String(i + 1))].slice(0, Math.min(state.cores, 32) + 1));
      }
    });

    test("the dataset is downloaded once, then read from browser storage", async () => {
      assert.equal(await session.waitFor("return document.querySelector('#data-status').dataset.source;", { what: "the dataset" }), "network");
      await session.reload();
      await session.waitFor(ready, { what: "the reloaded page" });
      assert.equal(await session.waitFor("return document.querySelector('#data-status').dataset.source;", { what: "the dataset" }), "cache");
    });

    test("a photograph through the file input is explained", { skip: !PHOTO && "TEST_PHOTO is not set" }, async () => {
      await session.upload("#photo-input", PHOTO);
      await session.waitFor("return document.querySelector('#attention-caption').textContent.includes('Kleiber_by_Lukas_Baubkus.jpg');", { what: "the photo" });
      assert.match(await session.text("#photo-size"), /^6028×3391/);
      const rows = await topFive(session);
      assert.equal(rows.length, 5);
      assert.ok(rows.reduce((sum, row) => sum + row.p, 0) > 0.8, JSON.stringify(rows));
    });

    test("one epoch trains, with pause and resume", async () => {
      await startRun(session, 1);
      await session.waitFor("return Number(document.querySelector('#step-text').textContent.split(' ')[0]) >= 1;", { what: "the first step" });
      await session.click("#train-pause");
      await session.waitFor("return document.querySelector('#train-status').textContent === 'paused';", { what: "the pause" });
      await session.click("#train-resume");
      await session.waitFor(finished, { what: "the run to finish" });
      const rows = await session.run("return document.querySelectorAll('#epoch-table tbody tr').length;");
      assert.equal(rows, 1);
    });

    test("a stopped run's checkpoint is offered after a reload and resumes", async () => {
      // The last run's "Saved … after epoch 1" is still shown: blank it, so the wait is for this run's.
      await session.run("document.querySelector('#checkpoint-status').textContent = '';");
      await startRun(session, 2);
      await session.waitFor("return document.querySelector('#checkpoint-status').textContent.startsWith('Saved in this browser after epoch 1');", { what: "epoch 1's checkpoint" });
      // Epoch 1 of a fresh run, unpaused, as Chromium's peer run below measures it.
      figures[key].speed = await session.run("return document.querySelector('#epoch-table tbody tr').children[5].textContent;");
      figures[key].threads = Number(await session.run("return document.querySelector('#compute-threads').dataset.threads;"));
      await session.click("#train-stop");
      await session.waitFor("return document.querySelector('#train-status').textContent.startsWith('stopped');", { what: "the stop" });
      await session.reload();
      await session.waitFor("return !document.querySelector('#checkpoint-offer').hidden;", { what: "the checkpoint offer" });
      assert.match(await session.text("#checkpoint-text"), /stopped after epoch 1 of 2/);
      await session.waitFor("return !document.querySelector('#checkpoint-resume').disabled;", { what: "Resume" });
      await session.click("#checkpoint-resume");
      await session.waitFor(finished, { what: "the resumed run to finish" });
      const epochs = await session.run("return [...document.querySelectorAll('#epoch-table tbody tr td:first-child')].map((cell) => cell.textContent);");
      assert.deepEqual(epochs, ["1", "2"]);

    });

    test("the weights download as a file and load back", async () => {
      // The page hands the browser a blob to save; keep it, as the downloads folder would.
      const saved = await session.runAsync(`
        const made = URL.createObjectURL;
        let blob = null, name = null;
        URL.createObjectURL = (object) => { blob = object; return made.call(URL, object); };
        const click = HTMLAnchorElement.prototype.click;
        HTMLAnchorElement.prototype.click = function () { if (this.download) name = this.download; else click.call(this); };
        document.querySelector("#weights-download").click();
        for (let waited = 0; !name && waited < 600000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
        URL.createObjectURL = made;
        HTMLAnchorElement.prototype.click = click;
        const bytes = new Uint8Array(await blob.arrayBuffer());
        let binary = "";
        for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        return { name, base64: btoa(binary) };`);
      assert.match(saved.name, /^vit-tiny-epoch\d+\.safetensors$/);
      const file = join(await mkdtemp(join(tmpdir(), `vit-${key}-`)), saved.name);
      await writeFile(file, Buffer.from(saved.base64, "base64"));
      await session.upload("#weights-input", file);
      await session.waitFor("return document.querySelector('#weights-note').textContent.startsWith('Loaded ');", { what: "the weights to load" });
      assert.ok((await session.text("#weights-note")).startsWith(`Loaded ${saved.name}: tiny preset`), await session.text("#weights-note"));
    });

    test("after one visit the page reloads, predicts and finds its dataset with the network gone", async (t) => {
      const status = await session.waitFor("return document.querySelector('#offline-status').dataset.status;", { what: "the offline copy" });
      if (status !== "offline") {
        figures[key].offline = `no: ${await session.text("#offline-status")}`;
        return t.skip(`the page says: ${await session.text("#offline-status")}`);
      }
      shared.server.setOffline(true);
      try {
        await session.reload();
        await session.waitFor(ready, { what: "the page, offline" });
        assert.equal((await topFive(session)).length, 5);
        assert.equal(await session.waitFor("return document.querySelector('#data-status').dataset.source;", { what: "the dataset" }), "cache");
        figures[key].offline = "yes";
      } finally {
        shared.server.setOffline(false);
      }
    });
  });
}

test("Chromium's CPU path on the same run, for the browser table", async () => {
  const measured = Object.keys(figures);
  if (measured.length === 0) return;
  // One epoch of the small dataset at batch 64, as each engine above trained it: on a thread per
  // core, and on one thread, beside WebKit's single thread.
  const speed = async (query) => {
    const page = await shared.browser.newPage();
    await page.goto(`${shared.server.url}${SMALL}${query}`);
    await datasetReady(page);
    await page.fill("#recipe-form [name=epochs]", "1");
    await page.fill("#recipe-form [name=batch]", "64");
    await page.click("#train-start");
    await page.waitForSelector("#train-status:has-text('finished')", { timeout: 10 * MINUTES });
    const imagesPerSecond = await page.$$eval("#epoch-table tbody tr", (rows) => rows[rows.length - 1].children[5].textContent);
    const threads = await page.locator("#compute-threads").getAttribute("data-threads");
    await page.close();
    return `${imagesPerSecond} img/s on ${threads} thread${threads === "1" ? "" : "s"}`;
  };
  console.log(`# Chromium ${shared.browser.version()}, batch 64: ${await speed("")}; ${await speed("&threads=1")}`);
  for (const key of measured) {
    const seen = figures[key];
    console.log(`# ${key}: ${seen.path}, isolated: ${seen.isolated}, batch 64: ${seen.speed} img/s on ${seen.threads} thread(s); offline: ${seen.offline}`);
  }
});
