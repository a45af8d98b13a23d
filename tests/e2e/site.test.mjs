// The static site as a host serves it: dist/ from a plain file server that sends no special
// headers. The service worker makes the page cross-origin isolated (threads) and keeps it for
// offline use; a new deployment replaces the kept copy once the person agrees, and a broken one
// never replaces it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MINUTES, SMALL, assertTopFive, datasetReady, shared } from "./harness.mjs";
import { serve } from "./server.mjs";

const DIST = resolve(import.meta.dirname, "../../dist");

test("the first visit is made cross-origin isolated by the service worker, and threads follow", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, "isolated on a host that sends no headers");
  await page.waitForSelector("#offline-status[data-status=offline]", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#offline-status").textContent(), /works offline/);
  await page.waitForSelector("#compute-threads[data-threads]", { timeout: 5 * MINUTES });
  assert.ok(Number(await page.locator("#compute-threads").getAttribute("data-threads")) >= Math.min(2, await page.evaluate(() => navigator.hardwareConcurrency)));
  await context.close();
});

test("without a service worker (and no headers) the page runs on one thread and says why", async () => {
  const context = await shared.browser.newContext({ serviceWorkers: "block" });
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  await page.waitForSelector("#compute-threads[data-threads='1']", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#compute-threads").textContent(), /1 thread: this page is not cross-origin isolated/);
  assert.equal(await page.locator("#threads-choice").isHidden(), true, "no threads to choose from");
  await assertTopFive(page);
  await context.close();
});

test("a training worker whose wasm download is cut off downloads it again and starts", async () => {
  // On a first visit to a host that sends the isolation headers, the service worker's install
  // revalidates the files the worker is streaming, and Chromium can cut the worker's stream off.
  const context = await shared.browser.newContext({ serviceWorkers: "block" });
  let downloads = 0;
  await context.route("**/vit-web_bg.wasm", (route) => (++downloads === 2 ? route.abort("connectionaborted") : route.continue()));
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}&threads=1`);
  assert.equal(await datasetReady(page), "network", "the worker started and loaded the dataset");
  assert.ok(downloads >= 3, `the page's download, the worker's cut-off one and its second try (${downloads})`);
  assert.equal(await page.locator("#error").isHidden(), true, await page.locator("#error").textContent());
  await context.close();
});

test("after one visit the page works offline: it reloads, predicts and trains with the network gone", async () => {
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  await page.goto(`${shared.server.url}${SMALL}`);
  await datasetReady(page);
  await page.waitForSelector("#offline-status[data-status=offline]", { timeout: 5 * MINUTES });

  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  assert.equal(await page.locator("#error").isHidden(), true, await page.locator("#error").textContent());
  await assertTopFive(page);
  assert.equal(await datasetReady(page), "cache");
  await page.fill("#recipe-form [name=epochs]", "1");
  await page.fill("#recipe-form [name=batch]", "64");
  await page.click("#train-start");
  await page.waitForFunction(() => Number(document.querySelector("#step-text").textContent.split(" ")[0]) >= 1, null, { timeout: 5 * MINUTES });
  await page.click("#train-stop");
  await context.close();
});

/** A copy of dist/ that a test can redeploy, served as a static host serves it. */
async function deployment() {
  const root = await mkdtemp(join(tmpdir(), "vit-site-"));
  await cp(DIST, root, { recursive: true });
  return { root, server: await serve(root) };
}

/** Rewrites the deployment in `root` as build-site.sh would with `change` made to index.html. */
async function redeploy(root, version, change, { missing, worker: changeWorker = (code) => code } = {}) {
  const index = join(root, "index.html");
  await writeFile(index, change(await readFile(index, "utf8")));
  const precache = JSON.parse(await readFile(join(root, "precache.json"), "utf8"));
  const worker = await readFile(join(root, "sw.js"), "utf8");
  await writeFile(join(root, "sw.js"), changeWorker(worker.replace(`const VERSION = "${precache.version}";`, `const VERSION = "${version}";`)));
  precache.version = version;
  precache.files = precache.files.filter((file) => file !== "not-deployed.wasm");
  if (missing) precache.files.push(missing);
  await writeFile(join(root, "precache.json"), JSON.stringify(precache));
}

test("a new deployment is offered and replaces the kept copy, even when its switch stalls; a half-deployed one never does", async () => {
  const { root, server } = await deployment();
  const context = await shared.browser.newContext();
  const page = await context.newPage();
  const title = () => page.locator("h1").textContent();
  try {
    await page.goto(server.url);
    await page.waitForSelector("#offline-status[data-status=offline]", { timeout: 15 * MINUTES });
    const original = await title();

    // A deployment one of whose files is missing: its service worker cannot install, so the kept
    // copy stays in charge, whole, and nothing is offered.
    await redeploy(root, "broken", (html) => html.replace(original, "Broken deployment"), { missing: "not-deployed.wasm" });
    await page.reload();
    await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
    await page.waitForTimeout(3000); // time for the update to fail
    assert.equal(await title(), original);
    assert.equal(await page.locator("#update-offer").isHidden(), true);

    // A whole one: it installs beside the kept copy and is offered; taking it reloads onto it.
    await redeploy(root, "second", (html) => html.replace("Broken deployment", "Second deployment"));
    await page.reload();
    await page.waitForSelector("#update-offer:not([hidden])", { timeout: 5 * MINUTES });
    assert.equal(await title(), original, "the running page is the kept copy until the person agrees");
    await page.click("#update-reload");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Second deployment", null, { timeout: 5 * MINUTES });
    await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });

    // One whose switch stalls, as Chromium's can when a request reaches the old worker as it
    // switches (here its worker ignores the first two requests to take over): the page reloads
    // after a few seconds, the reloaded page's request stalls too and it reloads again, and the
    // page after that completes the switch.
    const HANDLER = `if (event.data === "activate-update") self.skipWaiting();`;
    const stalls = (code) => {
      assert.ok(code.includes(HANDLER), "sw.js takes over on request");
      return code.replace(HANDLER, `if (event.data === "activate-update" && ++self.asked > 2) self.skipWaiting();`) + "\nself.asked = 0;\n";
    };
    await redeploy(root, "third", (html) => html.replace("Second deployment", "Third deployment"), { worker: stalls });
    await page.reload();
    await page.waitForSelector("#update-offer:not([hidden])", { timeout: 5 * MINUTES });
    await page.click("#update-reload");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Third deployment", null, { timeout: 5 * MINUTES });
    await page.waitForSelector("body[data-ready=true]", { timeout: 15 * MINUTES });
  } finally {
    await context.close();
    server.close();
    await rm(root, { recursive: true, force: true });
  }
});
