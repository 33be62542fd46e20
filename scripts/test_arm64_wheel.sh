#!/usr/bin/env bash
# The aarch64 wheel (scripts/build_wheels.sh --arch aarch64) imported and run on an arm64 CPython,
# emulated by qemu-user on this x86-64 host (issue 29), then a pytest subset against it.
#
#   scripts/test_arm64_wheel.sh [--no-pytest] [WHEEL]   (default: the cp311 manylinux_2_17_aarch64 wheel in dist/)
#
# 1. qemu-aarch64(-static): installed with apt-get (qemu-user-static) when missing and this runs as root.
# 2. An arm64 Debian bookworm root with python3.11, python3-numpy, python3-pytest, python3-pil (Pillow
#    9.4) and python3-opencv (OpenCV 4.6) ($ARM_PACKAGES below), cached in $GOPREP_ARM64_ROOT
#    (default ~/.cache/goprep/arm64-root; complete once it holds .goprep-complete, which records the
#    package list): debootstrap --foreign downloads the
#    packages (~216 MB from deb.debian.org, OpenCV's dependencies ~160 MB of it; debootstrap is
#    installed with apt-get when missing), and every one is unpacked with dpkg-deb, no maintainer
#    scripts (the second stage would need binfmt_misc, absent here). The two links that
#    update-alternatives would make (libblas.so.3, liblapack.so.3, needed by NumPy) are made by hand.
#    A cached root whose marker records another list (an older script's: NumPy only) is rebuilt
#    beside it and swapped in when complete; until then it stays as it was.
# 3. The wheel is unpacked (a wheel is a zip; no pip under emulation) and imported by that Python under
#    `qemu-aarch64-static -L ROOT`, with LD_BIND_NOW=1 (every symbol resolved at load) and
#    GODEBUG=asyncpreemptoff=1 (qemu-user does not deliver Go's preemption signals reliably; see
#    scripts/test_arm64.sh): goprep.info() (CUDA built, the static libjpeg-turbo/libpng), a
#    pipeline, resize/normalize/flip against NumPy references, and the codec corpus decoded
#    (gomod/codec/testdata: the SHA-256 of Pillow's output for each file, as build_wheels.sh does on x86-64).
# 4. Unless --no-pytest: the source tree's tests/ subset that .ci/run runs on CPython 3.14/3.14t
#    (scripts/test_python_subset.sh --list: numerics vs the NumPy, Pillow and OpenCV references,
#    errors and bad inputs, threads, pipelines) against the unpacked wheel, by the same emulated
#    Python with the same environment, -p no:cacheprovider. Details:
#    - goprep comes from the unpacked wheel (PYTHONPATH; a plugin asserts it before any test).
#    - sys.executable is a shell script that runs qemu again (a venv whose pyvenv.cfg points at the
#      root's python3.11): the tests' child interpreters (subprocess) cannot exec an arm64 ELF
#      without binfmt_misc.
#    - the conftest's photos (skimage.data: astronaut, chelsea, coffee, camera) come from a stand-in
#      `skimage` module holding the arrays the host's scikit-image returns (Debian's python3-skimage
#      would add SciPy, Pythran and GCC, ~200 MB): the host's python3 needs scikit-image (the test extra).
#    - a test that skips (a missing reference, a free-threading-only test) is listed as a skip (-rs).
#    Measured (2 shared x86-64 cores, qemu 7.2): 1541 tests, 1537 passed and 4 skipped (test_free_threading.py's,
#    which need a free-threaded build), 181-196 s emulated; the import check 5-10 s; the root 142 s
#    the first time (1005 MB; NumPy only: 31 s, 261 MB).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { echo "test_arm64_wheel: $*" >&2; }
die() { log "$*"; exit 1; }
t0=$SECONDS

PYTEST=1
if [[ ${1:-} == --no-pytest ]]; then PYTEST=0; shift; fi
WHEEL=${1:-}
if [[ -z "$WHEEL" ]]; then
  WHEEL=$(ls "$ROOT"/dist/goprep-*-cp311-cp311-*manylinux_2_17_aarch64*.whl 2>/dev/null | tail -1 || true)
  [[ -n "$WHEEL" ]] || die "no cp311 aarch64 wheel in dist/ (scripts/build_wheels.sh --arch aarch64 3.11)"
fi
[[ "$WHEEL" == *-cp311-cp311-* ]] || die "$WHEEL: the arm64 root's Python is Debian bookworm's 3.11: a cp311 wheel is needed"

apt_install() {
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || die "$1 is missing: apt-get install $1 (as root)"
  log "installing $1 (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$1" >/dev/null; }
}
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [[ -z "$QEMU" ]]; then apt_install qemu-user-static; QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64); fi

