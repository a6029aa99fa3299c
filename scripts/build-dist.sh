#!/usr/bin/env bash
# Builds pinscope for shipping. Two uses:
#
#   scripts/build-dist.sh [gpu]   what scripts/publish.sh runs on a GPU machine that has no Rust
#                                 toolchain: dist/pinscope (release binary), dist/gpu-tests (the
#                                 ignored GPU tests, release build) and dist/gpu-fault-tests (the
#                                 same test binary built with the feature fault-injection; its
#                                 fault tests are the ones under `faults::`).
#   scripts/build-dist.sh release the release archives, in dist/release/:
#       pinscope-<version>-x86_64-unknown-linux-gnu.tar.gz   (pinscope, README, licenses, completions, man pages)
#       pinscope-<version>-x86_64-pc-windows-gnu.zip         (pinscope.exe, README, licenses, PowerShell completion)
#       SHA256SUMS                                           (check with `sha256sum -c SHA256SUMS`)
#     The Linux binary is linked against glibc 2.28 (`cargo zigbuild`, with cargo-zigbuild and
#     Zig from PyPI installed at pinned versions under the target folder), so it starts on
#     RHEL/Rocky 8+, Ubuntu 20.04+ and Debian 10+; `glibc_floor` below checks that.
#     The Windows exe is cross-built with the tools of scripts/wincross-setup.sh (installed here if
#     missing; apt-get, as root) and run under Wine before it is packed (`--version`, `plan` of a
#     shipped scenario); its unit and integration tests run under Wine in .ci/run.
#     Everything is built and checked in a new folder first: dist/release is replaced only when
#     the new archives are complete, so a failed build leaves the previous archives in place.
#
#   scripts/build-dist.sh floor FILE   exits 1 when FILE needs a glibc newer than 2.28.
#
# Cargo's target folder is the one `cargo metadata` names (CARGO_TARGET_DIR, a config's
# build.target-dir, or target/).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-gpu}

# The oldest glibc the Linux archive supports, and the tools that link against it (PyPI wheels:
# cargo-zigbuild's carries its binary, ziglang carries Zig).
GLIBC_FLOOR=2.28
ZIGBUILD_VERSION=0.24.0
ZIGLANG_VERSION=0.17.0

target_dir() {  # Cargo's target folder, wherever configured
  cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}
TARGET=$(target_dir)
export CARGO_TARGET_DIR=$TARGET

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
  # The same test binary with the feature carries the fault-injection tests too (its module
  # `faults`); built in a separate target dir so the shipped binary and the GPU tests keep a
  # library without the fault hooks.
  faults=$(CARGO_TARGET_DIR=$TARGET/faults binary_of gpu --features fault-injection)
  mkdir -p dist
  cp "$TARGET/release/pinscope" dist/pinscope
  cp "$exe" dist/gpu-tests
  cp "$faults" dist/gpu-fault-tests
  # Symbols stripped: the device tool carries at most 64 MiB.
  strip dist/pinscope dist/gpu-tests dist/gpu-fault-tests
  ls -la dist
}

# zig_tools: cargo-zigbuild and Zig at their pinned versions, in $TARGET/dist-tools (installed
# once; a later run finds them there). Sets PATH and PYTHONPATH for `cargo zigbuild`.
zig_tools() {
  local dir=$TARGET/dist-tools/zig-$ZIGBUILD_VERSION-$ZIGLANG_VERSION
  if [ ! -x "$dir/bin/cargo-zigbuild" ] || [ ! -d "$dir/ziglang" ]; then
    echo "installing cargo-zigbuild $ZIGBUILD_VERSION and ziglang $ZIGLANG_VERSION (PyPI) into $dir"
    rm -rf "$dir.part"
    if ! python3 -m pip install --disable-pip-version-check --no-warn-script-location -q --root-user-action=ignore \
        --target "$dir.part" "cargo-zigbuild==$ZIGBUILD_VERSION" "ziglang==$ZIGLANG_VERSION"; then
      echo "error: could not install cargo-zigbuild $ZIGBUILD_VERSION and ziglang $ZIGLANG_VERSION from PyPI into $dir: the Linux archive needs them to link against glibc $GLIBC_FLOOR; connect to PyPI (or copy that folder from a machine that has it) and run this script again" >&2
      rm -rf "$dir.part"
      return 1
    fi
    rm -rf "$dir" && mv "$dir.part" "$dir"
  fi
  export PATH="$dir/bin:$PATH" PYTHONPATH="$dir${PYTHONPATH:+:$PYTHONPATH}"
}

