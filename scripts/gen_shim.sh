#!/usr/bin/env bash
# Regenerate the lazy-loading CUDA/NVML shims of gomod/cuda (see tools/genshim).
#
#   scripts/gen_shim.sh                 regenerate gomod/cuda/shim*.{c,h}
#   scripts/gen_shim.sh --check         regenerate into a temp dir, diff against the
#                                       committed files; exit 1 if they differ
#   scripts/gen_shim.sh --print-cflags  install-or-find the pinned CUDA headers and
#                                       print the -I flags for cuda.h and nvml.h (CGO_CFLAGS)
#
# Headers:
#   cuda.h  from the PyPI wheel nvidia-cuda-runtime-cu12==$CUDA_HEADERS_VERSION
#           (CUDA 12 headers: gorgonia.org/cu v0.9.6 does not build against CUDA 13's
#           cuCtxCreate). Looked up, in order: $GOPREP_CUDA_INCLUDE (must hold the
#           pinned version), an installed nvidia-cuda-runtime-cu12 of the pinned
#           version in the current python, $GOPREP_CUDA_HEADERS_DIR (default
#           _build/cuda-headers) and, failing all, `pip install --no-deps --target`
#           into that directory.
#   nvml.h  from the github.com/NVIDIA/go-nvml module required by go.mod
#           (go list -m), i.e. the header go-nvml itself compiles against.
#
# Building the extension with the cuda tag then needs (see gomod/cuda/driver.go):
#   CGO_CFLAGS="-O2 -g $(scripts/gen_shim.sh --print-cflags)"
#   CGO_LDFLAGS="-O2 -g -Wl,--as-needed"      (recommended, see driver.go)
#   go build -tags cuda ...
set -euo pipefail

CUDA_HEADERS_PKG=nvidia-cuda-runtime-cu12
CUDA_HEADERS_VERSION=12.9.79
NVML_MODULE=github.com/NVIDIA/go-nvml

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}

mode=generate
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  --print-cflags) mode=print ;;
  -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--check|--print-cflags]" >&2; exit 2 ;;
esac

log() { echo "gen_shim: $*" >&2; }

cuda_version_of() { # dir -> CUDA_VERSION from cuda.h
  sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$1/cuda.h" 2>/dev/null | head -1
}
# 12.9.79 -> 12090
WANT_CUDA_VERSION=$(echo "$CUDA_HEADERS_VERSION" | awk -F. '{printf "%d%03d", $1, $2*10}')

find_cuda_include() {
  local dir
  if [[ -n "${GOPREP_CUDA_INCLUDE:-}" ]]; then
    if [[ "$(cuda_version_of "$GOPREP_CUDA_INCLUDE")" != "$WANT_CUDA_VERSION" ]]; then
      log "GOPREP_CUDA_INCLUDE=$GOPREP_CUDA_INCLUDE has no cuda.h with CUDA_VERSION $WANT_CUDA_VERSION"
      return 1
    fi
    CUDA_FROM="\$GOPREP_CUDA_INCLUDE"
    CUDA_INCLUDE=$GOPREP_CUDA_INCLUDE; return 0
  fi
  # An installed wheel of the pinned version in the current python.
  dir=$("$PYTHON" - "$CUDA_HEADERS_PKG" "$CUDA_HEADERS_VERSION" <<'EOF' 2>/dev/null || true
import sys, os
from importlib import metadata
pkg, want = sys.argv[1], sys.argv[2]
try:
    if metadata.version(pkg) != want:
        sys.exit(0)
    import nvidia.cuda_runtime as m
    for p in list(getattr(m, "__path__", [])):
        inc = os.path.join(p, "include")
        if os.path.isfile(os.path.join(inc, "cuda.h")):
            print(inc); break
except Exception:
    pass
EOF
)
  if [[ -n "$dir" ]]; then
    CUDA_FROM="installed python package $CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION"
    CUDA_INCLUDE=$dir; return 0
  fi
  local target=${GOPREP_CUDA_HEADERS_DIR:-$ROOT/_build/cuda-headers}
  local stamp="$target/.installed-$CUDA_HEADERS_PKG-$CUDA_HEADERS_VERSION"
  dir="$target/nvidia/cuda_runtime/include"
  if [[ ! -f "$stamp" || "$(cuda_version_of "$dir")" != "$WANT_CUDA_VERSION" ]]; then
    log "installing $CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION (headers only needed) into $target"
    rm -rf "$target"
    mkdir -p "$target"
    if ! PIP_ROOT_USER_ACTION=ignore "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --target "$target" "$CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION" >&2; then
      log "cannot get cuda.h: \`pip install $CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION\` failed (see pip's message above;" \
        "offline? set GOPREP_CUDA_INCLUDE to a directory with the CUDA $CUDA_HEADERS_VERSION cuda.h)"
      return 1
    fi
    [[ "$(cuda_version_of "$dir")" == "$WANT_CUDA_VERSION" ]] || { log "no cuda.h in $dir after install"; return 1; }
    touch "$stamp"
  fi
  CUDA_FROM="pip wheel $CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION in ${target#$ROOT/}"
  CUDA_INCLUDE=$dir
}

CUDA_FROM=""
CUDA_INCLUDE=""
find_cuda_include || exit 1
command -v go >/dev/null || { log "cannot get nvml.h: no go on PATH (it comes from the $NVML_MODULE module)"; exit 1; }
NVML_VERSION=$(go list -m -f '{{.Version}}' "$NVML_MODULE") || { log "cannot get nvml.h: go list -m $NVML_MODULE failed"; exit 1; }
NVML_DIR=$(go list -m -f '{{.Dir}}' "$NVML_MODULE")
if [[ -z "$NVML_DIR" ]]; then
  go mod download "$NVML_MODULE" || { log "cannot get nvml.h: go mod download $NVML_MODULE@$NVML_VERSION failed (GOPROXY=${GOPROXY:-default})"; exit 1; }
  NVML_DIR=$(go list -m -f '{{.Dir}}' "$NVML_MODULE")
fi
NVML_HEADER="$NVML_DIR/pkg/nvml/nvml.h"
if [[ "$mode" == print ]]; then
  log "cuda.h: $CUDA_INCLUDE/cuda.h  [from $CUDA_FROM]; nvml.h: $NVML_HEADER"
  echo "-I$CUDA_INCLUDE -I$NVML_DIR/pkg/nvml"
  exit 0
fi

log "cuda.h: $CUDA_INCLUDE/cuda.h  [from $CUDA_FROM]"
log "nvml.h: $NVML_HEADER  [from $NVML_MODULE@$NVML_VERSION]"

gen() { # outdir
  go run ./tools/genshim \
    -cuda-include "$CUDA_INCLUDE" -cuda-source "$CUDA_HEADERS_PKG==$CUDA_HEADERS_VERSION" \
    -nvml-header "$NVML_HEADER" -nvml-source "$NVML_MODULE@$NVML_VERSION" \
    -out "$1"
}

FILES=(shim.h shim_cuda.c shim_nvml.c)
if [[ "$mode" == check ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gen "$tmp" 2>/dev/null
  rc=0
  for f in "${FILES[@]}"; do
    if ! diff -q "$tmp/$f" "gomod/cuda/$f" >/dev/null 2>&1; then
      log "STALE: gomod/cuda/$f differs from a fresh generation"
      diff -u "gomod/cuda/$f" "$tmp/$f" | head -40 >&2 || true
      rc=1
    fi
  done
  [[ $rc == 0 ]] && log "shims are up to date"
  exit $rc
fi
gen gomod/cuda
log "wrote gomod/cuda/{$(IFS=,; echo "${FILES[*]}")}"
