#!/usr/bin/env bash
# The aarch64 wheel (scripts/build_wheels.sh --arch aarch64) imported and run on an arm64 CPython,
# emulated by qemu-user on this x86-64 host (issue 29).
#
#   scripts/test_arm64_wheel.sh [WHEEL]   (default: the cp311 manylinux_2_17_aarch64 wheel in dist/)
#
# 1. qemu-aarch64(-static): installed with apt-get (qemu-user-static) when missing and this runs as root.
# 2. An arm64 Debian bookworm root with python3.11 and python3-numpy, cached in $GOPREP_ARM64_ROOT
#    (default ~/.cache/goprep/arm64-root; complete once it holds .goprep-complete): debootstrap
#    --foreign downloads the packages (~45 MB from deb.debian.org; debootstrap is installed with
#    apt-get when missing), and every one is unpacked with dpkg-deb, no maintainer scripts (the
#    second stage would need binfmt_misc, absent here). The two links that update-alternatives would
#    make (libblas.so.3, liblapack.so.3, needed by NumPy) are made by hand.
# 3. The wheel is unpacked (a wheel is a zip; no pip under emulation) and imported by that Python under
#    `qemu-aarch64-static -L ROOT`, with LD_BIND_NOW=1 (every symbol resolved at load) and
#    GODEBUG=asyncpreemptoff=1 (qemu-user does not deliver Go's preemption signals reliably; see
#    scripts/test_arm64.sh): goprep.info() (CUDA built, the static libjpeg-turbo/libpng), a
#    pipeline, resize/normalize/flip against NumPy references, and the codec corpus decoded
#    (gomod/codec/testdata: the SHA-256 of Pillow's output for each file, as build_wheels.sh does on x86-64).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { echo "test_arm64_wheel: $*" >&2; }
die() { log "$*"; exit 1; }
t0=$SECONDS

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
if [[ ! -f "$ARM/.goprep-complete" ]]; then
  command -v debootstrap >/dev/null || apt_install debootstrap
  log "building the arm64 root in $ARM (debootstrap --foreign, then dpkg-deb -x of every package)"
  rm -rf "$ARM"; mkdir -p "$(dirname "$ARM")"
  tmp="$ARM.tmp"; rm -rf "$tmp"
  debootstrap --foreign --arch=arm64 --variant=minbase --include=python3,python3-numpy \
    bookworm "$tmp" http://deb.debian.org/debian >&2 || die "debootstrap failed"
  for deb in "$tmp"/var/cache/apt/archives/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -C "$tmp" --keep-directory-symlink -xf - || die "unpacking $deb failed"
  done
  rm -f "$tmp"/var/cache/apt/archives/*.deb
  # update-alternatives' links, relative (an absolute one would resolve on the host)
  ln -sf blas/libblas.so.3 "$tmp/usr/lib/aarch64-linux-gnu/libblas.so.3"
  ln -sf lapack/liblapack.so.3 "$tmp/usr/lib/aarch64-linux-gnu/liblapack.so.3"
  mv "$tmp" "$ARM"
  touch "$ARM/.goprep-complete"
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
log "ok: emulated run $((SECONDS - t1)) s, $((SECONDS - t0)) s in all"
