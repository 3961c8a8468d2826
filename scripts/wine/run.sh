#!/usr/bin/env bash
# Runs a Windows build of azd-wasm-host under Wine, for tests only.
#
#   scripts/wine/run.sh target/release-dist/windows-amd64/azd-wasm-host.exe ARGS...
#
# Wine 8.0 (Debian 12's wine64) lacks ProcessPrng in bcryptprimitives.dll, which Rust's std
# calls for random numbers (real Windows 10 and 11 have it). This script builds the test-only
# stand-in (processprng-shim.c, with mingw) and runs a copy of the binary from a folder that holds
# the stand-in, with WINEDLLOVERRIDES making Wine load it. Nothing of it is shipped. The copy
# stays in WINE_RUN_DIR (default .tools/wine/run), so `run` can start the same binary as `listen`.
# Installs wine64 and gcc-mingw-w64-x86-64 with apt-get the first time (as root).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
[[ $# -ge 1 ]] || { echo "usage: scripts/wine/run.sh AZD-WASM-HOST.EXE [ARGS...]" >&2; exit 2; }
exe=$1
shift
for pkg in wine64 gcc-mingw-w64-x86-64; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    [[ $(id -u) == 0 ]] || { echo "wine/run: needs the Debian package $pkg" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
  fi
done
dir="${WINE_RUN_DIR:-$ROOT/.tools/wine/run}"
mkdir -p "$dir"
shim="$dir/bcryptprimitives.dll"
if [[ ! -f "$shim" || "$ROOT/scripts/wine/processprng-shim.c" -nt "$shim" ]]; then
  x86_64-w64-mingw32-gcc -O2 -shared -o "$shim" "$ROOT/scripts/wine/processprng-shim.c" -ladvapi32
fi
# WINE_RUN_DIR may be the folder the binary is installed in (a sidecar beside its package).
[[ "$exe" -ef "$dir/azd-wasm-host.exe" ]] || cp "$exe" "$dir/azd-wasm-host.exe"
export WINEPREFIX="${WINEPREFIX:-$ROOT/.tools/wine/prefix}" WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="bcryptprimitives=n,b"
# A new prefix is made once, before the binary starts: Wine's first boot takes many seconds,
# which a sidecar's start must not wait for (azd gives it little time to be Ready).
if [[ ! -d $WINEPREFIX ]]; then
  mkdir -p "$(dirname -- "$WINEPREFIX")"
  /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 || true
  /usr/lib/wine/wineserver -w 2>/dev/null || true
fi
exec /usr/lib/wine/wine64 "$dir/azd-wasm-host.exe" "$@"
