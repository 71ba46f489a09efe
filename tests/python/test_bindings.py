#!/usr/bin/env python3
"""The `kiln` Python package: compile and run from numpy, results equal to `kiln run`'s
(bitwise: the same kernels), errors raised as kiln.Error with Kiln's message, and four
Python threads running one model at once (the GIL released while a run is on).

usage: test_bindings.py --kiln KILN --package-dir BUILD/python [--zoo DIR]
(the zoo model, transformer_encoder_reduced.onnx, is used when DIR has it)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(ROOT, "models", "tiny", "tiny_cnn.onnx")
TINY_INPUT = os.path.join(ROOT, "models", "tiny", "tiny_cnn.input.npy")
ARGS = None


def kiln_run(artifacts, inputs):
    """Outputs of `kiln run` (the CLI) on INPUTS {name: ndarray}."""
    work = tempfile.mkdtemp(prefix="kiln-run-")
    cmd = [ARGS.kiln, "run", artifacts, "--output-dir", work]
    for name, value in inputs.items():
        path = os.path.join(work, f"in-{name}.npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, capture_output=True)
    return {f[:-4]: np.load(os.path.join(work, f)) for f in os.listdir(work)
            if f.endswith(".npy") and not f.startswith("in-")}


class Bindings(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import kiln
        cls.kiln = kiln
        cls.dir = tempfile.mkdtemp(prefix="kiln-python-")
        cls.tiny = kiln.compile(TINY, input_shapes={"input": (1, 1, 10, 10)},
                                output_dir=os.path.join(cls.dir, "tiny"))

    def test_describes_inputs_and_outputs(self):
        (i,), (o,) = self.tiny.inputs, self.tiny.outputs
        self.assertEqual((i.name, i.dtype, i.shape), ("input", np.dtype("float32"), (1, 1, 10, 10)))
        self.assertEqual((o.name, o.dtype, o.shape), ("probs", np.dtype("float32"), (1, 10)))
        m = self.tiny.manifest
        self.assertEqual((m["target"], m["precision"], m["abi_version"]),
                         ("host", "fp32", self.kiln.abi_version))
        self.assertEqual(m["library_calls"], 2)  # the conv and the matmul, on oneDNN
        self.assertEqual(m["library_engine"], "onednn")

    def test_tiny_equals_kiln_run(self):
        x = np.load(TINY_INPUT)
        got = self.tiny.run({"input": x})
        ref = kiln_run(self.tiny.path, {"input": x})
        self.assertEqual(set(got), {"probs"})
        self.assertEqual(got["probs"].tobytes(), ref["probs"].tobytes())
        # And PyTorch's reference, within the zoo's tolerance.
        torch_ref = np.load(os.path.join(ROOT, "models", "tiny", "tiny_cnn.output.npy"))
        np.testing.assert_allclose(got["probs"], torch_ref, rtol=1e-4, atol=1e-6)

    def test_load_equals_compile(self):
        again = self.kiln.load(self.tiny.path)
        x = np.random.RandomState(1).randn(1, 1, 10, 10).astype(np.float32)
        self.assertEqual(again.run({"input": x})["probs"].tobytes(),
                         self.tiny.run({"input": x})["probs"].tobytes())

    def test_non_contiguous_input(self):
        x = np.random.RandomState(2).randn(1, 1, 10, 20).astype(np.float32)[..., ::2]
        self.assertEqual(self.tiny.run({"input": x})["probs"].tobytes(),
                         self.tiny.run({"input": np.ascontiguousarray(x)})["probs"].tobytes())

    def test_errors_raise_with_kilns_message(self):
        x = np.load(TINY_INPUT)
        cases = [({"input": x.astype(np.float64)}, "dtype f64, expected f32"),
                 ({"input": x[:, :, :5]}, "shape [1x1x5x10], expected [1x1x10x10]"),
                 ({"input": x, "extra": x}, "no input 'extra'"),
                 ({}, "input 'input' is missing"),
                 ({"input": np.array(["a"] * 100).reshape(1, 1, 10, 10)}, "dtype")]
        for feeds, message in cases:
            with self.assertRaises(self.kiln.Error) as e:
                self.tiny.run(feeds)
            self.assertIn(message, str(e.exception))
        with self.assertRaises(self.kiln.Error) as e:
            self.kiln.compile(os.path.join(self.dir, "missing.onnx"))
        self.assertIn("no such file", str(e.exception))
        with self.assertRaises(self.kiln.Error) as e:
            self.kiln.load(self.dir)
        self.assertIn("manifest.json not found (not a Kiln artifact", str(e.exception))
        with self.assertRaises(self.kiln.Error) as e:
            self.kiln.compile(TINY, precision="fp8")
        self.assertIn("expected fp32, fp16 or auto", str(e.exception))

    def test_fp16_within_tolerance(self):
        half = self.kiln.compile(TINY, input_shapes={"input": (1, 1, 10, 10)}, precision="fp16",
                                 output_dir=os.path.join(self.dir, "tiny16"))
        x = np.load(TINY_INPUT)
        got, ref = half.run({"input": x})["probs"], self.tiny.run({"input": x})["probs"]
        self.assertEqual(got.dtype, np.float32)  # the graph's types are kept
        self.assertLessEqual(np.abs(got - ref).max(), 1e-2 * np.abs(ref).max())

    def test_corrupt_weights_are_refused(self):
        tampered = os.path.join(self.dir, "tampered")
        os.makedirs(tampered)
        for name in ("libmodel.so", "manifest.json"):
            os.link(os.path.join(self.tiny.path, name), os.path.join(tampered, name))
        with open(os.path.join(self.tiny.path, "model.weights"), "rb") as f:
            data = bytearray(f.read())
        data[-1] ^= 0xFF  # one corrupted byte: the checksum must catch it
        with open(os.path.join(tampered, "model.weights"), "wb") as f:
            f.write(data)
        with self.assertRaises(self.kiln.Error) as e:
            self.kiln.load(tampered)
        self.assertIn("checksum mismatch", str(e.exception))

    def test_four_threads_at_once(self):
        model = self.zoo or self.tiny
        inputs = [self.zoo_input(seed) if self.zoo else
                  {"input": np.random.RandomState(seed).randn(1, 1, 10, 10).astype(np.float32)}
                  for seed in range(4)]
        expected = [model.run(feeds) for feeds in inputs]
        spans, errors = [], []

        def worker(k):
            try:
                for _ in range(10):
                    start = time.perf_counter()
                    got = model.run(inputs[k])
                    spans.append((start, time.perf_counter()))
                    for name, value in expected[k].items():
                        if got[name].tobytes() != value.tobytes():
                            errors.append(f"thread {k}: {name} differs")
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"thread {k}: {e}")
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        # Runs overlapped in time: the GIL was released while a run was on.
        spans.sort()
        overlaps = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1])
        if self.zoo:
            self.assertGreater(overlaps, 0, "no two runs overlapped: is the GIL held?")

    zoo = None

    @classmethod
    def zoo_input(cls, seed):
        return {"input": np.random.RandomState(seed).randint(0, 1000, (1, 32)).astype(np.int64)}

    def test_zoo_model_equals_kiln_run(self):
        if not self.zoo:
            self.skipTest("no reduced zoo")
        feeds = self.zoo_input(7)
        got = self.zoo.run(feeds)
        ref = kiln_run(self.zoo.path, feeds)
        self.assertEqual(set(got), set(ref))
        for name in got:
            self.assertEqual(got[name].tobytes(), ref[name].tobytes())


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--package-dir", required=True)
    ap.add_argument("--zoo")
    ARGS, rest = ap.parse_known_args()
    sys.path.insert(0, ARGS.package_dir)
    os.environ["KILN"] = ARGS.kiln
    import kiln
    zoo_model = os.path.join(ARGS.zoo or "", "transformer_encoder_reduced.onnx")
    if ARGS.zoo and os.path.exists(zoo_model):
        Bindings.zoo = kiln.compile(zoo_model, output_dir=tempfile.mkdtemp(prefix="kiln-zoo-"))
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
