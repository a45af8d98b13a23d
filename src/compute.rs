//! Which backend the page computes on. burn's stock WebGPU kernels are slower on a software
//! adapter (SwiftShader, llvmpipe) than its CPU backend compiled to wasm, so a software or
//! missing adapter sends the page to the CPU path unless the person asks otherwise.

use burn::tensor::ExecutionError;
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

/// What the page's link asks for in `?compute=` and `?threads=` that the page cannot use, in
/// the words of the form's "In the link: …" message; the page then does as if it were absent.
pub fn unusable_link_values(compute: Option<&str>, threads: Option<&str>) -> Vec<String> {
    let mut unusable = Vec::new();
    if let Some(value) = compute.filter(|value| !matches!(value.to_ascii_lowercase().as_str(), "auto" | "webgpu" | "gpu" | "cpu" | "wasm")) {
        unusable.push(format!("compute: '{value}' is not auto, webgpu or cpu, so the page chose by measuring"));
    }
    if let Some(value) = threads.filter(|value| parse_threads(Some(value)).is_none()) {
        unusable.push(format!("threads: '{value}' is not a whole number from 1 up, so the page runs one per core"));
    }
    unusable
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

/// The path for `request`: `Auto` takes the faster of the two as measured here when there is a
/// measurement, else the adapter's kind (a software adapter runs slower than the CPU path).
pub fn choose_path(request: PathRequest, adapter: Option<&AdapterSummary>, measured: Option<&Measurement>) -> PathChoice {
    let choice = |path, reason: String| PathChoice { path, reason };
    match (request, adapter) {
        (PathRequest::Auto, Some(_)) if let Some(measured) = measured => {
            choice(measured.faster(), format!("Measured here: {}.", measured.summary()))
        }
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

/// How a measured speed bounds the path's real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedBound {
    /// Over the steps after the first (which compiles kernels and allocates).
    Measured,
    /// Only the first step finished within the budget: the path is at least this fast.
    AtLeast,
    /// No step finished within the budget: the path is slower than this.
    Below,
}

/// A path's training speed on the fixed batch, as measured in this browser.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathSpeed {
    pub images_per_second: f64,
    pub bound: SpeedBound,
}

impl PathSpeed {
    /// The speed from the seconds of each step of `batch` images that finished within a budget
    /// of `budget_seconds`: the fastest step after the first (which compiles and allocates).
    pub fn from_steps(batch: usize, step_seconds: &[f64], budget_seconds: f64) -> Self {
        let speed = |seconds: f64| batch as f64 / seconds.max(1e-9);
        match step_seconds {
            [] => PathSpeed { images_per_second: speed(budget_seconds), bound: SpeedBound::Below },
            [first] => PathSpeed { images_per_second: speed(*first), bound: SpeedBound::AtLeast },
            // The fastest: a path warms up over its first steps (its memory grows, its pool's
            // threads start) and a busy machine only slows a step, so the quickest is the
            // nearest to what a long run sustains.
            [_, later @ ..] => {
                let fastest = later.iter().copied().fold(f64::INFINITY, f64::min);
                PathSpeed { images_per_second: speed(fastest), bound: SpeedBound::Measured }
            }
        }
    }

    /// "230 img/s", "≥ 12 img/s" or "< 3.1 img/s".
    pub fn text(&self) -> String {
        let value = self.images_per_second;
        let number = if value >= 10.0 { format!("{value:.0}") } else { format!("{value:.1}") };
        match self.bound {
            SpeedBound::Measured => format!("{number} img/s"),
            SpeedBound::AtLeast => format!("≥ {number} img/s"),
            SpeedBound::Below => format!("< {number} img/s"),
        }
    }
}

/// Both paths' training speeds as measured here, kept per device in browser storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub webgpu: PathSpeed,
    pub cpu: PathSpeed,
    pub cpu_threads: usize,
}

impl Measurement {
    pub fn speed(&self, path: ComputePath) -> PathSpeed {
        match path {
            ComputePath::WebGpu => self.webgpu,
            ComputePath::Cpu => self.cpu,
        }
    }

