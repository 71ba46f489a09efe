"""Test helper (Debian's python3-numpy only).

npy.py write PATH 2x3 DTYPE VALUE   writes a filled array
npy.py check PATH EXPECTED.txt      compares with whitespace-separated values
                                    (rtol 1e-5, atol 1e-6); exits 1 on mismatch
npy.py same A.npy B.npy             exits 1 unless the two are bitwise equal
"""
import sys

import numpy as np

if sys.argv[1] == "write":
    shape = tuple(int(d) for d in sys.argv[3].split("x"))
    np.save(sys.argv[2], np.full(shape, float(sys.argv[5]), dtype=sys.argv[4]))
elif sys.argv[1] == "check":
    got = np.load(sys.argv[2])
    expected = np.loadtxt(sys.argv[3], dtype=np.float64, ndmin=2).reshape(got.shape)
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        print(f"mismatch:\n{got}\nexpected:\n{expected}")
        sys.exit(1)
elif sys.argv[1] == "same":
    a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
    if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
        print(f"differ:\n{a}\n{b}")
        sys.exit(1)
else:
    sys.exit(f"unknown command {sys.argv[1]}")
