#!/usr/bin/env bash
# What the driver does per 4-byte pageable device→host copy, inside pinscope and inside the
# driver-API probe: both run under an LD_PRELOAD shim that counts ioctl calls and the time in
# them (scripts/probes/ioctl_count.c), once with 1000 and once with 3000 samples; the difference
# between the two runs of one tool is its sampling alone (set-up cancels), divided by the copies
# it added. The probe runs its `copy/pageable/d2h/4/async` key alone (one copy per sample);
# pinscope the latency scenario's case alone (one copy per sample, then one event-timed copy per
# sample for the device view). Rounds alternate the two. Never changes the GPU's settings.
#   GPU:  scripts/pageable-ioctls.sh [OUT]      (carry dist; PINSCOPE=dist/pinscope, ROUNDS=2)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-pageable-ioctls}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-2}

build_latency_driver "$OUT" || exit 1
gcc -O2 -shared -fPIC -o "$OUT/ioctl_count.so" scripts/probes/ioctl_count.c -ldl >"$OUT/shim-build.log" 2>&1 \
  || { echo "gcc ioctl_count failed:"; tail -20 "$OUT/shim-build.log"; exit 1; }
scenario() {  # scenario SAMPLES
  printf 'name = "pageable-d2h-4"\ndescription = "one 4-byte pageable D2H copy per sample"\n'
  printf '[defaults]\nmode = "latency"\nhost = "pageable"\n'
  printf 'measure = { samples = %d, warmup = 100, time_limit = "20s" }\n' "$1"
  printf 'probes = { hold_after_free = "0s", accounting = false }\n'
  printf '[[case]]\nlabel = "d2h-4"\ndirection = "d2h"\nsize = "4"\n'
}
for n in 1000 3000; do scenario $n >"$OUT/case-$n.toml"; done
for r in $(seq "$ROUNDS"); do
  for n in 1000 3000; do
    log "round $r, $n samples: probe"
    LD_PRELOAD=$OUT/ioctl_count.so IOCTL_COUNT_OUT=$OUT/probe-$n-$r.ioctl \
      "$OUT/latency_driver" kernels/pinscope.ptx "$n" 'copy/pageable/d2h/4/async$' >"$OUT/probe-$n-$r.txt" 2>&1
    log "round $r, $n samples: pinscope"
    LD_PRELOAD=$OUT/ioctl_count.so IOCTL_COUNT_OUT=$OUT/pinscope-$n-$r.ioctl \
      $P run "$OUT/case-$n.toml" --no-report --out-dir "$OUT/pinscope-$n-$r" >"$OUT/pinscope-$n-$r.log" 2>&1
  done
done
log "per copy (the 3000-sample run less the 1000-sample run of the same round)"
python3 - "$OUT" "$ROUNDS" <<'PY'
import csv, glob, re, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def ioctls(f):
    total, us, by = 0, 0.0, {}
    for line in open(f):
        m = re.match(r"ioctl calls (\d+), ([\d.]+) us", line)
        if m:
            total, us = int(m.group(1)), float(m.group(2))
        m = re.match(r"req (\S+) calls (\d+) us ([\d.]+)", line)
        if m:
            by[m.group(1)] = (int(m.group(2)), float(m.group(3)))
    return total, us, by
def p50(tool, n, r):
    if tool == "probe":
        for line in open(f"{out}/probe-{n}-{r}.txt", errors="replace"):
            m = re.match(r"key=copy/pageable/d2h/4/async\s+min\s+\S+\s+p50\s+(\S+)", line)
            if m:
                return float(m.group(1))
    for f in glob.glob(f"{out}/pinscope-{n}-{r}/*.csv"):
        if not f.endswith(".samples.csv"):
            for row in csv.DictReader(open(f)):
                return float(row["lat_p50_us"])
# Copies each run adds going from 1000 to 3000 samples: warm-up max(100, n/10) and the samples;
# pinscope adds one device-view copy per sample.
added = {"probe": (300 + 3000) - (100 + 1000), "pinscope": (300 + 3000 + 3000) - (100 + 1000 + 1000)}
for r in range(1, rounds + 1):
    for tool in ("probe", "pinscope"):
        try:
            a, b = ioctls(f"{out}/{tool}-1000-{r}.ioctl"), ioctls(f"{out}/{tool}-3000-{r}.ioctl")
        except OSError as e:
            print(f"round {r} {tool}: {e}"); continue
        k = added[tool]
        reqs = sorted(set(a[2]) | set(b[2]), key=lambda q: -(b[2].get(q, (0, 0))[0] - a[2].get(q, (0, 0))[0]))
        top = ", ".join(f"{q}: {(b[2].get(q, (0, 0))[0] - a[2].get(q, (0, 0))[0]) / k:.2f}/copy "
                        f"{(b[2].get(q, (0, 0))[1] - a[2].get(q, (0, 0))[1]) / max(1, b[2].get(q, (0, 0))[0] - a[2].get(q, (0, 0))[0]):.2f} us each"
                        for q in reqs[:4])
        print(f"round {r} {tool:8}: p50 {p50(tool, 1000, r)} / {p50(tool, 3000, r)} us; "
              f"{(b[0] - a[0]) / k:.2f} ioctls and {(b[1] - a[1]) / k:.2f} us in ioctl per copy ({top})")
PY
