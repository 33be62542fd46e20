#!/usr/bin/env bash
# The Go engine tests on arm64 (aarch64: Graviton, Grace), emulated by qemu-user on this x86-64 host.
#
#   scripts/test_arm64.sh [go test flags for the binaries, e.g. -test.run NoFMA -test.v]
#
# 1. qemu-aarch64(-static): installed with apt-get (qemu-user-static) when missing and this runs as
#    root; otherwise an error that says so. Nothing is installed when it is there.
# 2. go test -c for GOARCH=arm64, one binary per package of ./gomod/engine/... and ./gomod/codec,
#    all static, so that qemu needs no arm64 sysroot. Pure-Go packages (the engine): CGO_ENABLED=0.
#    Packages with cgo files (gomod/engine/gpu's tests link kernels/cpu, the CUDA kernels compiled
#    as C++): zig cc/c++ -target aarch64-linux-musl, linked statically (-extldflags=-static), so
#    the simulated GPU runs the real kernels/*.cu as clang compiles them for aarch64. zig is PyPI's
#    ziglang (as in scripts/build_wheels.sh), installed once into $GOPREP_ARM64_TOOLS (default
#    ~/.cache/goprep/arm64-tools). A package whose cgo needs pkg-config libraries (the
#    libjpeg/libpng codec once it lands: arm64 glibc libraries cannot link into a static musl
#    binary) is left out, saying so; the engine itself never needs it.
# 3. scripts/arm64_words.py check: every WORD of the NEON kernels (gomod/engine/*_arm64.s) is the
#    instruction its comment names (llvm-mc when installed, else zig).
# 4. each binary runs under qemu in its package directory with GODEBUG=asyncpreemptoff=1 (qemu-user
#    does not deliver Go's asynchronous preemption signals reliably: runs stalled without it).
#
# The float paths' FMA guard is tested here for real (fma_test.go): Go fuses x*y + z on arm64.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "test_arm64: $*" >&2; }

QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [[ -z "$QEMU" ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing qemu-user-static (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user-static >/dev/null; }
    QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
  else
    log "no qemu-aarch64: install qemu-user-static (apt-get install qemu-user-static) or run as root"; exit 1
  fi
fi
log "emulator: $QEMU ($("$QEMU" --version | head -1))"

ZIGLANG="ziglang==0.17.1"   # the pin of scripts/build_wheels.sh
TOOLS=${GOPREP_ARM64_TOOLS:-$HOME/.cache/goprep/arm64-tools}
zig_bin() { # the zig binary, installed into a cached venv on first use
  local tools=$TOOLS
  if [[ ! -x "$tools/venv/bin/python" ]] || ! "$tools/venv/bin/python" -c 'import ziglang' 2>/dev/null; then
    log "installing $ZIGLANG into $tools/venv (once)"
    python3 -m venv "$tools/venv" && "$tools/venv/bin/pip" install -q --disable-pip-version-check "$ZIGLANG" >&2
  fi
  "$tools/venv/bin/python" -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))'
}

bin=$(mktemp -d -t goprep-arm64-XXXXXX)
trap 'rm -rf "$bin"' EXIT
fail=0
# the NEON kernels' WORD-encoded instructions (gomod/engine/*_arm64.s) against an assembler
if command -v llvm-mc >/dev/null; then words=(python3 scripts/arm64_words.py check); else words=(env "ZIG=$(zig_bin)" python3 scripts/arm64_words.py check); fi
"${words[@]}" >&2 || { log "WORD encodings: FAILED"; fail=1; }
t0=$SECONDS
for pkg in $(GOARCH=arm64 go list ./gomod/engine/... ./gomod/codec); do
  dir=$(GOARCH=arm64 go list -f '{{.Dir}}' "$pkg")
  name=$(echo "${pkg#github.com/goprep/goprep/}" | tr / _)
  # cgo files of the package or of what its tests import (kernels/cpu for gomod/engine/gpu)
  cgo=$(GOARCH=arm64 CGO_ENABLED=1 go list -test -deps -f '{{if .CgoFiles}}{{.ImportPath}} {{join .CgoPkgConfig ","}}{{end}}' "$pkg" | grep goprep || true)
  env=(GOARCH=arm64 CGO_ENABLED=0)
  ldflags=()
  if [[ -n "$cgo" ]]; then
    if grep -q ' .' <<<"$cgo"; then
      log "$pkg: its cgo needs pkg-config libraries ($cgo): left out (no static arm64 build of them here)"; continue
    fi
    zig=$(zig_bin)
    export ZIG_GLOBAL_CACHE_DIR=${ZIG_GLOBAL_CACHE_DIR:-$HOME/.cache/goprep/zig-cache}
    # fixed paths: Go's build cache keys on CC/CXX, so the C++ kernels compile once (minutes) per tools dir
    printf '#!/bin/sh\nexec "%s" cc -target aarch64-linux-musl "$@"\n' "$zig" > "$TOOLS/aarch64-cc"
    printf '#!/bin/sh\nexec "%s" c++ -target aarch64-linux-musl "$@"\n' "$zig" > "$TOOLS/aarch64-c++"
    chmod +x "$TOOLS/aarch64-cc" "$TOOLS/aarch64-c++"
    env=(GOARCH=arm64 CGO_ENABLED=1 "CC=$TOOLS/aarch64-cc" "CXX=$TOOLS/aarch64-c++")
    ldflags=(-ldflags='-linkmode=external -extldflags=-static')
  fi
  env "${env[@]}" go test -c "${ldflags[@]}" -o "$bin/$name.test" "$pkg"
  [[ -e "$bin/$name.test" ]] || { log "$pkg: no test files"; continue; }
  t1=$SECONDS
  if (cd "$dir" && GODEBUG=asyncpreemptoff=1 "$QEMU" "$bin/$name.test" -test.count=1 -test.timeout=15m "$@"); then
    log "$pkg: ok under qemu ($((SECONDS - t1)) s)"
  else
    log "$pkg: FAILED under qemu"; fail=1
  fi
done
log "arm64 build + emulated tests: $((SECONDS - t0)) s"
exit $fail
