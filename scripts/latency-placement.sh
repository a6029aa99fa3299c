#!/usr/bin/env bash
# Does one small copy's latency depend on the CPU the thread runs on? On the lent H200 (a VM)
# a 4-byte pageable device-to-host copy sits at one of ~6.7 / ~7.8 / ~9 µs for a whole process,
# in the driver-API probe and in pinscope alike. This times the copy with each process fixed to
# one CPU (`taskset -c`), every CPU in turn, in rounds:
#   probe        the driver-API probe (scripts/probes/latency_driver.cu)
#   loop-same    copy_loop --upload-same: the probe's loop and upload through pinscope's CUDA layer
#   strategy     copy_loop run <case> strategy: pinscope's own strategy and sampling loop
# and prints the p50 per CPU (median over rounds). It first records what decides placement: the
# CPU and NUMA layout and the GPU's interrupts' affinity (read only). Never changes the GPU's
# clocks, modes or settings, nor any interrupt's affinity.
#   GPU:  scripts/latency-placement.sh [OUT]   (carry dist; ROUNDS=2, KIND=pageable, DIR=d2h,
#         BYTES=4, CPUS="0 1 …" default every online CPU)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-latency-placement}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-2}
KIND=${KIND:-pageable}
DIR=${DIR:-d2h}
BYTES=${BYTES:-4}
LOOP=${COPY_LOOP:-dist/copy_loop}
KEY="copy/$KIND/$DIR/$BYTES/async"
host=$([ "$KIND" = pinned ] && echo alloc || echo pageable)
CPUS=${CPUS:-$(seq 0 $(($(nproc) - 1)))}

log "placement facts"
{
  echo "nproc: $(nproc)"
  lscpu 2>&1
  for n in /sys/devices/system/node/node*/cpulist; do [ -r "$n" ] && echo "$n: $(cat "$n")"; done
  echo "--- GPU interrupts (/proc/interrupts lines naming nvidia)"
  grep -i nvidia /proc/interrupts
  for irq in $(grep -i nvidia /proc/interrupts | awk -F: '{print $1}'); do
    echo "irq $irq affinity: $(cat /proc/irq/"$irq"/smp_affinity_list 2>/dev/null) effective: $(cat /proc/irq/"$irq"/effective_affinity_list 2>/dev/null)"
  done
  echo "--- nvidia-smi topo -m"
  nvidia-smi topo -m 2>&1
} >"$OUT/facts.txt" 2>&1
sed -n '1,60p' "$OUT/facts.txt" | grep -E "nproc|NUMA|Model name|Thread|Socket|node|irq|nvidia|GPU0" | head -30

build_latency_driver "$OUT" || exit 1
printf 'name = "one-copy"\ndescription = "one small copy, latency"\n[defaults]\nmode = "latency"\nmeasure = { samples = 1000, warmup = 100, time_limit = "5s" }\nprobes = { hold_after_free = "0s" }\n[[case]]\nlabel = "one"\nhost = "%s"\ndirection = "%s"\nsize = "%s"\n' \
  "$host" "$DIR" "$BYTES" >"$OUT/case.toml"

# one NAME CPU ROUND: the key timed by NAME on CPU, its line in $OUT/NAME-cCPU-ROUND.txt
one() {
  local f="$OUT/$1-c$2-$3.txt"
  case $1 in
    probe) taskset -c "$2" "$OUT/latency_driver" kernels/pinscope.ptx 1000 "$KEY\$" >"$f" 2>&1 ;;
    loop-same) taskset -c "$2" "$LOOP" "$KIND" "$DIR" "$BYTES" 1000 --upload-same >"$f" 2>&1 ;;
    strategy) taskset -c "$2" "$LOOP" run "$OUT/case.toml" strategy >"$f" 2>&1 ;;
  esac || echo "$1 on CPU $2, round $3: exit $?"
}
names=(probe loop-same strategy)
for r in $(seq "$ROUNDS"); do
  log "round $r"
  for c in $CPUS; do
    # The order rotates with the CPU, so no variant always runs first.
    for i in 0 1 2; do one "${names[$(( (i + c + r) % 3 ))]}" "$c" "$r"; done
  done
done

log "$KEY p50 (µs) per CPU: median over $ROUNDS rounds (each round's values in brackets)"
python3 - "$OUT" "$ROUNDS" "$KEY" "${names[@]}" -- $CPUS <<'PY'
import re, statistics, sys
args = sys.argv[1:]
out, rounds, key = args[0], int(args[1]), args[2]
names = args[3:args.index("--")]
cpus = args[args.index("--") + 1:]
def p50(name, c, r):
    try:
        for line in open(f"{out}/{name}-c{c}-{r}.txt", errors="replace"):
            m = re.match(rf"key={re.escape(key)}\s+min\s+\S+\s+p50\s+(\S+)", line)
            if m:
                return float(m.group(1))
    except OSError:
        pass
    return None
print("cpu " + "".join(f"{n:>28}" for n in names))
allv = {n: [] for n in names}
for c in cpus:
    cells = []
    for n in names:
        v = [x for x in (p50(n, c, r) for r in range(1, rounds + 1)) if x is not None]
        allv[n] += v
        cell = f"{statistics.median(v):.2f} [{' '.join(f'{x:.2f}' for x in v)}]" if v else "-"
        cells.append(f"{cell:>28}")
    print(f"{c:>3} " + "".join(cells))
for n in names:
    if allv[n]:
        v = sorted(allv[n])
        print(f"{n}: {len(v)} processes, min {v[0]:.2f}, median {statistics.median(v):.2f}, max {v[-1]:.2f} µs")
PY
log done
