"""`python -m goprep demo`: a real preprocessing run, checked against NumPy, with throughput."""

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
    """The same job in plain NumPy: OpenCV's fixed-point bilinear (11-bit weights, the arithmetic
    goprep's uint8 resize reproduces), a mirrored view, ``(x * scale - mean) / std`` in float32,
    CHW. It should match goprep to the bit (the benchmark's NumPy row, shared with it)."""
    from ._benchsuite.impls_peers import numpy_task

    return numpy_task(batch)


def cuda_line(info: dict) -> str:
    """What the demo says about the GPU: plain words for the common cases, the reason otherwise."""
    if info["cuda_available"]:
        names = ", ".join(d.get("name", "?") for d in info["devices"])
        return f"CUDA: {names} (large calls run there; device='cpu' keeps them on the CPU)"
    reason = info["cuda_reason"] or ""
    if not info["cuda_built"]:
        return ("CUDA: this build is CPU-only (built without the CUDA headers, or with GOPREP_CUDA=0); "
                "using the CPU engine")
    if "libcuda" in reason:
        return "CUDA: no NVIDIA driver found; using the CPU engine"
    return f"CUDA: not usable ({reason}); using the CPU engine"


def _throughput(batch: np.ndarray, out: np.ndarray, seconds: float = 1.0) -> float:
    imagenet(batch, out=out)
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        imagenet(batch, out=out)
        done += len(batch)
    return done / (time.perf_counter() - t0)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m goprep demo",
        description="Preprocess a batch of synthetic photos with a fused goprep pipeline (resize 224x224, "
        "flip, ImageNet normalize, CHW float32), check the result against plain NumPy and print the "
        "throughput on all threads and on one. Exits 1 if the check fails.",
    )
    ap.add_argument("--batch", type=int, default=32, metavar="N", help="images per batch (default: %(default)s)")
    ap.add_argument("--height", type=int, default=480, metavar="PX", help="input height (default: %(default)s)")
    ap.add_argument("--width", type=int, default=640, metavar="PX", help="input width (default: %(default)s)")
    ap.add_argument("--seconds", type=float, default=1.0, metavar="S",
                    help="how long each throughput measurement runs (default: %(default)s)")
    args = ap.parse_args(argv)
    for name in ("batch", "height", "width"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if not args.seconds > 0:
        ap.error(f"--seconds must be positive, got {args.seconds}")

    batch = synthetic_photos(args.batch, args.height, args.width)
    out = imagenet(batch)
    ref = numpy_reference(batch)
    step = 1 / 255 / min(STD)  # one uint8 level after normalisation
    diff = np.abs(out - ref)
    n_diff = int(np.count_nonzero(diff))
    # The API promises bit-exact results for this pipeline up to a rare one-level rounding difference
    # (>= 99.9 % of values equal); more, or anything larger, is a real mismatch.
    ok = out.shape == ref.shape and float(diff.max()) <= step * 1.01 and n_diff <= diff.size // 1000
    print(f"goprep {goprep.__version__}: {args.batch} images {args.height}x{args.width} uint8 RGB "
          f"-> resize 224x224 -> flip -> normalize -> {out.shape} {out.dtype}")
    if n_diff == 0:
        verdict = f"all {diff.size:,} values identical -> OK"
    else:
        why = "OK: rare one-level rounding differences, which docs/API.md allows" if ok else "MISMATCH"
        verdict = (f"{n_diff:,} of {diff.size:,} values differ, by at most {diff.max():.5f} "
                   f"(one uint8 level = {step:.5f}) -> {why}")
    print(f"check vs plain NumPy (OpenCV's bilinear arithmetic): {verdict}")
    info = goprep.info()
    threads = info["threads"]
    # Other processes' CPU use while measuring, as the benchmark reports it: on a busy (shared)
    # machine the throughput says more about the neighbours than about goprep.
    from ._benchsuite.machine import LoadMonitor, load_warning

    monitor = LoadMonitor()
    all_t = _throughput(batch, out, args.seconds)
    goprep.set_num_threads(1)
    try:
        one_t = _throughput(batch, out, args.seconds)
    finally:
        goprep.set_num_threads(threads)
    warning = load_warning(monitor.stop())
    print(f"throughput: {all_t:,.0f} images/s on {threads} threads, {one_t:,.0f} images/s on 1 thread "
          f"(backend {info['backend']})")
    if warning:
        print("! " + warning.replace("during this measurement; expect noise",
                                     "while this was measured: these throughput numbers are not meaningful"))
    print(cuda_line(info))
    return 0 if ok else 1
