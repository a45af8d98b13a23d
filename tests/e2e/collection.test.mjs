// A person's own classes: a folder or a zip of class folders imported in the page, kept across
// reloads, fine-tuned head-only and whole-model, then used by the photo card and downloaded; bad
// folders and zip bombs refused; names from folders and weight files shown as text, never markup.
// The pictures are drawn by a native test (tests/fine_tune.rs, writes_e2e_fixtures_when_asked):
// skies, stripes and grass, 30 of each, no photographs of anyone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { MINUTES, SCREENSHOTS, SMALL, datasetReady, probabilities, shared, waitForAsync } from "./harness.mjs";

const FIXTURES = process.env.E2E_FIXTURES_DIR && join(process.env.E2E_FIXTURES_DIR, "pictures");
const skip = !FIXTURES && "E2E_FIXTURES_DIR is not set (scripts/e2e.sh sets it)";

const classes = (page) => page.$$eval("#collection-classes li", (rows) =>
  rows.map((row) => ({ name: row.querySelector(".name").textContent, count: Number(row.dataset.count) })));

async function open(context) {
  const page = await context.newPage({ viewport: { width: 1100, height: 1600 } });
  page.errors = [];
  page.on("pageerror", (error) => page.errors.push(error.message));
  page.on("dialog", (dialog) => { page.errors.push(`a dialog opened: ${dialog.message()}`); dialog.dismiss(); });
  await page.goto(`${shared.server.url}${SMALL}`);
  await page.waitForSelector("body[data-ready=true]");
  await datasetReady(page);
  return page;
}

async function imported(page, count) {
  await page.waitForFunction((count) => document.querySelectorAll("#collection-classes li").length === count
    && !document.querySelector("#collection-progress:not([hidden])"), count, { timeout: 5 * MINUTES });
}

/** Sends the collection to the worker (from the pretrained model), trains `trainable` with the
 *  proposed recipe, and returns the held-out accuracy the test card shows. */
async function fineTune(page, trainable, lr) {
  await page.selectOption("#collection-base", "pretrained");
  await page.click("#collection-use");
  await page.waitForSelector("#data-status[data-source=collection]", { timeout: 2 * MINUTES });
  assert.equal(await page.locator("#data-title").textContent(), "Dataset: your own pictures");
  assert.equal(await page.inputValue("#recipe-form [name=train]"), "head", "the form proposes a linear probe");
  await page.selectOption("#recipe-form [name=train]", trainable);
  if (lr) await page.fill("#recipe-form [name=lr]", lr);
  const epochs = await page.inputValue("#recipe-form [name=epochs]");
  await page.click("#train-start");
  await page.waitForSelector("#train-status:has-text('finished')", { timeout: 15 * MINUTES });
  await page.waitForFunction((epochs) => document.querySelector("#evaluation-summary").textContent.startsWith(`After epoch ${epochs}`), epochs);
  return Number(await page.locator("#evaluation-summary").getAttribute("data-accuracy"));
}

