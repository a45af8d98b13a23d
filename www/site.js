// The page's side of its service worker (www/sw.js): registers it, makes the page cross-origin
// isolated on a host that sends no isolation headers (one reload, once the worker is in charge),
// and hands a waiting new deployment to `onUpdate` with a function that switches to it.
const RELOADED = "vit-web.isolation-reload";
/** Set while a reload finishes taking a new deployment: which ask the reloaded page makes (see `askToSwitch`). */
const UPDATING = "vit-web.update-reload";
const PARKED_AFTER_MS = 5000;
/** Reloads a stalled switch may take before the page stops reloading and just waits for it. */
const SWITCH_ATTEMPTS = 4;

/** Whether the service worker controls the page, waiting for a first one to install (false if
 *  its install fails or takes over a minute: the page then starts without it). */
async function inCharge(registration) {
  if (navigator.serviceWorker.controller) return true;
  return new Promise((resolve) => {
    navigator.serviceWorker.addEventListener("controllerchange", () => resolve(true), { once: true });
    const installing = registration.installing ?? registration.waiting;
    installing?.addEventListener("statechange", () => installing.state === "redundant" && resolve(false));
    setTimeout(() => resolve(false), 60_000);
  });
}

/** Registers the service worker. Calls `onReady(status)` once one is active: "offline" (the
 *  site is cached) or "isolation" (a development build: headers only), or with why there is
 *  none; and `onUpdate(activate)` when a new deployment waits. Never resolves when it reloads the
 *  page to become cross-origin isolated. */
export async function startServiceWorker(onUpdate, onReady) {
  if (!("serviceWorker" in navigator)) return onReady("this browser has no service workers");
  let registration;
  try {
    registration = await navigator.serviceWorker.register("sw.js");
  } catch (error) {
    return onReady(`the service worker could not be registered (${error.message})`);
  }
  if (!registration) return onReady("the browser declined the service worker");
  if (!crossOriginIsolated && !sessionStorage.getItem(RELOADED) && await inCharge(registration)) {
    sessionStorage.setItem(RELOADED, "1"); // once per tab: a browser that ignores the headers is not reloaded again
    location.reload();
    return new Promise(() => {});
  }
  // Taking a new deployment: the waiting worker is asked to take over, and the page reloads onto
  // it once it has. Chromium activates it only when the old worker has no request in hand, and a
  // click that lands while the page is still starting (its training worker fetching the threaded
  // module) was seen to leave it waiting for minutes, asking again doing nothing. So a page that
  // sees no switch within a few seconds reloads, which ends its own requests, and the reloaded
  // page asks again and follows the switch. It asks while it starts, with its own requests in
  // flight, so its ask can stall as well: it too reloads after a few seconds, up to
  // SWITCH_ATTEMPTS asks in all. (The e2e test checks this path with a worker that ignores the
  // first two asks; a real stall was not caught again to watch it recover.)
  const followSwitch = (then = () => {}) => navigator.serviceWorker.addEventListener("controllerchange", () => {
    then();
    location.reload();
  }, { once: true });
  const askToSwitch = (worker, attempt) => {
    const parked = attempt < SWITCH_ATTEMPTS && setTimeout(() => {
      sessionStorage.setItem(UPDATING, String(attempt + 1));
      location.reload();
    }, PARKED_AFTER_MS);
    followSwitch(() => clearTimeout(parked));
    worker.postMessage("activate-update");
  };
  const attempt = Number(sessionStorage.getItem(UPDATING) ?? 0);
  if (attempt) {
    sessionStorage.removeItem(UPDATING);
    if (registration.waiting) {
      askToSwitch(registration.waiting, attempt);
    } else {
      // It switched during the reload, perhaps after this page's old copy was served: once more.
      location.reload();
      return new Promise(() => {});
    }
  }
  const offer = (worker) => onUpdate(() => askToSwitch(worker, 1));
  // A new deployment's worker, once installed beside the one in charge (not the first one).
  const watch = (worker) => {
    if (!worker || !navigator.serviceWorker.controller) return;
    if (worker.state === "installed") return offer(worker);
    worker.addEventListener("statechange", () => worker.state === "installed" && offer(worker));
  };
  watch(registration.waiting ?? registration.installing);
  registration.addEventListener("updatefound", () => watch(registration.installing));
  registration.update().catch(() => {}); // offline, or the host is away: the kept copy runs
  navigator.serviceWorker.ready.then(async () => {
    const precached = (await caches.keys()).some((name) => name.startsWith("vit-web-site-"));
    onReady(precached ? "offline" : "isolation");
  });
}
