// Files in the origin-private file system (OPFS): the training worker's checkpoint, and the
// page's runs with their latest weights. A writable stream replaces the file only when it is
// closed, so a tab that dies mid-write leaves the previous file whole. Errors (a full quota
// above all) reach the caller.

async function root() {
  if (!navigator.storage || !navigator.storage.getDirectory) {
    throw new DOMException("this browser has no origin-private file system", "NotSupportedError");
  }
  return navigator.storage.getDirectory();
}

export async function writeFile(name, bytes) {
  const handle = await (await root()).getFileHandle(name, { create: true });
  if (handle.createWritable) {
    const writable = await handle.createWritable();
    try {
      await writable.write(bytes);
      await writable.close();
    } catch (error) {
      await writable.abort().catch(() => {});
      throw error;
    }
  } else if (handle.createSyncAccessHandle) {
    // Safari offers only synchronous access handles, and only in workers.
    const access = await handle.createSyncAccessHandle();
    try {
      access.truncate(0);
      access.write(bytes, { at: 0 });
      access.flush();
    } finally {
      access.close();
    }
  } else {
    throw new DOMException("this browser cannot write files from the page", "NotSupportedError");
  }
}

// The file's bytes, or null when there is none.
export async function readFile(name) {
  try {
    const handle = await (await root()).getFileHandle(name);
    return new Uint8Array(await (await handle.getFile()).arrayBuffer());
  } catch (error) {
    if (error && (error.name === "NotFoundError" || error.name === "NotSupportedError")) return null;
    throw error;
  }
}

export async function removeFile(name) {
  try {
    await (await root()).removeEntry(name);
  } catch (error) {
    if (!error || error.name !== "NotFoundError") throw error;
  }
}
