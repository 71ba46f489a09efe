#!/bin/sh
# The whole GPU check in one call on a lent GPU machine (the device tool runs this from
# the repository root). Prepare it here first, then carry the folder:
#   python3 tools/gpu-check/gpu_check.py prepare build/gpu-check --kiln build/bin/kiln --bundle
#   run: sh tools/gpu-check/device.sh   (carry: ["build/gpu-check"], timeout ~540 s)
# Conformance through the C ABI, then the zoo exported, compiled by the bundled kiln and
# timed next to PyTorch eager and torch.compile; logs and the table under $OUT.
set -u
OUT=${OUT:-build/gpu-check/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
python3 tools/gpu-check/gpu_check.py run build/gpu-check --jobs 16 "$@" > "$OUT/gpu-check.log" 2>&1
rc=$?
cp build/gpu-check/results.txt "$OUT/" 2>/dev/null
cat "$OUT/gpu.txt"
tail -n 20 "$OUT/gpu-check.log"
exit $rc
