"""``python -m goprep demo``: a real preprocessing run, checked against NumPy, with throughput."""

from __future__ import annotations

import argparse
import time
from typing import List, Optional

import numpy as np

import goprep

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


@goprep.pipeline
def imagenet(img: np.ndarray) -> np.ndarray:
    """The classic ImageNet input: bilinear 224x224, mirrored, normalised, CHW float32."""
    img = goprep.resize(img, (224, 224))
    img = goprep.flip(img, horizontal=True)
    return goprep.normalize(img, mean=MEAN, std=STD, scale=1 / 255, dtype="float32", layout="CHW")


def synthetic_photos(n: int, h: int, w: int, seed: int = 0) -> np.ndarray:
    """Smooth gradients, discs and sensor-like noise: photo-like content without any download."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    out = np.empty((n, h, w, 3), np.uint8)
    for i in range(n):
        img = np.zeros((h, w, 3), np.float32)
        for c in range(3):
            a, b = rng.uniform(-1, 1, 2)
            img[..., c] = 128 + 60 * np.sin(a * xx / 37 + b * yy / 53 + c)
        for _ in range(6):
            cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(10, min(h, w) / 3)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = rng.uniform(0, 255, 3)
        img += rng.normal(0, 4, img.shape)
        out[i] = np.clip(img, 0, 255).astype(np.uint8)
    return out


def numpy_reference(batch: np.ndarray) -> np.ndarray:
    """Plain NumPy: half-pixel bilinear (float64, rounded to uint8), mirror, normalise, transpose."""
    n, h, w, _ = batch.shape

    def axis(inp: int, out: int):
        s = np.maximum((np.arange(out) + 0.5) * inp / out - 0.5, 0)
        i0 = np.minimum(np.floor(s).astype(int), inp - 1)
        return i0, np.minimum(i0 + 1, inp - 1), s - i0

    y0, y1, fy = axis(h, 224)
    x0, x1, fx = axis(w, 224)
    b = batch.astype(np.float64)
    top = b[:, y0][:, :, x0] * (1 - fx)[:, None] + b[:, y0][:, :, x1] * fx[:, None]
    bot = b[:, y1][:, :, x0] * (1 - fx)[:, None] + b[:, y1][:, :, x1] * fx[:, None]
    res = np.rint(top * (1 - fy)[:, None, None] + bot * fy[:, None, None]).astype(np.uint8)
    res = res[:, :, ::-1].astype(np.float32) * np.float32(1 / 255)
    res = (res - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return res.transpose(0, 3, 1, 2)


def _throughput(batch: np.ndarray, out: np.ndarray, seconds: float = 1.0) -> float:
    imagenet(batch, out=out)
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        imagenet(batch, out=out)
        done += len(batch)
    return done / (time.perf_counter() - t0)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m goprep demo", description=__doc__)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--width", type=int, default=640)
    args = ap.parse_args(argv)

    batch = synthetic_photos(args.batch, args.height, args.width)
    out = imagenet(batch)
    ref = numpy_reference(batch)
    step = 1 / 255 / min(STD)  # one uint8 level after normalisation
    diff = np.abs(out - ref)
    exact = float(np.mean(diff < 1e-6))
    ok = out.shape == ref.shape and float(diff.max()) <= step * 1.01
    print(f"goprep {goprep.__version__}: {args.batch} images {args.height}x{args.width} uint8 RGB "
          f"-> resize 224x224 -> flip -> normalize -> {out.shape} {out.dtype}")
    print(f"check vs NumPy: max |diff| = {diff.max():.5f} (one uint8 level = {step:.5f}), "
          f"{exact:.2%} of values identical -> {'OK' if ok else 'MISMATCH'}")
    info = goprep.info()
    threads = info["threads"]
    all_t = _throughput(batch, out)
    goprep.set_num_threads(1)
    one_t = _throughput(batch, out)
    goprep.set_num_threads(threads)
    print(f"throughput: {all_t:,.0f} images/s on {threads} threads, {one_t:,.0f} images/s on 1 thread "
          f"(backend {info['backend']}; CUDA: {info['cuda_reason']})")
    return 0 if ok else 1