test("a folder of class folders is imported, kept across reloads, fine-tuned head-only and whole-model, and names the photo card's answers", { skip }, async () => {
  const context = await shared.browser.newContext();
  let page = await open(context);
  await page.setInputFiles("#collection-folder", join(FIXTURES, "three-classes"));
  await imported(page, 3);
  assert.deepEqual(await classes(page), [{ name: "grass", count: 30 }, { name: "sky", count: 30 }, { name: "stripes", count: 30 }]);
  assert.equal(await page.locator("#collection-skipped").getAttribute("data-skipped"), "2", "README.txt and stripes/notes.txt");
  assert.match(await page.locator("#collection-skipped").textContent(), /README\.txt, stripes\/notes\.txt/);
  assert.equal(await page.locator("#collection-summary").getAttribute("data-ready"), "true");
  assert.equal(await page.locator("#collection-classes li:nth-child(1) canvas").count(), 24, "24 thumbnails, the rest counted");
  // A picture clicked is removed.
  await page.click("#collection-classes li:nth-child(3) canvas >> nth=0");
  assert.equal((await classes(page))[2].count, 29);

  // Kept in browser storage: a reload finds the pictures as they were.
  await waitForAsync(page, async () => {
    const root = await navigator.storage.getDirectory();
    const file = await (await root.getFileHandle("collection.vitpics")).getFile();
    return file.size === 8 + 4 + '["grass","sky","stripes"]'.length + 4 + 89 * 3073;
  });
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await imported(page, 3);
  assert.deepEqual((await classes(page)).map((row) => row.count), [30, 30, 29]);
  await datasetReady(page);

  // Head only: 18 held-out pictures (6 a class, rounded from 20 %). A model that ignored the
  // pictures would get 6 right on average and 15 or more with probability 1.9e-5.
  const headOnly = await fineTune(page, "head");
  assert.ok(headOnly >= 15 / 18, `head only: ${headOnly} of the held-out pictures right`);
  await page.waitForFunction(() => document.querySelectorAll("#class-accuracy li").length === 3);
  assert.deepEqual(await page.$$eval("#class-accuracy li", (rows) => rows.map((row) => row.dataset.class)), ["grass", "sky", "stripes"]);
  const answers = (await probabilities(page)).map((row) => row.name).sort();
  assert.deepEqual(answers, ["grass", "sky", "stripes"], "the photo card answers with the person's classes");
  assert.match(await page.locator("#weights-note").textContent(), /3 classes of your own \(grass, sky, stripes\)/);
  if (SCREENSHOTS) {
    await page.locator("#collection-card").scrollIntoViewIfNeeded();
    await page.locator("#collection-card").screenshot({ path: `${SCREENSHOTS}/own-classes.png` });
  }
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#weights-download")]);
  assert.equal(download.suggestedFilename(), "vit-tiny-3-classes-epoch15.safetensors");
  const weightsFile = await download.path();

  // The whole model, from the pretrained weights again, at a learning rate that keeps what it knew.
  const whole = await fineTune(page, "whole", "1e-4");
  assert.ok(whole >= 15 / 18, `whole model: ${whole} of the held-out pictures right (the same bound)`);

  // One click back to CIFAR-10 and its pretrained model.
  await page.click("#collection-cifar");
  await page.waitForSelector("#data-status[data-source=cache]", { timeout: 2 * MINUTES });
  await page.waitForFunction(() => document.querySelector("#weights-note").textContent.startsWith("Pretrained weights:"));
  await page.waitForFunction(() => document.querySelectorAll("#probabilities li").length === 5);
  assert.equal(await page.locator("#data-title").textContent(), "Dataset: CIFAR-10");
  assert.equal(await page.inputValue("#recipe-named"), "reference", "the form is CIFAR-10's again");

  // After a reload the pictures are still here, and the run's weights in the runs table.
  await page.reload();
  await page.waitForSelector("body[data-ready=true]");
  await imported(page, 3);
  await page.waitForFunction(() => document.querySelectorAll("#runs-body tr").length === 2);
  await page.click("#runs-body tr:last-child [data-action=load]");
  await page.waitForFunction(() => /3 classes of your own/.test(document.querySelector("#weights-note").textContent));
  await page.waitForFunction(() => [...document.querySelectorAll("#probabilities li")].map((row) => row.dataset.class).sort().join() === "grass,sky,stripes");

  // The downloaded fine-tuned file loads again, as a model with three classes, not as an error.
  await page.setInputFiles("#weights-input", weightsFile);
  await page.waitForFunction(() => /3 classes of your own/.test(document.querySelector("#weights-note").textContent));
  assert.equal(await page.locator("#weights-error").isHidden(), true);
  await page.waitForFunction(() => /knows other classes/.test(document.querySelector("#evaluation-summary").textContent));
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a zip of class folders is imported like a folder, and a zip bomb is refused without the tab running out of memory", { skip }, async () => {
  const context = await shared.browser.newContext();
  const page = await open(context);
  await page.setInputFiles("#collection-zip", join(FIXTURES, "three-classes.zip"));
  await imported(page, 3);
  assert.deepEqual(await classes(page), [{ name: "grass", count: 30 }, { name: "sky", count: 30 }, { name: "stripes", count: 30 }]);
  assert.equal(await page.locator("#collection-skipped").getAttribute("data-skipped"), "2");

  await page.setInputFiles("#collection-zip", join(FIXTURES, "bomb.zip"));
  await page.waitForSelector("#collection-error:not([hidden])", { timeout: 5 * MINUTES });
  assert.match(await page.locator("#collection-error").textContent(), /pets\/sky\/huge\.png in bomb\.zip expands to more than 64 MB/);
  assert.deepEqual((await classes(page)).map((row) => row.count), [30, 30, 30], "the pictures it had are kept");
  assert.deepEqual(page.errors, []);
  await context.close();
});

