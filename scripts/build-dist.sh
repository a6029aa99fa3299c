#!/usr/bin/env bash
# Builds pinscope for shipping. Two uses:
#
#   scripts/build-dist.sh [gpu]   what scripts/publish.sh runs on a GPU machine that has no Rust
#                                 toolchain: dist/pinscope (release binary), dist/gpu-tests and
#                                 dist/gpu-fault-tests (the ignored GPU tests, release build).
#   scripts/build-dist.sh release the release archives, in dist/release/:
#       pinscope-<version>-x86_64-unknown-linux-gnu.tar.gz   (pinscope, README.md, completions, man page)
#       pinscope-<version>-x86_64-pc-windows-gnu.zip         (pinscope.exe, README.md, PowerShell completion)
#       SHA256SUMS                                           (check with `sha256sum -c SHA256SUMS`)
#     The Windows exe is cross-built with the tools of scripts/wincross-setup.sh (installed here if
#     missing; apt-get, as root) and run under Wine before it is packed (`--version`, `plan` of a
#     shipped scenario); its unit and integration tests run under Wine in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-gpu}

binary_of() {  # binary_of TEST [cargo args...]: path of the test binary cargo builds
  local name=$1; shift
  cargo test --release --locked "$@" --test "$name" --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
name=sys.argv[1]
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]==name: print(m["executable"])' "$name" | tail -1
}

gpu() {
  cargo build --release --locked
  local exe faults
  exe=$(binary_of gpu)
  # The fault-injection tests need the feature; a separate target dir keeps the normal binary clean.
  faults=$(CARGO_TARGET_DIR=target/faults binary_of gpu_faults --features fault-injection)
  mkdir -p dist
  cp target/release/pinscope dist/pinscope
  cp "$exe" dist/gpu-tests
  cp "$faults" dist/gpu-fault-tests
  # Symbols stripped: the device tool carries at most 64 MiB.
  strip dist/pinscope dist/gpu-tests dist/gpu-fault-tests
  ls -la dist
}

release() {
  local version out linux windows exe
  version=$(cargo pkgid -p pinscope | sed 's/.*[#@]//')
  out=dist/release
  rm -rf "$out" && mkdir -p "$out"
  # A global removed on exit (a RETURN trap would fire when env.sh below is sourced).
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT

  linux=pinscope-$version-x86_64-unknown-linux-gnu
  cargo build --release --locked
  mkdir -p "$stage/$linux"
  cp target/release/pinscope README.md "$stage/$linux/"
  strip "$stage/$linux/pinscope"
  extras "$stage/$linux/pinscope" "$stage/$linux"
  tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out/$linux.tar.gz" "$linux"

  windows=pinscope-$version-x86_64-pc-windows-gnu
  [ -f "${WINCROSS:-${TMPDIR:-/tmp}/wincross}/env.sh" ] || bash scripts/wincross-setup.sh
  # shellcheck disable=SC1091
  . "${WINCROSS:-${TMPDIR:-/tmp}/wincross}/env.sh"
  wcargo build --release --locked
  exe=target/wincross/x86_64-pc-windows-gnu/release/pinscope.exe
  mkdir -p "$stage/$windows"
  cp "$exe" README.md "$stage/$linux/completions/pinscope.powershell" "$stage/$windows/"
  x86_64-w64-mingw32-strip "$stage/$windows/pinscope.exe"
  "$CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER" "$stage/$windows/pinscope.exe" --version
  "$CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER" "$stage/$windows/pinscope.exe" plan -q ollama-like
  zip_folder "$stage" "$windows" "$out/$windows.zip"

  (cd "$out" && sha256sum -- *.tar.gz *.zip > SHA256SUMS && cat SHA256SUMS)
}

# zip_folder BASE NAME ZIP: BASE/NAME packed as ZIP, entries sorted, with a fixed time and mode so
# the same files give the same archive (Python's zipfile: no `zip` program needed).
zip_folder() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys, zipfile
base, name, dest = sys.argv[1:4]
with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(os.path.join(base, name)):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            info = zipfile.ZipInfo(os.path.relpath(path, base), (1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if os.access(path, os.X_OK) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as fh:
                z.writestr(info, fh.read())
PY
}

# The archives as a user gets them: checksums hold, and the unpacked Linux binary answers from `/`
# with a shipped scenario (the Windows exe was run under Wine before packing).
verify() {
  local out=dist/release unpack
  unpack=$(mktemp -d)
  (cd "$out" && sha256sum -c --quiet SHA256SUMS)
  tar -C "$unpack" -xzf "$out"/pinscope-*-x86_64-unknown-linux-gnu.tar.gz
  python3 -c 'import sys, zipfile; bad = zipfile.ZipFile(sys.argv[1]).testzip(); sys.exit(bad is not None)' \
    "$(ls "$out"/pinscope-*-x86_64-pc-windows-gnu.zip)"
  (cd / && "$unpack"/pinscope-*/pinscope plan -q ollama-like)
  rm -rf "$unpack"
  echo "release archives verified"
}

# Shell completions and the man page, written by the binary itself.
extras() {
  local bin=$1 dir=$2
  mkdir -p "$dir/completions"
  for shell in bash zsh fish powershell elvish; do
    "$bin" completions "$shell" >"$dir/completions/pinscope.$shell"
  done
  "$bin" man >"$dir/pinscope.1"
}

case "$what" in
  gpu) gpu ;;
  release)
    release
    verify
    ;;
  *) echo "usage: scripts/build-dist.sh [gpu|release]" >&2; exit 2 ;;
esac
