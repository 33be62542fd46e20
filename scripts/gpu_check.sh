#!/usr/bin/env bash
# GPU acceptance check for goprep's CUDA backend (issues 3 and 10).
#
#   scripts/gpu_check.sh build   here (Go + network): build the CUDA-variant wheel for the GPU machine's
#                                Python (default 3.12; PYTHON=... to change) into _build/device/, and
#                                fetch compute-sanitizer (nvidia-cuda-sanitizer-api-cu12 wheel) into
#                                _build/device/sanitizer/
#   scripts/gpu_check.sh run     on the GPU machine (Python 3.12, torch, CuPy; no Go, no network):
#                                install nothing; preflight readelf/ldd of the extension (no libpython,
#                                libcuda or NVML NEEDED; RUNPATH reported); compute-sanitizer memcheck on one
#                                small batch; then scripts/gpu_check.py (< 4 minutes in all): every op
#                                and dtype on CUDA vs the CPU engine, DLPack/CuPy handoff, device inputs
#                                from torch (CHW) and CuPy, stream= on a non-default torch stream without
#                                waiting for torch's queued work, a no-sync call sequence, 8 threads at
#                                once, injected-fault fallback, pinned H2D bandwidth (torch) and the
#                                throughput of 256 1920x1080 images -> 224x224 float32 CHW.
#                                Writes $OUT/gpu_check.json when $OUT is set. Exit 1 if any check fails.
#   scripts/gpu_check.sh simulate   here: the same script against the simulated GPU (checks the script)
#
# Device tool: run with carry=["_build/device"] (the wheel and the sanitizer; the checkout carries the
# scripts), e.g. command "OUT=$OUT bash scripts/gpu_check.sh run", timeout_s 300.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
case "${1:-}" in
  build)
    PY=${PYTHON:-}
    if [[ -z "$PY" ]]; then  # the GPU machine runs Python 3.12: the extension must match its ABI
      for c in python3.12 $(ls -d "$(pyenv root 2>/dev/null || echo /nonexistent)"/versions/3.12*/bin/python3.12 2>/dev/null); do
        if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then PY=$c; break; fi
      done
    fi
    [[ -n "$PY" ]] || { echo "gpu_check: no Python 3.12 found; set PYTHON=/path/to/python3.12" >&2; exit 1; }
    rm -rf _build/device && mkdir -p _build/device
    GOPREP_CUDA=1 GOPREP_CPUKERNEL=1 "$PY" -m pip wheel --no-deps -w _build/device .
    "$PY" -m pip download --no-deps --only-binary=:all: -d _build/device/sanitizer-whl "nvidia-cuda-sanitizer-api-cu12==12.9.79" \
      && "$PY" -m zipfile -e _build/device/sanitizer-whl/*.whl _build/device/sanitizer && rm -rf _build/device/sanitizer-whl \
      || echo "gpu_check: compute-sanitizer not fetched; the run will skip memcheck" >&2
    ls -l _build/device
    ;;
  run)
    whl=$(ls _build/device/goprep-*.whl | head -1)
    site=$(mktemp -d)
    "${PYTHON:-python3}" -m zipfile -e "$whl" "$site"
    json=${OUT:+$OUT/gpu_check.json}
    so=$(ls "$site"/goprep/_ext/_native*.so)
    echo "+ preflight: $so"
    readelf -d "$so" | grep -E "NEEDED|RUNPATH|RPATH" || true
    if readelf -d "$so" | grep -E "NEEDED.*(libpython|libcuda|libnvidia-ml)"; then
      echo "gpu_check: the extension links libpython/libcuda/NVML at load time" >&2; exit 1
    fi
    # gopy still records the build machine's libpython directory as RUNPATH; a missing directory is
    # ignored by the loader, so it is reported, not failed.
    ldd "$so" | grep -i "not found" && { echo "gpu_check: unresolved libraries" >&2; exit 1; }
    san=$(ls _build/device/sanitizer/nvidia/cuda_sanitizer_api/bin/compute-sanitizer 2>/dev/null || command -v compute-sanitizer || true)
    if [[ -n "$san" ]]; then
      echo "+ compute-sanitizer --tool memcheck (one small batch)"
      chmod +x "$san" 2>/dev/null || true
      PYTHONPATH="$site" timeout 90 "$san" --tool memcheck --error-exitcode 3 "${PYTHON:-python3}" scripts/gpu_check.py --small
    else
      echo "gpu_check: no compute-sanitizer; memcheck skipped" >&2
    fi
    PYTHONPATH="$site" timeout 200 "${PYTHON:-python3}" scripts/gpu_check.py ${json:+--json "$json"} "${@:2}"
    ;;
  simulate)
    python3 scripts/gpu_check.py --simulate --batch 4 --repeats 1 "${@:2}"
    ;;
  *)
    sed -n '2,14p' "$0"; exit 2 ;;
esac
