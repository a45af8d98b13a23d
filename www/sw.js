// The page's service worker: the whole site offline after the first visit, and cross-origin
// isolation (so the CPU path may use threads) on hosts that cannot send the headers themselves.
//
// - Install: every file that precache.json lists (the page, both wasm modules, the weights; not
//   the 15 MB dataset, whose decoded copy the training worker keeps in the Cache API under its
//   SHA-256) is fetched into a cache named for this deployment's version. If any file fails the
//   install fails, and the previous version stays in charge, whole.
// - A new deployment (scripts/build-site.sh stamps VERSION) installs beside the running one and
//   waits; the page offers a reload, which activates it. Older versions' caches are then deleted.
// - Fetch: the deployment's files come from its cache; the dataset manifests (data/*.json) from
//   the network when it answers, else from the copy kept last time; anything else from the network.
//   Every same-origin response gets Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy,
//   which is what makes the page cross-origin isolated where the host sends neither.
const VERSION = "dev";
const SITE_CACHE = `vit-web-site-${VERSION}`;
const DATA_CACHE = "vit-web-data-manifests";
const ISOLATION = {
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Embedder-Policy": "require-corp",
};

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const response = await fetch("precache.json", { cache: "no-store" });
    if (!response.ok) return; // a development build (trunk serve): isolation only, nothing cached
    const { version, files } = await response.json();
    if (version !== VERSION) throw new Error(`precache.json is for ${version}, this worker for ${VERSION}`);
    const cache = await caches.open(SITE_CACHE);
    // cache: "no-cache" revalidates each file with the host, so it is this deployment's and not an
    // old copy, while a file the page just downloaded is not downloaded again.
    await cache.addAll(files.map((file) => new Request(file, { cache: "no-cache" })));
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("vit-web-site-") && name !== SITE_CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("message", (event) => {
  if (event.data === "activate-update") self.skipWaiting();
});

/** `response` with the isolation headers added. */
function isolated(response) {
  if (response.status === 0 || response.type === "opaque") return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

async function respond(request) {
  const url = new URL(request.url);
  const path = url.pathname.slice(new URL(self.registration.scope).pathname.length);
  if (path.startsWith("data/") && path.endsWith(".json")) {
    const cache = await caches.open(DATA_CACHE);
    try {
      const response = await fetch(request);
      if (response.ok) await cache.put(url.pathname, response.clone());
      return response;
    } catch (offline) {
      const kept = await cache.match(url.pathname);
      if (kept) return kept;
      throw offline;
    }
  }
  const site = await caches.open(SITE_CACHE);
  // The worker is asked for as worker.js?threads=N, and the page with its query: one file each;
  // the page's folder is its index.html.
  const key = path === "" || path.endsWith("/") ? new URL("index.html", url).href : request;
  const cached = await site.match(key, { ignoreSearch: true });
  return cached ?? fetch(request);
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(respond(request).then(isolated));
});
