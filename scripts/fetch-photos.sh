#!/usr/bin/env bash
# Real photographs of CIFAR-10 classes for docs/recipes.md's first-impression table, from Debian
# packages (the only image sources this project's machines reach), into ~/.cache/vit-web/photos;
# prints their paths. Never committed. Credits and licences as the packages state them:
#   bird-kleiber.jpg         Lukas Baubkus, CC-BY-SA-3.0 (lomiri-wallpapers-20.04)
#   bird-kingfisher.webp     Frank-2.0, CC0-1.0 (gcompris-qt-data; Commons: Eisvogel_kingfisher.jpg)
#   cat-kitten.webp          GalgenTX, CC-BY-2.0 (gcompris-qt-data; Commons: A_posing_kitten_(Flickr).jpg)
#   cat-playing.webp         Loliloli, public domain (gcompris-qt-data; Commons: Spielendes_Kätzchen.JPG)
#   dog-shepherd.webp        Hans Kemperman, public domain (gcompris-qt-data; Commons: German-shepherd-4040871920._(2).jpg)
#   horse-zaniskari.webp     Eatcha, CC-BY-SA-4.0 (gcompris-qt-data; Commons: Zaniskari_Horse_in_Ladakh.jpg);
#                            also the page's sample photo, www/samples/horse.webp, credited in its footer
#   horse-herd.webp          Seth Zeigler, CC0-1.0 (gcompris-qt-data; Commons: Nokota_Horse_Stud_Band.jpg)
# GCompris keeps them in Qt resource archives, read by scripts/qt_resources.py.
set -euo pipefail
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$scripts/fetch-photo.sh" # the nuthatch, TEST_PHOTO
photos="$HOME/.cache/vit-web/photos"
cp -n "$TEST_PHOTO" "$photos/bird-kleiber.jpg"
if [ ! -s "$photos/horse-herd.webp" ]; then
    work=$(mktemp -d)
    sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    (cd "$work" && { apt-get download -q gcompris-qt-data >/dev/null 2>&1 ||
        { sudo_if_needed apt-get update -q >/dev/null && apt-get download -q gcompris-qt-data; }; })
    dpkg-deb --fsys-tarfile "$work"/gcompris-qt-data_*_all.deb | tar -x -C "$work" \
        ./usr/share/gcompris-qt/rcc/erase.rcc ./usr/share/gcompris-qt/rcc/explore_farm_animals.rcc
    rcc=$work/usr/share/gcompris-qt/rcc
    erase=gcompris/src/activities/erase/resource
    farm=gcompris/src/activities/explore_farm_animals/resource/animals
    python3 "$scripts/qt_resources.py" "$rcc/erase.rcc" "$work" $erase/kingfisher.webp $erase/kitten.webp $erase/horse.webp
    mkdir -p "$work/farm"
    python3 "$scripts/qt_resources.py" "$rcc/explore_farm_animals.rcc" "$work/farm" $farm/cat.webp $farm/dog.webp $farm/horse.webp
    mv "$work/kingfisher.webp" "$photos/bird-kingfisher.webp"
    mv "$work/kitten.webp" "$photos/cat-kitten.webp"
    mv "$work/horse.webp" "$photos/horse-zaniskari.webp"
    mv "$work/farm/cat.webp" "$photos/cat-playing.webp"
    mv "$work/farm/dog.webp" "$photos/dog-shepherd.webp"
    mv "$work/farm/horse.webp" "$photos/horse-herd.webp"
    rm -rf "$work"
fi
ls "$photos"/bird-kleiber.jpg "$photos"/bird-kingfisher.webp "$photos"/cat-kitten.webp "$photos"/cat-playing.webp \
    "$photos"/dog-shepherd.webp "$photos"/horse-zaniskari.webp "$photos"/horse-herd.webp
