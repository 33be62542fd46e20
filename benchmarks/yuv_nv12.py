"""1080p NV12 frame -> 224x224 ImageNet tensor, 1 thread, four ways measured side by side in one run:

- goprep NV12: ``prep(goprep.yuv(frame, preset="opencv"))``, the conversion fused into the resize
  (only the source rows and columns the resize reads are converted);
- goprep RGB: the same pipeline on the frame already converted to RGB (the physical floor's yardstick:
  the NV12 call can at best cost this plus converting the pixels the taps read);
- cvtColor + goprep: ``cv2.cvtColor(frame, COLOR_YUV2RGB_NV12)`` then the same pipeline on RGB;
- OpenCV + NumPy: cvtColor, ``cv2.resize`` (INTER_LINEAR; INTER_AREA for the antialiased task),
  centre crop, ``(x/255 - mean)/std`` into a CHW float32 array.

The tasks: a 224x224 squash (bilinear), and shorter side to 256 (bilinear; with antialias as
torchvision's ImageNet preset, and without) + centre crop 224; ImageNet normalize, CHW float32.
The methods are timed in alternating rounds (each round: --calls calls of every method, its median
kept), so that a shared machine's load drifts over all of them alike; prints per method the median
over rounds, and the ratios as the median over rounds of each round's ratio.

    PYTHONPATH=python python benchmarks/yuv_nv12.py [--rounds 15] [--calls 20] [--yardstick-only]
"""

import argparse
import time

import cv2
import numpy as np

import goprep

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def frame_1080p(seed=0):
    """A 1080p NV12 frame with smooth content (a gradient scene with noise), as a decoder returns it."""
    rng = np.random.default_rng(seed)
    h, w = 1080, 1920
    yy, xx = np.mgrid[0:h, 0:w]
    y = (110 + 80 * np.sin(xx / 90.0) * np.cos(yy / 70.0) + rng.normal(0, 6, (h, w))).clip(16, 235).astype(np.uint8)
    u = (128 + 40 * np.sin(np.arange(w // 2) / 50.0))[None].repeat(h // 2, 0)
    v = (128 + 40 * np.cos(np.arange(h // 2) / 40.0))[:, None].repeat(w // 2, 1)
    uv = np.stack([u, v], -1).astype(np.uint8).reshape(h // 2, w)
    return np.ascontiguousarray(np.concatenate([y, uv]))


def median_us(fn, calls):
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return float(np.median(ts)) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--yardstick-only", action="store_true",
                    help="time only goprep NV12 and goprep RGB (no OpenCV calls evicting the caches between them)")
    a = ap.parse_args()
    cv2.setNumThreads(1)
    goprep.set_num_threads(1)
    f = frame_1080p()
    rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
    h, w = 1080, 1920
    rw = int(256 * w / h)  # torchvision's shorter-side rule: 455
    for task, size, aa in (("squash 224x224", (224, 224), False), ("shorter side 256 + crop 224", 256, False),
                           ("shorter side 256 + crop 224, antialias", 256, True)):
        crop = size == 256

        @goprep.pipeline(device="cpu")
        def prep(img):
            img = goprep.resize(img, size, antialias=aa)
            if crop:
                img = goprep.center_crop(img, 224)
            return goprep.normalize(img, mean=tuple(MEAN), std=tuple(STD))

        out = np.empty((3, 224, 224), np.float32)
        top, left = int(round((256 - 224) / 2.0)), int(round((rw - 224) / 2.0))

        def goprep_nv12():
            prep(goprep.yuv(f, preset="opencv"), out=out)

        def goprep_rgb():
            prep(rgb, out=out)

        def cvt_goprep():
            prep(cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12), out=out)

        def opencv_numpy():
            rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
            if crop:
                small = cv2.resize(rgb, (rw, 256), interpolation=cv2.INTER_AREA if aa else cv2.INTER_LINEAR)
                small = small[top:top + 224, left:left + 224]
            else:
                small = cv2.resize(rgb, (224, 224), interpolation=cv2.INTER_LINEAR)
            x = small.astype(np.float32)
            x *= 1 / 255.0
            x -= MEAN
            x /= STD
            out[:] = x.transpose(2, 0, 1)

        # the fused result equals converting first
        assert np.array_equal(prep(goprep.yuv(f, preset="opencv")), prep(rgb))
        methods = (("goprep NV12", goprep_nv12), ("goprep RGB", goprep_rgb), ("cvtColor + goprep", cvt_goprep),
                   ("OpenCV + NumPy", opencv_numpy))
        if a.yardstick_only:
            methods = methods[:2]
        for _, fn in methods:  # warm up
            for _ in range(3):
                fn()
        t = {name: [] for name, _ in methods}
        for _ in range(a.rounds):
            for name, fn in methods:
                t[name].append(median_us(fn, a.calls))
        nv = np.array(t["goprep NV12"])
        print(f"1080p NV12 -> {task} -> normalize CHW float32, 1 thread, medians of {a.rounds} alternating rounds")
        for k, v in t.items():
            print(f"  {k:20s} {np.median(v):8.0f} us")
        print(f"  goprep NV12 / goprep RGB:          {np.median(nv / np.array(t['goprep RGB'])):.2f}x (target <= 1.3x)")
        if not a.yardstick_only:
            print(f"  OpenCV + NumPy / goprep NV12:      {np.median(np.array(t['OpenCV + NumPy']) / nv):.2f}x (target >= 5x)")
            print(f"  cvtColor + goprep / goprep NV12:   {np.median(np.array(t['cvtColor + goprep']) / nv):.2f}x")


if __name__ == "__main__":
    main()
