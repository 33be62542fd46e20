#!/usr/bin/env bash
# The test subset CI runs on each extra CPython (issue 29), from that version's wheel in dist/.
#
#   scripts/test_python_subset.sh 3.14     (3.X or 3.Xt; the wheel: scripts/build_wheels.sh 3.14)
#   scripts/test_python_subset.sh --list   (the subset's files, one per line, relative to tests/:
#                                           scripts/test_arm64_wheel.sh runs the same subset)
#
# The interpreter is the one scripts/build_wheels.sh --find picks (pyenv, scripts/get_python.sh's
# cache, PATH: inside scripts/debian_python.sh's root, Debian's). In a fresh venv of it: the wheel,
# pytest, hypothesis, Pillow and scikit-image, binary wheels only (a dependency with no wheel for this
# interpreter fails the run rather than compiling), OpenCV when it has a wheel for it; then the
# numerics vs references, errors and bad inputs, threads, pipelines and free-threading files, with
# PYTHON_GIL=0 on a free-threaded build (test_free_threading.py checks the import in a child without
# it: PYTHON_GIL=0 would hide a module that does not declare itself GIL-free).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# The subset: numerics vs references, errors and bad inputs, threads, pipelines, free threading.
files=(test_resize.py test_normalize.py test_flip.py test_crop.py test_color.py test_letterbox.py
       test_errors.py test_bad_inputs.py test_threads.py test_pipeline.py test_safety.py
       test_unmap_boxes.py test_free_threading.py test_data_loader.py)
if [[ "${1:-}" == --list ]]; then printf '%s\n' "${files[@]}"; exit 0; fi
v=${1:-}
[[ "$v" =~ ^3\.[0-9]+t?$ ]] || { echo "usage: $0 3.X|3.Xt" >&2; exit 1; }
series=${v%t}
py=$(bash scripts/build_wheels.sh --find "$v")
cp=cp${series/./}
abi=$cp; [[ $v == *t ]] && abi=${cp}t
wheel=$(ls dist/goprep-*-"$cp"-"$abi"-*manylinux_2_17_x86_64*.whl)
subset=("${files[@]/#/tests/}")

venv=$(mktemp -d -t goprep-subset-XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$py" -m venv "$venv"
export PATH="$venv/bin:$PATH"
pip install -q --disable-pip-version-check --only-binary=:all: "$wheel" pytest hypothesis pillow scikit-image
run=("${subset[@]}")
if ! pip install -q --disable-pip-version-check --only-binary=:all: opencv-python-headless; then
  echo "  CPython $v: no opencv-python-headless wheel for this interpreter (abi3 wheels only, which a"
  echo "  free-threaded build cannot load): test_resize.py and test_letterbox.py (OpenCV references) left out"
  run=()
  for f in "${subset[@]}"; do [[ $f == */test_resize.py || $f == */test_letterbox.py ]] || run+=("$f"); done
fi
gil=()  # PYTHON_GIL=0 only where it exists: a GIL build refuses it (a fatal error at start-up)
[[ $v == *t ]] && gil=(env PYTHON_GIL=0)
echo "  CPython $v ($(python -VV | head -1)): ${#run[@]} test files, wheel $(basename "$wheel")"
# goprep from the venv's wheel, not from python/ (the check below fails otherwise)
python -c 'import goprep, sys; assert goprep.__file__.startswith(sys.prefix), goprep.__file__'
"${gil[@]}" python -m pytest -q -p no:cacheprovider "${run[@]}"
