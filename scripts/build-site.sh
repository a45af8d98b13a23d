#!/usr/bin/env bash
# Writes the self-contained static site into dist/ (or OUT): the page, both wasm modules (the
# page's, and the worker's threaded CPU module), the pretrained weights, the prepared dataset,
# the service worker with this build's file list (precache.json), and a _headers file for hosts
# that read one (Netlify, Cloudflare Pages). Any static file server can serve the folder, from
# any sub-path: where it sends no isolation headers the service worker supplies them.
#   scripts/build-site.sh [OUT]
# Installs what is missing first (scripts/setup.sh) and prepares the dataset once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-dist}
source scripts/setup.sh
source scripts/prepare-data.sh
trunk build --release --offline --dist "$out"

# What the service worker keeps for offline use: everything but the dataset, whose decoded copy
# the training worker keeps itself (under its SHA-256). The version is the hash of those files,
# stamped into sw.js so that browsers see a new deployment as a new service worker.
cd "$out"
files=$(find . -type f ! -path './data/*' ! -name sw.js ! -name precache.json ! -name _headers | sed 's|^\./||' | LC_ALL=C sort)
version=$(for file in $files; do sha256sum "$file"; done | sha256sum | cut -c1-16)
{
    printf '{"version":"%s","files":["./"' "$version"
    for file in $files; do printf ',"%s"' "$file"; done
    printf ']}\n'
} > precache.json
sed -i "s/^const VERSION = \"dev\";/const VERSION = \"$version\";/" sw.js
grep -q "^const VERSION = \"$version\";" sw.js || { echo "[site] could not stamp sw.js" >&2; exit 1; }
cat > _headers <<'HEADERS'
/*
  Cross-Origin-Opener-Policy: same-origin
  Cross-Origin-Embedder-Policy: require-corp
HEADERS
echo "[site] $(du -sh . | cut -f1) in $PWD, version $version ($(echo "$files" | wc -w) files kept offline)" >&2
