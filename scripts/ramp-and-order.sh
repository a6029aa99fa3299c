#!/usr/bin/env bash
# Two open questions of the H200 comparison, measured in one device call:
#  1. Bidirectional ramp: do bidirectional copies start below their steady rate and climb to it,
#     and for how long? A scenario of bidirectional cases with no warm-up and a fixed 100 samples
#     each (cold, again at once, after one-way traffic), run twice after 5 s idle; every sample
#     is kept, so the ramp is read off the samples file. Then nvbandwidth's bidirectional and
#     one-way CE tests in 4 rounds around 3 runs of h200-headline's `pinned copy-engine` case (its
#     `measure.warmup_time`), each lane against nvbandwidth's range of this call.
#  2. Small pageable copies inside the whole latency scenario: the latency scenario cut down to
#     `pageable` plus one other group of cases before it (pinned, registered, mapped), the whole
#     scenario, and the pageable cases first; 2 rounds each, beside the driver-API probe
#     (scripts/probes/latency_driver.cu, `copy/pageable/` keys), to find which earlier cases move
#     the 4-byte pageable copies.
# Never changes the GPU's clocks, modes or settings.
#   here:  scripts/build-dist.sh && bash ../shared/tools/nvbandwidth.sh prepare .peers
#   GPU:   scripts/ramp-and-order.sh [OUT]          (carry dist and .peers)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-ramp}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
STEPS=${STEPS:-ramp,bidir,order}
has() { [[ ",$STEPS," == *",$1,"* ]]; }

ramp_scenario() {
  cat <<'TOML'
name = "bidir-ramp"
description = "Bidirectional and one-way pinned copies with no warm-up, 100 samples each"
[defaults]
size = "512MiB"
host = "alloc"
measure = { warmup = 0, min_samples = 100, max_samples = 100, time_limit = "20s" }
probes = { hold_after_free = "0s", accounting = false }
[[case]]
label = "bidir-cold"
direction = "bidirectional"
[[case]]
label = "bidir-again"
direction = "bidirectional"
[[case]]
label = "h2d"
direction = "h2d"
measure = { min_samples = 60, max_samples = 60 }
[[case]]
label = "bidir-after-h2d"
direction = "bidirectional"
TOML
}

if has ramp; then
  ramp_scenario >"$OUT/ramp.toml"
  for r in 1 2; do
    sleep 5
    log "ramp round $r"
    timeout 120 $P run "$OUT/ramp.toml" --no-report --out-dir "$OUT/ramp-$r" >"$OUT/ramp-$r.log" 2>&1
    echo "exit $?"
  done
  python3 - "$OUT" <<'PY'
import csv, glob, sys
out = sys.argv[1]
for f in sorted(glob.glob(f"{out}/ramp-*/*.samples.csv")):
    print(f.split("/")[-2])
    series = {}
    for r in csv.DictReader(open(f)):
        if r["series"] == "bw_gbs" and r["lane"] != "sum":
            label = r["case_key"].split("/")[1]
            series.setdefault((label, r["lane"]), []).append(float(r["value"]))
    for (label, lane), v in series.items():
        tens = [sum(v[i:i + 10]) / len(v[i:i + 10]) for i in range(0, len(v), 10)]
        print(f"  {label:16} {lane}: means of 10 samples: " + " ".join(f"{x:5.1f}" for x in tens))
PY
fi

TESTS="host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce host_to_device_memcpy_ce device_to_host_memcpy_ce"
if has bidir; then
  for r in 1 2 3 4; do
    log "nvbandwidth round $r"
    # shellcheck disable=SC2086
    bash .peers/nvbandwidth.sh run .peers "$OUT/nvbandwidth-$r.json" $TESTS >"$OUT/nvbandwidth-$r.txt" 2>&1
    echo "exit $?"
    [[ $r == 4 ]] && break
    log "pinscope h200-headline --only 'pinned copy-engine', round $r"
    timeout 120 $P run scenarios/h200-headline.toml --only "pinned copy-engine" --no-report \
      --out-dir "$OUT/headline-$r" >"$OUT/headline-$r.log" 2>&1
    echo "exit $?"
  done
  python3 - "$OUT" <<'PY'
