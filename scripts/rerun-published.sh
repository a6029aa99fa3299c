#!/usr/bin/env bash
# Re-runs published scenarios and compares each new run with the newest published run of the same
# scenario from the same machine kind (reports/<machine>/), with `pinscope compare` (bootstrap
# verdict per case, 2% noise). Use after a change that must not move the numbers.
#   scripts/build-dist.sh here, then on the GPU machine:
#   scripts/rerun-published.sh OUT [machine-folder] [scenario ...]
# machine-folder defaults to h200; scenarios default to h200-headline staging-repeat.
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-rerun}}
MACHINE=${2:-h200}
shift 2 2>/dev/null || shift $#
SCENARIOS=${*:-h200-headline staging-repeat}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
P=dist/pinscope
mkdir -p "$OUT"
for s in $SCENARIOS; do
  published=$(ls reports/"$MACHINE"/*-"$s"-*.csv 2>/dev/null | grep -v '\.samples\.csv$' | sort | tail -1)
  echo "== $s (published: ${published:-none})"
  $P run "scenarios/$s.toml" --out "$OUT/$s" -q 2>&1 | tail -5
  new=$(ls "$OUT/$s"/*.csv 2>/dev/null | grep -v '\.samples\.csv$' | sort | tail -1)
  if [[ -n $published && -n $new ]]; then
    $P compare "$published" "$new" 2>&1
  else
    echo "nothing to compare for $s"
  fi
done
