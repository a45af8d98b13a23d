#!/usr/bin/env bash
# Sourced by e2e.sh and bench.sh: sets TEST_PHOTO, fetching it once into the cache.
# A real photograph larger than 1000×1000 for the upload test: "Kleiber" (a nuthatch, 6028×3391,
# CC-BY-SA-3.0, Lukas Baubkus) from Debian's lomiri-wallpapers-20.04; fetched, never committed.
photos="$HOME/.cache/vit-web/photos"
export TEST_PHOTO="$photos/Kleiber_by_Lukas_Baubkus.jpg"
if [ ! -s "$TEST_PHOTO" ]; then
    mkdir -p "$photos"
    sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    (cd "$photos" && { apt-get download -q lomiri-wallpapers-20.04 >/dev/null 2>&1 ||
        { sudo_if_needed apt-get update -q >/dev/null && apt-get download -q lomiri-wallpapers-20.04; }; })
    dpkg-deb --fsys-tarfile "$photos"/lomiri-wallpapers-20.04_*_all.deb |
        tar -x -O ./usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg > "$TEST_PHOTO.part"
    mv "$TEST_PHOTO.part" "$TEST_PHOTO"
    rm -f "$photos"/lomiri-wallpapers-20.04_*_all.deb
fi
