// What the page's tabs share. A tab holds a lock (the Web Locks API) while it trains a run, so no
// two tabs train one run and a closed or crashed tab frees its run at once; and a tab says on a
// BroadcastChannel which stored file it changed, so the others show it. Where an engine lacks
// either, each tab works alone, as before.

const channel = self.BroadcastChannel ? new BroadcastChannel("vit-web") : null;
const releases = new Map();

/** Takes the lock `name` if no tab holds it, and holds it until `releaseLock(name)` or the tab
 *  goes away. Resolves to whether this tab now holds it. */
export function holdLock(name) {
  if (!navigator.locks) return Promise.resolve(true);
  return new Promise((resolve, reject) => {
    navigator.locks
      .request(name, { ifAvailable: true }, (lock) => {
        resolve(lock !== null);
        if (lock) return new Promise((release) => releases.set(name, release));
      })
      .catch(reject);
  });
}

export function releaseLock(name) {
  releases.get(name)?.();
  releases.delete(name);
}

/** The names of the locks held now, by any tab of this origin (this one included). */
export async function heldLocks() {
  if (!navigator.locks) return [];
  const { held } = await navigator.locks.query();
  return held.map((lock) => lock.name);
}

/** Calls `callback` once the lock `name` is free: its tab released it or went away. */
export function whenFree(name, callback) {
  navigator.locks?.request(name, { mode: "shared" }, () => callback());
}

/** Tells the other tabs that the stored file `name` changed. */
export function announce(name) {
  channel?.postMessage({ changed: name });
}

/** Calls `callback(name)` whenever another tab announces a change to a stored file. */
export function onAnnounced(callback) {
  channel?.addEventListener("message", (event) => {
    if (typeof event.data?.changed === "string") callback(event.data.changed);
  });
}
