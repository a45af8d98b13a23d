//! What our GPU kernels' launches did, kept while a report asks for it: how many workgroups and
//! invocations each launch had and the longest loop one invocation ran, so the launch report
//! (`bench --sections launches`) can show how a kernel fills a GPU without having one.

use std::cell::RefCell;

/// One launch of one of our kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRecord {
    /// The kernel's name, as cubecl's launch observer also reports it.
    pub kernel: &'static str,
    /// The kernel's constants as its `Debug` writes them: the shape, the split, the epilogue.
    pub detail: String,
    pub workgroups: u64,
    pub invocations: u64,
    /// The most steps one invocation's main loop runs.
    pub serial_steps: u64,
    /// How many values of a sum over the batch's rows (images × tokens) one invocation adds in
    /// sequence; 0 for a kernel that sums nothing over the batch.
    pub batch_sum: u64,
    /// The largest buffer it binds, in bytes: a WebGPU device binds none larger than its
    /// `maxStorageBufferBindingSize` (`training::gpu_step_too_large`).
    pub largest_binding: u64,
}

thread_local! {
    static RECORDS: RefCell<Option<Vec<LaunchRecord>>> = const { RefCell::new(None) };
}

/// Starts keeping this thread's launch records (dropping any kept so far).
pub fn start_recording() {
    RECORDS.with(|records| *records.borrow_mut() = Some(Vec::new()));
}

/// The records kept since [`start_recording`], which goes on recording.
pub fn take_records() -> Vec<LaunchRecord> {
    RECORDS.with(|records| records.borrow_mut().as_mut().map(std::mem::take).unwrap_or_default())
}

/// Stops recording.
pub fn stop_recording() {
    RECORDS.with(|records| *records.borrow_mut() = None);
}

/// Keeps `record` if recording.
pub fn record(record: impl FnOnce() -> LaunchRecord) {
    RECORDS.with(|records| {
        if let Some(records) = records.borrow_mut().as_mut() {
            records.push(record());
        }
    });
}

/// Every kernel launch some work issued, counted by kernel (ours and burn's), through cubecl's
/// launch observer.
#[cfg(gpu)]
pub mod count {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use burn_cubecl::cubecl::logging::{LaunchObservation, LaunchObserver};

    #[derive(Default)]
    struct Counter(Mutex<BTreeMap<String, usize>>);

    impl LaunchObserver for Counter {
        fn launched(&self, kernel: &'static str) {
            *self.0.lock().expect("the counter's lock").entry(kernel_name(kernel)).or_default() += 1;
        }
    }

    /// Runs `work` and counts the launches it issued, by kernel name.
    pub fn launches<R>(work: impl FnOnce() -> R) -> (R, BTreeMap<String, usize>) {
        let counter = Arc::new(Counter::default());
        let watching = LaunchObservation::new(counter.clone());
        let result = work();
        drop(watching);
        let counts = std::mem::take(&mut *counter.0.lock().expect("the counter's lock"));
        (result, counts)
    }

    /// A kernel's type name without its paths: ours by the kernel's own type (`TiledProduct`),
    /// burn's with their generic operation (`KernelBinop<AddOp>`, without element types).
    pub fn kernel_name(type_name: &str) -> String {
        if type_name.contains("vit_web::") {
            let inner = type_name.trim_end_matches('>').rsplit('<').next().unwrap_or(type_name);
            return inner.rsplit("::").next().unwrap_or(inner).to_string();
        }
        let mut name = String::new();
        let mut token = String::new();
        let flush = |token: &mut String, name: &mut String| {
            let short = token.rsplit("::").next().unwrap_or("").trim();
            let is_element = matches!(short, "f32" | "f16" | "bf16" | "f64" | "i32" | "u32" | "i64" | "u8" | "bool");
            if !short.is_empty() && !is_element {
                if name.ends_with('<') || name.is_empty() || name.ends_with(", ") {
                    name.push_str(short);
                } else {
                    name.push_str(", ");
                    name.push_str(short);
                }
            }
            token.clear();
        };
        for character in type_name.chars() {
            match character {
                '<' => {
                    flush(&mut token, &mut name);
                    name.push('<');
                }
                '>' => {
                    flush(&mut token, &mut name);
                    name.push('>');
                }
                ',' => flush(&mut token, &mut name),
                other => token.push(other),
            }
        }
        flush(&mut token, &mut name);
        name.replace("<>", "")
    }

    #[cfg(test)]
    mod tests {
        use super::kernel_name;

