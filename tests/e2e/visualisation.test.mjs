// What the model sees, end to end on the CPU path: a real photograph larger than 1000×1000
// through the page's file input, drag-and-drop and paste, a 50-megapixel picture, a non-image,
// the camera, the attention views, the charts, the test-set figures and the positional
// embedding, all with the shipped pretrained weights and no training.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MINUTES, SCREENSHOTS, SMALL, assertTopFive, canvasStats, openPage } from "./harness.mjs";

// A CC-BY-SA photograph (6028×3391) from Debian's lomiri-wallpapers-20.04, fetched by
// scripts/e2e.sh; never committed.
const PHOTO = process.env.TEST_PHOTO;

async function caption(page) {
  return page.locator("#attention-caption").textContent();
}

async function waitForPicture(page, name) {
  await page.waitForFunction((name) => document.querySelector("#attention-caption").textContent.includes(name), name, { timeout: 5 * MINUTES });
}

test("a real photograph through the file input: top five, the 32×32 input and a non-uniform attention overlay", { skip: !PHOTO && "TEST_PHOTO is not set" }, async () => {
  const page = await openPage(SMALL, { viewport: { width: 1100, height: 1000 } });
  await assertTopFive(page);
  if (SCREENSHOTS) {
    // What a visitor sees first: the page's sample photograph, explained (the README's picture).
    await page.evaluate(() => document.querySelector("#photo-card").scrollIntoView());
    await page.screenshot({ path: `${SCREENSHOTS}/sample.png` });
  }
  await page.setInputFiles("#photo-input", PHOTO);
  await waitForPicture(page, "Kleiber_by_Lukas_Baubkus.jpg");
  await page.waitForFunction(() => document.querySelector("#photo-size").textContent.startsWith("6028×3391"));
  const rows = await assertTopFive(page);
  const total = rows.reduce((sum, row) => sum + row.p, 0);
  assert.ok(total > 0.8, `five classes cover most of the probability: ${total}`);

  const overlay = await canvasStats(page, "#attention-canvas");
  assert.deepEqual([overlay.width, overlay.height], [512, 512]);
  assert.ok(overlay.colours > 1000 && overlay.std > 10, `the overlay is an image, not a flat fill: ${JSON.stringify(overlay)}`);
  const input = await canvasStats(page, "#input-canvas");
  assert.deepEqual([input.width, input.height], [32, 32]);
  assert.ok(input.std > 5, "the model's input is the photo, shrunk");
  const original = await canvasStats(page, "#photo-original");
  assert.ok(original.width <= 480 && original.width > original.height, "the preview keeps the aspect ratio");

  // Every view: rollout, each layer, each head.
  assert.equal(await page.locator("#attention-views button").count(), 5, "rollout and four layers");
  assert.equal(await page.locator("#attention-canvas").getAttribute("data-view"), "rollout");
  const rollout = await page.$eval("#attention-canvas", (canvas) => canvas.toDataURL());
  await page.click("#attention-views button[data-view=layer-2]");
  assert.equal(await page.locator("#attention-canvas").getAttribute("data-view"), "layer-2");
  assert.notEqual(await page.$eval("#attention-canvas", (canvas) => canvas.toDataURL()), rollout, "layer 2 differs from the rollout");
  await page.selectOption("#head-select", "1");
  assert.match(await caption(page), /Layer 2, head 2 over Kleiber/);
  if (SCREENSHOTS) {
    await page.selectOption("#head-select", "mean");
    await page.click("#attention-views button[data-view=rollout]");
    await page.evaluate(() => document.querySelector("#photo-card").scrollIntoView());
    await page.screenshot({ path: `${SCREENSHOTS}/upload.png` });
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a non-image is refused with a message and nothing else changes", async () => {
  const page = await openPage(SMALL);
  await assertTopFive(page);
  const before = { caption: await caption(page), list: await page.innerHTML("#probabilities") };
  const folder = await mkdtemp(join(tmpdir(), "vit-photo-"));
  const fake = join(folder, "holiday.jpg");
  await writeFile(fake, Buffer.from("this is a text file wearing a .jpg name"));
  await page.setInputFiles("#photo-input", fake);
  await page.waitForSelector("#photo-error:not([hidden])");
  assert.match(await page.locator("#photo-error").textContent(), /holiday\.jpg cannot be used: not an image this browser can decode/);
  assert.equal(await caption(page), before.caption);
  assert.equal(await page.innerHTML("#probabilities"), before.list);
  assert.equal(await page.locator("#error").isHidden(), true);
  await page.close();
});

/** A 24-bit BMP of `width`×`height` pixels in two colours, built by hand (canvases cannot write BMP). */
function bmp(width, height) {
  const row = Math.ceil((3 * width) / 4) * 4;
  const file = Buffer.alloc(54 + row * height);
  file.write("BM", 0);
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(54, 10);
  file.writeUInt32LE(40, 14);
  file.writeInt32LE(width, 18);
  file.writeInt32LE(height, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(24, 28);
  file.writeUInt32LE(row * height, 34);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [b, g, r] = x < width / 2 ? [200, 120, 40] : [40, 180, 90];
      file.set([b, g, r], 54 + y * row + 3 * x);
    }
  }
  return file;
}

