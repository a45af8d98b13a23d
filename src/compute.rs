//! Which backend the page computes on. burn's stock WebGPU kernels are slower on a software
//! adapter (SwiftShader, llvmpipe) than its CPU backend compiled to wasm, so a software or
//! missing adapter sends the page to the CPU path unless the person asks otherwise.

use serde::{Deserialize, Serialize};

/// Where tensors live in the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputePath {
    /// burn's wgpu backend on the browser's WebGPU adapter.
    WebGpu,
    /// burn's CPU backend (flex) compiled to wasm.
    Cpu,
}

impl ComputePath {
    /// "WebGPU" or "CPU (wasm)", as the page names the path.
    pub fn label(self) -> &'static str {
        match self {
            ComputePath::WebGpu => "WebGPU",
            ComputePath::Cpu => "CPU (wasm)",
        }
    }
}

/// What the person asked for (the page's `?compute=` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathRequest {
    #[default]
    Auto,
    WebGpu,
    Cpu,
}

impl PathRequest {
    /// Reads `auto`, `webgpu` or `cpu`; anything else means `Auto`.
    pub fn parse(value: Option<&str>) -> Self {
        match value.map(str::to_ascii_lowercase).as_deref() {
            Some("webgpu" | "gpu") => PathRequest::WebGpu,
            Some("cpu" | "wasm") => PathRequest::Cpu,
            _ => PathRequest::Auto,
        }
    }
}

/// What the browser told us about its WebGPU adapter (`GPUAdapter.info`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AdapterSummary {
    pub vendor: String,
    pub architecture: String,
    pub device: String,
    pub description: String,
    pub is_fallback: bool,
}

impl AdapterSummary {
    /// A CPU pretending to be a GPU: the browser's fallback adapter or a known software renderer.
    pub fn is_software(&self) -> bool {
        const SOFTWARE: [&str; 4] = ["swiftshader", "llvmpipe", "lavapipe", "software"];
        let text = format!("{} {} {}", self.architecture, self.device, self.description).to_ascii_lowercase();
        self.is_fallback || SOFTWARE.iter().any(|name| text.contains(name))
    }

    /// "google swiftshader", or "unknown adapter" when the browser hides both.
    pub fn label(&self) -> String {
        let label = [self.vendor.as_str(), self.architecture.as_str()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if label.is_empty() { "unknown adapter".into() } else { label }
    }
}

/// The path chosen and a sentence for the page that says why.
#[derive(Debug, Clone, PartialEq)]
pub struct PathChoice {
    pub path: ComputePath,
    pub reason: String,
}

pub fn choose_path(request: PathRequest, adapter: Option<&AdapterSummary>) -> PathChoice {
    let choice = |path, reason: String| PathChoice { path, reason };
    match (request, adapter) {
        (PathRequest::Cpu, _) => choice(ComputePath::Cpu, "CPU (wasm) chosen by you.".into()),
        (PathRequest::WebGpu, Some(adapter)) => {
            choice(ComputePath::WebGpu, format!("WebGPU on {} chosen by you.", adapter.label()))
        }
        (PathRequest::WebGpu, None) => choice(
            ComputePath::Cpu,
            "You asked for WebGPU, but this browser offers no WebGPU adapter: running on the CPU (wasm) instead.".into(),
        ),
        (PathRequest::Auto, None) => choice(
            ComputePath::Cpu,
            "This browser offers no WebGPU adapter, so the model runs on the CPU (wasm), which is slower. \
             Chrome or Edge 113+, or Firefox/Safari with WebGPU enabled, give GPU speed."
                .into(),
        ),
        (PathRequest::Auto, Some(adapter)) if adapter.is_software() => choice(
            ComputePath::Cpu,
            format!(
                "The WebGPU adapter ({}) is a software renderer, slower than the CPU path: running on the CPU (wasm).",
                adapter.label()
            ),
        ),
        (PathRequest::Auto, Some(adapter)) => {
            choice(ComputePath::WebGpu, format!("WebGPU on {}.", adapter.label()))
        }
    }
}

/// The innermost cause of burn's multi-line error report ("… Caused by: … Backtrace: …"): for a
/// lost device, the browser's own words, such as "Unknown: A valid external Instance reference no
/// longer exists."
pub fn innermost_cause(message: &str) -> &str {
    message
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Backtrace"))
        .filter(|line| !line.is_empty() && *line != "Caused by:")
        .last()
        .unwrap_or(message)
}

/// What the page says when the GPU device is lost during a run.
pub fn device_loss_message(cause: &str) -> String {
    format!(
        "The GPU device was lost ({cause}). Training stopped; the page's weights are kept. Continue from the \
         last saved epoch on the CPU path, or reload the page to use WebGPU again."
    )
}

/// The backend of the native commands (`train`, `bench`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeBackend {
    /// burn's CPU backend.
    Flex,
    /// The machine's GPU through wgpu (Vulkan, Metal or DX12): a build with `--features wgpu`.
    Wgpu,
}

