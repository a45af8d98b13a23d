#!/usr/bin/env bash
# Finds CIFAR-10's binary archive and turns it into the page's prepared dataset (www/data/), once.
# Source-able: leaves CIFAR10_ARCHIVE set. Where the archive is looked for, in order:
#   $CIFAR10_ARCHIVE, then data/cifar-10-binary.tar.gz (git-ignored), then ../shared/data/;
#   if none exists it is downloaded from the dataset's home page into data/ and its checksum
#   checked. Without a network it stops and says where to put the file.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
official_url=https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
official_md5=c32a1d4ab5d03f1284b67883e8d87530   # as published on the dataset's home page

if [ -z "${CIFAR10_ARCHIVE:-}" ]; then
    for candidate in "$root/data/cifar-10-binary.tar.gz" "$root/../shared/data/cifar-10-binary.tar.gz"; do
        if [ -f "$candidate" ]; then CIFAR10_ARCHIVE=$candidate; break; fi
    done
fi
if [ -z "${CIFAR10_ARCHIVE:-}" ]; then
    mkdir -p "$root/data"
    echo "[data] downloading CIFAR-10 (163 MB) from $official_url" >&2
    if ! curl -fL --retry 2 -o "$root/data/cifar-10-binary.tar.gz.part" "$official_url"; then
        rm -f "$root/data/cifar-10-binary.tar.gz.part"
        echo "[data] could not download CIFAR-10. Put cifar-10-binary.tar.gz at $root/data/ or set CIFAR10_ARCHIVE=/path/to/it, then run again." >&2
        exit 1
    fi
    if [ "$(md5sum < "$root/data/cifar-10-binary.tar.gz.part" | cut -d' ' -f1)" != "$official_md5" ]; then
        rm -f "$root/data/cifar-10-binary.tar.gz.part"
        echo "[data] the download's checksum is not the official one; it was deleted. Try again, or place the archive by hand." >&2
        exit 1
    fi
    mv "$root/data/cifar-10-binary.tar.gz.part" "$root/data/cifar-10-binary.tar.gz"
    CIFAR10_ARCHIVE=$root/data/cifar-10-binary.tar.gz
fi
CIFAR10_ARCHIVE=$(cd "$(dirname "$CIFAR10_ARCHIVE")" && pwd)/$(basename "$CIFAR10_ARCHIVE")
export CIFAR10_ARCHIVE

# The asset is rebuilt when missing or older than the archive.
if [ ! -f "$root/www/data/manifest.json" ] || [ "$CIFAR10_ARCHIVE" -nt "$root/www/data/manifest.json" ]; then
    echo "[data] preparing the page's dataset from $CIFAR10_ARCHIVE" >&2
    (cd "$root" && cargo run --quiet ${NATIVE_FEATURES:+--features "$NATIVE_FEATURES"} --bin prepare-data -- --archive "$CIFAR10_ARCHIVE" --out www/data)
fi
