"""Extracts named files from a Qt resource archive (.rcc): GCompris ships its photographs in them,
and no package on PyPI or in Debian unpacks the format (Qt's own rcc tool only writes it).
The format: a "qres" header (version, offsets of the tree, data and names), a tree of fixed-size
entries (directories: child count and first child; files: data offset), names as UTF-16 with
their length, data as a 32-bit length then bytes, zlib-compressed after a 4-byte size when flagged.
   python3 qt_resources.py ARCHIVE.rcc OUT_DIR PATH_IN_ARCHIVE...
   python3 qt_resources.py --list ARCHIVE.rcc
"""
import os
import struct
import sys
import zlib

COMPRESSED, DIRECTORY, ZSTD = 1, 2, 4


def files(archive):
    """Yields (path, bytes) for every file in the archive."""
    blob = open(archive, "rb").read()
    if blob[:4] != b"qres":
        sys.exit(f"{archive}: not a Qt resource archive")
    version, tree, data, names = struct.unpack(">IIII", blob[4:20])
    entry_size = 14 if version == 1 else 22

    def name(offset):
        (length,) = struct.unpack(">H", blob[names + offset:names + offset + 2])
        return blob[names + offset + 6:names + offset + 6 + 2 * length].decode("utf-16-be")

    def walk(index, folder):
        entry = tree + index * entry_size
        name_offset, flags = struct.unpack(">IH", blob[entry:entry + 6])
        path = os.path.join(folder, name(name_offset)) if index else ""
        if flags & DIRECTORY:
            count, first = struct.unpack(">II", blob[entry + 6:entry + 14])
            for child in range(first, first + count):
                yield from walk(child, path)
            return
        (offset,) = struct.unpack(">I", blob[entry + 10:entry + 14])
        (size,) = struct.unpack(">I", blob[data + offset:data + offset + 4])
        content = blob[data + offset + 4:data + offset + 4 + size]
        if flags & ZSTD:
            return  # none of the files taken here
        yield path, zlib.decompress(content[4:]) if flags & COMPRESSED else content

    yield from walk(0, "")


if sys.argv[1] == "--list":
    for path, _ in files(sys.argv[2]):
        print(path)
    sys.exit(0)
archive, out, *wanted = sys.argv[1:]
found = {path: content for path, content in files(archive) if path in wanted}
for path in wanted:
    if path not in found:
        sys.exit(f"{archive}: no {path}")
    with open(os.path.join(out, os.path.basename(path)), "wb") as target:
        target.write(found[path])