test("WebP, GIF and BMP pictures are classified too", async () => {
  const page = await openPage(SMALL);
  await assertTopFive(page);
  const webp = Buffer.from(await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(320, 240);
    const context = canvas.getContext("2d");
    context.fillStyle = "#36c"; context.fillRect(0, 0, 320, 240);
    context.fillStyle = "#fc3"; context.beginPath(); context.arc(160, 120, 80, 0, 7); context.fill();
    return [...new Uint8Array(await (await canvas.convertToBlob({ type: "image/webp" })).arrayBuffer())];
  }));
  // The smallest GIF there is: one white pixel.
  const gif = Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
  const files = [
    { name: "circle.webp", mimeType: "image/webp", buffer: webp, size: "320×240" },
    { name: "pixel.gif", mimeType: "image/gif", buffer: gif, size: "1×1" },
    { name: "stripes.bmp", mimeType: "image/bmp", buffer: bmp(48, 30), size: "48×30" },
  ];
  for (const { size, ...file } of files) {
    await page.setInputFiles("#photo-input", file);
    await waitForPicture(page, file.name);
    assert.ok((await page.locator("#photo-size").textContent()).startsWith(size), `${file.name} is ${size}`);
    await assertTopFive(page);
    assert.equal(await page.locator("#photo-error").isHidden(), true, file.name);
  }
  await page.close();
});

test("a 50-megapixel picture, dropped on the card, is classified (the longest gap between frames is logged)", async () => {
  const page = await openPage(SMALL);
  await assertTopFive(page);
  // Made in the page: an 8660×5775 JPEG with detail everywhere (50.01 megapixels).
  await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(8660, 5775);
    const context = canvas.getContext("2d");
    const gradient = context.createLinearGradient(0, 0, 8660, 5775);
    gradient.addColorStop(0, "#3070c0");
    gradient.addColorStop(1, "#e0a040");
    context.fillStyle = gradient;
    context.fillRect(0, 0, 8660, 5775);
    for (let i = 0; i < 400; i++) {
      context.fillStyle = `hsl(${(i * 47) % 360} 70% 50%)`;
      context.fillRect((i * 7919) % 8660, (i * 104729) % 5775, 300, 200);
    }
    window.bigPhoto = new File([await canvas.convertToBlob({ type: "image/jpeg", quality: 0.9 })], "big.jpg", { type: "image/jpeg" });
  });
  // Longest gap between animation frames while the picture is decoded and classified.
  await page.evaluate(() => {
    window.longestFrame = 0;
    let last = performance.now();
    const tick = (now) => { window.longestFrame = Math.max(window.longestFrame, now - last); last = now; if (!window.stopFrames) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    const transfer = new DataTransfer();
    transfer.items.add(window.bigPhoto);
    document.querySelector("#photo-card").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  });
  await waitForPicture(page, "big.jpg");
  await page.waitForFunction(() => document.querySelector("#photo-size").textContent.startsWith("8660×5775"));
  await assertTopFive(page);
  const longest = await page.evaluate(() => { window.stopFrames = true; return window.longestFrame; });
  console.log(`# 50-megapixel picture: longest gap between frames ${longest.toFixed(0)} ms`);
  assert.equal(await page.locator("#photo-error").isHidden(), true);
  await page.close();
});

test("a pasted picture and a camera frame are classified too", async () => {
  const page = await openPage(SMALL);
  await assertTopFive(page);
  await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(300, 200);
    const context = canvas.getContext("2d");
    context.fillStyle = "#2a6"; context.fillRect(0, 0, 300, 200);
    context.fillStyle = "#fff"; context.fillRect(100, 50, 100, 100);
    const file = new File([await canvas.convertToBlob({ type: "image/png" })], "pasted.png", { type: "image/png" });
    const transfer = new DataTransfer();
    transfer.items.add(file);
    document.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
  });
  await waitForPicture(page, "pasted.png");
  await assertTopFive(page);

  await page.click("#camera-start");
  await page.waitForFunction(() => document.querySelector("#camera-video").readyState >= 2);
  await page.click("#camera-capture");
  await waitForPicture(page, "the camera frame");
  await assertTopFive(page);
  const overlay = await canvasStats(page, "#attention-canvas");
  assert.ok(overlay.colours > 100, "the camera frame is drawn with its attention");
  await page.click("#camera-stop");
  assert.equal(await page.locator("#camera-video").isHidden(), true);
  await page.close();
});

