#!/usr/bin/env bash
# Regenerate every committed generated file, and (with --check) verify none is stale:
#   kernels/ptx/*      from kernels/*.cu by NVRTC 12.0 (python scripts/build_ptx.py; needs
#                      pip install nvidia-cuda-nvrtc-cu12==12.0.140 to regenerate, nothing to check)
#   gomod/cuda/shim_*  from the pinned cuda.h and go-nvml's nvml.h (scripts/gen_shim.sh)
#   gomod/binding/version.go  from python/goprep/__init__.py's __version__ (scripts/gen_version.py)
# The extension itself (gopy's output) is never committed: setup.py generates it at every build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ "${1:-}" == --check ]]; then
  python scripts/build_ptx.py --check
  bash scripts/gen_shim.sh --check
  python scripts/gen_version.py --check
else
  python scripts/build_ptx.py
  bash scripts/gen_shim.sh
  python scripts/gen_version.py
fi
