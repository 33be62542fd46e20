#!/usr/bin/env bash
# GPU acceptance check for goprep's CUDA backend (issue 3).
#
#   scripts/gpu_check.sh build   here (Go + network): build the CUDA-variant wheel for the GPU machine's
#                                Python (default 3.12; PYTHON=... to change) into _build/device/
#   scripts/gpu_check.sh run     on the GPU machine (no Go, no network): install nothing, put the wheel's
#                                contents on PYTHONPATH and run scripts/gpu_check.py (< 5 minutes):
#                                every op and dtype on CUDA vs the CPU engine, DLPack/CuPy handoff,
#                                8 threads at once, injected-fault fallback, throughput of a batch of
#                                256 1920x1080 images -> 224x224 float32 CHW. Writes $OUT/gpu_check.json
#                                when $OUT is set. Exit 1 if any check fails.
#   scripts/gpu_check.sh simulate   here: the same script against the simulated GPU (checks the script)
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
    GOPREP_CUDA=1 "$PY" -m pip wheel --no-deps -w _build/device .
    ls -l _build/device
    ;;
  run)
    whl=$(ls _build/device/goprep-*.whl | head -1)
    site=$(mktemp -d)
    "${PYTHON:-python3}" -m zipfile -e "$whl" "$site"
    json=${OUT:+$OUT/gpu_check.json}
    PYTHONPATH="$site" timeout 290 "${PYTHON:-python3}" scripts/gpu_check.py ${json:+--json "$json"} "${@:2}"
    ;;
  simulate)
    python3 scripts/gpu_check.py --simulate --batch 4 --repeats 1 "${@:2}"
    ;;
  *)
    sed -n '2,14p' "$0"; exit 2 ;;
esac