impl NativeBackend {
    pub fn name(self) -> &'static str {
        match self {
            NativeBackend::Flex => "flex",
            NativeBackend::Wgpu => "wgpu",
        }
    }
}

/// The device for `backend`, or why there is none.
#[cfg(not(target_family = "wasm"))]
pub fn native_device(backend: NativeBackend) -> Result<burn::tensor::Device, String> {
    match backend {
        NativeBackend::Flex => Ok(burn::tensor::Device::flex()),
        #[cfg(feature = "wgpu")]
        NativeBackend::Wgpu => burn::tensor::Device::wgpu_options().init().map_err(|error| format!("no wgpu device: {error}")),
        #[cfg(not(feature = "wgpu"))]
        NativeBackend::Wgpu => Err("this build has no wgpu backend: build with `--features wgpu`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(architecture: &str) -> AdapterSummary {
        AdapterSummary { vendor: "google".into(), architecture: architecture.into(), ..Default::default() }
    }

    #[test]
    fn software_adapters_go_to_the_cpu_unless_overridden() {
        let swiftshader = adapter("swiftshader");
        assert_eq!(choose_path(PathRequest::Auto, Some(&swiftshader)).path, ComputePath::Cpu);
        assert_eq!(choose_path(PathRequest::WebGpu, Some(&swiftshader)).path, ComputePath::WebGpu);
        let fallback = AdapterSummary { is_fallback: true, ..adapter("") };
        assert_eq!(choose_path(PathRequest::Auto, Some(&fallback)).path, ComputePath::Cpu);
    }

    #[test]
    fn real_gpus_get_webgpu_and_missing_ones_the_cpu() {
        let nvidia = AdapterSummary { vendor: "nvidia".into(), architecture: "ampere".into(), ..Default::default() };
        assert_eq!(choose_path(PathRequest::Auto, Some(&nvidia)).path, ComputePath::WebGpu);
        assert_eq!(choose_path(PathRequest::Cpu, Some(&nvidia)).path, ComputePath::Cpu);
        let missing = choose_path(PathRequest::WebGpu, None);
        assert_eq!(missing.path, ComputePath::Cpu);
        assert!(missing.reason.contains("no WebGPU adapter"));
    }

    #[test]
    fn a_lost_device_is_reported_in_the_drivers_words() {
        assert!(device_loss_message("Destroyed").contains("last saved epoch"));
        let report = "reading from the device failed: The device is \nCaused by:\n  The device is poisoned\nCaused by:\n  \
                      Unknown: A valid external Instance reference no longer exists.\nBacktrace:\nNo backtrace available";
        assert_eq!(innermost_cause(report), "Unknown: A valid external Instance reference no longer exists.");
        assert_eq!(innermost_cause("one line"), "one line");
    }

    #[test]
    fn native_commands_get_their_backend() {
        assert!(native_device(NativeBackend::Flex).is_ok());
        #[cfg(not(feature = "wgpu"))]
        assert!(native_device(NativeBackend::Wgpu).unwrap_err().contains("--features wgpu"));
    }

    #[test]
    fn requests_parse_leniently() {
        assert_eq!(PathRequest::parse(Some("WebGPU")), PathRequest::WebGpu);
        assert_eq!(PathRequest::parse(Some("cpu")), PathRequest::Cpu);
        assert_eq!(PathRequest::parse(Some("nonsense")), PathRequest::Auto);
        assert_eq!(PathRequest::parse(None), PathRequest::Auto);
    }
}
