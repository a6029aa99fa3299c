#!/usr/bin/env bash
# Does what ran before a 4-byte pageable device→host copy move its latency? The driver-API probe
# times it before any 64 KiB pageable copy of its process; the latency scenario's `pageable` case
# after 64 KiB host→device ones. Rounds of, one process each, order rotating (host clock, 1000
# samples, key copy/pageable/d2h/4/async):
#   probe                 the driver-API probe, that copy alone
#   probe-after-h2d-64k   the probe after a 64 KiB pageable H2D latency measurement (LATENCY_FIRST)
#   probe-after-h2d-4     the probe after a 4-byte one
#   alone                 pinscope, the case alone
#   after-h2d-64k         pinscope, after a 64 KiB pageable H2D case
#   after-h2d-4           pinscope, after a 4-byte pageable H2D case
#   after-h2d-16, after-h2d-65532   pinscope, after a 16-byte H2D case (checked by the verify
#                         kernel, as 64 KiB is) or a 65532-byte one (read back whole, as 4 B is)
#   twice                 pinscope, the same case twice (the second one's row counts)
#   after-sync            pinscope, after the same copy timed as a synchronous call (no events)
#   probe-after-d2h-4-evt, probe-after-h2d-64k-evt   the probe after the same 4-byte D2H, or a
#                         64 KiB H2D, copy timed with an event-bracketed copy after each sample
#   probe-other           the probe after one 4-byte D2H copy into another pageable page (kept)
#   loop, loop-other, loop-other-freed   copy_loop alone; after one 4-byte D2H copy into another
#                         pageable buffer, kept or freed (--d2h-other, --d2h-other-freed)
#   loop-pre-A_B...       copy_loop after the steps A, B ... of pinscope's 64 KiB pageable H2D
#                         case (h2d, memset, verify, read8: copy_loop's --pre-* flags)
#   NAME-noaslr           any of these with address-space randomisation off (setarch -R)
#   loop-twice-strategy, loop-twice-case   copy_loop taking `twice` through pinscope's strategy
#                         alone, or its whole case, in one session (harness/examples/copy_loop.rs)
# Then the per-round difference to the probe (scripts/latency-rounds.py). Never changes the GPU's
# clocks, modes or settings.
#   GPU:  scripts/pageable-sequence.sh [OUT]      (carry dist; PINSCOPE=dist/pinscope, ROUNDS=6)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-pageable-sequence}}
mkdir -p "$OUT"
. scripts/gpu-common.sh
ROUNDS=${ROUNDS:-6}
KEY=copy/pageable/d2h/4/async

build_latency_driver "$OUT" || exit 1
# scenario NAME CASES...: each case "direction:size[:mode]" (mode latency by default), in order.
scenario() {
  local name=$1; shift
  {
    printf 'name = "pageable-%s"\ndescription = "small pageable copies in a set order"\n' "$name"
    printf '[defaults]\nmode = "latency"\nhost = "pageable"\nmeasure = { samples = 1000, warmup = 100, time_limit = "5s" }\nprobes = { hold_after_free = "0s" }\n'
    local i=0
    for c in "$@"; do
      IFS=: read -r dir size mode <<<"$c"
      printf '[[case]]\nlabel = "c%d-%s-%s"\ndirection = "%s"\nsize = "%s"\nmode = "%s"\n' "$i" "$dir" "$size" "$dir" "$size" "${mode:-latency}"
      i=$((i + 1))
    done
  } >"$OUT/$name.toml"
}
scenario alone d2h:4
scenario after-h2d-64k h2d:64KiB d2h:4
scenario after-h2d-4 h2d:4 d2h:4
scenario after-h2d-16 h2d:16 d2h:4
scenario after-h2d-65532 h2d:65532 d2h:4
scenario twice d2h:4 d2h:4
scenario after-sync d2h:4:latency-sync d2h:4
variant() {
  local ptx=harness/kernels/pinscope.ptx base=${1%-noaslr} ON=()
  # NAME-noaslr: the variant NAME with address-space randomisation off for its process.
  [ "$base" != "$1" ] && ON=(setarch "$(uname -m)" -R)
  case $base in
    probe) "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-after-h2d-64k) LATENCY_FIRST='copy/pageable/h2d/65536/async$' "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-after-h2d-4) LATENCY_FIRST='copy/pageable/h2d/4/async$' "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-after-d2h-4-evt) LATENCY_FIRST='copy/pageable/d2h/4/async-evt$' "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-after-h2d-64k-evt) LATENCY_FIRST='copy/pageable/h2d/65536/async-evt$' "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    probe-other) LATENCY_D2H_OTHER=1 "${ON[@]}" "$OUT/latency_driver" $ptx 1000 "$KEY\$" >"$OUT/$1-$2.txt" 2>&1 ;;
    loop) "${ON[@]}" "${COPY_LOOP:-dist/copy_loop}" pageable d2h 4 1000 >"$OUT/$1-$2.txt" 2>&1 ;;
    loop-other) "${ON[@]}" "${COPY_LOOP:-dist/copy_loop}" pageable d2h 4 1000 --d2h-other >"$OUT/$1-$2.txt" 2>&1 ;;
    loop-other-freed) "${ON[@]}" "${COPY_LOOP:-dist/copy_loop}" pageable d2h 4 1000 --d2h-other-freed >"$OUT/$1-$2.txt" 2>&1 ;;
    loop-pre-*)
      local flags=() part parts
      IFS=_ read -r -a parts <<<"${base#loop-pre-}"
      for part in "${parts[@]}"; do flags+=("--pre-$part"); done
      "${ON[@]}" "${COPY_LOOP:-dist/copy_loop}" pageable d2h 4 1000 "${flags[@]}" >"$OUT/$1-$2.txt" 2>&1 ;;
    loop-twice-*) "${ON[@]}" "${COPY_LOOP:-dist/copy_loop}" run "$OUT/twice.toml" "${base#loop-twice-}-all" >"$OUT/$1-$2.txt" 2>&1 ;;
    *) "${ON[@]}" $P run "$OUT/$base.toml" --no-report -q --out-dir "$OUT/$1-$2" >"$OUT/$1-$2.log" 2>&1 ;;
  esac || echo "$1 round $2: exit $?"
}
read -r -a names <<<"${VARIANTS:-probe probe-after-h2d-64k probe-after-h2d-4 alone after-h2d-64k after-h2d-4 twice}"
in_rounds "$ROUNDS" "${names[@]}"
log "$KEY p50 (µs) per round, and each variant minus the probe in the same round"
python3 scripts/latency-rounds.py "$OUT" "$ROUNDS" "${names[@]}" --rows "$KEY"
