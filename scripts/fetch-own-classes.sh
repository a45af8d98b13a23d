#!/usr/bin/env bash
# Real photographs of three classes for fine-tuning (docs/own-classes.md): GCompris's
# categorization activity's fishes (28), monuments (27) and tools (39), each 320 pixels wide,
# from Debian's gcompris-qt-data (the only image source this project's machines reach), into
# ~/.cache/vit-web/photos/own-classes/{fish,monument,tool}/ with GCompris's credits beside them
# (CREDITS-*.txt: every file is CC0-1.0 or public domain). Never committed. Prints the folder.
set -euo pipefail
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
folder="$HOME/.cache/vit-web/photos/own-classes"
if [ ! -s "$folder/tool/wrench.webp" ]; then
    work=$(mktemp -d)
    sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    (cd "$work" && { apt-get download -q gcompris-qt-data >/dev/null 2>&1 ||
        { sudo_if_needed apt-get update -q >/dev/null && apt-get download -q gcompris-qt-data; }; })
    dpkg-deb --fsys-tarfile "$work"/gcompris-qt-data_*_all.deb | tar -x -C "$work" ./usr/share/gcompris-qt/rcc/categorization.rcc
    images=gcompris/src/activities/categorization/resource/images
    for pair in fish:fishes monument:monuments tool:tools; do
        class=${pair%%:*} source=${pair#*:}
        mkdir -p "$work/$class"
        python3 "$scripts/qt_resources.py" "$work/usr/share/gcompris-qt/rcc/categorization.rcc" "$work/$class" \
            $(python3 "$scripts/qt_resources.py" --list "$work/usr/share/gcompris-qt/rcc/categorization.rcc" | grep "^$images/$source/")
        mkdir -p "$folder/$class"
        mv "$work/$class"/*.webp "$folder/$class/"
        mv "$work/$class/README" "$folder/CREDITS-$class.txt"
    done
    rm -rf "$work"
fi
echo "$folder"
