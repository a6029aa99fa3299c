#!/usr/bin/env bash
# Does what ran before a 4-byte pageable device→host copy move its latency? The driver-API probe
# times it before any 64 KiB pageable copy of its process; the latency scenario's `pageable` case
# after 64 KiB host→device ones. Three pinscope scenarios, alternated with the probe in rounds:
# the 4-byte D2H case alone, after a 64 KiB pageable H2D case, and after a 4-byte H2D case.
# Host clock, 1000 samples each; never changes the GPU's clocks, modes or settings.
#   GPU:  scripts/pageable-sequence.sh [OUT]      (carry dist; PINSCOPE=dist/pinscope, ROUNDS=3)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-pageable-sequence}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-3}

build_latency_driver "$OUT" || exit 1
# scenario NAME CASES...: each case "direction:size", in this order.
scenario() {
  local name=$1; shift
  {
    printf 'name = "pageable-%s"\ndescription = "small pageable copies in a set order"\n' "$name"
    printf '[defaults]\nmode = "latency"\nhost = "pageable"\nmeasure = { samples = 1000, warmup = 100, time_limit = "5s" }\nprobes = { hold_after_free = "0s" }\n'
    local i=0
    for c in "$@"; do
      printf '[[case]]\nlabel = "c%d-%s-%s"\ndirection = "%s"\nsize = "%s"\n' "$i" "${c%%:*}" "${c##*:}" "${c%%:*}" "${c##*:}"
      i=$((i + 1))
    done
  } >"$OUT/$name.toml"
}
scenario alone d2h:4
scenario after-h2d-64k h2d:64KiB d2h:4
scenario after-h2d-4 h2d:4 d2h:4
for r in $(seq "$ROUNDS"); do
  log "round $r"
  "$OUT/latency_driver" kernels/pinscope.ptx 1000 copy/pageable/d2h/4/async >"$OUT/probe-$r.txt" 2>&1
  for s in alone after-h2d-64k after-h2d-4; do
    $P run "$OUT/$s.toml" --no-report --out-dir "$OUT/$s-$r" >"$OUT/$s-$r.log" 2>&1 || echo "$s exit $?"
  done
done
log "4-byte pageable D2H p50 (µs): probe | alone | after 64 KiB H2D | after 4 B H2D"
python3 - "$OUT" "$ROUNDS" <<'PY'
import csv, glob, re, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def probe(r):
    for line in open(f"{out}/probe-{r}.txt", errors="replace"):
        m = re.match(r"key=copy/pageable/d2h/4/async\s+min\s+\S+\s+p50\s+(\S+)", line)
        if m:
            return float(m.group(1))
def pins(s, r):
    for f in glob.glob(f"{out}/{s}-{r}/*.csv"):
        if f.endswith(".samples.csv"):
            continue
        for row in csv.DictReader(open(f)):
            if row["lane"] == "d2h" and row["size_bytes"] == "4" and row["lat_p50_us"]:
                return float(row["lat_p50_us"])
f = lambda x: f"{x:6.2f}" if x is not None else "     -"
for r in range(1, rounds + 1):
    print(f"round {r}: {f(probe(r))} | {f(pins('alone', r))} | {f(pins('after-h2d-64k', r))} | {f(pins('after-h2d-4', r))}")
PY
