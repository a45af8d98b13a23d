// Where the page's training time goes, thread by thread: samples every worker of the page (the
// training worker and its pool's web workers) with Chrome's profiler while it trains on the CPU
// path, and prints each one's functions by their own time, then the time one pool worker works
// while the others wait, by operation. Not a test, and not a benchmark: the profiler slows the
// page, so read its shares, not its speed. What docs/performance-history.md's "One fork per dense product"
// and "Where the pool waits" were found with.
//   node tests/e2e/profile.mjs
// It trains on www/data/curve's 2,000 images, as scripts/bench.sh prepares them before building
// the site. PROFILE_DIST (../../dist) is the site to serve; wasm function names need a build that keeps them:
//   CARGO_PROFILE_RELEASE_STRIP=false CARGO_TARGET_DIR=/tmp/named scripts/build-threads.sh DIST
// (DIST a copy of dist/) for the threaded module, and likewise `trunk build --release` for the
// page's own. PROFILE_QUERY adds to the page's query ("&threads=1": the one-thread module),
// PROFILE_BATCH (64) and PROFILE_SECONDS (10) size the run, PROFILE_INTERVAL (1000 µs) the
// sampling, PROFILE_TOP (25) the lines per thread.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import WebSocket from "ws";
import { ISOLATION, serve } from "./server.mjs";

const DIST = resolve(process.env.PROFILE_DIST ?? resolve(import.meta.dirname, "../../dist"));
const PORT = 9339;
const env = (name, fallback) => Number(process.env[name] ?? fallback);

/** Function index → name, from a wasm module's "name" section (empty where it was stripped). */
function wasmFunctionNames(bytes) {
  const names = new Map();
  let at = 8;
  const leb = () => {
    let value = 0, shift = 0, byte;
    do { byte = bytes[at++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; } while (byte & 0x80);
    return value;
  };
  const text = (length) => new TextDecoder().decode(bytes.subarray(at, (at += length)));
  while (at < bytes.length) {
    const id = bytes[at++], end = leb() + at;
    if (id === 0 && text(leb()) === "name") {
      while (at < end) {
        const sub = bytes[at++], subEnd = leb() + at;
        if (sub === 1) for (let count = leb(); count > 0; count--) names.set(leb(), text(leb()));
        at = subEnd;
      }
    }
    at = end;
  }
  return names;
}

/** A profile frame's function name, with a wasm function's index replaced by its name where known. */
const frameName = (functionName, names) => functionName.replace(/^(?:\$func|wasm-function\[)(\d+)\]?$/, (raw, index) => names.get(Number(index)) ?? raw);

/** The page's own workers are scripts; the pool's web workers are blobs (wasm-bindgen-rayon). */
const isPoolWorker = (url) => url.startsWith("blob:");

const modules = await Promise.all(["vit-web_bg.wasm", "threads/vit-web_bg.wasm"].map(
  async (file) => wasmFunctionNames(await readFile(join(DIST, file)).catch(() => new Uint8Array(8)))));

/** The DevTools protocol over the browser's own socket, with every page and worker attached. */
async function attach(url) {
  const socket = new WebSocket(url);
  await new Promise((opened) => socket.on("open", opened));
  let nextId = 1;
  const pending = new Map(), targets = new Map();
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    socket.send(JSON.stringify({ id, method, params, sessionId }));
  });
  const follow = (sessionId) => send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true }, sessionId);
  socket.on("message", (data) => {
    const message = JSON.parse(data);
    if (message.id) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      message.error ? reject(new Error(message.error.message)) : resolve(message.result);
    } else if (message.method === "Target.attachedToTarget") {
      targets.set(message.params.sessionId, message.params.targetInfo);
      follow(message.params.sessionId).catch(() => {});
    } else if (message.method === "Target.detachedFromTarget") {
      targets.delete(message.params.sessionId);
    }
  });
  await follow();
  return { send, targets, close: () => socket.close() };
}

/** A pool worker's frames that mean it has nothing to do. */
const WAITING = /Condvar>::wait|wait_until_cold|find_work|::steal|lock_contended|^\(idle\)$|^\(program\)$/;

/**
 * Prints the time pool workers work while every other pool worker waits, by the operation of this
 * project or of burn's CPU backend they work for: what keeps the pool from its full speed (a split
 * whose last block is left to one thread, a thread woken late, work outside parallel operations).
 */
