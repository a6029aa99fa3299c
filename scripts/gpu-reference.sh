#!/usr/bin/env bash
# Every GPU check of a wave in ONE device call: pinscope's GPU tests and `check`, then pinscope
# measured side by side with its references, interleaved in the same call: nvbandwidth v0.8
# (copy engine one-way and bidirectional, device-local copy, host-device latency), the C++
# latency probe, the device-copy probe, and nvbandwidth's bidirectional tests alternated with
# pinscope's (scripts/bidir-check.sh). Never changes the GPU's clocks, modes or settings.
#
#   here:  scripts/build-dist.sh && bash ../shared/tools/nvbandwidth.sh prepare .peers
#   GPU:   scripts/gpu-reference.sh          (carry dist and .peers; writes under $OUT; BUDGET=210 s,
#          LATENCY_SAMPLES=300 and LATENCY_ROUNDS=2 for the latency check, BIDIR_ROUNDS=5)
# Everything it wrote is packed into $OUT/reference.tar.gz (the device tool returns few files).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/pinscope-reference}
W=$OUT/work; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=dist/pinscope
log() { echo "== $(date +%T) +${SECONDS}s $*"; }
# The whole call has a time budget (device time is scarce): a step starts only while time is left.
BUDGET=${BUDGET:-210}
left() { [ "$SECONDS" -lt "$BUDGET" ] || { echo "-- skipped (budget of ${BUDGET}s spent): $*"; return 1; }; }
NVB_TESTS="host_to_device_memcpy_ce device_to_host_memcpy_ce host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce device_local_copy host_device_latency_sm"

log machine
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total --format=csv,noheader | tee "$W/nvidia-smi.txt"

# The references build in the background while the correctness checks run (they are not timed).
(
  nvcc -O3 -arch=sm_90 -o /tmp/device_copy scripts/probes/device_copy.cu >"$W/nvcc-device_copy.log" 2>&1 \
    || echo "nvcc device_copy FAILED" >>"$W/nvcc-device_copy.log"
  [ -d .peers ] && bash .peers/nvbandwidth.sh run .peers "$W/nvb-build.json" host_to_device_memcpy_ce >"$W/nvb-build.log" 2>&1
) &
builds=$!

log "ptxas on the shipped PTX"
k=kernels/pinscope.ptx; [ -f "$k" ] || k=$(ls harness/kernels/*.ptx 2>/dev/null | head -1)
for arch in sm_90 sm_52; do ptxas -arch=$arch "$k" -o /tmp/k.cubin 2>&1 | tail -2; echo "ptxas $arch rc=$?"; done

log "GPU tests"
timeout 100 dist/gpu-tests --ignored --test-threads=1 2>&1 | tee "$W/gpu-tests.log" | grep -E "^test |test result" | tail -40

log "pinscope check"
s=$SECONDS; timeout 60 $P check >"$W/check.txt" 2>&1; echo "check rc=$? in $((SECONDS-s)) s"; cat "$W/check.txt"
s=$SECONDS; timeout 60 $P check --min-h2d 70 >"$W/check-70.txt" 2>&1; echo "check --min-h2d 70 rc=$? in $((SECONDS-s)) s (expected 1)"; tail -5 "$W/check-70.txt"
timeout 60 $P check --format json >"$W/check.json" 2>/dev/null || timeout 60 $P check --json >"$W/check.json" 2>/dev/null

wait $builds
cat "$W"/nvcc-*.log 2>/dev/null | grep -i -E "error|FAILED" | head

nvb() {
  [ -x /tmp/nvbandwidth-build/nvbandwidth ] || { echo "nvbandwidth not built"; tail -5 "$W/nvb-build.log"; return; }
  log "nvbandwidth round $1"
  # shellcheck disable=SC2086
  bash .peers/nvbandwidth.sh run .peers "$W/nvbandwidth-$1.json" $NVB_TESTS 2>&1 | tee "$W/nvbandwidth-$1.txt"
}
run_scenario() {
  local name=$1; shift
  local f=scenarios/$name.toml; [ -f "$f" ] || f=harness/scenarios/$name.toml
  [ -f "$f" ] || { echo "no scenario $name"; return; }
  log "pinscope $name"
  s=$SECONDS
  timeout "${LIMIT:-90}" $P run "$f" --out-dir "$W/$name" "$@" >"$W/$name.log" 2>&1 \
    || timeout "${LIMIT:-90}" $P run "$f" --out "$W/$name" "$@" >"$W/$name.log" 2>&1
  echo "rc=$? in $((SECONDS-s)) s"; sed -n '/^#/,/^$/p' "$W/$name.log" | head -60
}

left nvbandwidth && nvb 1
left h200-headline && run_scenario h200-headline
python3 - "$W"/h200-headline/*.csv <<'PY' 2>/dev/null
import csv, sys
for f in sys.argv[1:]:
    if f.endswith(".samples.csv"): continue
    for r in csv.DictReader(open(f)):
        print(f"  {r['case_label'][:22]:22} {r['lane']:4} {r['bw_median_gbs'][:6]:>7} GB/s  host phase: CUDA used {r.get('d_host_cuda_used_mib','-')[:7]:>7} MiB, ledger {r.get('d_host_ledger_pinned_mib','-')[:7]:>7} MiB; host+device: CUDA used {r.get('d_alloc_cuda_used_mib','-')[:7]:>7} MiB  {r['verified']} {r['status'][:30]}")
PY
left "nvbandwidth round 2" && nvb 2
left latency && log "latency: pinscope's latency scenario beside the C++ probe" && LATENCY_SAMPLES=${LATENCY_SAMPLES:-300} PINSCOPE=$P bash scripts/latency-check.sh "$W/latency-check" 2>&1 | tee "$W/latency-check.log" | tail -80
[ -x /tmp/device_copy ] && left device-copy && { log "device-copy probe"; /tmp/device_copy 2>&1 | tee "$W/device_copy.txt"; }
left "nvbandwidth round 3" && nvb 3
left "bidirectional rounds" && { log "bidirectional: nvbandwidth and pinscope alternated"; ROUNDS=${BIDIR_ROUNDS:-5} PINSCOPE=$P bash scripts/bidir-check.sh "$W/bidir" 2>&1 | tee "$W/bidir-check.log" | tail -30; }

log "done; packing"
tar czf "$OUT/reference.tar.gz" -C "$OUT" work
cp "$W"/check.txt "$OUT"/ 2>/dev/null
ls -la "$OUT"
