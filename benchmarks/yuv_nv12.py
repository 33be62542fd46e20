"""1080p NV12 frame -> 224x224 ImageNet tensor, 1 thread, four ways measured side by side in one run:

- goprep NV12: ``prep(goprep.yuv(frame, preset="opencv"))``, the conversion fused into the resize
  (only the source rows and columns the resize reads are converted);
- goprep RGB: the same pipeline on the frame already converted to RGB (the physical floor's yardstick:
  the NV12 call can at best cost this plus converting the pixels the taps read);
- cvtColor + goprep: ``cv2.cvtColor(frame, COLOR_YUV2RGB_NV12)`` then the same pipeline on RGB;
- OpenCV + NumPy: cvtColor, ``cv2.resize`` (INTER_LINEAR; INTER_AREA for the antialiased task),
  centre crop, ``(x/255 - mean)/std`` into a CHW float32 array.

The frame, the tasks, the four callables and the output check are the bench's
(``goprep._benchsuite.yuv``: ``python -m goprep bench`` judges the squash and crop tasks' targets,
with the measured bound); this script adds the antialiased crop task and its own timing method.

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
from goprep._benchsuite import yuv

NAMES = {"goprep-nv12": "goprep NV12", "goprep-rgb": "goprep RGB", "cvtcolor+goprep": "cvtColor + goprep",
         "opencv-numpy": "OpenCV + NumPy"}


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
    f = yuv.frame_1080p()
    rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
    for task in yuv.TASKS.values():
        fns = yuv.methods(task, f, rgb)
        yuv.check(task, fns)  # the fused result equals converting first
        methods = [(NAMES[k], fn) for k, fn in fns.items()]
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
        print(f"1080p NV12 -> {task.name} -> normalize CHW float32, 1 thread, medians of {a.rounds} alternating rounds")
        for k, v in t.items():
            print(f"  {k:20s} {np.median(v):8.0f} us")
        print(f"  goprep NV12 / goprep RGB:          {np.median(nv / np.array(t['goprep RGB'])):.2f}x (target <= 1.3x)")
        if not a.yardstick_only:
            print(f"  OpenCV + NumPy / goprep NV12:      {np.median(np.array(t['OpenCV + NumPy']) / nv):.2f}x (target >= 5x)")
            print(f"  cvtColor + goprep / goprep NV12:   {np.median(np.array(t['cvtColor + goprep']) / nv):.2f}x")


if __name__ == "__main__":
    main()
