#!/usr/bin/env bash
# One device call that does a whole wave's GPU work within the call limit, each step packed as
# soon as it ends (so a step cut short still leaves the earlier ones). STEPS names the steps to
# run, in this order (default "bisect reference publish"):
#   placement scripts/latency-placement.sh, then latency-process.sh unpinned and with every
#             variant on one CPU (PIN_CPU, default 2)                     -> $OUT/pl.tgz
#   bisect    scripts/latency-process.sh   the small-copy bisection rounds, a D2H copy (LP_KIND,
#             default pageable) of each size in LP_BYTES (default 4)      -> $OUT/lp.tgz
#   order     scripts/latency-order.sh     the latency scenario whole, its pageable cases alone and
#             in the probe's order, beside the probe, rounds          -> $OUT/lo.tgz
#   sequence  scripts/pageable-sequence.sh what ran before a 4-byte pageable D2H copy -> $OUT/ps.tgz
#   reference scripts/gpu-reference.sh     tests, check, pinscope beside its references -> $OUT/reference.tar.gz
#   publish   scripts/publish-runs.sh      shipped scenarios for reports/h200/ -> $OUT/runs.tar.gz
# `publish` gets what is left of LIMIT seconds (default 570) and is stopped before the call's
# end; its scenarios run in SCENARIOS' order. Never changes the GPU's clocks, modes or settings.
#   GPU:  scripts/gpu-wave.sh   (carry dist and .peers; writes under $OUT)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/pinscope-wave}
mkdir -p "$OUT"
LIMIT=${LIMIT:-570}
log() { echo "== $(date +%T) +${SECONDS}s $*"; }

STEPS=${STEPS:-bisect reference publish}
step() { [[ " $STEPS " == *" $1 "* ]]; }
VARIANTS_LP=${LP_VARIANTS:-probe loop loop-upload-same loop-upload-same_gate_kernels loop-upload-first run-strategy pinscope}

if step placement; then
  log "placement: the 4-byte pageable D2H copy on each CPU"
  bash scripts/latency-placement.sh "$OUT/pl" >"$OUT/pl.log" 2>&1
  grep -A40 "per CPU" "$OUT/pl.log"
  log "placement: rounds unpinned, then every variant on CPU ${PIN_CPU:-2}"
  ROUNDS=${LP_ROUNDS:-8} VARIANTS=$VARIANTS_LP bash scripts/latency-process.sh "$OUT/pl/free" >"$OUT/pl-free.log" 2>&1
  grep -A40 "^round" "$OUT/pl-free.log"
  PIN=${PIN_CPU:-2} ROUNDS=${LP_ROUNDS:-8} VARIANTS=$VARIANTS_LP bash scripts/latency-process.sh "$OUT/pl/pinned" \
    >"$OUT/pl-pinned.log" 2>&1
  grep -A40 "^round" "$OUT/pl-pinned.log"
  for pin in "" "${PIN_CPU:-2}"; do
    log "placement: the latency check${pin:+, both tools on CPU $pin}"
    PIN=$pin LATENCY_SAMPLES=300 LATENCY_ROUNDS=${LATENCY_ROUNDS:-4} \
      bash scripts/latency-check.sh "$OUT/pl/check${pin:+-pin$pin}" >"$OUT/pl-check${pin:+-pin$pin}.log" 2>&1
    grep -E "keys|inside|pooled" "$OUT/pl-check${pin:+-pin$pin}.log" | tail -6
  done
  cp "$OUT"/pl*.log "$OUT/pl/" 2>/dev/null
  tar czf "$OUT/pl.tgz" -C "$OUT" pl && rm -rf "$OUT/pl"
fi

if step bisect; then
  for bytes in ${LP_BYTES:-4}; do
    log "latency bisection rounds, ${LP_KIND:-pageable} D2H, $bytes bytes"
    ROUNDS=${LP_ROUNDS:-6} KIND=${LP_KIND:-pageable} DIR=d2h BYTES=$bytes VARIANTS=$VARIANTS_LP \
      bash scripts/latency-process.sh "$OUT/lp/$bytes" >"$OUT/lp-$bytes.log" 2>&1
    grep -B1 -A24 "^round" "$OUT/lp-$bytes.log" | grep -v "^CPU" | awk '/^CPU of/{exit} {print}'
  done
  cp "$OUT"/lp-*.log "$OUT/lp/" 2>/dev/null
  tar czf "$OUT/lp.tgz" -C "$OUT" lp && rm -rf "$OUT/lp"
fi

if step order; then
  log "latency: what runs earlier in the process, rounds"
  ROUNDS=${LO_ROUNDS:-6} bash scripts/latency-order.sh "$OUT/lo" >"$OUT/lo.log" 2>&1
  sed -n '/per key/,$p' "$OUT/lo.log" | grep -vE "(registered|mapped|malloc)/.*-$"
  cp "$OUT/lo.log" "$OUT/lo/"
  tar czf "$OUT/lo.tgz" --exclude=latency_driver --exclude='*.samples.csv' -C "$OUT" lo && rm -rf "$OUT/lo"
fi

if step sequence; then
  log "latency: what ran before a 4-byte pageable D2H copy, rounds"
  ROUNDS=${PS_ROUNDS:-6} bash scripts/pageable-sequence.sh "$OUT/ps" >"$OUT/ps.log" 2>&1
  sed -n '/per round/,$p' "$OUT/ps.log"
  cp "$OUT/ps.log" "$OUT/ps/"
  tar czf "$OUT/ps.tgz" --exclude=latency_driver --exclude='*.samples.csv' -C "$OUT" ps && rm -rf "$OUT/ps"
fi

step reference && {
log "reference"
OUT=$OUT BUDGET=${REF_BUDGET:-170} LATENCY_SAMPLES=300 LATENCY_ROUNDS=${LATENCY_ROUNDS:-3} \
  BIDIR_ROUNDS=${BIDIR_ROUNDS:-6} bash scripts/gpu-reference.sh >"$OUT/reference-console.log" 2>&1
grep -E "^== |rc=|test result|keys|inside|median|ratio|overhead" "$OUT/reference-console.log" | tail -45
rm -rf "$OUT/work"
}

# Every shipped scenario but h200-headline (the reference step publishes it beside nvbandwidth): those whose
# numbers the wave's changes touch first, the longest last.
ORDER="latency size-curve quick ollama-like register-vs-alloc chunked-vs-monolithic comfyui-lowvram
dataloader-pin-memory host-alloc-flags multi-gpu pinned-ceiling pinned-churn pinned-vs-vram
staging-repeat staging-tune vram-overflow when-vram-runs-out zero-copy wddm-pinned-4g"
left=$((LIMIT - SECONDS))
if step publish && [ "$left" -gt 30 ]; then
  log "publishing runs, ${left}s left"
  OUT=$OUT SCENARIOS=${SCENARIOS:-$ORDER} BUDGET=$((left - 60)) timeout "$((left - 5))" bash scripts/publish-runs.sh "$OUT" \
    >"$OUT/publish-console.log" 2>&1
  echo "publish-runs exit $?"
  grep -E "^== |^-- skipped|wall [0-9]" "$OUT/publish-console.log" | tail -40
  [ -f "$OUT/runs.tar.gz" ] || tar czf "$OUT/runs.tar.gz" -C "$OUT/runs" .
  rm -rf "$OUT/runs"
fi
log done
