//! Names, for the code, the two things a build can have that its target alone does not say:
//!
//! - `gpu`: burn's WebGPU/wgpu backend is compiled in — the page's wasm module, and native builds
//!   with `--features wgpu`. The worker's threaded CPU module has none: wgpu's types are not
//!   `Send` under wasm atomics, so WebGPU does not compile there (../shared/THREADS.md).
//! - `threaded`: work can be spread over rayon's pool — every native build, and the wasm module
//!   built with `+atomics` and shared memory (`scripts/build-threads.sh`).

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gpu)");
    println!("cargo::rustc-check-cfg=cfg(threaded)");
    println!("cargo::rerun-if-changed=build.rs");
    let wasm = env::var("CARGO_CFG_TARGET_FAMILY").is_ok_and(|families| families.split(',').any(|f| f == "wasm"));
    let atomics = env::var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|features| features.split(',').any(|f| f == "atomics"));
    let wgpu = env::var_os("CARGO_FEATURE_WGPU").is_some();
    if (wasm && !atomics) || (!wasm && wgpu) {
        println!("cargo::rustc-cfg=gpu");
    }
    if !wasm || atomics {
        println!("cargo::rustc-cfg=threaded");
    }
}