        #[test]
        fn kernel_names_lose_their_paths() {
            assert_eq!(
                kernel_name("burn_cubecl::template::base::SourceKernel<vit_web::ops::webgpu::launch::Source<vit_web::ops::dense::webgpu::product::TiledProduct>>"),
                "TiledProduct"
            );
            assert_eq!(kernel_name("burn_cubecl::kernel::binary::KernelBinop<f32, burn_cubecl::ops::AddOp>"), "KernelBinop<AddOp>");
            assert_eq!(kernel_name("cubecl_std::FullKernel<f32>"), "FullKernel");
        }
    }
}

/// Every kernel launch some work issued, with its GPU time, through cubecl's launch observer:
/// where a step's time goes on a real GPU, kernel by kernel. Each measurement is kept unread
/// until the work is done, so the kernels still run back to back; on an adapter with timestamp
/// queries (every GPU wgpu drives natively) the times are the device's own. Native only: it
/// blocks on the device's answers, which a browser's event loop cannot.
#[cfg(all(gpu, not(target_family = "wasm")))]
pub mod timing {
    use std::sync::{Arc, Mutex};

    use burn_cubecl::cubecl::logging::{
        Duration, LaunchObservation, LaunchObserver, ProfileDuration, TimingMethod, TimingRequest,
    };

    use super::{count::kernel_name, start_recording, stop_recording, take_records};

    /// One launch and its time.
    #[derive(Debug, Clone, PartialEq)]
    pub struct KernelTime {
        /// As [`count::kernel_name`](super::count::kernel_name) shortens it.
        pub kernel: String,
        /// Our kernels' constants ([`LaunchRecord::detail`](super::LaunchRecord::detail)), so
        /// the products of one step tell apart; burn's have none.
        pub detail: Option<String>,
        /// `None` where the device answered with no measurement.
        pub ms: Option<f64>,
        /// Whether the time is the device's (timestamp queries) rather than the host's around
        /// a blocking submit, which counts the submission too.
        pub device_clock: bool,
    }

    enum Measurement {
        Unread(ProfileDuration),
        Read(Duration, TimingMethod),
    }

    #[derive(Default)]
    struct Timer(Mutex<Vec<(&'static str, Option<Measurement>)>>);

    impl LaunchObserver for Timer {
        fn launched(&self, kernel: &'static str) {
            self.0.lock().expect("the timer's lock").push((kernel, None));
        }

        fn timing(&self) -> TimingRequest {
            TimingRequest::Deferred
        }

        fn profiled(&self, kernel: &'static str, profile: ProfileDuration) {
            self.keep(kernel, Measurement::Unread(profile));
        }

        /// Where cubecl's profiling logger is on, it reads each measurement and passes it on.
        fn timed(&self, kernel: &'static str, duration: Duration, method: TimingMethod) {
            self.keep(kernel, Measurement::Read(duration, method));
        }
    }

    impl Timer {
        /// A launch's measurement arrives after it was reported: it is the latest launch of
        /// that kernel still without one.
        fn keep(&self, kernel: &'static str, measurement: Measurement) {
            let mut launches = self.0.lock().expect("the timer's lock");
            if let Some(slot) = launches.iter_mut().rev().find(|(name, kept)| *name == kernel && kept.is_none()) {
                slot.1 = Some(measurement);
            }
        }
    }

    /// Runs `work`, waits for the device with `sync`, and returns each launch it issued in
    /// order with its time.
    pub fn kernels<R>(work: impl FnOnce() -> R, sync: impl FnOnce(&R)) -> (R, Vec<KernelTime>) {
        let timer = Arc::new(Timer::default());
        start_recording();
        let watching = LaunchObservation::new(timer.clone());
        let result = work();
        drop(watching);
        let mut records = take_records().into_iter().peekable();
        stop_recording();
        sync(&result);
        let launches = std::mem::take(&mut *timer.0.lock().expect("the timer's lock"));
        let times = launches
            .into_iter()
            .map(|(kernel, measurement)| {
                let kernel = kernel_name(kernel);
                // Our launches were recorded in the order they were issued.
                let detail = records.next_if(|record| record.kernel == kernel).map(|record| record.detail);
                let (ms, device_clock) = match measurement {
                    Some(Measurement::Unread(profile)) => {
                        let device_clock = profile.timing_method() == TimingMethod::Device;
                        let ticks = pollster::block_on(profile.resolve());
                        (ticks.map(|ticks| ticks.duration().as_secs_f64() * 1e3), device_clock)
                    }
                    Some(Measurement::Read(duration, method)) => {
                        (Some(duration.as_secs_f64() * 1e3), method == TimingMethod::Device)
                    }
                    None => (None, false),
                };
                KernelTime { kernel, detail, ms, device_clock }
            })
            .collect();
        (result, times)
    }
}
