#!/usr/bin/env bash
# The small pageable copies on their own, side by side: the driver-API probe
# (scripts/probes/latency_driver.cu, only its `copy/pageable` keys) and `pinscope run
# scenarios/latency.toml --only pageable`, interleaved round by round, first as the scheduler
# places them, then both pinned to one CPU (taskset), so that a difference between the two tools
# can be told apart from a difference between runs. Then the pinned cases the same way, as a
# control. Host clock throughout; never changes the GPU's clocks, modes or settings.
#   scripts/pageable-latency.sh [OUT]     (PINSCOPE=dist/pinscope, ROUNDS=4, SAMPLES=1000)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-pageable}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-4}
N=${SAMPLES:-1000}

log "machine"
{ nproc; lscpu 2>/dev/null | grep -E "Model name|NUMA|^CPU\(s\)|Thread|MHz"; cat /sys/devices/system/node/online 2>/dev/null; } | tee "$OUT/machine.txt"
build_latency_driver "$OUT" || exit 1
scen="$OUT/latency.toml"
sed "s/samples = 1000/samples = $N/" harness/scenarios/latency.toml >"$scen"
# The same with no observers read between cases (no NVML, /proc or cuMemGetInfo snapshots), to
# tell whether the observers move the small pageable copies.
quiet="$OUT/latency-quiet.toml"
sed 's/^probes = { hold_after_free = "0s" }/probes = { hold_after_free = "0s", accounting = false }/' "$scen" >"$quiet"

# probe TAG PREFIX [taskset args...]
probe() {
  local tag=$1 prefix=$2; shift 2
  timeout 120 "$@" "$OUT/latency_driver" harness/kernels/pinscope.ptx "$N" "$prefix" >"$OUT/probe-$tag.txt" 2>&1
  echo "probe $tag exit $?"
}
# pinscope TAG LABEL [taskset args...]
pinscope() {
  local tag=$1 label=$2; shift 2
  timeout 120 "$@" $P run "$scen" --only "$label" --no-report --out-dir "$OUT/pinscope-$tag" >"$OUT/pinscope-$tag.log" 2>&1
  echo "pinscope $tag exit $?"
}

for r in $(seq "$ROUNDS"); do
  log "round $r (placed by the scheduler)"
  probe "free-$r" copy/pageable/
  pinscope "free-$r" pageable
  scen=$quiet pinscope "quiet-$r" pageable
done
for r in $(seq "$ROUNDS"); do
  log "round $r (both on CPU 2)"
  probe "cpu2-$r" copy/pageable/ taskset -c 2
  pinscope "cpu2-$r" pageable taskset -c 2
done
for r in 1 2; do
  log "control round $r: page-locked"
  probe "pinned-$r" copy/pinned/
  pinscope "pinned-$r" pinned
done

log "p50 per round (µs): probe | pinscope; then pinscope with no observers (free rounds)"
python3 - "$OUT" <<'PY'
import csv, glob, os, re, sys
out = sys.argv[1]
def probe(tag):
    v = {}
    for line in open(f"{out}/probe-{tag}.txt", errors="replace"):
        m = re.match(r"key=(\S+)\s+min\s+\S+\s+p50\s+(\S+)", line)
        if m:
            v[m.group(1)] = float(m.group(2))
    return v
def pins(tag):
    v = {}
    for f in glob.glob(f"{out}/pinscope-{tag}/*.csv"):
        if f.endswith(".samples.csv"):
            continue
        for r in csv.DictReader(open(f)):
            call = {"latency": "async", "latency-sync": "sync", "enqueue": "enqueue"}.get(r["mode"])
            kind = "pageable" if r["host"] == "pageable" else ("mapped" if "mapped" in r["flags"] else "pinned")
            if call and r["lat_p50_us"]:
                v[f"copy/{kind}/{r['lane']}/{r['size_bytes']}/{call}"] = float(r["lat_p50_us"])
    return v
tags = sorted({os.path.basename(p)[6:-4] for p in glob.glob(f"{out}/probe-*.txt")},
              key=lambda t: (t.split("-")[0], int(t.split("-")[1])))
keys = sorted({k for t in tags for k in pins(t)})
fmt = lambda x: f"{x:6.2f}" if x is not None else "     -"
for k in keys:
    cells = [f"{t}: {fmt(probe(t).get(k))} |{fmt(pins(t).get(k))}" for t in tags if k in pins(t) or k in probe(t)]
    quiet = [pins(f"quiet-{t.split('-')[1]}").get(k) for t in tags if t.startswith("free-")]
    if any(q is not None for q in quiet):
        cells.append("no observers: " + " ".join(fmt(q) for q in quiet))
    print(f"{k:32} " + "   ".join(cells))
PY
