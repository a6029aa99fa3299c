#!/usr/bin/env bash
# What in pinscope's process moves small-copy latency against the driver-API probe's? Rounds of
# the same small copies (4 B and 64 KiB, async + stream synchronisation, 1000 samples) by
# the probe, by the probe with NVML initialised first (LATENCY_NVML=1, as pinscope's observers
# do), by `pinscope run` of the latency scenario's case, and by the same with one rayon thread
# (RAYON_NUM_THREADS=1: no idle pool beside the timed thread), each under GNU time (its
# voluntary context switches say whether the waits slept) and, where strace exists, once under
# `strace -c -f` (which system calls each process made while sampling). Host clock throughout;
# never changes the GPU's clocks, modes or settings.
#   GPU:  scripts/latency-process.sh [OUT]      (carry dist; PINSCOPE=dist/pinscope, ROUNDS=3,
#         KIND=pinned or pageable: the scenario case and the probe keys measured)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-latency-process}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-3}
KIND=${KIND:-pinned}
TIME=(/usr/bin/time -f "%e s wall, %w voluntary and %c involuntary context switches")

build_latency_driver "$OUT" || exit 1
python3 - scenarios/latency.toml "$OUT/case.toml" "$KIND" <<'PY'
import re, sys
head, *cases = open(sys.argv[1]).read().split("[[case]]")
keep = [c for c in cases if re.search(f'label = "{sys.argv[3]}"', c)]
open(sys.argv[2], "w").write(head + "".join("[[case]]" + c for c in keep))
PY

for r in $(seq "$ROUNDS"); do
  log "round $r: probe"
  "${TIME[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 copy/$KIND/ >"$OUT/probe-$r.txt" 2>&1
  tail -1 "$OUT/probe-$r.txt"
  log "round $r: probe with NVML"
  LATENCY_NVML=1 "${TIME[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 copy/$KIND/ >"$OUT/nvml-$r.txt" 2>&1
  tail -1 "$OUT/nvml-$r.txt"
  log "round $r: pinscope"
  "${TIME[@]}" $P run "$OUT/case.toml" --no-report --out-dir "$OUT/pinscope-$r" >"$OUT/pinscope-$r.log" 2>&1
  tail -1 "$OUT/pinscope-$r.log"
  log "round $r: pinscope with one rayon thread"
  RAYON_NUM_THREADS=1 "${TIME[@]}" $P run "$OUT/case.toml" --no-report --out-dir "$OUT/rayon1-$r" >"$OUT/rayon1-$r.log" 2>&1
  tail -1 "$OUT/rayon1-$r.log"
done
if command -v strace >/dev/null; then
  log "system calls (strace -c -f)"
  strace -c -f -o "$OUT/strace-probe.txt" "$OUT/latency_driver" kernels/pinscope.ptx 1000 copy/$KIND/ >/dev/null 2>&1
  strace -c -f -o "$OUT/strace-pinscope.txt" $P run "$OUT/case.toml" --no-report --out-dir "$OUT/pinscope-strace" >/dev/null 2>&1
  head -25 "$OUT/strace-probe.txt"; head -25 "$OUT/strace-pinscope.txt"
else
  echo "no strace here"
fi

log "p50 (µs) of the async copies: probe | probe with NVML | pinscope | pinscope with RAYON_NUM_THREADS=1"
python3 - "$OUT" "$ROUNDS" "$KIND" <<'PY'
import csv, glob, re, sys
out, rounds, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def probe(f):
    v = {}
    for line in open(f, errors="replace"):
        m = re.match(rf"key=(copy/{kind}/\S+/async)\s+min\s+\S+\s+p50\s+(\S+)", line)
        if m:
            v[m.group(1)] = float(m.group(2))
    return v
def pins(r, tag="pinscope"):
    v = {}
    for f in glob.glob(f"{out}/{tag}-{r}/*.csv"):
        if f.endswith(".samples.csv"):
            continue
        for row in csv.DictReader(open(f)):
            if row["mode"] == "latency" and row["lat_p50_us"]:
                v[f"copy/{kind}/{row['lane']}/{row['size_bytes']}/async"] = float(row["lat_p50_us"])
    return v
for r in range(1, rounds + 1):
    a, b, c, d = probe(f"{out}/probe-{r}.txt"), probe(f"{out}/nvml-{r}.txt"), pins(r), pins(r, "rayon1")
    for k in sorted(a):
        f = lambda m: f"{m[k]:6.2f}" if k in m else "     -"
        print(f"round {r} {k:32} {f(a)} | {f(b)} | {f(c)} | {f(d)}")
PY
