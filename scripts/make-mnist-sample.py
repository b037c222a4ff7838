#!/usr/bin/env python3
"""Cuts data/mnist-sample/ from the full MNIST set: the first 5000 training and
the first 1000 test examples, as gzipped IDX files with the original headers
(counts adjusted). Output is byte-for-byte reproducible (gzip mtime 0).

Usage: scripts/make-mnist-sample.py [SOURCE_DIR] [OUT_DIR]
  SOURCE_DIR  the four original .gz files (default ../shared/data/mnist beside
              the repository, or what scripts/download-mnist.sh fetched)
  OUT_DIR     default data/mnist-sample
"""
import gzip
import os
import struct
import sys

SPLITS = {"train": 5000, "t10k": 1000}


def cut(src_dir, out_dir, name, count, magic, item_bytes):
    with gzip.open(os.path.join(src_dir, name + ".gz"), "rb") as f:
        data = f.read()
    dims = magic & 0xFF
    header = struct.unpack(">%dI" % (1 + dims), data[: 4 + 4 * dims])
    if header[0] != magic:
        sys.exit("%s: magic %d, expected %d" % (name, header[0], magic))
    if header[1] < count:
        sys.exit("%s: only %d items, need %d" % (name, header[1], count))
    start = 4 + 4 * dims
    body = data[start : start + count * item_bytes]
    out = struct.pack(">%dI" % (1 + dims), magic, count, *header[2:]) + body
    path = os.path.join(out_dir, name + ".gz")
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            gz.write(out)
    print("%s: %d of %d items, %d bytes" % (path, count, header[1], os.path.getsize(path)))


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(
        os.path.join(repo, "..", "shared", "data", "mnist"))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "mnist-sample"))
    os.makedirs(out, exist_ok=True)
    for split, count in SPLITS.items():
        cut(src, out, split + "-images-idx3-ubyte", count, 2051, 28 * 28)
        cut(src, out, split + "-labels-idx1-ubyte", count, 2049, 1)


if __name__ == "__main__":
    main()