    /// WebGPU where it trained faster than the CPU path; the CPU path where it did not, or where
    /// WebGPU ran out of time before it could show.
    pub fn faster(&self) -> ComputePath {
        let webgpu_faster = self.webgpu.bound != SpeedBound::Below && self.webgpu.images_per_second > self.cpu.images_per_second;
        if webgpu_faster { ComputePath::WebGpu } else { ComputePath::Cpu }
    }

    /// "WebGPU < 9.1 img/s · CPU, 2 threads 230 img/s → CPU".
    pub fn summary(&self) -> String {
        let threads = if self.cpu_threads == 1 { "1 thread".to_string() } else { format!("{} threads", self.cpu_threads) };
        let faster = match self.faster() {
            ComputePath::WebGpu => "WebGPU",
            ComputePath::Cpu => "CPU",
        };
        format!("WebGPU {} · CPU, {threads} {} → {faster}", self.webgpu.text(), self.cpu.text())
    }
}

/// What a measurement is kept under: the adapter, the cores and the threads it was made with.
pub fn measurement_key(adapter: &AdapterSummary, support: &ThreadSupport, threads: usize) -> String {
    format!(
        "{} | {} | {} cores | {threads} threads",
        adapter.label(),
        [adapter.device.as_str(), adapter.description.as_str()].join(" ").trim(),
        support.cores
    )
}

/// The most threads the page asks for, whatever the device reports: each is a web worker with
/// its own copy of the module's code.
pub const MAX_THREADS: usize = 32;

/// What the page knows about running WebAssembly threads here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadSupport {
    /// `crossOriginIsolated`: the host, or the page's service worker, sends COOP and COEP, so the
    /// browser allows shared memory.
    pub isolated: bool,
    /// The browser can make a shared WebAssembly memory.
    pub shared_memory: bool,
    /// `navigator.hardwareConcurrency`.
    pub cores: usize,
    /// The threaded module failed to start in this browser before (WebKit cannot hand a
    /// compiled module to its workers): the page stops offering threads it cannot run.
    pub pool_failed: bool,
}

/// What the page says when the CPU path's threads could not start and it runs on one: in words,
/// with the browser's own error kept for the console.
pub fn pool_failure_note(error_name: &str) -> String {
    let why = match error_name {
        "DataCloneError" => "this browser cannot hand the compiled WebAssembly module to the worker threads",
        "CompileError" | "LinkError" => "this browser cannot run the threaded WebAssembly module",
        _ => "the worker threads did not start",
    };
    format!("{why}, so training runs on one thread")
}

/// How many threads the CPU path runs on, and a sentence for the page that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadPlan {
    pub threads: usize,
    pub reason: String,
}

/// Reads `?threads=N`: a whole number from 1 up; anything else means "as many as the cores".
pub fn parse_threads(value: Option<&str>) -> Option<usize> {
    value?.trim().parse().ok().filter(|&threads| threads >= 1)
}

/// The CPU path's threads: one per core where the page can have threads, `requested` when the
/// person asked (`?threads=1` is the single-threaded module).
pub fn plan_threads(requested: Option<usize>, support: ThreadSupport) -> ThreadPlan {
    let plan = |threads, reason: &str| ThreadPlan { threads, reason: reason.into() };
    if requested == Some(1) {
        return plan(1, "1 thread, as asked (?threads=1).");
    }
    if !support.isolated {
        return plan(
            1,
            "1 thread: this page is not cross-origin isolated (its host sends no Cross-Origin-Opener-Policy and \
             Cross-Origin-Embedder-Policy headers, and the page's service worker, which adds them, is not in charge: \
             not active yet, or bypassed by a forced reload), so the browser allows no shared memory. A normal reload \
             brings the threads back once the service worker is active.",
        );
    }
    if !support.shared_memory {
        return plan(1, "1 thread: this browser has no WebAssembly threads.");
    }
    if support.pool_failed && requested.is_none() {
        return plan(
            1,
            "1 thread: the CPU path's threads did not start in this browser on an earlier visit, so the page runs on one \
             (?threads=N tries again).",
        );
    }
    match requested {
        Some(threads) => {
            let threads = threads.min(MAX_THREADS);
            ThreadPlan { threads, reason: format!("{threads} threads, as asked (?threads={threads}).") }
        }
        None if support.cores <= 1 => plan(1, "1 thread: this device reports one core."),
        None => {
            let threads = support.cores.min(MAX_THREADS);
            ThreadPlan { threads, reason: format!("{threads} threads, one per core.") }
        }
    }
}

