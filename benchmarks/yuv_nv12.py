"""1080p NV12 frame -> 224x224 ImageNet tensor, 1 thread, three ways measured side by side in one run:

- goprep NV12: ``prep(goprep.yuv(frame, preset="opencv"))``, the conversion fused into the resize
  (only the source rows and columns the resize reads are converted);
- cvtColor + goprep: ``cv2.cvtColor(frame, COLOR_YUV2RGB_NV12)`` then the same pipeline on RGB;
- OpenCV + NumPy: cvtColor, ``cv2.resize`` (INTER_LINEAR; INTER_AREA for the antialiased task),
  centre crop, ``(x/255 - mean)/std`` into a CHW float32 array.

The task: shorter side to 256 (bilinear; with antialias as torchvision's ImageNet preset, and without),
centre crop 224, ImageNet normalize, CHW float32. Prints the median time of each and the ratios.

    PYTHONPATH=python python benchmarks/yuv_nv12.py [--repeats 200]
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


def median_us(fn, repeats):
    for _ in range(5):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - t0)
    return float(np.median(ts)) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=200)
    a = ap.parse_args()
    cv2.setNumThreads(1)
    goprep.set_num_threads(1)
    f = frame_1080p()
    h, w = 1080, 1920
    rw = int(256 * w / h)  # torchvision's shorter-side rule: 455
    for aa in (True, False):
        @goprep.pipeline(device="cpu")
        def prep(img):
            img = goprep.resize(img, 256, antialias=aa)
            img = goprep.center_crop(img, 224)
            return goprep.normalize(img, mean=tuple(MEAN), std=tuple(STD))

        out = np.empty((3, 224, 224), np.float32)
        top, left = int(round((256 - 224) / 2.0)), int(round((rw - 224) / 2.0))

        def goprep_nv12():
            prep(goprep.yuv(f, preset="opencv"), out=out)

        def cvt_goprep():
            prep(cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12), out=out)

        def opencv_numpy():
            rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
            small = cv2.resize(rgb, (rw, 256), interpolation=cv2.INTER_AREA if aa else cv2.INTER_LINEAR)
            crop = small[top:top + 224, left:left + 224]
            x = crop.astype(np.float32)
            x *= 1 / 255.0
            x -= MEAN
            x /= STD
            out[:] = x.transpose(2, 0, 1)

        # the fused result equals converting first
        a1 = prep(goprep.yuv(f, preset="opencv"))
        a2 = prep(cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12))
        assert np.array_equal(a1, a2)
        t = {name: median_us(fn, a.repeats) for name, fn in
             (("goprep NV12", goprep_nv12), ("cvtColor + goprep", cvt_goprep), ("OpenCV + NumPy", opencv_numpy))}
        t["cvtColor alone"] = median_us(lambda: cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12), a.repeats)
        print(f"1080p NV12 -> shorter side 256 (antialias={aa}) -> crop 224 -> normalize CHW float32, 1 thread")
        for k, v in t.items():
            print(f"  {k:20s} {v:8.0f} us")
        print(f"  ratio vs OpenCV + NumPy:    {t['OpenCV + NumPy'] / t['goprep NV12']:.2f}x")
        print(f"  ratio vs cvtColor + goprep: {t['cvtColor + goprep'] / t['goprep NV12']:.2f}x")


if __name__ == "__main__":
    main()
