// A plain static file server for dist/ on 127.0.0.1 with a free port, so the tests need no other
// tool: no isolation headers unless asked (`serve(root, { headers })`), as a static host serves
// it; the page's service worker makes it cross-origin isolated.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize } from "node:path";

const TYPES = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".css": "text/css", ".png": "image/png", ".jpg": "image/jpeg",
  ".json": "application/json", ".bin": "application/octet-stream", ".safetensors": "application/octet-stream",
};

/** The headers that make a page cross-origin isolated, for benchmarks that time the page rather
 *  than its service worker's first install. */
export const ISOLATION = { "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp" };

export async function serve(root, { headers = {} } = {}) {
  let sent = { bytes: 0, files: 0 };
  let offline = false;
  const server = createServer(async (request, response) => {
    // As a network that is gone: the connection drops without an answer.
    if (offline) return request.socket.destroy();
    const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
    const file = join(root, path.endsWith("/") ? `${path}index.html` : path);
    if (!file.startsWith(root)) return response.writeHead(403).end();
    try {
      const { mtime: modified, mtimeMs, size } = await stat(file);
      // An entity tag, as static hosts send, so that a revalidation (the service worker's
      // precache of files the page has just downloaded) costs a 304 and not the file again.
      const etag = `"${size}-${Math.round(mtimeMs)}"`;
      if (request.headers["if-none-match"] === etag) return response.writeHead(304, { etag, ...headers }).end();
      const body = await readFile(file);
      response.writeHead(200, {
        "content-type": TYPES[extname(file)] ?? "application/octet-stream",
        "last-modified": modified.toUTCString(),
        etag,
        ...headers,
      });
      sent.bytes += body.length;
      sent.files += 1;
      response.end(body);
    } catch {
      response.writeHead(404).end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => server.close(),
    /** Drops every request while set, for engines whose driver cannot take the browser offline. */
    setOffline: (value) => { offline = value; },
    /** What the server sent since the last call: bytes and files. */
    sent: () => { const counted = sent; sent = { bytes: 0, files: 0 }; return counted; },
  };
}
