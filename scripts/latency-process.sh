#!/usr/bin/env bash
# Where between the driver and `pinscope run` does one small copy's latency move? Tight rounds of
# the same copy (async + stream synchronisation, back to back, host clock, 1000 samples after
# 100), each round timing it several ways, one process each:
#   probe        the driver-API probe (scripts/probes/latency_driver.cu, C++, no other thread)
#   probe-nvml   the same with NVML initialised first (LATENCY_NVML=1), as pinscope's session does
#   probe-preload, probe-keep   the probe after the sampling load of pinscope's settings record
#                (LATENCY_PRELOAD=free: its 64 MiB page-locked buffer freed; =keep: kept);
#   probe-own    the same load made in a context of its own, destroyed after (LATENCY_PRELOAD=own)
#   loop         copy_loop (harness/examples/copy_loop.rs): the probe's loop through pinscope's
#                own CUDA layer (cudarc), nothing else in the process
#   loop-PART    the same with one part of a `pinscope run` process set up first and held:
#                rayon (its pool started by pinscope's fill), session (the whole run session),
#                kernels, gate, machine, observers, record (copy_loop's flags); loop-a_b has
#                both parts a and b
#   run-strategy copy_loop taking that case through pinscope's strategy and sampling loop alone
#   run-case     copy_loop taking it through the runner's whole case (run_case), in-process
#   pinscope     `pinscope run` of a one-case scenario with that copy
#   pins-r1      the same with RAYON_NUM_THREADS=1
# The order inside a round rotates, so no variant always follows the same one; the per-round
# difference to the probe is the fair comparison (this VM's latency moves by ~1 µs between
# minutes). If `loop` reads like the probe and `pinscope` does not, the difference is in the
# runner's process, and the loop-PART columns say which part. Never changes the GPU's clocks,
# modes or settings.
# The probe and copy_loop print the CPUs their sampling thread ran on (`cpu=a->b`); the second
# table lists them, since this VM's latency may depend on where the thread runs. PIN=<cpu list>
# runs every variant under `taskset -c` (the thread's placement fixed, the same for all).
#   GPU:  scripts/latency-process.sh [OUT]   (carry dist: dist/pinscope and dist/copy_loop;
#         ROUNDS=8; KIND=pageable|pinned, DIR=d2h|h2d, BYTES=4; VARIANTS="probe loop ..."; PIN)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-latency-process}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-8}
KIND=${KIND:-pageable}
DIR=${DIR:-d2h}
BYTES=${BYTES:-4}
LOOP=${COPY_LOOP:-dist/copy_loop}
KEY="copy/$KIND/$DIR/$BYTES/async"
host=$([ "$KIND" = pinned ] && echo alloc || echo pageable)

build_latency_driver "$OUT" || exit 1
printf 'name = "one-copy"\ndescription = "one small copy, latency"\n[defaults]\nmode = "latency"\nmeasure = { samples = 1000, warmup = 100, time_limit = "5s" }\nprobes = { hold_after_free = "0s" }\n[[case]]\nlabel = "one"\nhost = "%s"\ndirection = "%s"\nsize = "%s"\n' \
  "$host" "$DIR" "$BYTES" >"$OUT/case.toml"

# Every variant's command starts with $ON: nothing, or taskset fixing the CPUs.
ON=()
[ -n "${PIN:-}" ] && ON=(taskset -c "$PIN")
# variant NAME ROUND: one timing of the key, its output in $OUT/NAME-ROUND.*
variant() {
  case $1 in
    probe) "${ON[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-nvml) LATENCY_NVML=1 "${ON[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-preload) LATENCY_PRELOAD=free "${ON[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-own) LATENCY_PRELOAD=own "${ON[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-keep) LATENCY_PRELOAD=keep "${ON[@]}" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    loop) "${ON[@]}" "$LOOP" "$KIND" "$DIR" "$BYTES" 1000 >"$OUT/$1-$2.txt" 2>&1 ;;
    loop-*) # loop-a_b: copy_loop with --a --b
      local flags=() part parts
      IFS=_ read -r -a parts <<<"${1#loop-}"
      for part in "${parts[@]}"; do flags+=("--$part"); done
      "${ON[@]}" "$LOOP" "$KIND" "$DIR" "$BYTES" 1000 "${flags[@]}" >"$OUT/$1-$2.txt" 2>&1 ;;
    run-strategy | run-case) "${ON[@]}" "$LOOP" run "$OUT/case.toml" "${1#run-}" >"$OUT/$1-$2.txt" 2>&1 ;;
    pinscope) "${ON[@]}" $P run "$OUT/case.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
    pins-r1) RAYON_NUM_THREADS=1 "${ON[@]}" $P run "$OUT/case.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
  esac || echo "$1 round $2: exit $?"
}
read -r -a names <<<"${VARIANTS:-probe loop loop-rayon loop-session loop-kernels loop-gate loop-machine loop-observers pinscope pins-r1}"
in_rounds "$ROUNDS" "${names[@]}"

log "$KEY p50 (µs), one column per variant, one line per round${PIN:+ (every variant on CPUs $PIN)}"
python3 - "$OUT" "$ROUNDS" "$KEY" "${names[@]}" <<'PY'
import csv, glob, re, statistics, sys
out, rounds, key, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def p50(name, r):
    if name.startswith(("probe", "loop", "run-")):
        try:
            for line in open(f"{out}/{name}-{r}.txt", errors="replace"):
                m = re.match(rf"key={re.escape(key)}\s+min\s+\S+\s+p50\s+(\S+)", line)
                if m:
                    return float(m.group(1))
        except OSError:
            return None
        return None
    for f in glob.glob(f"{out}/{name}-{r}/*.csv"):
        if not f.endswith(".samples.csv"):
            for row in csv.DictReader(open(f)):
                if row["mode"] == "latency" and row["lat_p50_us"]:
                    return float(row["lat_p50_us"])
    return None
cols = {n: [p50(n, r) for r in range(1, rounds + 1)] for n in names}
w = max(10, max(len(n) for n in names) + 2)
print("round " + "".join(f"{n:>{w}}" for n in names))
for r in range(rounds):
    print(f"{r + 1:5} " + "".join(f"{cols[n][r]:{w}.2f}" if cols[n][r] is not None else f"{'-':>{w}}" for n in names))
med = {n: statistics.median([x for x in cols[n] if x is not None]) for n in names if any(x is not None for x in cols[n])}
print("median" + "".join(f"{med[n]:{w}.2f}" if n in med else f"{'-':>{w}}" for n in names))
# Within a round every variant met the same moment of the machine: the per-round difference to
# the probe is the fair comparison.
for n in names[1:]:
    d = [c - p for c, p in zip(cols[n], cols["probe"]) if c is not None and p is not None]
    if d:
        print(f"{n:>14} - probe, per round: median {statistics.median(d):+.2f} µs, range {min(d):+.2f} .. {max(d):+.2f}")
def cpus(name, r):
    try:
        for line in open(f"{out}/{name}-{r}.txt", errors="replace"):
            m = re.search(r"cpu=(\S+)->(\S+)", line)
            if m:
                return f"{m.group(1)}->{m.group(2)}"
    except OSError:
        pass
    return "-"
print("CPU of the sampling thread when its samples began -> ended")
print("round " + "".join(f"{n:>{w}}" for n in names))
for r in range(1, rounds + 1):
    print(f"{r:5} " + "".join(f"{cpus(n, r):>{w}}" for n in names))
PY
