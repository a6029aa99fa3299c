#!/usr/bin/env bash
# Runs shipped scenarios on the GPU machine for publishing under reports/<machine>/ and packs the
# result files into one archive (the device tool brings back few files):
#   here:  cargo build --release && mkdir -p dist && cp target/release/pinscope dist/
#   there: SCENARIOS="quick h200-headline" scripts/publish-runs.sh [OUT]   (default: every shipped one)
# Then here: tar xzf OUT/runs.tar.gz -C reports/<machine>/ and scripts/publish-reports.sh.
# A scenario starts only while the call's time budget (BUDGET seconds, default 500) lasts.
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-runs}}
mkdir -p "$OUT/runs/logs"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
P=${PINSCOPE:-dist/pinscope}
BUDGET=${BUDGET:-500}
all=$(ls harness/scenarios/*.toml | xargs -n1 basename | sed 's/\.toml$//' | tr '\n' ' ')
nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader | tee "$OUT/runs/logs/nvidia-smi.txt"
echo "cpus: $(nproc)"
# What a scenario needs on the command line beyond the defaults.
args_of() {
  case $1 in
    vram-overflow) echo "--allow-vram-overflow" ;;
  esac
}
for s in ${SCENARIOS:-$all}; do
  if [ "$SECONDS" -ge "$BUDGET" ]; then echo "-- skipped (budget of ${BUDGET}s spent): $s"; continue; fi
  echo "== $(date +%T) +${SECONDS}s $s"
  # shellcheck disable=SC2046
  /usr/bin/time -f "wall %e s" timeout "${LIMIT:-300}" $P run "harness/scenarios/$s.toml" --out-dir "$OUT/runs" --no-report $(args_of "$s") ${RUN_ARGS:-} 2>&1 \
    | sed "s#$OUT/runs#\$OUT/runs#g" | tee "$OUT/runs/logs/$s.log" | grep -vE "^\s*$" | tail -"${TAIL:-30}"
done
echo "== wall time against measured time"
python3 scripts/overhead.py $(ls "$OUT"/runs/*.csv | grep -v samples.csv) | tee "$OUT/runs/logs/overhead.log"
tar czf "$OUT/runs.tar.gz" -C "$OUT/runs" .
ls -la "$OUT/runs.tar.gz"
