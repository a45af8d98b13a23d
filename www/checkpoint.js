// Training checkpoints in the origin-private file system (OPFS), from the training worker.
// A writable stream replaces the file only when it is closed, so a tab that dies mid-write
// leaves the previous checkpoint whole. Errors (a full quota above all) reach the caller.
const NAME = "training-checkpoint.vitckpt";

async function root() {
  if (!navigator.storage || !navigator.storage.getDirectory) {
    throw new DOMException("this browser has no origin-private file system", "NotSupportedError");
  }
  return navigator.storage.getDirectory();
}

export async function saveCheckpoint(bytes) {
  const handle = await (await root()).getFileHandle(NAME, { create: true });
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
    // Safari offers only synchronous access handles, in workers, which is where this runs.
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

// The checkpoint's bytes, or null when there is none.
export async function loadCheckpoint() {
  try {
    const handle = await (await root()).getFileHandle(NAME);
    return new Uint8Array(await (await handle.getFile()).arrayBuffer());
  } catch (error) {
    if (error && (error.name === "NotFoundError" || error.name === "NotSupportedError")) return null;
    throw error;
  }
}

export async function deleteCheckpoint() {
  try {
    await (await root()).removeEntry(NAME);
  } catch (error) {
    if (!error || error.name !== "NotFoundError") throw error;
  }
}
