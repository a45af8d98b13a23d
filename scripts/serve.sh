#!/usr/bin/env bash
# Builds the page in release mode and serves it on http://127.0.0.1:8080 (PORT to change).
# Installs whatever is missing first, and prepares the dataset the page downloads
# (scripts/prepare-data.sh; `--archive PATH` or CIFAR10_ARCHIVE uses an archive you already have).
# scripts/build-site.sh writes the self-contained static site that a host serves (docs/hosting.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--archive" ] && [ -n "${2:-}" ]; then
    export CIFAR10_ARCHIVE=$2
    shift 2
fi
source scripts/setup.sh
source scripts/prepare-data.sh
exec trunk serve --release --offline --port "${PORT:-8080}" "$@"
