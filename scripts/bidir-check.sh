#!/usr/bin/env bash
# Bidirectional lanes and harness overhead, side by side in one device call: nvbandwidth v0.8's two
# bidirectional copy-engine tests (and the one-way ones) in three rounds, interleaved with two runs
# of `h200-headline`; then each run's bidirectional lanes against nvbandwidth's range, and its
# harness overhead (scripts/overhead.py). Never changes the GPU's clocks, modes or settings.
#   here:  scripts/build-dist.sh && bash ../shared/tools/nvbandwidth.sh prepare .peers
#   GPU:   scripts/bidir-check.sh [OUT]          (carry dist and .peers)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-bidir}}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=${PINSCOPE:-dist/pinscope}
TESTS="host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_ce device_to_host_memcpy_ce"
log() { echo "== $(date +%T) $*"; }

nvb() {
  log "nvbandwidth round $1"
  # shellcheck disable=SC2086
  bash .peers/nvbandwidth.sh run .peers "$OUT/nvbandwidth-$1.json" $TESTS 2>&1 | tee "$OUT/nvbandwidth-$1.txt"
}
headline() {
  log "pinscope h200-headline, round $1"
  local s=$SECONDS
  timeout 120 $P run scenarios/h200-headline.toml --out-dir "$OUT/h200-headline-$1" >"$OUT/h200-headline-$1.log" 2>&1
  echo "exit $? after $((SECONDS - s)) s"
}
nvb 1; headline 1; nvb 2; headline 2; nvb 3

log "bidirectional lanes against nvbandwidth's range; harness overhead"
python3 - "$OUT" <<'PY'
import csv, glob, json, sys
out = sys.argv[1]
ref = {}
for f in sorted(glob.glob(f"{out}/nvbandwidth-*.json")):
    for t in json.load(open(f))["nvbandwidth"]["testcases"]:
        if t.get("sum") is not None:
            ref.setdefault(t["name"], []).append(float(t["sum"]))
pairs = {("bidirectional", "h2d"): "host_to_device_bidirectional_memcpy_ce",
         ("bidirectional", "d2h"): "device_to_host_bidirectional_memcpy_ce",
         ("h2d", "h2d"): "host_to_device_memcpy_ce", ("d2h", "d2h"): "device_to_host_memcpy_ce"}
for f in sorted(glob.glob(f"{out}/h200-headline-*/*.csv")):
    if f.endswith(".samples.csv"):
        continue
    print(f.split("/")[-2])
    for r in csv.DictReader(open(f)):
        if r["case_label"] != "pinned copy-engine":
            continue
        d = r["case_key"].split("direction=")[1].split(",")[0]
        name = pairs.get((d, r["lane"]))
        if not name or name not in ref or not r["bw_median_gbs"]:
            continue
        v, lo, hi = float(r["bw_median_gbs"]), min(ref[name]), max(ref[name])
        where = "inside" if lo <= v <= hi else f"{(v / hi - 1) * 100 if v > hi else (v / lo - 1) * 100:+.2f}% outside"
        print(f"  {d:13} {r['lane']}: {v:6.2f} GB/s (spread {float(r['bw_spread_pct'] or 0):.1f}%, n={r['samples']})  {name} {lo:.2f}-{hi:.2f}  {where}")
PY
for f in "$OUT"/h200-headline-*/*.csv; do
  [[ $f == *.samples.csv ]] || python3 scripts/overhead.py "$f"
done
