#!/usr/bin/env bash
# Does what runs earlier in a process move the small copies' latency? The latency check found
# pinscope's pageable copies inside the whole latency scenario up to ~2 µs above the driver-API
# probe, while one case alone reads like it. Rounds of, one process each, order rotating:
#   probe            the driver-API probe, every key (its own order: waits and launches first,
#                    then all 4-byte copies, then all 64 KiB ones)
#   probe-copies     the probe with the copies alone (key prefix copy/)
#   probe-other      the probe after one 4-byte D2H copy into a pageable page of its own
#                    (LATENCY_D2H_OTHER=1: no measured buffer is the process's first pageable
#                    copy destination)
#   probe-pinscope-order  the probe in the scenario's order, each async copy's samples followed
#                    by their device view, as pinscope takes them (LATENCY_ORDER=pinscope)
#   run              `pinscope run` of the latency scenario as shipped
#   run-pageable     the same with --only pageable (the pageable cases alone)
#   run-probe-order  the scenario with the waits and launches moved first, as the probe does
#   run-alt          `pinscope run` of the scenario by a second binary ($PINSCOPE_ALT,
#                    dist/pinscope-alt by default), to hold a change against the shipped one
# The first variant named is the reference of the table (VARIANTS="probe-pinscope-order run probe"
# holds pinscope against the probe in the same history).
# Then, per key, the median over rounds of each variant's p50 minus the probe's in the same round,
# and in how many rounds it was within 5% or 0.3 µs of it. Never changes the GPU's clocks, modes
# or settings.
#   GPU:  scripts/latency-order.sh [OUT]   (carry dist; ROUNDS=6, LATENCY_SAMPLES=500, VARIANTS)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-latency-order}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-6}
N=${LATENCY_SAMPLES:-500}
build_latency_driver "$OUT" || exit 1
sed "s/samples = 1000/samples = $N/" harness/scenarios/latency.toml >"$OUT/latency.toml"
# The probe's order: every [[case]] block whose label is a wait or a launch first.
python3 - "$OUT/latency.toml" "$OUT/latency-probe-order.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, *cases = text.split("\n[[case]]\n")
first = [c for c in cases if re.search(r'label = "(sync|launch-call|launch-rate)"', c)]
rest = [c for c in cases if c not in first]
open(sys.argv[2], "w").write("\n[[case]]\n".join([head] + first + rest))
PY
variant() {
  case $1 in
    probe) "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-copies) "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" copy/ >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-pinscope-order) LATENCY_ORDER=pinscope "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-other) LATENCY_D2H_OTHER=1 "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" >"$OUT/$1-$2.txt" 2>&1 ;;
    run) $P run "$OUT/latency.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
    run-alt) "${PINSCOPE_ALT:-dist/pinscope-alt}" run "$OUT/latency.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
    run-pageable) $P run "$OUT/latency.toml" --only pageable --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
    run-probe-order) $P run "$OUT/latency-probe-order.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
  esac || echo "$1 round $2: exit $?"
}
read -r -a names <<<"${VARIANTS:-probe probe-copies run run-pageable run-probe-order}"
in_rounds "$ROUNDS" "${names[@]}"
log "per key: each variant's p50 minus the probe's in the same round (µs), median over $ROUNDS rounds [rounds within 5% or 0.3 µs]"
python3 scripts/latency-rounds.py "$OUT" "$ROUNDS" "${names[@]}"
