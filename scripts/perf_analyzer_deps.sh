#!/usr/bin/env bash
# What Triton's perf_analyzer (in the tritonclient wheel) needs beyond pip, for
# tests/test_serve_perf_analyzer.py and docs/SERVING.md "perf_analyzer":
#
#   export LD_LIBRARY_PATH=$(scripts/perf_analyzer_deps.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
#
# - libb64.so.0d: Debian's libb64-0d, installed with apt-get when missing (root, or sudo);
# - libcudart.so.12: from PyPI's nvidia-cuda-runtime-cu12 (the test extra installs it); its
#   directory is printed on stdout (PYTHON, default python: the interpreter goprep is installed in).
# Progress goes to stderr. Exits non-zero when either cannot be had. With --system: only the system
# package (what .ci/run needs before the README's install; the test finds libcudart itself).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python}

if ! ldconfig -p 2>/dev/null | grep -q 'libb64\.so\.0d'; then
    echo "perf_analyzer_deps: installing libb64-0d" >&2
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get install -y libb64-0d >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y libb64-0d >&2; }
fi
[[ ${1:-} == --system ]] && exit 0

PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m goprep._serve.perfanalyzer libdir
