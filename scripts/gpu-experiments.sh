#!/usr/bin/env bash
# Issue 13's experiments on a machine with an NVIDIA GPU (the lent H200), in one call:
#   here (no GPU):   scripts/build-dist.sh                      # dist/pinscope, dist/gpu-tests
#                    (optional) bash ../shared/tools/nvbandwidth.sh prepare .peers
#   on the GPU:      scripts/gpu-experiments.sh [OUT]          # carry dist/ (and .peers)
# Runs the GPU tests of the new engines and probes, `info --probe` (pinned ceiling with 90% of
# device memory held), the three scenarios (vram-overflow with --allow-vram-overflow: the steps
# past the card are tried with plain cuMemAlloc, never managed memory), nvbandwidth's
# device_local_copy for the HBM comparison when .peers/nvbandwidth.sh exists, and prints the
# numbers the issue's note needs. Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-gpu-experiments}}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=dist/pinscope
STEPS=${STEPS:-machine,tests,info,overflow,ceiling,churn,nvbandwidth,numbers}
has() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "== $*"; }
[[ -x $P ]] || { echo "dist/pinscope is missing: run scripts/build-dist.sh first and carry dist/"; exit 2; }

if has machine; then
  log machine
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,memory.free --format=csv | tee "$OUT/nvidia-smi.txt"
  free -g | head -2
fi
if has tests && [[ -x dist/gpu-tests ]]; then
  log "GPU tests of issue 13 (device engines, overflow opt-ins, ceiling with device memory held, churn)"
  for t in device_engines_measure_device_memory past_the_card_needs_the_flag_and_then_fails_on_linux \
           pinned_ceiling_with_device_memory_held churn_verifies_every_copy; do
    dist/gpu-tests --ignored --exact "$t" --test-threads=1 --nocapture 2>&1 | tee -a "$OUT/gpu-tests.log" | tail -25
  done
fi
if has info; then
  log "pinscope info --probe"
  $P info --probe 2>&1 | tee "$OUT/info.txt"
fi
run() { # name, extra args
  local s=$1; shift
  log "scenario $s"
  $P plan "scenarios/$s.toml" 2>&1 | tee "$OUT/$s.plan.txt" | tail -25
  $P run "scenarios/$s.toml" --out "$OUT/$s" "$@" 2>&1 | tee "$OUT/$s.log" | tail -45
}
has overflow && run vram-overflow --allow-vram-overflow
has ceiling && run pinned-vs-vram
has churn && run pinned-churn
if has nvbandwidth; then
  if [[ -f .peers/nvbandwidth.sh ]]; then
    log "nvbandwidth device_local_copy (HBM reference) and host_to_device_memcpy_ce"
    bash .peers/nvbandwidth.sh run .peers "$OUT/nvb-device-local.json" device_local_copy host_to_device_memcpy_ce 2>&1 | tee "$OUT/nvbandwidth.log" | tail -10
  else
    echo "no .peers/nvbandwidth.sh: skipped (prepare it with ../shared/tools/nvbandwidth.sh prepare .peers)"
  fi
fi
if has numbers; then
  log "numbers for the note"
  python3 - "$OUT" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
def rows(name):
    csvs = sorted(p for p in glob.glob(f"{out}/{name}/*.csv") if not p.endswith(".samples.csv"))
    if not csvs:
        print(f"{name}: no results"); return [], {}
    side = csvs[-1][:-4] + ".json"
    meta = json.load(open(side)) if os.path.exists(side) else {}
    return list(csv.DictReader(open(csvs[-1]))), meta
def title(r):
    return r["case_label"] + (f" ({r['axes']})" if r["axes"] else "")
r, meta = rows("vram-overflow")
print("device memory bandwidth per step (vram-overflow):")
for x in r:
    held = int(x["device_bytes"] or 0) / 2**30
    bw = x["bw_median_gbs"] or "-"
    print(f"  {title(x):45} {x['engine']:12} {held:8.1f} GiB on device  {bw:>10} GB/s  {x['status'][:110]}")
oom = [x for x in r if "OUT_OF_MEMORY" in x["status"]]
print("OOM rows:" if oom else "OOM rows: none")
for x in oom:
    print(f"  {title(x)}: {x['status']}")
for c in meta.get("claims", []):
    print(f"  [{c['verdict']}] {c['text']} -- {c['detail']}")
r, meta = rows("pinned-vs-vram")
print("pinned ceiling with device memory held (pinned-vs-vram):")
for x in r:
    print(f"  {title(x):45} ceiling {x['pinned_ceiling_mib'] or '-':>8} MiB  {x['status'][:60]}")
for p in meta.get("probes", []):
    if p["name"] == "pinned ceiling":
        print(f"    {p['detail']}")
for c in meta.get("claims", []):
    print(f"  [{c['verdict']}] {c['text']} -- {c['detail']}")
r, meta = rows("pinned-churn")
print("pinned churn (mismatched copies):")
for x in r:
    print(f"  {title(x):30} {x['host']:9} {x['lane']} {int(x['size_bytes'])>>20:6} MiB  copies {x['samples']:>4}  {x['bw_median_gbs'] or '-':>8} GB/s  {x['status']}")
for c in meta.get("claims", []):
    print(f"  [{c['verdict']}] {c['text']} -- {c['detail']}")
info = f"{out}/info.txt"
if os.path.exists(info):
    for l in open(info):
        if l.startswith("pinned ceiling") or l.startswith("max allocatable"):
            print("info: " + l.rstrip())
nvb = f"{out}/nvb-device-local.json"
if os.path.exists(nvb):
    try:
        for t in json.load(open(nvb))["nvbandwidth"]["testcases"]:
            print(f"nvbandwidth {t['name']}: sum {t.get('sum', 'n/a')} GB/s")
    except Exception as e:
        print(f"nvbandwidth: could not read {nvb}: {e}")
PY
fi
