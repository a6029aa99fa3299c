#!/usr/bin/env bash
# Checks harness/kernels/pinscope.ptx on a machine with the CUDA toolkit (nvcc, ptxas):
#  1. assembles the hand-written PTX for sm_90 (and sm_52 where ptxas still supports it);
#  2. compiles harness/kernels/pinscope.cu to PTX with the local nvcc, for comparison only
#     (nvcc 13 writes `.version 9.0`, which old drivers cannot load: never ship that output).
# Usage: scripts/build-kernels.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/pinscope-kernels}}
mkdir -p "$out"
command -v ptxas >/dev/null || PATH=$PATH:/usr/local/cuda/bin
for arch in sm_90 sm_80 sm_75 sm_52; do
  if ptxas -arch="$arch" -v harness/kernels/pinscope.ptx -o "$out/pinscope.$arch.cubin" 2>"$out/ptxas.$arch.log"; then
    echo "ptxas $arch: ok"; grep -E 'registers|Compiling' "$out/ptxas.$arch.log" | sed 's/^/  /' || true
  elif grep -q "is not defined for option 'gpu-name'" "$out/ptxas.$arch.log"; then
    echo "ptxas $arch: this ptxas no longer supports $arch (the driver's JIT still does)"
  else
    echo "ptxas $arch: FAILED"; cat "$out/ptxas.$arch.log"; [ "$arch" = sm_90 ] && exit 1
  fi
done
if command -v nvcc >/dev/null; then
  nvcc -ptx -arch=compute_90 harness/kernels/pinscope.cu -o "$out/pinscope.nvcc.ptx" && \
    echo "nvcc reference PTX: $(grep -m1 '^.version' "$out/pinscope.nvcc.ptx") (not shipped)"
fi