function oneHanded(profiles, names) {
  if (profiles.length < 2) return;
  const timelines = profiles.map((profile) => {
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])));
    const name = (id) => frameName(byId.get(id).callFrame.functionName, names);
    const operation = (id) => {
      for (let at = id; at !== undefined; at = parent.get(at)) {
        const found = name(at).replace(/\[[0-9a-f]{16}\]/g, "").match(/(?:vit_web|burn_flex|burn_autodiff)::[\w:]*\w/);
        if (found) return found[0];
      }
      return name(id) || "(anonymous)";
    };
    let time = profile.startTime;
    return profile.samples.map((id, sample) => ({ time: (time += profile.timeDeltas[sample]), waiting: WAITING.test(name(id)), id, operation }));
  });
  // The sample of `timeline` in progress at `time` (samples are in time order).
  const at = (timeline, time) => {
    let [low, high] = [0, timeline.length - 1];
    if (!timeline.length || time < timeline[0].time) return undefined;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      [low, high] = timeline[middle].time <= time ? [middle, high] : [low, middle - 1];
    }
    return timeline[low];
  };
  const alone = new Map();
  let [total, aloneTotal] = [0, 0];
  for (const [index, timeline] of timelines.entries()) {
    const others = timelines.filter((_, other) => other !== index);
    for (let sample = 1; sample < timeline.length; sample++) {
      const { time, waiting, id, operation } = timeline[sample];
      const micros = time - timeline[sample - 1].time;
      total += micros;
      if (waiting || !others.every((other) => at(other, time)?.waiting ?? true)) continue;
      aloneTotal += micros;
      const name = operation(id);
      alone.set(name, (alone.get(name) ?? 0) + micros);
    }
  }
  console.log(`\none pool worker at work while the others wait: ${(100 * aloneTotal / total).toFixed(1)} % of the pool's time`);
  [...alone].sort((a, b) => b[1] - a[1]).slice(0, 12).forEach(([name, micros]) =>
    console.log(`${(100 * micros / total).toFixed(1).padStart(5)} %  ${name}`));
}

const server = await serve(DIST, { headers: ISOLATION });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan", `--remote-debugging-port=${PORT}`],
});
try {
  const devtools = await attach((await (await fetch(`http://127.0.0.1:${PORT}/json/version`)).json()).webSocketDebuggerUrl);
  const page = await browser.newPage();
  await page.goto(`${server.url}?compute=cpu&dataset=data/curve/manifest.json${process.env.PROFILE_QUERY ?? ""}`);
  await page.waitForSelector("#evaluation-summary[data-accuracy]", { timeout: 600_000 });
  await page.fill("#recipe-form [name=epochs]", "3");
  await page.fill("#recipe-form [name=batch]", String(env("PROFILE_BATCH", 64)));
  await page.click("#train-start");
  const step = async () => Number((await page.locator("#step-text").textContent()).split(" ")[0]);
  await page.waitForFunction(() => Number((document.querySelector("#step-text")?.textContent ?? "").split(" ")[0]) >= 3,
    null, { timeout: 600_000, polling: 100 });

  const workers = [...devtools.targets].filter(([, target]) => target.type === "worker");
  for (const [session] of workers) {
    await devtools.send("Profiler.enable", {}, session);
    await devtools.send("Profiler.setSamplingInterval", { interval: env("PROFILE_INTERVAL", 1000) }, session);
  }
  const firstStep = await step();
  await Promise.all(workers.map(([session]) => devtools.send("Profiler.start", {}, session)));
  await page.waitForTimeout(env("PROFILE_SECONDS", 10) * 1000);
  const profiles = await Promise.all(workers.map(([session]) => devtools.send("Profiler.stop", {}, session)));
  const threads = await page.locator("#compute-threads").getAttribute("data-threads");
  console.log(`threads: ${threads}, steps while sampling: ${(await step()) - firstStep}`);

  // The threaded module's names where the page trains on it, else the page's module's.
  const names = modules[threads === "1" ? 0 : 1];
  for (const [index, { profile }] of profiles.entries()) {
    const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
    const self = new Map();
    let total = 0;
    profile.samples.forEach((id, sample) => {
      const name = frameName(nodes.get(id), names) || "(anonymous)";
      const micros = profile.timeDeltas[sample] ?? 0;
      self.set(name, (self.get(name) ?? 0) + micros);
      total += micros;
    });
    const { url } = workers[index][1];
    const label = isPoolWorker(url) ? "a pool worker" : url.split("/").pop();
    console.log(`\n${label}: ${(total / 1000).toFixed(0)} ms sampled`);
    [...self].sort((a, b) => b[1] - a[1]).slice(0, env("PROFILE_TOP", 25)).forEach(([name, micros]) =>
      console.log(`${(100 * micros / total).toFixed(1).padStart(5)} %  ${name.slice(0, 160)}`));
  }
  oneHanded(profiles.filter((_, index) => isPoolWorker(workers[index][1].url)).map(({ profile }) => profile), names);
  devtools.close();
} finally {
  await browser.close();
  server.close();
}