# glibc_floor FILE: FILE needs no glibc symbol version newer than GLIBC_FLOOR (objdump -T).
glibc_floor() {
  local file=$1 newest
  newest=$(objdump -T "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
  if [ -n "$newest" ] && [ "$(printf '%s\n' "GLIBC_$GLIBC_FLOOR" "$newest" | sort -V | tail -1)" != "GLIBC_$GLIBC_FLOOR" ]; then
    local sym
    sym=$(objdump -T "$file" | grep -F "($newest)" | awk '{print $NF}' | head -1)
    echo "error: $file needs $newest (symbol $sym), newer than the glibc $GLIBC_FLOOR the Linux archive promises: build it with \`cargo zigbuild --target x86_64-unknown-linux-gnu.$GLIBC_FLOOR\` (scripts/build-dist.sh release)" >&2
    return 1
  fi
  echo "$file: newest glibc symbol version ${newest:-none}, not newer than GLIBC_$GLIBC_FLOOR"
}

release() {
  local version linux windows exe
  version=$(cargo pkgid -p pinscope | sed 's/.*[#@]//')
  mkdir -p dist
  # Globals removed on exit (a RETURN trap would fire when env.sh below is sourced). The archives
  # go into `new`, beside dist/release, renamed over it at the end: never an empty or half folder.
  new=$(mktemp -d dist/.release.XXXXXX)
  chmod 755 "$new"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage" "$new"' EXIT

  linux=pinscope-$version-x86_64-unknown-linux-gnu
  zig_tools
  cargo zigbuild --release --locked --target "x86_64-unknown-linux-gnu.$GLIBC_FLOOR"
  mkdir -p "$stage/$linux"
  cp "$TARGET/x86_64-unknown-linux-gnu/release/pinscope" "$stage/$linux/"
  common_files "$stage/$linux"
  strip "$stage/$linux/pinscope"
  glibc_floor "$stage/$linux/pinscope"
  extras "$stage/$linux/pinscope" "$stage/$linux"
  tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$new/$linux.tar.gz" "$linux"

  windows=pinscope-$version-x86_64-pc-windows-gnu
  [ -f "${WINCROSS:-${TMPDIR:-/tmp}/wincross}/env.sh" ] || bash scripts/wincross-setup.sh
  # shellcheck disable=SC1091
  . "${WINCROSS:-${TMPDIR:-/tmp}/wincross}/env.sh"
  wcargo build --release --locked
  exe=$TARGET/wincross/x86_64-pc-windows-gnu/release/pinscope.exe
  mkdir -p "$stage/$windows"
  cp "$exe" "$stage/$linux/completions/pinscope.powershell" "$stage/$windows/"
  common_files "$stage/$windows"
  x86_64-w64-mingw32-strip "$stage/$windows/pinscope.exe"
  "$CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER" "$stage/$windows/pinscope.exe" --version
  "$CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER" "$stage/$windows/pinscope.exe" plan -q ollama-like
  zip_folder "$stage" "$windows" "$new/$windows.zip"

  (cd "$new" && sha256sum -- *.tar.gz *.zip > SHA256SUMS && cat SHA256SUMS)
  verify "$new"
  rm -rf dist/release.old
  if [ -e dist/release ]; then mv dist/release dist/release.old; fi
  mv "$new" dist/release && rm -rf dist/release.old
  echo "wrote dist/release"
}

# common_files DIR: what both archives carry besides the binary: the archive README and the
# license texts.
common_files() {
  cp packaging/README.md "$1/README.md"
  cp LICENSE-MIT LICENSE-APACHE "$1/"
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

# verify DIR: the archives in DIR as a user gets them: checksums hold, both carry the README and
# the license texts, the unpacked Linux binary keeps to the glibc floor and answers from `/` with
# a shipped scenario (the Windows exe was run under Wine before packing).
verify() {
  local out=$1 unpack dir f
  unpack=$(mktemp -d)
  (cd "$out" && sha256sum -c --quiet SHA256SUMS)
  tar -C "$unpack" -xzf "$out"/pinscope-*-x86_64-unknown-linux-gnu.tar.gz
  python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
missing = {"pinscope.exe", "README.md", "LICENSE-MIT", "LICENSE-APACHE"} - {n.split("/", 1)[-1] for n in z.namelist()}
if bad is not None or missing:
    sys.exit(f"error: {sys.argv[1]}: damaged entry {bad}, or missing {sorted(missing)}")' \
    "$(ls "$out"/pinscope-*-x86_64-pc-windows-gnu.zip)"
  dir=$(echo "$unpack"/pinscope-*)
  for f in README.md LICENSE-MIT LICENSE-APACHE man/man1/pinscope.1 man/man1/pinscope-run.1; do
    [ -f "$dir/$f" ] || { echo "error: the Linux archive has no $f" >&2; return 1; }
  done
  glibc_floor "$dir/pinscope"
  (cd / && "$dir/pinscope" plan -q ollama-like)
  rm -rf "$unpack"
  echo "release archives verified"
}

# Shell completions and the man pages (one per command), written by the binary itself.
extras() {
  local bin=$1 dir=$2 shell
  mkdir -p "$dir/completions"
  for shell in bash zsh fish powershell elvish; do
    "$bin" completions "$shell" >"$dir/completions/pinscope.$shell"
  done
  "$bin" man --out-dir "$dir/man/man1"
}

case "$what" in
  gpu) gpu ;;
  release) release ;;
  floor) glibc_floor "${2:?usage: scripts/build-dist.sh floor FILE}" ;;
  *) echo "usage: scripts/build-dist.sh [gpu|release|floor FILE]" >&2; exit 2 ;;
esac
