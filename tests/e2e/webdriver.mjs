// A thin W3C WebDriver client for the engines Playwright cannot drive from Debian's packages:
// Firefox through geckodriver and WebKitGTK through WebKitWebDriver. Plain HTTP and JSON, so no
// npm client (which would fetch drivers of its own) is needed; the page is driven mostly by
// scripts run in it, as every engine runs them alike.
import { spawn, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

/** The key under which WebDriver passes an element reference. */
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** Where Debian puts each engine and its driver; `reason` says why one cannot run here. */
export function engines() {
  const onPath = (name) => {
    try { return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim() || null; } catch { return null; }
  };
  const geckodriver = process.env.GECKODRIVER ?? onPath("geckodriver");
  const firefox = process.env.FIREFOX ?? onPath("firefox-esr") ?? onPath("firefox");
  const webkitDriver = process.env.WEBKIT_DRIVER ?? onPath("WebKitWebDriver");
  const miniBrowser = ["/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser", "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser"]
    .find((path) => existsSync(path));
  const xvfbRun = onPath("xvfb-run");
  return {
    firefox: {
      name: "Firefox",
      reason: !firefox ? "no Firefox (Debian's firefox-esr)" : !geckodriver ? "no geckodriver (cargo install geckodriver)" : null,
      command: () => [geckodriver, ["--host", "127.0.0.1"]],
      port: (port) => [`--port=${port}`],
      capabilities: { browserName: "firefox", "moz:firefoxOptions": { binary: firefox, args: ["-headless"] } },
    },
    webkit: {
      name: "WebKit",
      reason: !webkitDriver || !miniBrowser ? "no WebKitWebDriver and MiniBrowser (Debian's webkit2gtk-driver)" : !xvfbRun ? "no xvfb-run (Debian's xvfb)" : null,
      // WebKitGTK's MiniBrowser needs a display even when the page is all it shows.
      command: () => [xvfbRun, ["-a", webkitDriver]],
      port: (port) => [`--port=${port}`],
      capabilities: { browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: miniBrowser, args: ["--automation"] } },
    },
  };
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function call(base, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const reply = await response.json().catch(() => ({}));
  if (!response.ok) {
    const { error, message } = reply.value ?? {};
    throw new Error(`WebDriver ${method} ${path}: ${error ?? response.status}: ${message ?? ""}`);
  }
  return reply.value;
}

/** Starts an engine's driver and one browser session on it. */
export async function launch(engine) {
  const port = await freePort();
  const [program, args] = engine.command();
  const driver = spawn(program, [...args, ...engine.port(port)], { stdio: ["ignore", "ignore", "pipe"], detached: true });
  let stderr = "";
  driver.stderr.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
  const base = `http://127.0.0.1:${port}`;
  // Ready when /status answers: a driver starts in well under a second, Xvfb in a few.
  for (let waited = 0; ; waited += 100) {
    if (driver.exitCode !== null) throw new Error(`${program} exited: ${stderr}`);
    const ready = await call(base, "GET", "/status").then((status) => status.ready !== false, () => false);
    if (ready) break;
    if (waited > 60_000) throw new Error(`${program} did not answer in a minute: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { sessionId } = await call(base, "POST", "/session", { capabilities: { alwaysMatch: engine.capabilities } });
  return new Session(`${base}/session/${sessionId}`, driver);
}

/** One browser window, driven by scripts run in its page. */
export class Session {
  constructor(base, driver) {
    this.base = base;
    this.driver = driver;
  }

  call(method, path, body) {
    return call(this.base, method, path, body);
  }

  async goto(url) {
    await this.call("POST", "/url", { url });
  }

  /** Reloads as a person does, through the page's service worker: WebDriver's refresh bypasses
   *  it, as a forced reload does, and the page is then not cross-origin isolated (one thread). */
  async reload() {
    await this.goto(await this.run("return location.href;"));
  }

  /** Runs `body` (a function's source body) in the page with `args`, and returns its value. */
  run(body, ...args) {
    return this.call("POST", "/execute/sync", { script: body, args });
  }

  /** Runs `body` in the page, where it may await; its last `return` is the value. */
  runAsync(body, ...args) {
    const script = `const done = arguments[arguments.length - 1];
      (async (...args) => { ${body} })(...Array.prototype.slice.call(arguments, 0, -1)).then(
        (value) => done({ value }), (error) => done({ error: String(error) + (error && error.stack ? "\\n" + error.stack : "") }));`;
    return this.call("POST", "/execute/async", { script, args }).then((reply) => {
      if (reply?.error) throw new Error(reply.error);
      return reply?.value;
    });
  }

  text(selector) {
    return this.run("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", selector);
  }

  attribute(selector, name) {
    return this.run("const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;", selector, name);
  }

  click(selector) {
    return this.run("document.querySelector(arguments[0]).click();", selector);
  }

  /** Sets a form field as a person typing would, change event included. */
  fill(selector, value) {
    return this.run(`const e = document.querySelector(arguments[0]); e.value = arguments[1];
      e.dispatchEvent(new Event("input", { bubbles: true })); e.dispatchEvent(new Event("change", { bubbles: true }));`, selector, value);
  }

  /** Gives a file input a file from disk, through the driver, as a person choosing it would. */
  async upload(selector, path) {
    const { [ELEMENT]: id } = await this.call("POST", "/element", { using: "css selector", value: selector });
    await this.call("POST", `/element/${id}/value`, { text: path });
  }

  /** Waits until `condition` (a script body returning a truthy value) holds; returns that value.
   *  The bound is long: the page's own work decides how soon it holds, and a page error ends
   *  the wait at once with the page's words. */
  async waitFor(condition, { timeout = 10 * 60_000, what = condition } = {}) {
    const started = Date.now();
    for (;;) {
      const value = await this.run(condition).catch(() => null);  // a navigation in progress
      if (value) return value;
      const error = await this.run("const e = document.querySelector('#error'); return e && !e.hidden ? e.textContent : null;").catch(() => null);
      if (error) throw new Error(`while waiting for ${what}, the page reported: ${error}`);
      if (Date.now() - started > timeout) throw new Error(`timed out after ${timeout / 1000} s waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async close() {
    await this.call("DELETE", "").catch(() => {});
    try { process.kill(-this.driver.pid); } catch {}
  }
}
