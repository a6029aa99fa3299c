#!/usr/bin/env bash
# How many copy threads does the staged ring need on this machine, and does the VM steal CPU time
# from them? Sweeps threads for the 16 MiB x 3 ring (4 GiB, both directions, two fresh allocations
# each) against the pinned 4 GiB copy, with the CPU topology and /proc/stat steal time around it.
# Usage (GPU machine): scripts/staging-threads.sh [OUT]   THREADS="8 12 16 24 32" to choose.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-threads}}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA node|Model name|Hypervisor)" || true
list=$(echo ${THREADS:-8 12 16 24 32} | tr ' ' ',')
cat > "$OUT/threads.toml" <<T
name = "staging-threads"
description = "16 MiB x 3 ring, 4 GiB: copy threads swept, two fresh allocations each, against pinned 4 GiB"
[defaults]
size = "4GiB"
measure = { warmup = 1, min_samples = 3, max_samples = 4, time_limit = "3s" }
probes = { hold_after_free = "0s", accounting = false }
[[case]]
label = "ring"
host = "pageable"
mode = "staged"
chunk = "16MiB"
ring = 3
sweep = { direction = ["h2d", "d2h"], threads = [$list], "measure.warmup" = [1, 2] }
[[case]]
label = "pinned 4GiB"
host = "alloc"
sweep = { direction = ["h2d", "d2h"] }
T
steal() { awk '/^cpu /{print $9}' /proc/stat; }
s0=$(steal)
dist/pinscope run "$OUT/threads.toml" --out "$OUT/run" --no-report -q >"$OUT/run.log" 2>&1 || tail -5 "$OUT/run.log"
s1=$(steal)
echo "steal time during the run: $(( s1 - s0 )) ticks (USER_HZ, all CPUs together)"
python3 - "$OUT/run" <<'PY'
import csv, glob, sys
f = [p for p in glob.glob(sys.argv[1] + "/*.csv") if not p.endswith(".samples.csv")][0]
rows = list(csv.DictReader(open(f)))
pinned = {r["lane"]: float(r["bw_median_gbs"]) for r in rows if r["case_label"].startswith("pinned")}
print("pinned:", pinned)
for r in rows:
    if r["case_label"].startswith("pinned"): continue
    bw = float(r["bw_median_gbs"] or 0)
    print(f"  {r['lane']} threads={r['threads']:>3}  {bw:6.2f} GB/s  min {float(r['bw_min_gbs'] or 0):6.2f}  ratio {bw / pinned[r['lane']]:.3f}")
PY