/// The thread counts the page's threads selector offers: 1 up to the cores (or up to what
/// `?threads=` asked for, if more), none where the page can run only one thread.
pub fn thread_choices(requested: Option<usize>, support: ThreadSupport) -> Vec<usize> {
    if !support.isolated || !support.shared_memory || (support.pool_failed && requested.is_none()) {
        return Vec::new();
    }
    let most = support.cores.max(requested.unwrap_or(1)).min(MAX_THREADS);
    if most <= 1 { Vec::new() } else { (1..=most).collect() }
}

/// How long a training worker may stay silent before the page takes it for dead. A thread of
/// the CPU path's pool that runs out of memory or crashes leaves the worker waiting for it
/// forever, and nothing else would say so. At least half a minute on the CPU path and three on
/// WebGPU (whose first steps compile kernels), and ten times the slowest step seen so far.
pub fn stall_limit_seconds(path: ComputePath, slowest_step_seconds: f64) -> f64 {
    let floor: f64 = match path {
        ComputePath::Cpu => 30.0,
        ComputePath::WebGpu => 180.0,
    };
    floor.max(10.0 * slowest_step_seconds)
}

/// How long a new training worker may take to say it is ready. It downloads and compiles a
/// module (the threaded one is not the page's own, so not yet cached), which a slow connection
/// stretches; past this the page stops waiting and says so.
pub const WORKER_START_LIMIT_SECONDS: f64 = 120.0;

/// What the page says when its training worker never said it was ready.
pub fn worker_not_started_message(silent_seconds: f64) -> String {
    format!(
        "The training worker did not start: it sent nothing for {silent_seconds:.0} s. Predictions still work here; \
         reload the page to try training again."
    )
}

/// What the compute card says when the CPU path's threads did not answer in time and the page
/// runs its training worker on one thread instead.
pub fn pool_timeout_note(silent_seconds: f64) -> String {
    format!("the worker threads did not answer within {silent_seconds:.0} s, so training runs on one thread")
}

/// What the page says when the worker did not answer a request to train.
pub fn run_not_started_message(silent_seconds: f64) -> String {
    format!(
        "Training did not start: the worker sent nothing for {silent_seconds:.0} s after it was asked. The page's weights \
         are kept; press Start to try again, or reload the page."
    )
}