import csv, glob, json, sys
out = sys.argv[1]
ref = {}
for f in sorted(glob.glob(f"{out}/nvbandwidth-*.json")):
    try:
        cases = json.load(open(f))["nvbandwidth"]["testcases"]
    except Exception as e:
        print(f, "unreadable:", e); continue
    for t in cases:
        if t.get("sum") is not None:
            ref.setdefault(t["name"], []).append(float(t["sum"]))
for name, v in ref.items():
    print(f"  nvbandwidth {name}: " + " ".join(f"{x:.2f}" for x in v))
pairs = {("bidirectional", "h2d"): "host_to_device_bidirectional_memcpy_ce",
         ("bidirectional", "d2h"): "device_to_host_bidirectional_memcpy_ce",
         ("h2d", "h2d"): "host_to_device_memcpy_ce", ("d2h", "d2h"): "device_to_host_memcpy_ce"}
for f in sorted(glob.glob(f"{out}/headline-*/*.csv")):
    if f.endswith(".samples.csv"):
        continue
    print(f.split("/")[-2])
    for r in csv.DictReader(open(f)):
        d = r["case_key"].split("direction=")[1].split(",")[0]
        name = pairs.get((d, r["lane"]))
        if not name or name not in ref or not r["bw_median_gbs"]:
            continue
        v, lo, hi = float(r["bw_median_gbs"]), min(ref[name]), max(ref[name])
        where = "inside" if lo <= v <= hi else f"{(v / hi - 1) * 100 if v > hi else (v / lo - 1) * 100:+.2f}% outside"
        print(f"  {d:13} {r['lane']}: {v:6.2f} GB/s (spread {float(r['bw_spread_pct'] or 0):.1f}%, n={r['samples']})  {name} {lo:.2f}-{hi:.2f}  {where}")
PY
fi

if has order; then
  build_latency_driver "$OUT" || exit 1
  # variant NAME LABELS...: the latency scenario with only the cases of these labels, in this order.
  variant() {
    local name=$1; shift
    python3 - scenarios/latency.toml "$OUT/latency-$name.toml" "$@" <<'PY'
import re, sys
src, dst, labels = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(src).read()
head, *cases = text.split("[[case]]")
by = {re.search(r'label = "([^"]+)"', c).group(1): c for c in cases}
open(dst, "w").write(head + "".join("[[case]]" + by[l] for l in labels))
PY
  }
  variant pageable pageable
  variant pinned-pageable pinned pageable
  variant registered-pageable registered pageable
  variant mapped-pageable mapped pageable
  variant pageable-first pageable pinned registered mapped pinned-sync-call pageable-sync-call
  cp scenarios/latency.toml "$OUT/latency-whole.toml"
  for r in 1 2; do
    log "order round $r: probe"
    timeout 120 "$OUT/latency_driver" kernels/pinscope.ptx 1000 copy/pageable/ >"$OUT/probe-$r.txt" 2>&1
    echo "probe exit $?"
    for v in pageable pinned-pageable registered-pageable mapped-pageable pageable-first whole; do
      log "order round $r: $v"
      timeout 150 $P run "$OUT/latency-$v.toml" --no-report --out-dir "$OUT/order-$v-$r" >"$OUT/order-$v-$r.log" 2>&1
      echo "exit $?"
    done
  done
  python3 - "$OUT" <<'PY'
import csv, glob, re, sys
out = sys.argv[1]
for f in sorted(glob.glob(f"{out}/probe-*.txt")):
    for line in open(f, errors="replace"):
        m = re.match(r"key=(copy/pageable/\S+/async)\s+min\s+\S+\s+p50\s+(\S+)", line)
        if m:
            print(f"  {f.split('/')[-1]:14} {m.group(1):32} p50 {float(m.group(2)):6.2f} us")
for f in sorted(glob.glob(f"{out}/order-*/*.csv")):
    if f.endswith(".samples.csv"):
        continue
    for r in csv.DictReader(open(f)):
        if r["host"] == "pageable" and r["mode"] == "latency" and r["lat_p50_us"]:
            print(f"  {f.split('/')[-2]:28} pageable {r['lane']} {r['size_bytes']:>6} B p50 {float(r['lat_p50_us']):6.2f} us")
PY
fi
log done