test("a folder without pictures or with one class is refused; names from folders and weight files are text, never markup", { skip }, async () => {
  const context = await shared.browser.newContext();
  const page = await open(context);
  await page.setInputFiles("#collection-folder", join(FIXTURES, "no-pictures"));
  await page.waitForSelector("#collection-error:not([hidden])");
  assert.match(await page.locator("#collection-error").textContent(), /no pictures were found \(2 files were not pictures\)/);
  await page.setInputFiles("#collection-folder", join(FIXTURES, "one-class"));
  await page.waitForFunction(() => /only one class was found \('cats'\)/.test(document.querySelector("#collection-error").textContent));
  assert.equal(await page.locator("#collection-classes li").count(), 0, "nothing was kept");

  await page.setInputFiles("#collection-folder", join(FIXTURES, "hostile"));
  await imported(page, 2);
  assert.deepEqual(await classes(page), [{ name: "<img src=x onerror=alert(1)>", count: 3 }, { name: "cats", count: 3 }]);
  assert.equal(await page.locator("#collection-card img").count(), 0, "the name was not made into an element");
  // A class removed: one is left, which cannot be trained on, and the page says so.
  await page.click("#collection-classes [data-remove-class='1']");
  assert.deepEqual((await classes(page)).map((row) => row.name), ["<img src=x onerror=alert(1)>"]);
  assert.match(await page.locator("#collection-summary").textContent(), /Not ready to train: only one class/);

  await page.setInputFiles("#weights-input", join(FIXTURES, "hostile-classes.safetensors"));
  await page.waitForFunction(() => /3 classes of your own/.test(document.querySelector("#weights-note").textContent));
  await page.waitForFunction(() => document.querySelectorAll("#probabilities li").length === 3);
  assert.ok((await probabilities(page)).some((row) => row.name === "<img src=x onerror=alert(1)>"));
  assert.equal(await page.locator("#probabilities img, #weights-note img").count(), 0);
  await page.waitForTimeout(500);
  assert.deepEqual(page.errors, [], "no script ran from a name");
  await context.close();
});

test("classes made in the page take pictures from the file picker and from the camera while a button is held", { skip }, async () => {
  const context = await shared.browser.newContext();
  const page = await open(context);
  for (const name of ["mine", "theirs"]) {
    await page.fill("#collection-new-name", name);
    await page.click("#collection-add-class");
  }
  await page.fill("#collection-new-name", "mine");
  await page.click("#collection-add-class");
  assert.match(await page.locator("#collection-error").textContent(), /there is a class named 'mine' already/);
  assert.deepEqual(await classes(page), [{ name: "mine", count: 0 }, { name: "theirs", count: 0 }]);
  assert.match(await page.locator("#collection-summary").textContent(), /Not ready to train: class 'mine' has 0 pictures/);

  const sky = join(FIXTURES, "three-classes", "sky");
  await page.setInputFiles("[data-add-to='0']", [join(sky, "01.png"), join(sky, "02.png"), join(FIXTURES, "three-classes", "README.txt")]);
  await page.waitForFunction(() => /Added 2 pictures to mine\. Skipped 1 file that is not a picture\./.test(document.querySelector("#collection-status").textContent));
  assert.deepEqual((await classes(page)).map((row) => row.count), [2, 0]);
  // A picture pasted while a class's button has the focus goes into that class.
  await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(120, 90);
    const context = canvas.getContext("2d");
    context.fillStyle = "#36c"; context.fillRect(0, 0, 120, 90);
    const transfer = new DataTransfer();
    transfer.items.add(new File([await canvas.convertToBlob({ type: "image/png" })], "pasted.png", { type: "image/png" }));
    const button = document.querySelector("[data-remove-class='0']");
    button.focus();
    button.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction(() => /Added 1 picture to mine\.$/.test(document.querySelector("#collection-status").textContent));
  assert.deepEqual((await classes(page)).map((row) => row.count), [3, 0]);
  assert.equal((await page.locator("#attention-caption").textContent()).includes("pasted.png"), false, "the photo card did not take it");

  // The synthetic camera (Chromium's fake device): hold "record" on the second class.
  await page.click("#collection-camera-start");
  await page.waitForSelector("#collection-video:not([hidden])");
  const record = page.locator("[data-record='1']");
  await record.dispatchEvent("pointerdown");
  await page.waitForFunction(() => /Recording into theirs: [3-9]/.test(document.querySelector("#collection-status").textContent));
  await page.dispatchEvent("body", "pointerup");
  await page.waitForFunction(() => /^Recorded \d+ frames into theirs\.$/.test(document.querySelector("#collection-status").textContent));
  const recorded = (await classes(page))[1].count;
  assert.ok(recorded >= 3, `${recorded} frames recorded`);
  await page.waitForTimeout(600);
  assert.equal((await classes(page))[1].count, recorded, "recording stopped when the button was let go");
  assert.equal(await page.locator("#collection-summary").getAttribute("data-ready"), "true");
  await page.click("#collection-camera-stop");
  assert.deepEqual(page.errors, []);
  await context.close();
});
