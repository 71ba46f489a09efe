#!/bin/sh
# A stand-in for `ptxas -v` (KILN_PTXAS): reports the first kernel of the PTX file it
# is given as ptxas does, with fixed statistics that spill, so that the report's
# parsing and the spill warning are tested where no CUDA toolkit is installed.
for arg; do case $arg in *.ptx) file=$arg ;; esac; done
name=$(grep -o '\.entry [A-Za-z0-9_]*' "$file" | head -n 1 | cut -d' ' -f2)
echo "ptxas info    : 0 bytes gmem" >&2
echo "ptxas info    : Compiling entry function '$name' for 'sm_80'" >&2
echo "ptxas info    : Function properties for $name" >&2
echo "    8 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads" >&2
echo "ptxas info    : Used 255 registers, used 1 barriers, 10240 bytes smem, 384 bytes cmem[0]" >&2
