#!/usr/bin/env bash
# Fleet-scale timings of the release binary on SYNTHETIC inputs replicated from real published
# runs (scripts/fleet-inputs.py): report over 1 M rows, over 100 k rows with their real samples
# files, compare of 2 x 100 k matched cases and of 10 runs x 1 k cases, plan of a 100 k-case
# staged sweep, and a fleet of 1 000 node folders with one GPU planted slow (the page must name it
# first). Each command runs REPEAT times under /usr/bin/time -v; the table gives the median wall
# time, the median peak RSS and the output's size. No GPU is needed.
#
# Usage: scripts/fleet-timings.sh [DATA_DIR] [REPEAT]
#   DATA_DIR  where the inputs are made (about 9 GB; default target/fleet-synthetic; its path
#             must contain "synthetic"); inputs already there are reused.
#   REPEAT    runs per command (default 3).
#   PINSCOPE  the binary (default: target/release/pinscope, built with cargo build --release).
#   ONLY      a space-separated subset of: report1m report1m_split report100k report100k_rows
#             compare100k compare10 plan plan_table fleet
# Output: one line per measurement on stdout, the logs under DATA_DIR/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-target/fleet-synthetic}
repeat=${2:-3}
only=${ONLY:-report1m report1m_split report100k report100k_rows compare100k compare10 plan plan_table fleet}
case "$data" in *synthetic*) ;; *) echo "DATA_DIR must contain 'synthetic'" >&2; exit 2 ;; esac
if [ -z "${PINSCOPE:-}" ]; then
  cargo build --release --quiet
  PINSCOPE=target/release/pinscope
fi
# The published run, whichever it is (re-publishing changes its name).
A=$(ls reports/h200/*-h200-headline-vm.csv | head -1)
B=reports/h200-x2/20261130-082702-h200-headline-vm.csv
gen="python3 scripts/fleet-inputs.py"
mkdir -p "$data/logs" "$data/out"

# Inputs (made once).
make_input() { # name, test file, command...
  local name=$1 probe=$2; shift 2
  if [ ! -e "$probe" ]; then
    echo "making $name" >&2
    "$@"
  fi
}
wants() { [[ " $only " == *" $1 "* ]]; }
wants report1m && make_input a1m_csv "$data/a1m_csv.csv" $gen big "$A" "$data/a1m_csv.csv" 1000000 --samples none
# The same 1 M rows as 4 files of 250 k rows.
if wants report1m_split; then
  for q in 0 1 2 3; do
    make_input "a250k_$q" "$data/a1m_split/a250k_$q.csv" $gen big "$A" "$data/a1m_split/a250k_$q.csv" 250000 --samples none
  done
fi
if wants report100k || wants compare100k; then
  make_input a100k "$data/a100k.csv" $gen big "$A" "$data/a100k.csv" 100000
fi
wants report100k_rows && make_input a100k_csv "$data/a100k_csv.csv" $gen big "$A" "$data/a100k_csv.csv" 100000 --samples none
wants compare100k && make_input b100k "$data/b100k.csv" $gen big "$B" "$data/b100k.csv" 100000
wants compare10 && make_input cmp10 "$data/cmp10/run9.csv" $gen runs "$A" "$B" "$data/cmp10" 10 1000
if wants plan || wants plan_table; then
  make_input sweep100k "$data/sweep100k.toml" $gen sweep "$data/sweep100k.toml"
fi
# Node 0421 of 1000 gets 0.8 x the bandwidth of every case and a failed check.
wants fleet && make_input fleet1000 "$data/fleet1000/fleet-0999/steps.json" $gen fleet "$A" "$data/fleet1000" 1000 421 0.8

# One measurement: name, output file (or -), command...; prints name, median wall s, median
# peak RSS MiB, output bytes, and every run's wall time.
measure() {
  local name=$1 out=$2; shift 2
  local walls=() rsss=()
  for i in $(seq 1 "$repeat"); do
    local log="$data/logs/$name.$i.time"
    /usr/bin/time -v "$@" >"$data/logs/$name.$i.stdout" 2>"$log" || {
      echo "$name: exit $? (see $log)" >&2
      tail -5 "$log" >&2
      return 1
    }
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (j = 1; j <= n; j++) s = s * 60 + p[j]; print s}' "$log")")
    rsss+=("$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$log")")
  done
  local size=-
  if [ "$out" = - ]; then size=$(stat -c %s "$data/logs/$name.$repeat.stdout"); elif [ -f "$out" ]; then size=$(stat -c %s "$out"); fi
  printf '%-16s median %8s s  peak RSS %6s MiB  output %10s B  (runs: %s; load %s)\n' "$name" \
    "$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')" \
    "$(printf '%s\n' "${rsss[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')" \
    "$size" "${walls[*]}" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

P=$PINSCOPE
wants report1m && measure report1m "$data/out/a1m.html" "$P" report "$data/a1m_csv.csv" -o "$data/out/a1m.html" --force -q
wants report1m_split && measure report1m_split "$data/out/a1m_split.html" "$P" report "$data/a1m_split" -o "$data/out/a1m_split.html" --force -q
wants report100k && measure report100k "$data/out/a100k.html" "$P" report "$data/a100k.csv" -o "$data/out/a100k.html" --force -q
wants report100k_rows && measure report100k_rows "$data/out/a100k_csv.html" "$P" report "$data/a100k_csv.csv" -o "$data/out/a100k_csv.html" --force -q
wants compare100k && measure compare100k - "$P" compare "$data/a100k.csv" "$data/b100k.csv" -q
wants compare10 && measure compare10 - "$P" compare "$data"/cmp10/run{0,1,2,3,4,5,6,7,8,9}.csv -q
wants plan && measure plan - "$P" plan -q "$data/sweep100k.toml" --device-free 140GiB
wants plan_table && measure plan_table - "$P" plan "$data/sweep100k.toml" --device-free 140GiB
if wants fleet; then
  measure fleet "$data/out/fleet.html" "$P" report "$data/fleet1000" -o "$data/out/fleet.html" --force -q
  # The planted GPU must be the first one the fleet section names.
  first=$(sed -n '/<section id="fleet">/,/<\/section>/p' "$data/out/fleet.html" | grep -m1 -o 'fleet-[0-9]\{4\}' || true)
  if [ "$first" = fleet-0421 ]; then
    echo "fleet: the planted slow GPU (fleet-0421) is named first"
  else
    echo "fleet: FAILED: the first machine named is '$first', not fleet-0421" >&2
    exit 1
  fi
fi