test("charts, test-set figures, the positional embedding and the attention distance come from the shipped weights", async () => {
  const page = await openPage(SMALL);
  // The shipped file's history: 100 epochs of train/test loss and accuracy, plus running loss.
  await page.waitForFunction(() => Number(document.querySelector("#accuracy-chart").dataset.points) === 200);
  assert.ok(Number(await page.locator("#loss-chart").getAttribute("data-points")) > 30);
  const box = await page.locator("#accuracy-chart").boundingBox();
  await page.locator("#accuracy-chart").hover({ position: { x: box.width - 20, y: box.height / 2 } });
  assert.match(await page.locator("#accuracy-chart").getAttribute("data-hover"), /test accuracy: 7\d\.\d% \(epoch (9\d|100)\.00\)/);

  // The worker evaluates the weights on the 500 test images of the small dataset.
  await page.waitForSelector("#evaluation-summary[data-accuracy]", { timeout: 5 * MINUTES });
  const accuracy = Number(await page.locator("#evaluation-summary").getAttribute("data-accuracy"));
  assert.ok(accuracy > 0.6 && accuracy < 0.85, `the pretrained model's accuracy on 500 test images: ${accuracy}`);
  assert.match(await page.locator("#evaluation-summary").textContent(), /of 500 test images right/);
  assert.equal(await page.locator("#predictions-grid figure").count(), 24);
  assert.ok(await page.locator("#predictions-grid figure.right").count() > 0);
  assert.equal(await page.locator("#class-accuracy li").count(), 10);
  const matrix = await canvasStats(page, "#confusion-canvas");
  assert.ok(matrix.colours > 10, "the confusion matrix is drawn");

  // A click on a test image explains it.
  await page.click("#predictions-grid figure[data-index='3']");
  await waitForPicture(page, "test image 4");

  // The ViT paper's mean attention distance: a value per layer and head, inside the image.
  await page.waitForSelector("#distance-canvas[data-distances]", { timeout: 5 * MINUTES });
  const distances = JSON.parse(await page.locator("#distance-canvas").getAttribute("data-distances"));
  const farthest = Number(await page.locator("#distance-canvas").getAttribute("data-farthest"));
  assert.ok(Math.abs(farthest - 28 * Math.SQRT2) < 0.01, "corner to corner of the 8×8 grid of 4-pixel patches");
  assert.deepEqual(distances.map((heads) => heads.length), [4, 4, 4, 4]);
  assert.ok(distances.flat().every((distance) => distance > 0 && distance < farthest), JSON.stringify(distances));
  assert.match(await page.locator("#distance-note").textContent(), /Over the 24 test images of the grid: heads reach from \d+\.\d to \d+\.\d px/);
  assert.ok((await canvasStats(page, "#distance-canvas")).colours > 5, "the dots are drawn");
  if (SCREENSHOTS) await page.locator("section:has(#distance-canvas)").screenshot({ path: `${SCREENSHOTS}/attention-distance.png` });

  const neighbours = Number(await page.locator("#position-canvas").getAttribute("data-neighbour-similarity"));
  assert.ok(neighbours > 0.2, `trained position embeddings resemble their neighbours: ${neighbours}`);
  // The colours span the pairs' own range (a sine-cosine start keeps them all above about 0.7,
  // which a fixed [-1, 1] scale would draw as one yellow), and the legend says so.
  const [low, high] = (await page.locator("#position-canvas").getAttribute("data-colour-range")).split(" ").map(Number);
  assert.ok(-1 <= low && low < neighbours && neighbours <= high && high <= 1, `colour range ${low}–${high}, neighbours ${neighbours}`);
  for (const [id, value] of [["#position-low", low], ["#position-high", high]]) {
    assert.ok(Math.abs(Number(await page.locator(id).textContent()) - value) < 0.006, `${id} labels ${value}`);
  }
  assert.ok((await canvasStats(page, "#position-legend")).colours > 100, "the colour bar is drawn");
  if (SCREENSHOTS) await page.locator("section:has(#position-canvas)").screenshot({ path: `${SCREENSHOTS}/positions.png` });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the page fits a phone-width screen", async () => {
  const page = await openPage(SMALL, { viewport: { width: 390, height: 844 } });
  await assertTopFive(page);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `nothing sticks out sideways (${overflow} px)`);
  if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/phone.png` });
  await page.close();
});
