#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs on a GPU machine that has no Rust toolchain:
# dist/pinscope (release binary) and dist/gpu-tests (the ignored GPU tests, release build).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked
exe=$(cargo test --release --locked --test gpu --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="gpu": print(m["executable"])' | tail -1)
# The fault-injection tests need the feature; a separate target dir keeps the normal binary clean.
faults=$(CARGO_TARGET_DIR=target/faults cargo test --release --locked --features fault-injection --test gpu_faults --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="gpu_faults": print(m["executable"])' | tail -1)
mkdir -p dist
cp target/release/pinscope dist/pinscope
cp "$exe" dist/gpu-tests
cp "$faults" dist/gpu-fault-tests
# Symbols stripped: the device tool carries at most 64 MiB.
strip dist/pinscope dist/gpu-tests dist/gpu-fault-tests
ls -la dist
