#!/usr/bin/env bash
# Regenerate every committed generated file, and (with --check) verify none is stale:
#   kernels/ptx/*      from kernels/*.cu by NVRTC 12.0 (python scripts/build_ptx.py; needs
#                      pip install nvidia-cuda-nvrtc-cu12==12.0.140 to regenerate, nothing to check)
#   gomod/cuda/shim_*  from the pinned cuda.h and go-nvml's nvml.h (scripts/gen_shim.sh)
#   gomod/binding/version.go  from python/goprep/__init__.py's __version__ (scripts/gen_version.py)
#   gomod/engine/gpu_abi.go  the Go mirror of kernels/goprep.h (descriptor ABI), by cgo -godefs from
#                      gomod/engine/gpu_abi_defs.go (needs Go and a C compiler, both always present)
# The extension itself (gopy's output) is never committed: setup.py generates it at every build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
gen_abi() { # stdout: gpu_abi.go as cgo -godefs derives it (its _obj scratch directory removed)
  (cd gomod/engine && go tool cgo -godefs -- -I ../../kernels gpu_abi_defs.go && rm -rf _obj _cgo_*.o) | gofmt
}
if [[ "${1:-}" == --check ]]; then
  python scripts/build_ptx.py --check
  bash scripts/gen_shim.sh --check
  if ! diff -u gomod/engine/gpu_abi.go <(gen_abi); then
    echo "gomod/engine/gpu_abi.go is stale: run scripts/generate.sh" >&2
    exit 1
  fi
  python scripts/gen_version.py --check
else
  python scripts/build_ptx.py
  bash scripts/gen_shim.sh
  python scripts/gen_version.py
  gen_abi > gomod/engine/gpu_abi.go.tmp && mv gomod/engine/gpu_abi.go.tmp gomod/engine/gpu_abi.go
fi
