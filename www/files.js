// Files the page keeps: the training worker's checkpoint, the page's runs with their latest
// weights, your own classes' pictures. They live in the origin-private file system (OPFS) where
// this context can write there, else in IndexedDB: WebKitGTK, for one, has no OPFS at all, and
// Safari's page (not its workers) only synchronous handles. Each write replaces the whole file or
// nothing: OPFS's writable stream replaces the file only when closed, and an IndexedDB put is one
// transaction. Errors (a full quota above all) reach the caller.

const DATABASE = "vit-web-files";
const STORE = "files";

let opfsWritable;
/** Whether this context writes to OPFS: it has the directory and a way to write a file in it. */
function usesOpfs() {
  opfsWritable ??= (async () => {
    const handle = self.FileSystemFileHandle?.prototype;
    if (!navigator.storage?.getDirectory || !handle) return false;
    if (!("createWritable" in handle) && !("createSyncAccessHandle" in handle && typeof WorkerGlobalScope !== "undefined")) return false;
    try {
      await navigator.storage.getDirectory();
      return true;
    } catch {
      return false; // private browsing in some engines
    }
  })();
  return opfsWritable;
}

async function opfsRoot() {
  if (!navigator.storage?.getDirectory) throw new DOMException("no origin-private file system", "NotSupportedError");
  return navigator.storage.getDirectory();
}

async function opfsWrite(name, bytes) {
  const handle = await (await opfsRoot()).getFileHandle(name, { create: true });
  if (handle.createWritable) {
    const writable = await handle.createWritable();
    try {
      await writable.write(bytes);
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  } else {
    // Safari's workers offer only synchronous access handles.
    const access = await handle.createSyncAccessHandle();
    try {
      access.truncate(0);
      access.write(bytes, { at: 0 });
      access.flush();
    } finally {
      access.close();
    }
  }
}

async function opfsRead(name) {
  try {
    const handle = await (await opfsRoot()).getFileHandle(name);
    return new Uint8Array(await (await handle.getFile()).arrayBuffer());
  } catch (error) {
    if (error && ["NotFoundError", "NotSupportedError", "TypeError", "SecurityError"].includes(error.name)) return null;
    throw error;
  }
}

async function opfsRemove(name) {
  try {
    await (await opfsRoot()).removeEntry(name);
  } catch (error) {
    if (!error || !["NotFoundError", "NotSupportedError", "TypeError", "SecurityError"].includes(error.name)) throw error;
  }
}

let database;
function openDatabase() {
  if (!self.indexedDB) return Promise.reject(new DOMException("no IndexedDB", "NotSupportedError"));
  database ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return database;
}

/** Runs one request in its own transaction and resolves once the transaction has committed. */
async function inStore(mode, use) {
  const transaction = (await openDatabase()).transaction(STORE, mode);
  const request = use(transaction.objectStore(STORE));
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve(request.result);
    transaction.onabort = transaction.onerror = () => reject(transaction.error ?? request.error);
  });
}

export async function writeFile(name, bytes) {
  if (await usesOpfs()) return opfsWrite(name, bytes);
  // A copy, so that the caller's buffer (a view into wasm memory) is not what is kept.
  await inStore("readwrite", (store) => store.put(new Uint8Array(bytes), name));
}

// The file's bytes, or null when there is none. Where the other store has a copy (the engine
// gained OPFS since it was written), that copy is read.
export async function readFile(name) {
  const opfs = await usesOpfs();
  const first = opfs ? await opfsRead(name) : await idbRead(name);
  if (first) return first;
  return opfs ? idbRead(name).catch(() => null) : opfsRead(name).catch(() => null);
}

async function idbRead(name) {
  const value = await inStore("readonly", (store) => store.get(name));
  return value ? new Uint8Array(value) : null;
}

export async function removeFile(name) {
  await opfsRemove(name);
  if (self.indexedDB) await inStore("readwrite", (store) => store.delete(name));
}

/** Replaces the file `name` by `update(its bytes or null)`, with no other tab's update in between
 *  (the Web Locks API, where the engine has it): a read-modify-write that loses no other tab's
 *  change. `update` returns the new bytes, or null to leave the file as it is. */
export async function updateFile(name, update) {
  const change = async () => {
    const next = update(await readFile(name));
    if (next) await writeFile(name, next);
  };
  return navigator.locks ? navigator.locks.request(`vit-web-file:${name}`, change) : change();
}
