#!/usr/bin/env bash
# Installs what pinscope's Windows cross-check needs (.ci/run, scripts/build-dist.sh): build and
# test the crate for x86_64-pc-windows-gnu on Debian 12 (bookworm), using only Debian's apt
# repositories and crates.io (no rustup targets, no rust-lang dist server). Needs root (apt-get).
#
#   rustc-web 1.96 (bookworm-security) + its matching std source (rust-web-src)
#   -> cargo -Zbuild-std builds core/std for the windows target (RUSTC_BOOTSTRAP=1)
#   gcc-mingw-w64-x86-64 -> linker, CRT, libgcc_eh for the -gnu target
#   wine64 8.0 + xvfb    -> runs the .exe (DXGI needs an X display; Xvfb + Mesa is enough)
#   stub bcryptprimitives.dll -> Wine 8.0 lacks it; Rust std >= 1.78 imports ProcessPrng from it
#
# Usage:  bash scripts/wincross-setup.sh   # install + prepare (idempotent, ~1 min)
#         . "${WINCROSS:-${TMPDIR:-/tmp}/wincross}/env.sh"   # then, in a crate:
#         wcargo check | wcargo build [--release] | wcargo test | wcargo run | wclippy
#
# Env knobs: WINCROSS (default $TMPDIR/wincross, $TMPDIR defaulting to /tmp), WINCROSS_NO_WINE=1 (type-check/build only),
#            WINCROSS_VULKAN=1 (also install lavapipe so WINE_D3D_CONFIG=renderer=vulkan works)
set -euo pipefail
WINCROSS="${WINCROSS:-${TMPDIR:-/tmp}/wincross}"
mkdir -p "$WINCROSS"
export DEBIAN_FRONTEND=noninteractive
t() { local s=$SECONDS; "$@"; echo "[wincross] $(( SECONDS - s ))s: $*" >&2; }

# 1. packages --------------------------------------------------------------------------------
pkgs=(rustc-web cargo-web rust-web-src rust-web-clippy gcc-mingw-w64-x86-64)
if [ "${WINCROSS_NO_WINE:-0}" != 1 ]; then
  pkgs+=(wine64 xvfb xauth libgl1-mesa-dri)
  [ "${WINCROSS_VULKAN:-0}" = 1 ] && pkgs+=(libvulkan1 mesa-vulkan-drivers)
fi
t apt-get -o DPkg::Lock::Timeout=600 update -qq
t apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null

# Debian's rustc-web reports sysroot /usr and ships the source symlink
# /usr/lib/rustlib/src/rust -> /usr/src/rustc-<ver>; make sure it is there.
SRC=$(ls -d /usr/src/rustc-*/ | sort -V | tail -1)
[ -e /usr/lib/rustlib/src/rust/library/Cargo.lock ] || ln -sfn "${SRC%/}" /usr/lib/rustlib/src/rust
RUSTVER=$(/usr/bin/rustc --version | awk '{print $2}')
case "$SRC" in *"$RUSTVER"*) ;; *) echo "rustc $RUSTVER does not match $SRC" >&2; exit 1;; esac

# 2. env file --------------------------------------------------------------------------------
cat > "$WINCROSS/env.sh" <<EOF
# source me. Uses Debian's /usr/bin/{cargo,rustc} explicitly, so rustup (~/.cargo/bin) stays default.
export WINCROSS="$WINCROSS"
export RUSTC_BOOTSTRAP=1                      # -Zbuild-std on a stable compiler
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINCROSS/wine-runner.sh"
export WINEPREFIX="$WINCROSS/wineprefix" WINEDEBUG=-all
export WINEDLLOVERRIDES="winedbg.exe=d;winemenubuilder.exe=d;mscoree=d;mshtml=d"
wcargo() {  # wcargo <subcommand> [args...]  ->  Debian cargo, windows target, std built from source
  local sub="\$1"; shift
  RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO=/usr/bin/cargo \\
    CARGO_TARGET_DIR="\${CARGO_TARGET_DIR:-target}/wincross" \\
    /usr/bin/cargo "\$sub" -Zbuild-std --target x86_64-pc-windows-gnu "\$@"
}
wclippy() { # NB: 'cargo clippy' would find rustup's proxy in \$CARGO_HOME/bin first
  RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO=/usr/bin/cargo \\
    CARGO_TARGET_DIR="\${CARGO_TARGET_DIR:-target}/wincross" \\
    /usr/bin/cargo-clippy clippy -Zbuild-std --target x86_64-pc-windows-gnu "\$@"
}
EOF

[ "${WINCROSS_NO_WINE:-0}" = 1 ] && { echo "[wincross] ready (no wine): . $WINCROSS/env.sh"; exit 0; }

# 3. wine runner -----------------------------------------------------------------------------
cat > "$WINCROSS/wine-runner.sh" <<'EOF'
#!/bin/sh
# cargo runner: run a Windows .exe under Wine in a throwaway Xvfb display.
# winedbg.exe=d makes crashes / Wine "unimplemented function" aborts exit instead of hanging.
export WINEPREFIX="${WINEPREFIX:-$(dirname "$0")/wineprefix}" WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-winedbg.exe=d;winemenubuilder.exe=d}"
exec timeout -k 10 "${WINE_TIMEOUT:-600}" xvfb-run -a -s "-screen 0 1280x1024x24" /usr/lib/wine/wine64 "$@"
EOF
chmod +x "$WINCROSS/wine-runner.sh"

# 4. stub bcryptprimitives.dll (ProcessPrng -> RtlGenRandom) ---------------------------------
mkdir -p "$WINCROSS/stub"
cat > "$WINCROSS/stub/bcryptprimitives.c" <<'EOF'
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID, ULONG); /* RtlGenRandom, advapi32 */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
EOF
printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n' > "$WINCROSS/stub/bcryptprimitives.def"
x86_64-w64-mingw32-gcc -O2 -shared -o "$WINCROSS/stub/bcryptprimitives.dll" \
  "$WINCROSS/stub/bcryptprimitives.c" "$WINCROSS/stub/bcryptprimitives.def" -ladvapi32

# 5. wine prefix -----------------------------------------------------------------------------
export WINEPREFIX="$WINCROSS/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="winedbg.exe=d;winemenubuilder.exe=d;mscoree=d;mshtml=d"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  t /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 || true
  /usr/lib/wine/wineserver -w || true
fi
cp "$WINCROSS/stub/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
echo "[wincross] ready: . $WINCROSS/env.sh; then wcargo check|build|test|run, wclippy"
