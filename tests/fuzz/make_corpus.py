#!/usr/bin/env python3
"""Seed corpora for Kiln's fuzz targets, from the ONNX test data and Kiln's own tests.

  model        model.onnx of the ONNX node tests (one per operator family, the
               smallest), the pytorch-converted and pytorch-operator models
  text         every .onnxtxt of tests/lit
  tensor-files the test data sets' .pb tensors (first byte odd) and .npy files of
               each dtype (first byte even)
  weights      a compiled model's weights file, prefixed with its expected payload
               size and checksum (as FuzzWeights.cpp reads them), and truncated copies
  model-abi    a few descriptor streams (the target mutates from anything)

Usage: make_corpus.py --out DIR --source KILN_SOURCE [--weights model.weights]
"""
import argparse
import glob
import io
import os
import struct

TESTDATA = "/usr/share/libonnx-testdata/data"


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--weights")
    ap.add_argument("--max-model-bytes", type=int, default=64 << 10)
    args = ap.parse_args()

    models = os.path.join(args.out, "model")
    count = 0
    for path in sorted(glob.glob(f"{TESTDATA}/*/*/model.onnx")):
        if os.path.getsize(path) <= args.max_model_bytes:
            with open(path, "rb") as f:
                write(models, f"{count:04d}.onnx", f.read())
            count += 1

    text = os.path.join(args.out, "text")
    for i, path in enumerate(sorted(glob.glob(f"{args.source}/tests/lit/**/*.onnxtxt", recursive=True))):
        with open(path, "rb") as f:
            write(text, f"{i:04d}.onnxtxt", f.read())

    tensors = os.path.join(args.out, "tensor-files")
    pbs = sorted(glob.glob(f"{TESTDATA}/node/*/test_data_set_0/*.pb"))
    for i, path in enumerate(pbs[::8]):
        if os.path.getsize(path) <= 1 << 16:
            with open(path, "rb") as f:
                write(tensors, f"{i:04d}.pb", b"\x01" + f.read())
    try:
        import numpy as np
        for i, dtype in enumerate(["<f4", "<f8", "<f2", "<i8", "<i4", "<i1", "<u1", "|b1", ">f4"]):
            buf = io.BytesIO()
            np.save(buf, np.arange(6).reshape(2, 3).astype(dtype))
            write(tensors, f"npy{i}.npy", b"\x00" + buf.getvalue())
    except ImportError:
        pass

    if args.weights and os.path.exists(args.weights):
        with open(args.weights, "rb") as f:
            image = f.read()
        size, checksum = struct.unpack("<QQ", image[8:24])
        prefix = struct.pack("<QQ", size, checksum)
        weights = os.path.join(args.out, "weights")
        write(weights, "exact", prefix + image)
        write(weights, "truncated", prefix + image[: len(image) // 2])
        write(weights, "header-only", prefix + image[:64])

    abi = os.path.join(args.out, "model-abi")
    write(abi, "model-order", bytes(64))
    write(abi, "by-name", bytes([0] * 32 + [1] * 32))
    write(abi, "wrong-dtype", bytes([1, 3] + [0] * 62))
    print(f"corpus in {args.out}: {count} models")


if __name__ == "__main__":
    main()
