//! What our GPU kernels' launches did, kept while a report asks for it: how many workgroups and
//! invocations each launch had and the longest loop one invocation ran, so the launch report
//! (`bench --sections launches`) can show how a kernel fills a GPU without having one.

use std::cell::RefCell;

/// One launch of one of our kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRecord {
    /// The kernel's name, as cubecl's launch observer also reports it.
    pub kernel: &'static str,
    pub workgroups: u64,
    pub invocations: u64,
    /// The most steps one invocation's main loop runs.
    pub serial_steps: u64,
    /// How many values of a sum over the batch's rows (images × tokens) one invocation adds in
    /// sequence; 0 for a kernel that sums nothing over the batch.
    pub batch_sum: u64,
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
