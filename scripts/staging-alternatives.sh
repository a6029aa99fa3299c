#!/usr/bin/env bash
# The staged ring's CPU side, measured every way it can be built, side by side with the plain
# C++ reference ring (shared/probes/ring_variance.cu, copied into dist/ by the caller), in one call
# on the GPU machine. Needs dist/pinscope, dist/crew-bench (cargo bench --bench crew --no-run) and
# optionally dist/ring_variance.cu. Usage: scripts/staging-alternatives.sh [OUT]
# Never changes the GPU's clocks, modes or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-staging}}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=dist/pinscope
log() { echo "== $*"; }

log machine
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpus: $(nproc)"

if [[ -f dist/ring_variance.cu ]] && command -v nvcc >/dev/null; then
  log "C++ reference ring, 16 threads spinning (OMP_WAIT_POLICY=ACTIVE), fresh ring each row"
  nvcc -O3 -arch=sm_90 -Xcompiler -fopenmp -o /tmp/ring_variance dist/ring_variance.cu \
    && ONLY_D=1 OMP_WAIT_POLICY=ACTIVE /tmp/ring_variance 4 "$(nproc)" 2>&1 | tee "$OUT/cxx-ring.log"
fi

# One summary line per case: label, lane, median GB/s and its ratio to the pinned 4 GiB copy.
summary() {
  python3 - "$1" <<'PY'
import csv, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.csv")):
    if f.endswith(".samples.csv"): continue
    rows = list(csv.DictReader(open(f)))
    pinned = {r["lane"]: float(r["bw_median_gbs"]) for r in rows if r["case_label"].startswith("pinned") and r["bw_median_gbs"]}
    for r in rows:
        bw = float(r["bw_median_gbs"] or 0)
        ref = pinned.get(r["lane"])
        ratio = f"{bw/ref:.3f}" if ref and not r["case_label"].startswith("pinned") else ""
        print(f"  {r['case_label'][:22]:22} {r['lane']:4} t={r['threads']:>3} {bw:6.2f} GB/s  min {float(r['bw_min_gbs'] or 0):6.2f}  vs pinned {ratio:6} {r['status'][:30]}")
PY
}

run_variant() { # name, then env assignments
  local name=$1; shift
  log "staging-repeat: $name"
  env "$@" $P run scenarios/staging-repeat.toml --out "$OUT/$name" --no-report -q >"$OUT/$name.log" 2>&1 || tail -5 "$OUT/$name.log"
  summary "$OUT/$name"
}
for v in ${VARIANTS:-crew crew-block rayon scoped crew-nospin}; do
  case $v in
    crew) run_variant crew PINSCOPE_STAGING_COPIER=crew ;;
    crew-block) run_variant crew-block PINSCOPE_STAGING_COPIER=crew PINSCOPE_EVENT_WAIT=block ;;
    crew-nospin) run_variant crew-nospin PINSCOPE_STAGING_COPIER=crew PINSCOPE_CREW_SPIN_US=0 ;;
    rayon) run_variant rayon PINSCOPE_STAGING_COPIER=rayon ;;
    scoped) run_variant scoped PINSCOPE_STAGING_COPIER=scoped ;;
  esac
done

if [[ -x dist/crew-bench ]]; then
  log "per-chunk hand-off cost (criterion)"
  dist/crew-bench --bench --warm-up-time 1 --measurement-time 2 --noplot 2>&1 | grep -E "staging|time:|thrpt:" | tee "$OUT/crew-bench.log"
fi
for s in ${SCENARIOS:-}; do
  log "scenario $s"
  /usr/bin/time -f "wall %e s" $P run "scenarios/$s.toml" --out "$OUT/$s" 2>&1 | tee "$OUT/$s.log" | tail -25
done
log "wall time against measured time"
python3 scripts/overhead.py $(ls "$OUT"/*/*.csv | grep -v samples.csv)
