#!/usr/bin/env bash
# Every GPU at once, side by side with nvbandwidth, in one call on a multi-GPU machine:
#   here:  cargo build --release && cp target/release/pinscope dist/
#          bash ../shared/tools/nvbandwidth.sh prepare .peers      (carry dist and .peers)
#   there: scripts/multi-gpu-check.sh [OUT]
# Prints the topology, nvbandwidth's all-GPU tests, pinscope's multi-gpu scenario (per-GPU and
# summed rows) and packs pinscope's result files into OUT/multi.tar.gz. Changes no GPU setting.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-/tmp/pinscope-multi}}
mkdir -p "$OUT/runs/logs"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=dist/pinscope
{
  echo "== topology"
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
  nvidia-smi topo -m
  lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA)"
  for d in /sys/bus/pci/devices/*; do
    [[ -f $d/vendor && $(cat $d/vendor) == 0x10de && $(cat $d/class) == 0x03* ]] && echo "$(basename $d) numa_node=$(cat $d/numa_node)"
  done
} 2>&1 | tee "$OUT/runs/logs/topology.log"
if [[ -f .peers/nvbandwidth.sh ]]; then
  echo "== nvbandwidth (all GPUs at once)"
  bash .peers/nvbandwidth.sh run .peers "$OUT/runs/nvbandwidth-all.json" \
    host_to_all_memcpy_ce all_to_host_memcpy_ce host_to_all_bidirectional_memcpy_ce \
    host_to_all_memcpy_sm all_to_host_memcpy_sm host_to_device_memcpy_ce device_to_host_memcpy_ce 2>&1 | tee "$OUT/runs/logs/nvbandwidth.log"
fi
for s in ${SCENARIOS:-multi-gpu}; do
  echo "== pinscope $s"
  $P run "scenarios/$s.toml" --out "$OUT/runs" --no-report ${RUN_ARGS:-} 2>&1 \
    | sed "s#$OUT/runs#\$OUT/$s#g" | tee "$OUT/runs/logs/$s.log" | grep -vE "^\s*$" | tail -${TAIL:-60}
done
tar czf "$OUT/multi.tar.gz" -C "$OUT/runs" .
ls -la "$OUT/multi.tar.gz"