ARM=${GOPREP_ARM64_ROOT:-$HOME/.cache/goprep/arm64-root}
# The root's packages (their dependencies come with them); the marker records this list, so that a
# root cached by an earlier list is rebuilt. python3-opencv: ~700 MB of the ~960 MB unpacked (Qt, VTK,
# GDAL, FFmpeg come with it), for the OpenCV references of test_resize.py and test_letterbox.py.
ARM_PACKAGES=python3,python3-numpy,python3-pytest,python3-pil,python3-opencv
marker="packages: $ARM_PACKAGES"
if [[ ! -f "$ARM/.goprep-complete" || $(cat "$ARM/.goprep-complete") != "$marker" ]]; then
  command -v debootstrap >/dev/null || apt_install debootstrap
  if [[ -f "$ARM/.goprep-complete" ]]; then
    log "the arm64 root in $ARM was built for another package list (${ARM_PACKAGES} wanted): building it again"
  fi
  log "building the arm64 root in $ARM (debootstrap --foreign, then dpkg-deb -x of every package)"
  mkdir -p "$(dirname "$ARM")"
  tmp="$ARM.tmp"; rm -rf "$tmp"
  debootstrap --foreign --arch=arm64 --variant=minbase --include="$ARM_PACKAGES" \
    bookworm "$tmp" http://deb.debian.org/debian >&2 || die "debootstrap failed"
  for deb in "$tmp"/var/cache/apt/archives/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -C "$tmp" --keep-directory-symlink -xf - || die "unpacking $deb failed"
  done
  rm -f "$tmp"/var/cache/apt/archives/*.deb
  # update-alternatives' links, relative (an absolute one would resolve on the host)
  ln -sf blas/libblas.so.3 "$tmp/usr/lib/aarch64-linux-gnu/libblas.so.3"
  ln -sf lapack/liblapack.so.3 "$tmp/usr/lib/aarch64-linux-gnu/liblapack.so.3"
  echo "$marker" >"$tmp/.goprep-complete"
  # swapped in complete: the old root (if any) serves until this point
  old="$ARM.old.$$"
  if [[ -e "$ARM" ]]; then mv "$ARM" "$old"; fi
  mv "$tmp" "$ARM"
  rm -rf "$old"
  log "arm64 root ready in $((SECONDS - t0)) s ($(du -sh "$ARM" | cut -f1))"
fi
PY="$ARM/usr/bin/python3.11"
[[ -x "$PY" ]] || die "no $PY"

work=$(mktemp -d -t goprep-arm64-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 -m zipfile -e "$WHEEL" "$work/site"
log "wheel: $(basename "$WHEEL"); emulator: $("$QEMU" --version | head -1)"
t1=$SECONDS
cd "$work"
PYTHONPATH="$work/site" LD_BIND_NOW=1 GODEBUG=asyncpreemptoff=1 GOPREP_SRC="$ROOT" PYTHONNOUSERSITE=1 \
  "$QEMU" -L "$ARM" "$PY" -W error::RuntimeWarning - <<'EOF'
import os, platform, sys
import numpy as np
import goprep
assert platform.machine() == "aarch64", platform.machine()
assert goprep.__file__.startswith(os.environ["PYTHONPATH"]), goprep.__file__
i = goprep.info()
assert i["cuda_built"], i

rng = np.random.default_rng(29)
im = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
# normalize: (x/255 - mean)/std in float32, CHW
mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
got = goprep.normalize(im, mean=mean, std=std)
ref = ((im.astype(np.float32) * np.float32(1 / 255) - np.array(mean, np.float32)) / np.array(std, np.float32)).transpose(2, 0, 1)
assert got.shape == (3, 37, 53) and got.dtype == np.float32, (got.shape, got.dtype)
assert np.allclose(got, ref, atol=1e-6), np.abs(got - ref).max()
# flip: exact
assert np.array_equal(goprep.flip(im), im[:, ::-1]) and np.array_equal(goprep.flip(im, horizontal=False, vertical=True), im[::-1])
# resize: an exact 2x box downscale of a 2x-upsampled image returns it (bilinear, antialias)
small = rng.integers(0, 256, (16, 20, 3), dtype=np.uint8)
big = small.repeat(2, axis=0).repeat(2, axis=1)
down = goprep.resize(big, (16, 20))
assert down.shape == small.shape and np.abs(down.astype(int) - small).max() <= 1, np.abs(down.astype(int) - small).max()
# a compiled pipeline equals the op-by-op result
p = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (16, 20)), mean=mean, std=std))
assert np.array_equal(p(big), goprep.normalize(down, mean=mean, std=std))

# scripts/build_codecs.sh's libraries for aarch64, linked statically; the corpus vs Pillow's hashes
sys.path.insert(0, os.path.join(os.environ["GOPREP_SRC"], "scripts"))
import check_wheel_codecs
c, n = check_wheel_codecs.check(os.environ["GOPREP_SRC"])
print(f"test_arm64_wheel: aarch64 import OK with LD_BIND_NOW=1: goprep {i['version']}, SIMD {i['simd']}, "
      f"CUDA built ({i['cuda_reason'] or 'GPU usable'}); normalize/flip/resize/pipeline vs NumPy OK; "
      f"{c['jpeg']}, {c['png']}: {n} corpus decodes equal Pillow's (SHA-256)")
EOF
log "import check ok: emulated run $((SECONDS - t1)) s"
if [[ $PYTEST == 0 ]]; then log "ok (--no-pytest): $((SECONDS - t0)) s in all"; exit 0; fi

# ---- the pytest subset. Numerics vs references (NumPy float64, Pillow, OpenCV), errors and bad inputs,
# threads, pipelines: the subset .ci/run runs on CPython 3.14/3.14t (scripts/test_python_subset.sh).
mapfile -t SUBSET < <(bash "$ROOT/scripts/test_python_subset.sh" --list)  # one list for both
[[ ${#SUBSET[@]} -gt 0 ]] || die "scripts/test_python_subset.sh --list gave no test files"
# skimage.data's photos for the conftest, as the host's scikit-image returns them (no SciPy under emulation)
mkdir -p "$work/stubs/skimage"
python3 - "$work/stubs/skimage/photos.npz" <<'EOF' || die "the host's python3 needs scikit-image for the tests' photos (pip install scikit-image), or pass --no-pytest"
import sys
import numpy as np
import skimage.data
names = ("astronaut", "chelsea", "coffee", "camera")
np.savez(sys.argv[1], **{n: getattr(skimage.data, n)() for n in names})
EOF
: >"$work/stubs/skimage/__init__.py"
cat >"$work/stubs/skimage/data.py" <<'EOF'
"""A stand-in for skimage.data under emulation (scripts/test_arm64_wheel.sh): the arrays the host's
scikit-image returned for the photos tests/conftest.py uses."""
import os

import numpy as np

_arrays = np.load(os.path.join(os.path.dirname(__file__), "photos.npz"))


def astronaut(): return _arrays["astronaut"].copy()
def chelsea(): return _arrays["chelsea"].copy()
def coffee(): return _arrays["coffee"].copy()
def camera(): return _arrays["camera"].copy()
EOF
# a plugin: goprep is the wheel's, on aarch64, before any test runs; the header names the references
cat >"$work/stubs/goprep_arm64_check.py" <<'EOF'
import os
import platform


def pytest_configure(config):
    import goprep
    site = os.environ["GOPREP_ARM64_SITE"]
    assert goprep.__file__.startswith(site + os.sep), f"goprep from {goprep.__file__}, not the wheel ({site})"
    assert platform.machine() == "aarch64", platform.machine()


def pytest_report_header(config):
    import goprep, numpy, PIL
    try:
        import cv2
        cv = cv2.__version__
    except ImportError:
        cv = "absent"
    return (f"goprep {goprep.info()['version']} from {os.path.dirname(goprep.__file__)} on {platform.machine()}; "
            f"references: NumPy {numpy.__version__}, Pillow {PIL.__version__}, OpenCV {cv}")
EOF
# sys.executable: a venv's python that runs the root's python3.11 under qemu again, so that the tests'
# subprocesses (run_python, the forked bad-input cases, test_safety's children) run emulated too
mkdir -p "$work/venv/bin"
printf 'home = %s\ninclude-system-site-packages = true\nversion = 3.11\n' "$ARM/usr/bin" >"$work/venv/pyvenv.cfg"
printf '#!/bin/sh\nexec "%s" -L "%s" -0 "%s" "%s" "$@"\n' "$QEMU" "$ARM" "$work/venv/bin/python" "$PY" >"$work/venv/bin/python"
chmod +x "$work/venv/bin/python"
log "pytest under qemu: ${SUBSET[*]}"
t2=$SECONDS
tests=("${SUBSET[@]/#/$ROOT/tests/}")
rc=0
# cwd $work (python -m pytest puts the cwd on sys.path: never the source tree's python/); no .pyc
# files written into the source tree's tests/ (PYTHONDONTWRITEBYTECODE)
PYTHONPATH="$work/site:$work/stubs" GOPREP_ARM64_SITE="$work/site" LD_BIND_NOW=1 GODEBUG=asyncpreemptoff=1 \
  PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 \
  timeout 1800 "$work/venv/bin/python" -m pytest -p goprep_arm64_check -p no:cacheprovider -rfEs \
  --durations=5 "${tests[@]}" 2>&1 | tee "$work/pytest.log" || rc=$?
summary=$(grep -E '^=*.* (passed|failed|error)' "$work/pytest.log" | tail -1 | tr -d '=' | sed 's/^ *//; s/ *$//')
[[ $rc == 0 ]] || die "pytest under qemu failed (exit $rc): ${summary:-no summary}"
log "ok: pytest under qemu: $summary; emulated $((SECONDS - t2)) s; $((SECONDS - t0)) s in all"
