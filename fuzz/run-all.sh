#!/bin/sh
# Runs fuzz targets for SECS seconds each, two at a time, nice'd; logs in fuzz/logs/.
# Usage (repository root): fuzz/run-all.sh [SECS] [TARGET...]
set -eu
SECS=${1:-600}; shift || true
TARGETS=${*:-scenario_parse results_csv size_parse sidecar_json}
B=fuzz/target/x86_64-unknown-linux-gnu/release
mkdir -p fuzz/logs
run() {
  t=$1
  mkdir -p fuzz/artifacts/$t fuzz/corpus/$t
  nice -n 19 $B/$t fuzz/corpus/$t -max_total_time=$SECS -max_len=8192 -timeout=10 \
    -print_final_stats=1 -artifact_prefix=fuzz/artifacts/$t/ > fuzz/logs/$t.log 2>&1 || true
}
set -- $TARGETS
while [ $# -gt 0 ]; do
  run $1 & p1=$!
  if [ $# -gt 1 ]; then run $2 & p2=$!; shift; else p2=; fi
  shift
  wait $p1; [ -n "$p2" ] && wait $p2 || true
done
