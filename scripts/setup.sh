#!/usr/bin/env bash
# Installs what building and testing the page needs, and only what is missing, so a second run
# takes seconds. Source-able: `source scripts/setup.sh` leaves PATH and CARGO_TARGET_DIR set.
#
# Route to a wasm32 standard library:
#   1. rustup's `wasm32-unknown-unknown` target, where rustup can download it (a normal laptop);
#   2. otherwise Debian's rustc-web 1.96 with a wasm32 std built once from its shipped sources
#      (see docs/TOOLCHAIN.md). The chosen compiler then builds everything, native tests included,
#      because two compilers' artefacts cannot share one target directory.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/vit-web/target}
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=""
apt_install() {
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "apt-get install ${missing[*]}"
    [ -n "$apt_updated" ] || { as_root apt-get update -q >/dev/null; apt_updated=1; }
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
}

# --- Rust with a wasm32 standard library -------------------------------------------------------
debian_sysroot=/usr/lib/rustlib/wasm32-unknown-unknown/lib
has_std() { ls "$1"/libstd-*.rlib >/dev/null 2>&1; }
rustup_std() {
    command -v rustup >/dev/null || return 1
    has_std "$(rustc --print sysroot 2>/dev/null)/lib/rustlib/wasm32-unknown-unknown/lib"
}

if has_std "$debian_sysroot" && [ -x /usr/bin/cargo ]; then
    export PATH="/usr/bin:$PATH"          # Debian's compiler, whose sysroot holds the wasm32 std
elif rustup_std; then
    :
elif command -v rustup >/dev/null && timeout 60 rustup target add wasm32-unknown-unknown >/dev/null 2>&1 && rustup_std; then
    log "installed the wasm32 target with rustup"
else
    log "rustup cannot add wasm32 here: using Debian's rustc-web and building its wasm32 std once"
    apt_install rustc-web cargo-web rust-web-src rust-web-llvm lld-22
    std_dir=$(mktemp -d)
    (
        cd "$std_dir"
        /usr/bin/cargo new -q --lib wasm-std
        cd wasm-std
        printf '[profile.release]\ndebug = false\n' >> Cargo.toml
        CARGO_TARGET_DIR="$std_dir/target" RUSTC_BOOTSTRAP=1 /usr/bin/cargo build -q --release \
            -Z build-std=std,panic_abort,test --target wasm32-unknown-unknown
    )
    as_root mkdir -p "$debian_sysroot"
    find "$std_dir/target/wasm32-unknown-unknown/release/deps" -name 'lib*.rlib' ! -name 'libwasm_std-*' \
        -exec cp {} "$debian_sysroot/" \; 2>/dev/null || as_root find "$std_dir/target/wasm32-unknown-unknown/release/deps" \
        -name 'lib*.rlib' ! -name 'libwasm_std-*' -exec cp {} "$debian_sysroot/" \;
    rm -rf "$std_dir"
    export PATH="/usr/bin:$PATH"
fi

# The worker's threaded module builds its own standard library (scripts/build-threads.sh), from
# the library's sources: rustup's rust-src component here, Debian's rust-web-src on that route.
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
    if command -v rustup >/dev/null && timeout 120 rustup component add rust-src >/dev/null 2>&1; then
        log "installed rustup's rust-src (the threaded module's standard library is built from it)"
    else
        apt_install rust-web-src
    fi
fi

# --- Browser and its driver (Debian's: no tool may download a browser of its own) --------------
if ! command -v chromium >/dev/null && ! command -v google-chrome >/dev/null; then
    apt_install chromium chromium-driver
fi
command -v chromedriver >/dev/null || apt_install chromium-driver
# Vulkan's loader, through which the native GPU tests (tests/gpu_ops.rs) reach Chromium's
# SwiftShader, a Vulkan driver on the CPU.
ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 ' || apt_install libvulkan1
export SWIFTSHADER_ICD=${SWIFTSHADER_ICD:-$(ls /usr/lib/chromium/vk_swiftshader_icd.json 2>/dev/null || true)}
command -v curl >/dev/null || apt_install curl ca-certificates   # fetches CIFAR-10 where it is missing
export CHROMEDRIVER=${CHROMEDRIVER:-$(command -v chromedriver)}

# --- Rust tools, built from crates.io --------------------------------------------------------
tools="$HOME/.cache/vit-web/tools"
mkdir -p "$tools/bin"
export PATH="$tools/bin:$PATH"
# --locked first for the tested dependency set; the registry mirror here lacks some locked
# versions (webpki-roots 1.0.11), so fall back to a fresh resolution.
cargo_install() {
    cargo install -q --locked --root "$tools" "$1" --version "$2" 2>/dev/null ||
        cargo install -q --root "$tools" "$1" --version "$2"
}
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' "$root/Cargo.lock")
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$bindgen_version" ]; then
    log "cargo install wasm-bindgen-cli $bindgen_version (matches Cargo.lock; a few minutes)"
    cargo_install wasm-bindgen-cli "$bindgen_version"
fi
if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "0.15.1" ]; then
    # `wasm-pack test --headless --chrome` runs the browser tests; CHROMEDRIVER (above) and the
    # wasm-bindgen on PATH keep it from downloading either.
    log "cargo install wasm-pack 0.15.1 (a few minutes)"
    cargo_install wasm-pack 0.15.1
fi
if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "0.21.14" ]; then
    # 0.22 needs rustc >= 1.96.1; 0.21.14 builds with the compilers these machines have.
    log "cargo install trunk 0.21.14 (a few minutes)"
    cargo_install trunk 0.21.14
fi

# --- PyTorch, for the weight-format cross-check (tests only: scripts/test.sh sets WITH_TORCH) ---
# Debian's CPU-only torch (about 150 MB to download) rather than PyPI's, which brings 3 GB of
# CUDA libraries; safetensors is not packaged, so a venv on top of the system site-packages.
[ -n "${WITH_TORCH:-}" ] || return 0 2>/dev/null || exit 0
# The other engines the page tests drive through WebDriver (tests/e2e/engines.test.mjs): Firefox
# through geckodriver, built from crates.io, and WebKitGTK's MiniBrowser through WebKitWebDriver,
# which needs a display (Xvfb).
apt_install firefox-esr webkit2gtk-driver xvfb xauth
if [ "$(geckodriver --version 2>/dev/null | awk 'NR==1 {print $2}')" != "0.37.1" ]; then
    log "cargo install geckodriver 0.37.1 (a few minutes)"
    cargo_install geckodriver 0.37.1
fi
apt_install python3-torch python3-venv
export TORCH_PYTHON="$tools/torch-venv/bin/python"
if ! "$TORCH_PYTHON" -c 'import torch, safetensors' 2>/dev/null; then
    log "Python venv with Debian's torch and safetensors"
    rm -rf "$tools/torch-venv"
    /usr/bin/python3 -m venv --system-site-packages "$tools/torch-venv"
    "$tools/torch-venv/bin/pip" install -q safetensors
fi
