#!/usr/bin/env bash
# Is a slower staged ring after heavy pinning a property of the machine or of pinscope?
# Runs the 16 MiB x 3 ring (pinscope staging-repeat) and the plain C++ reference ring
# (dist/ring_variance.cu, 16 spinning threads) side by side, before and after a stress of
# repeated multi-GiB pinning with device memory held (scenarios/pinned-vs-vram.toml).
# Usage (GPU machine, carry dist/): scripts/staging-after-stress.sh [OUT]. Changes no GPU setting.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-stress}}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=dist/pinscope
nvcc -O3 -arch=sm_90 -Xcompiler -fopenmp -o /tmp/ring_variance dist/ring_variance.cu || exit 1
ring() { # label
  echo "== $1: pinscope staging-repeat"
  $P run scenarios/staging-repeat.toml --out "$OUT/$1" --no-report -q >/dev/null 2>&1
  python3 - "$OUT/$1" <<'PY'
import csv, glob, sys
f = [p for p in glob.glob(sys.argv[1] + "/*.csv") if not p.endswith(".samples.csv")][0]
rows = list(csv.DictReader(open(f)))
pin = {r["lane"]: float(r["bw_median_gbs"]) for r in rows if r["case_label"].startswith("pinned")}
for lane in ("h2d", "d2h"):
    v = [float(r["bw_median_gbs"]) for r in rows if r["lane"] == lane and r["case_label"] == "ring"]
    print(f"  {lane}: ring {min(v):.2f}-{max(v):.2f} GB/s, pinned {pin[lane]:.2f}, ratio {min(v)/pin[lane]:.3f}-{max(v)/pin[lane]:.3f}")
PY
  echo "== $1: C++ reference ring, 16 threads, fresh ring and destination per row (best of 3)"
  ONLY_D=1 OMP_WAIT_POLICY=ACTIVE /tmp/ring_variance 3 16 | tail -3
}
ring before
echo "== stress: pinned-vs-vram (16 GiB pinned in 256 MiB chunks, 4 times, up to 90% of device memory held)"
$P run scenarios/pinned-vs-vram.toml --out "$OUT/stress" --no-report -q >/dev/null 2>&1; echo "  rc=$?"
ring after
