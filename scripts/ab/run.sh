#!/usr/bin/env bash
# Did a change move the numbers? Interleaved A/B of two pinscope binaries on one machine, three
# rounds of: old then new on h200-headline's pageable case (scripts/ab/pageable-ab.toml) and on
# scenarios/staging-repeat.toml, then a plain C++ pageable cudaMemcpy reference
# (scripts/ab/pageable_probe.cu) — pageable copies drift by 10-20% within minutes on the lent VM,
# so only side-by-side runs tell a change from the machine. Prints scripts/ab/summary.py's table.
# Usage (GPU machine; build both binaries here, carry dist/):
#   scripts/ab/run.sh OUT [old-binary] [new-binary]    (defaults: dist/pinscope-old dist/pinscope)
# Changes no GPU setting.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-${OUT:-/tmp/pinscope-ab}}
OLD=${2:-dist/pinscope-old}
NEW=${3:-dist/pinscope}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
nvcc -O3 -arch=sm_90 -o /tmp/pageable_probe scripts/ab/pageable_probe.cu || exit 1
for r in 1 2 3; do
  for b in old new; do
    P=$NEW; [[ $b == old ]] && P=$OLD
    echo "== round $r $b ($P)"
    $P run scripts/ab/pageable-ab.toml --out "$OUT/$b-pageable-$r" -q --no-report 2>&1 | tail -1
    $P run scenarios/staging-repeat.toml --out "$OUT/$b-ring-$r" -q --no-report 2>&1 | tail -1
  done
  echo "== C++ pageable probe, round $r"
  /tmp/pageable_probe 15
done
python3 scripts/ab/summary.py "$OUT"
