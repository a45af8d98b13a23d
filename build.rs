//! Names, for the code, the two things a build can have that its target alone does not say:
//!
//! - `gpu`: burn's WebGPU/wgpu backend is compiled in — the page's wasm module, and native builds
//!   with `--features wgpu`. The worker's threaded CPU module has none: wgpu's types are not
//!   `Send` under wasm atomics, so WebGPU does not compile there (../shared/THREADS.md).
//! - `threaded`: work can be spread over rayon's pool — every native build, and the wasm module
//!   built with `+atomics` and shared memory (`scripts/build-threads.sh`).
//! - `browser_without_webgpu`: the browser tests are built for a browser that has no WebGPU
//!   (Firefox on Linux), asked for by `VIT_WEB_BROWSER_WITHOUT_WEBGPU=1`; their WebGPU tests are
//!   then ignored with the reason printed. Unset, as for Chromium, they must find WebGPU.

use std::env;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(gpu)");
    println!("cargo::rustc-check-cfg=cfg(threaded)");
    println!("cargo::rustc-check-cfg=cfg(browser_without_webgpu)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=VIT_WEB_BROWSER_WITHOUT_WEBGPU");
    if env::var("VIT_WEB_BROWSER_WITHOUT_WEBGPU").is_ok_and(|value| value == "1") {
        println!("cargo::rustc-cfg=browser_without_webgpu");
    }
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
