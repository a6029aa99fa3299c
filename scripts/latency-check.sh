#!/usr/bin/env bash
# The latency check, side by side: `pinscope run scenarios/latency.toml` between two runs of the
# driver-API probe scripts/probes/latency_driver.cu (the same calls, flags and PTX kernels as
# pinscope; joined row by row by scripts/latency-compare.py), then the runtime-API probe
# scripts/probes/latency_probe.cu (what a cudaMemcpyAsync program sees). Host clock throughout.
# Called by scripts/gpu-check.sh (step `latency`), or alone on a GPU machine:
#   scripts/latency-check.sh [OUT]        LATENCY_SAMPLES=300 for a shorter run,
#                                         LATENCY_ROUNDS=2 pinscope runs (between 3 probe runs)
#                                         PIN=<cpu list>: both tools under `taskset -c` (the
#                                         same CPUs, so placement is the same for both)
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-latency-check}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
N=${LATENCY_SAMPLES:-1000}
ON=()
[ -n "${PIN:-}" ] && ON=(taskset -c "$PIN")

driver_probe() {
  [ -x "$OUT/latency_driver" ] || return
  log "driver-API probe, round $1"
  timeout 120 "${ON[@]}" "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" >"$OUT/driver-probe-$1.txt" 2>&1
  echo "exit $?"; cat "$OUT/driver-probe-$1.txt"
}
command -v nvcc >/dev/null && build_latency_driver "$OUT"
pinscope_round() {
  log "pinscope run scenarios/latency.toml (measure.samples = $N), round $1"
  local start=$SECONDS
  timeout 120 "${ON[@]}" $P run "$scen" --out-dir "$OUT/latency-$1" >"$OUT/latency-$1.log" 2>&1
  echo "exit $? after $((SECONDS - start)) s"
  for f in "$OUT"/latency-"$1"/*.csv; do
    [[ -f $f && $f != *.samples.csv ]] || continue
    python3 - "$f" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'case':20} {'lane':4} {'bytes':>7} {'mode':12} {'min':>8} {'p50':>8} {'p90':>8} {'p99':>8} {'event p50':>9} us  n    data status")
for r in rows:
    f = lambda k: (f"{float(r[k]):8.2f}" if r.get(k) else "       -")
    print(f"{r['case_label'][:20]:20} {r['lane']:4} {int(r['size_bytes']):7} {r['mode']:12} {f('lat_min_us')} {f('lat_p50_us')} {f('lat_p90_us')} {f('lat_p99_us')}  {f('lat_event_p50_us')}    {r['samples']:>4} {r['verified']:4} {r['status'][:50]}")
PY
  done
}
scen="$OUT/latency.toml"
sed "s/samples = 1000/samples = $N/" harness/scenarios/latency.toml >"$scen"
# Interleaved, so both see the same machine: probe, pinscope, probe, ..., probe (ROUNDS pinscope
# runs between ROUNDS + 1 probe runs). This VM's small-copy latency moves between levels about
# 1 µs apart from one process to the next, in both tools, so more rounds show both tools' spread.
ROUNDS=${LATENCY_ROUNDS:-2}
for r in $(seq "$ROUNDS"); do
  driver_probe "$r"
  pinscope_round "$r"
done
driver_probe $((ROUNDS + 1))
log "pinscope beside the driver-API probe (its range over the rounds)${PIN:+, both on CPUs $PIN}"
# shellcheck disable=SC2046
python3 scripts/latency-compare.py $(ls "$OUT"/latency-*/*.csv | grep -v samples.csv) -- "$OUT"/driver-probe-*.txt

log "C++ probe (CUDA runtime, host clock), one run per context flag"
if command -v nvcc >/dev/null; then
  if nvcc -O2 -o "$OUT/latency_probe" scripts/probes/latency_probe.cu >"$OUT/probe-build.log" 2>&1; then
    for mode in spin yield blocking; do
      timeout 60 "$OUT/latency_probe" "$mode" "$N" 2>&1 | tee -a "$OUT/probe.log"
    done
  else
    echo "nvcc failed:"; tail -20 "$OUT/probe-build.log"
  fi
else
  echo "no nvcc here: the probe was not built"
fi
