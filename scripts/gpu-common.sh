# Sourced by the GPU scripts (from the repository root): the CUDA tools and the driver's
# libraries on the paths, the binary under test ($P, PINSCOPE overrides), a timestamped log line,
# and the driver-API latency probe built into an output folder.
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
P=${PINSCOPE:-dist/pinscope}
log() { echo "== $(date +%T) $*"; }

# in_rounds ROUNDS NAME...: `variant NAME ROUND` (the caller's function) for every name in every
# round, one process each, the order rotating by one per round so no variant always follows the
# same one; the per-round difference between variants is then the fair comparison.
in_rounds() {
  local rounds=$1 r i
  shift
  local names=("$@")
  for r in $(seq "$rounds"); do
    log "round $r"
    for i in $(seq 0 $(($# - 1))); do
      variant "${names[$(((i + r - 1) % $#))]}" "$r"
    done
  done
}

# build_latency_driver DIR: DIR/latency_driver from scripts/probes/latency_driver.cu (it dlopens
# NVML when asked, hence -ldl); on failure prints the build log's tail and returns 1.
build_latency_driver() {
  nvcc -O2 -o "$1/latency_driver" scripts/probes/latency_driver.cu -lcuda -ldl >"$1/driver-build.log" 2>&1 \
    && return 0
  echo "nvcc latency_driver failed:"
  tail -20 "$1/driver-build.log"
  return 1
}
