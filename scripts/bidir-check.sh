#!/usr/bin/env bash
# Bidirectional lanes side by side with nvbandwidth v0.8 in one device call, tightly alternated:
# ROUNDS times nvbandwidth's two bidirectional copy-engine tests (verbose, 5 samples each, so its
# per-sample rates are kept) then `pinscope run h200-headline --only "pinned copy-engine"` (H2D,
# D2H, bidirectional). The H2D rate of bidirectional copies on the lent H200 wanders between
# states (36–50 GB/s) over seconds, in both tools, so the two are compared round by round and
# pooled: each pinscope lane against nvbandwidth's run-to-run range, and the medians of all
# samples of each. Never changes the GPU's clocks, modes or settings.
#   here:  scripts/build-dist.sh && bash ../shared/tools/nvbandwidth.sh prepare .peers
#   GPU:   scripts/bidir-check.sh [OUT]          (carry dist and .peers; ROUNDS=5)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-bidir}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-5}
NVB=/tmp/nvbandwidth-build/nvbandwidth
TESTS="host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce"

if [[ ! -x $NVB ]]; then
  log "building nvbandwidth"
  bash .peers/nvbandwidth.sh run .peers "$OUT/nvb-build.json" host_to_device_memcpy_ce >"$OUT/nvb-build.log" 2>&1
fi
for r in $(seq "$ROUNDS"); do
  log "round $r: nvbandwidth"
  # shellcheck disable=SC2086
  timeout 60 "$NVB" -v -i 5 -t $TESTS >"$OUT/nvbandwidth-$r.txt" 2>&1
  echo "exit $?"
  log "round $r: pinscope"
  timeout 120 $P run scenarios/h200-headline.toml --only "pinned copy-engine" --no-report \
    --out-dir "$OUT/pinscope-$r" >"$OUT/pinscope-$r.log" 2>&1
  echo "exit $?"
done

log "bidirectional lanes against nvbandwidth (GB/s)"
python3 - "$OUT" <<'PY'
import csv, glob, re, statistics as st, sys
out = sys.argv[1]
# nvbandwidth: per test, the reported value per round and every sample of the measured direction.
measured = {"host_to_device_bidirectional_memcpy_ce": ("h2d", re.compile(r"Sample \d+: Host -> Device")),
            "device_to_host_bidirectional_memcpy_ce": ("d2h", re.compile(r"Sample \d+: Device \d+ -> Host"))}
rounds, samples = {}, {}
def round_of(path):
    return int(re.search(r"-(\d+)(?:/[^/]*)?\.(?:txt|csv)$", path).group(1))
for f in sorted(glob.glob(f"{out}/nvbandwidth-*.txt"), key=round_of):
    test = None
    for line in open(f, errors="replace"):
        m = re.match(r"Running (\S+)\.", line.strip())
        if m:
            test = m.group(1)
        elif test in measured and measured[test][1].search(line):
            samples.setdefault(measured[test][0], []).append(float(line.split(":")[-1].split()[0]))
        m = re.match(r"SUM (\S+) ([\d.]+)", line.strip())
        if m and m.group(1) in measured:
            rounds.setdefault(measured[m.group(1)][0], []).append(float(m.group(2)))
ours, our_samples = {}, {}
for f in sorted(glob.glob(f"{out}/pinscope-*/*.csv"), key=round_of):
    if f.endswith(".samples.csv"):
        continue
    for r in csv.DictReader(open(f)):
        if "direction=bidirectional" in r["case_key"] and r["lane"] in ("h2d", "d2h") and r["bw_median_gbs"]:
            ours.setdefault(r["lane"], []).append((f.split("/")[-2], float(r["bw_median_gbs"]), r["bw_spread_pct"]))
    for s in csv.DictReader(open(f[:-4] + ".samples.csv")):
        if "direction=bidirectional" in s["case_key"] and s["series"] == "bw_gbs" and s["lane"] in ("h2d", "d2h"):
            our_samples.setdefault(s["lane"], []).append(float(s["value"]))
for lane in ("h2d", "d2h"):
    ref = rounds.get(lane, [])
    if not ref:
        print(f"{lane}: no nvbandwidth values"); continue
    lo, hi = min(ref), max(ref)
    print(f"{lane}: nvbandwidth rounds " + " ".join(f"{x:.2f}" for x in ref) + f"  (range {lo:.2f}-{hi:.2f})")
    inside = 0
    for run, v, spread in ours.get(lane, []):
        where = "inside" if lo <= v <= hi else f"{(v / hi - 1) * 100 if v > hi else (v / lo - 1) * 100:+.2f}% outside"
        inside += lo <= v <= hi
        print(f"  pinscope {run}: {v:6.2f} (spread {float(spread or 0):.1f}%)  {where}")
    print(f"  {inside} of {len(ours.get(lane, []))} pinscope runs inside nvbandwidth's range")
    # The same test applied to nvbandwidth itself: each of its rounds against the range of its
    # other rounds. On a host whose state wanders, this says how often any one run can be inside.
    own = sum(min(ref[:i] + ref[i + 1:]) <= x <= max(ref[:i] + ref[i + 1:]) for i, x in enumerate(ref)) if len(ref) > 2 else 0
    print(f"  {own} of {len(ref)} nvbandwidth rounds inside the range of its other rounds")
    # Round by round: each pinscope run against the nvbandwidth round just before it.
    diffs = [(v / ref[i] - 1) * 100 for i, (_, v, _) in enumerate(ours.get(lane, [])) if i < len(ref)]
    if diffs:
        print(f"  pinscope against the nvbandwidth round before it: median {st.median(diffs):+.2f}%, "
              f"range {min(diffs):+.2f}% .. {max(diffs):+.2f}%")
    a, b = samples.get(lane, []), our_samples.get(lane, [])
    if a and b:
        print(f"  all samples: nvbandwidth median {st.median(a):.2f} (n={len(a)}, {min(a):.1f}-{max(a):.1f}), "
              f"pinscope median {st.median(b):.2f} (n={len(b)}, {min(b):.1f}-{max(b):.1f}), ratio {st.median(b) / st.median(a):.3f}")
PY
