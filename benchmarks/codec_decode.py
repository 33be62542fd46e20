"""Decode time of gomod/codec (through the binding's DecodeInto) vs Pillow and OpenCV.

    PYTHONPATH=python python benchmarks/codec_decode.py

A 1920x1080 q90 4:2:0 JPEG of a real photograph (skimage's coffee, resized with Lanczos) at scales
1/2/4, and a 640x480 RGB PNG of the same photo; the median of 30 runs, one thread each.
docs/perf/2026-12-03-codec.md has the results."""

import io
import statistics
import time

import cv2
import numpy as np
import skimage.data
from PIL import Image

from goprep import _native

cv2.setNumThreads(1)
mod = _native.get()


def med(fn, n=30):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def ours(b, h, w, ch=3, scale=1):
    src = np.frombuffer(b, np.uint8)
    oh, ow = -(-h // scale), -(-w // scale)
    out = np.empty((oh, ow, ch), np.uint8)

    def run():
        mod.DecodeInto(src.ctypes.data, len(b), 0, scale, 0, 0, 0, 0, 0, 0, out.ctypes.data, out.nbytes, ow * ch)
        return out
    return run


def pil(b, scale=1):
    def run():
        im = Image.open(io.BytesIO(b))
        if scale > 1:
            im.draft("RGB", (im.width // scale, im.height // scale))
        return np.asarray(im.convert("RGB"))
    return run


def cv(b, scale=1):
    flag = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4}[scale]
    src = np.frombuffer(b, np.uint8)
    return lambda: cv2.imdecode(src, flag | cv2.IMREAD_IGNORE_ORIENTATION)


def main():
    photo = Image.fromarray(skimage.data.coffee()).resize((1920, 1080), Image.LANCZOS)
    bio = io.BytesIO()
    photo.save(bio, "JPEG", quality=90)
    b = bio.getvalue()
    print(f"JPEG 1920x1080 q90 4:2:0, {len(b) / 1024:.0f} KB (median ms of 30)")
    print("| scale | goprep codec | Pillow | cv2.imdecode |")
    print("|---|---|---|---|")
    for s in (1, 2, 4):
        assert np.array_equal(ours(b, 1080, 1920, scale=s)(), pil(b, s)())
        print(f"| 1/{s} | {med(ours(b, 1080, 1920, scale=s)):.2f} | {med(pil(b, s)):.2f} | {med(cv(b, s)):.2f} |")
    bio = io.BytesIO()
    photo.resize((640, 480), Image.LANCZOS).save(bio, "PNG")
    p = bio.getvalue()
    assert np.array_equal(ours(p, 480, 640)(), pil(p)())
    src = np.frombuffer(p, np.uint8)
    print(f"\nPNG 640x480 RGB, {len(p) / 1024:.0f} KB (median ms of 30)")
    print("| goprep codec | Pillow | cv2.imdecode |")
    print("|---|---|---|")
    print(f"| {med(ours(p, 480, 640)):.2f} | {med(pil(p)):.2f} | {med(lambda: cv2.imdecode(src, cv2.IMREAD_COLOR)):.2f} |")


if __name__ == "__main__":
    main()
