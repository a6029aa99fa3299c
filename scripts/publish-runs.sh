#!/usr/bin/env bash
# Runs the scenarios whose reports are published under reports/<machine>/ on the GPU machine and
# packs the result files into one archive (the device tool brings back at most 8 files):
#   here:  cargo build --release && mkdir -p dist && cp target/release/pinscope dist/
#   there: SCENARIOS="quick h200-headline" scripts/publish-runs.sh [OUT]
# Then here: tar xzf OUT/runs.tar.gz -C reports/<machine>/ and scripts/publish-reports.sh.
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-runs}}
mkdir -p "$OUT/runs/logs"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
P=dist/pinscope
nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpus: $(nproc)"
for s in ${SCENARIOS:-quick h200-headline ollama-like staging-tune chunked-vs-monolithic staging-repeat}; do
  echo "== $s"
  /usr/bin/time -f "wall %e s" $P run "scenarios/$s.toml" --out "$OUT/runs" --no-report ${RUN_ARGS:-} 2>&1 \
    | sed "s#$OUT/runs#\$OUT/$s#g" | tee "$OUT/runs/logs/$s.log" | grep -vE "^\s*$" | tail -${TAIL:-30}
done
echo "== wall time against measured time"
python3 scripts/overhead.py $(ls "$OUT"/runs/*.csv | grep -v samples.csv) | tee "$OUT/runs/logs/overhead.log"
tar czf "$OUT/runs.tar.gz" -C "$OUT/runs" .
ls -la "$OUT/runs.tar.gz"
