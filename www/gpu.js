// What the browser says about its WebGPU adapter. Kept in JS because web-sys gates the WebGPU
// types behind an unstable cfg; this is the only WebGPU call the page makes outside burn.
export async function webgpuAdapterInfo() {
  if (!("gpu" in navigator) || !navigator.gpu) return null;
  let adapter;
  try {
    adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  } catch (_) {
    return null;
  }
  if (!adapter) return null;
  const info = adapter.info ?? (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : {});
  return {
    vendor: info.vendor ?? "",
    architecture: info.architecture ?? "",
    device: info.device ?? "",
    description: info.description ?? "",
    isFallback: Boolean(adapter.isFallbackAdapter ?? info.isFallbackAdapter ?? false),
  };
}