/// What the page says when its training worker stopped answering.
pub fn stalled_worker_message(silent_seconds: f64) -> String {
    format!(
        "Training stopped: the worker sent nothing for {silent_seconds:.0} s, as when a thread of its pool runs out of \
         memory or crashes. The page's weights are kept, and the last saved epoch is offered to continue from."
    )
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

/// What the page says when the GPU device is lost during a run: the news [`lost_device`] gives,
/// with the run's own way on (its last saved epoch, on the CPU path) in place of its advice.
pub fn device_loss_message(cause: &str) -> String {
    format!(
        "The GPU device was lost ({cause}). Training stopped; the page's weights are kept. Continue from the \
         last saved epoch on the CPU path, or reload the page to use WebGPU again."
    )
}

/// What the page says wherever it meets a lost GPU outside a run (a read, an evaluation, WebGPU
/// work asked for after the loss): the browser's words, then what to do. No later WebGPU work in
/// that page can succeed, so the advice is the same everywhere.
pub fn lost_device(cause: &str) -> String {
    format!("the GPU device was lost ({cause}). Reload the page to use WebGPU again, or switch to the CPU path.")
}

/// What the page says when reading from its own device fails: [`lost_device`] after a lost GPU,
/// otherwise burn's words.
pub fn read_failure(what: &str, error: &ExecutionError) -> String {
    match error {
        ExecutionError::DevicePoisoned { reason } => format!("{what} failed: {}", lost_device(innermost_cause(reason))),
        other => format!("{what} failed: {other}"),
    }
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
        assert_eq!(choose_path(PathRequest::Auto, Some(&swiftshader), None).path, ComputePath::Cpu);
        assert_eq!(choose_path(PathRequest::WebGpu, Some(&swiftshader), None).path, ComputePath::WebGpu);
        let fallback = AdapterSummary { is_fallback: true, ..adapter("") };
        assert_eq!(choose_path(PathRequest::Auto, Some(&fallback), None).path, ComputePath::Cpu);
    }

    #[test]
    fn real_gpus_get_webgpu_and_missing_ones_the_cpu() {
        let nvidia = AdapterSummary { vendor: "nvidia".into(), architecture: "ampere".into(), ..Default::default() };
        assert_eq!(choose_path(PathRequest::Auto, Some(&nvidia), None).path, ComputePath::WebGpu);
        assert_eq!(choose_path(PathRequest::Cpu, Some(&nvidia), None).path, ComputePath::Cpu);
        let missing = choose_path(PathRequest::WebGpu, None, None);
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
        let lost = read_failure("reading the positional embedding", &ExecutionError::device_poisoned("Unknown: Instance dropped.\nBacktrace:\nnone"));
        assert_eq!(
            lost,
            "reading the positional embedding failed: the GPU device was lost (Unknown: Instance dropped.). Reload the page to use WebGPU again, or switch to the CPU path."
        );
        let other = read_failure("reading from the device", &ExecutionError::with_context("out of memory"));
        assert!(other.starts_with("reading from the device failed: ") && other.contains("out of memory") && !other.contains("lost"));
    }

    #[test]
    #[cfg(not(target_family = "wasm"))]
    fn native_commands_get_their_backend() {
        assert!(native_device(NativeBackend::Flex).is_ok());
        #[cfg(not(feature = "wgpu"))]
        assert!(native_device(NativeBackend::Wgpu).unwrap_err().contains("--features wgpu"));
    }

    #[test]
    fn speeds_come_from_the_steps_after_the_first_or_bound_it() {
        let measured = PathSpeed::from_steps(32, &[2.0, 0.4, 0.2, 0.3], 3.0);
        assert_eq!(measured, PathSpeed { images_per_second: 160.0, bound: SpeedBound::Measured });
        let first_only = PathSpeed::from_steps(32, &[4.0], 5.0);
        assert_eq!((first_only.images_per_second, first_only.bound), (8.0, SpeedBound::AtLeast));
        let none = PathSpeed::from_steps(32, &[], 3.2);
        assert_eq!((none.images_per_second, none.bound), (10.0, SpeedBound::Below));
        assert_eq!(none.text(), "< 10 img/s");
        assert_eq!(PathSpeed::from_steps(8, &[], 3.2).text(), "< 2.5 img/s");
    }

    #[test]
    fn the_measured_faster_path_is_chosen_and_said() {
        let speed = |images_per_second, bound| PathSpeed { images_per_second, bound };
        let slow_gpu = Measurement {
            webgpu: speed(9.1, SpeedBound::Below),
            cpu: speed(230.0, SpeedBound::Measured),
            cpu_threads: 2,
        };
        let chosen = choose_path(PathRequest::Auto, Some(&adapter("swiftshader")), Some(&slow_gpu));
        assert_eq!(chosen.path, ComputePath::Cpu);
        assert_eq!(chosen.reason, "Measured here: WebGPU < 9.1 img/s · CPU, 2 threads 230 img/s → CPU.");
        let weak_but_real = Measurement { webgpu: speed(600.0, SpeedBound::Measured), ..slow_gpu.clone() };
        assert_eq!(weak_but_real.faster(), ComputePath::WebGpu);
        // A request beats a measurement, and a measurement beats the adapter's name.
        let forced = choose_path(PathRequest::Cpu, Some(&adapter("ampere")), Some(&weak_but_real));
        assert_eq!(forced.path, ComputePath::Cpu);
        let measured = choose_path(PathRequest::Auto, Some(&adapter("swiftshader")), Some(&weak_but_real));
        assert_eq!(measured.path, ComputePath::WebGpu);
    }

    #[test]
    fn the_threads_selector_offers_one_up_to_the_cores_where_threads_run() {
        let support = ThreadSupport { isolated: true, shared_memory: true, cores: 4, pool_failed: false };
        assert_eq!(thread_choices(None, support), vec![1, 2, 3, 4]);
        assert_eq!(thread_choices(Some(6), support), vec![1, 2, 3, 4, 5, 6], "what was asked for stays choosable");
        assert_eq!(thread_choices(Some(1000), support).len(), MAX_THREADS);
        assert!(thread_choices(None, ThreadSupport { cores: 1, ..support }).is_empty(), "one core: nothing to choose");
        assert!(thread_choices(None, ThreadSupport { isolated: false, ..support }).is_empty());
        assert!(thread_choices(None, ThreadSupport { shared_memory: false, ..support }).is_empty());
        let failed = ThreadSupport { pool_failed: true, ..support };
        assert!(thread_choices(None, failed).is_empty(), "threads that did not start here are not offered");
        assert_eq!(thread_choices(Some(2), failed), vec![1, 2, 3, 4], "a link that asks for threads tries again");
    }

    #[test]
    fn threads_follow_the_cores_where_the_page_may_share_memory() {
        let support = ThreadSupport { isolated: true, shared_memory: true, cores: 8, pool_failed: false };
        assert_eq!(plan_threads(None, support).threads, 8);
        assert_eq!(plan_threads(Some(3), support).threads, 3);
        assert_eq!(plan_threads(Some(1), support).threads, 1);
        assert_eq!(plan_threads(Some(1000), support).threads, MAX_THREADS);
        let alone = plan_threads(None, ThreadSupport { cores: 1, ..support });
        assert_eq!(alone.threads, 1);
        let not_isolated = plan_threads(Some(4), ThreadSupport { isolated: false, ..support });
        assert_eq!(not_isolated.threads, 1);
        assert!(not_isolated.reason.contains("cross-origin isolated"), "{}", not_isolated.reason);
        let no_threads = plan_threads(None, ThreadSupport { shared_memory: false, ..support });
        assert!(no_threads.reason.contains("no WebAssembly threads"));
        let failed = ThreadSupport { pool_failed: true, ..support };
        assert_eq!(plan_threads(None, failed).threads, 1, "threads that failed here are not tried on every visit");
        assert!(plan_threads(None, failed).reason.contains("did not start in this browser"));
        assert_eq!(plan_threads(Some(4), failed).threads, 4, "unless a link asks");
    }

    #[test]
    fn unusable_link_values_are_named() {
        assert!(unusable_link_values(Some("WebGPU"), Some("3")).is_empty());
        assert!(unusable_link_values(None, None).is_empty());
        let named = unusable_link_values(Some("fast"), Some("many"));
        assert_eq!(named.len(), 2);
        assert!(named[0].starts_with("compute: 'fast' is not auto, webgpu or cpu"), "{named:?}");
        assert!(named[1].starts_with("threads: 'many' is not a whole number"), "{named:?}");
    }

    #[test]
    fn a_pool_that_did_not_start_is_explained_in_words() {
        assert_eq!(
            pool_failure_note("DataCloneError"),
            "this browser cannot hand the compiled WebAssembly module to the worker threads, so training runs on one thread"
        );
        assert!(!pool_failure_note("TypeError").contains("TypeError"));
    }

    #[test]
    fn thread_requests_parse_leniently() {
        assert_eq!(parse_threads(Some("4")), Some(4));
        assert_eq!(parse_threads(Some(" 1 ")), Some(1));
        assert_eq!(parse_threads(Some("0")), None);
        assert_eq!(parse_threads(Some("many")), None);
        assert_eq!(parse_threads(None), None);
    }

    #[test]
    fn a_worker_is_given_up_on_after_ten_of_its_slowest_steps() {
        assert_eq!(stall_limit_seconds(ComputePath::Cpu, 0.3), 30.0);
        assert_eq!(stall_limit_seconds(ComputePath::Cpu, 12.0), 120.0);
        assert_eq!(stall_limit_seconds(ComputePath::WebGpu, 9.0), 180.0);
        assert!(stalled_worker_message(31.2).contains("for 31 s"));
    }

    #[test]
    fn requests_parse_leniently() {
        assert_eq!(PathRequest::parse(Some("WebGPU")), PathRequest::WebGpu);
        assert_eq!(PathRequest::parse(Some("cpu")), PathRequest::Cpu);
        assert_eq!(PathRequest::parse(Some("nonsense")), PathRequest::Auto);
        assert_eq!(PathRequest::parse(None), PathRequest::Auto);
    }
}
