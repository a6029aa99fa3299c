#!/bin/sh
# Fills fuzz/corpus/<target>/ with seeds from the repository: shipped scenarios, test scenarios,
# recorded runs and the malformed-file corpus. Run from the repository root.
set -eu
C=fuzz/corpus
mkdir -p $C/scenario_parse $C/size_parse $C/results_csv $C/sidecar_json
cp harness/scenarios/*.toml harness/tests/fixtures/scenarios/*.toml harness/tests/fixtures/malformed/*.toml \
   $C/scenario_parse/
cp harness/tests/fixtures/runs/*.csv harness/tests/fixtures/malformed/*.csv $C/results_csv/
cp harness/tests/fixtures/runs/*.json harness/tests/fixtures/malformed/*.json $C/sidecar_json/
i=0
for s in 64MiB 1.5GB 4096 0.5KiB " 16 MiB " 1e30GiB -1MiB 99999999999999999999GiB 1.0000001KB \
         100ms 2s 1.5 10m 500us 1min 3µs 1e300; do
  i=$((i + 1)); printf '%s' "$s" > $C/size_parse/seed$i
done
