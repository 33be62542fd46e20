"""Where the reduced JPEG path's time goes (docs/perf/2026-12-06-jpeg-raw.md): 1080p q90 JPEGs to the
ImageNet eval tensor, goprep's reduce="auto" against OpenCV's IMREAD_REDUCED_COLOR_2 pipeline, and the
parts a raw-plane path would change: the engine's pipeline on the decoded 540x960 image as RGB and as
YUV planes (the fused YUV stage), and decode alone. 1 thread, rows interleaved call by call;
median and 10th percentile of wall time and of the process's CPU time (every thread: the measure
that a shared machine's load inflates least).

    python benchmarks/jpeg_raw_budget.py [rounds]

The decode-only rows call benchmarks/jpeg_raw_budget.c (compiled here with gcc against the system's
libjpeg-turbo and its jpegint.h, Debian's libjpeg62-turbo-dev): the codec's windowed RGB decode, the
raw planes (whole width: the only way jpeg_read_raw_data allows), the raw planes of the window (libjpeg's
internal coefficient controller), and the entropy decode alone. First it checks the claim the note
rests on: at a DCT scale of 2, 4 or 8, a 4:2:0 or 4:4:4 file's raw planes are all full size, and
libjpeg's own integer YCbCr->RGB arithmetic on them equals the RGB decode byte for byte.
"""

import ctypes
import io
import os
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np
from PIL import Image

import goprep

sys.path.insert(0, "tests")
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS  # noqa: E402

MEAN = np.array(IMAGENET_MEAN, np.float32)[:, None, None]
STD = np.array(IMAGENET_STD, np.float32)[:, None, None]


def jpeg(a, **kw):
    b = io.BytesIO()
    Image.fromarray(a).resize((1920, 1080), Image.BICUBIC).save(b, "JPEG", quality=90, **kw)
    return b.getvalue()


@goprep.pipeline(device="cpu")
def fast(x):
    x = goprep.decode(x, reduce="auto")
    x = goprep.resize(x, 256, antialias=True)
    x = goprep.center_crop(x, 224)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


@goprep.pipeline(device="cpu")
def squash(x):
    x = goprep.resize(x, (224, 224), antialias=True)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


@goprep.pipeline(device="cpu")
def arrays(x):
    x = goprep.resize(x, 256, antialias=True)
    x = goprep.center_crop(x, 224)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


def cv2_reduced(b):
    a = cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_REDUCED_COLOR_2 | cv2.IMREAD_IGNORE_ORIENTATION)
    a = cv2.cvtColor(a, cv2.COLOR_BGR2RGB)
    h, w = a.shape[:2]
    a = cv2.resize(a, (int(256 * w / h), 256), interpolation=cv2.INTER_AREA)
    t, l = (a.shape[0] - 224) // 2, (a.shape[1] - 224) // 2
    x = a[t : t + 224, l : l + 224].astype(np.float32).transpose(2, 0, 1) * (1 / 255)
    return (x - MEAN) / STD


def budget_lib():
    d = tempfile.mkdtemp()
    so = os.path.join(d, "libbudget.so")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jpeg_raw_budget.c")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", so, src, "-ljpeg"], check=True)
    lib = ctypes.CDLL(so)
    lib.gp_budget.restype = ctypes.c_int
    return lib


class Budget:
    """One image's buffers for gp_budget's modes (the window: the eval tensor's source rows/columns)."""

    def __init__(self, lib, data, scale=2, window=(31, 509, 239, 719)):
        self.lib, self.data, self.scale, self.win = lib, data, scale, window
        self.info = np.zeros(8, np.int32)
        self.rgb = np.zeros((1080 // scale + 16, 1920 // scale + 16, 3), np.uint8)
        self.ps, self.prows = 1920 // scale + 64, 1080 // scale + 32
        self.planes = np.zeros((3, self.prows, self.ps), np.uint8)

    def __call__(self, mode):
        P = ctypes.c_void_p
        rc = self.lib.gp_budget(mode, self.data, ctypes.c_ulong(len(self.data)), self.scale, *self.win,
                                P(self.rgb.ctypes.data), P(self.planes.ctypes.data), self.ps, self.prows,
                                P(self.info.ctypes.data))
        assert rc == 0
        return self


def jdcolor(y, cb, cr):
    """libjpeg's ycc_rgb_convert (jdcolor.c), its tables' integer arithmetic (FIX(x) = x * 2^16 rounded)."""
    y, u, v = y.astype(np.int64), cb.astype(np.int64) - 128, cr.astype(np.int64) - 128
    half = 1 << 15
    r = y + ((91881 * v + half) >> 16)
    g = y + ((-22554 * u + half - 46802 * v) >> 16)
    b = y + ((116130 * u + half) >> 16)
    return np.clip(np.stack([r, g, b], -1), 0, 255).astype(np.uint8)


def check_exact(lib, photos):
    """Per subsampling and scale: are the raw planes full size, and does jdcolor on them equal the RGB decode."""
    for sub, name in ((2, "4:2:0"), (0, "4:4:4"), (1, "4:2:2")):
        data = jpeg(photos[0], subsampling=sub)
        for scale in (2, 4, 8):
            b = Budget(lib, data, scale)(1)
            h, w = int(b.info[0]), int(b.info[1])
            dims = [(int(b.info[2 + 2 * c]), int(b.info[3 + 2 * c])) for c in range(3)]
            if any(d != (h, w) for d in dims):
                print(f"{name} 1/{scale}: raw planes {dims} for a {h}x{w} output: chroma not full size (upsampled by libjpeg)")
                continue
            got = jdcolor(*(b.planes[c, :h, :w] for c in range(3)))
            want = goprep.decode(data, reduce=scale)
            print(f"{name} 1/{scale}: raw planes full size {h}x{w}; libjpeg arithmetic vs RGB decode: max diff "
                  f"{int(np.abs(got.astype(int) - want).max())}")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    goprep.set_num_threads(1)
    cv2.setNumThreads(1)
    data = [jpeg(PHOTOS[n]) for n in ("astronaut", "chelsea", "coffee")]
    rgb = [goprep.decode(d, reduce=2) for d in data]  # 540x960, what the RGB reduced path decodes
    # the same image as 3 full-resolution planes would be 4:4:4; i420 (half-size chroma) is the stage's
    # nearest existing planar layout, and converts fewer chroma samples: a lower bound on its cost
    yuvs = []
    for a in rgb:
        ycc = np.asarray(Image.fromarray(a).convert("YCbCr"))
        y = np.ascontiguousarray(ycc[..., 0])
        u = np.ascontiguousarray(ycc[::2, ::2, 1])
        v = np.ascontiguousarray(ycc[::2, ::2, 2])
        yuvs.append(goprep.yuv((y, u, v), "i420", preset="jpeg"))
    lib = budget_lib()
    check_exact(lib, [PHOTOS["coffee"]])
    bud = [Budget(lib, d) for d in data]
    whole = [Budget(lib, d, window=(0, 540, 0, 960)) for d in data]  # the squash task reads every pixel
    strip = [Budget(lib, d, window=(31, 509, 472, 488)) for d in data]  # entropy decode to row 509, IDCT of a strip
    rows = {
        "goprep reduce=auto (decode fused)": (fast, data),
        "cv2 IMREAD_REDUCED_COLOR_2 + resize + crop + NumPy": (cv2_reduced, data),
        "goprep decode(reduce=2) alone (whole image)": (lambda d: goprep.decode(d, reduce=2), data),
        "cv2.imdecode(IMREAD_REDUCED_COLOR_2) alone": (lambda d: cv2.imdecode(np.frombuffer(d, np.uint8), cv2.IMREAD_REDUCED_COLOR_2), data),
        "libjpeg RGB window (the codec's reduced decode)": (lambda b: b(0), bud),
        "libjpeg raw planes, whole width (jpeg_read_raw_data)": (lambda b: b(1), bud),
        "libjpeg raw planes, window (internal coef API)": (lambda b: b(2), bud),
        "libjpeg RGB, 16-column window, same rows (~the floor)": (lambda b: b(0), strip),
        "libjpeg entropy decode alone, whole file": (lambda b: b(3), bud),
        "libjpeg RGB whole image (squash task)": (lambda b: b(0), whole),
        "goprep pipeline on the 540x960 RGB array": (arrays, rgb),
        "goprep pipeline on 540x960 I420 planes (YUV stage)": (arrays, yuvs),
        "goprep squash 224 + normalize on the 540x960 RGB array": (squash, rgb),
        "goprep squash 224 + normalize on 540x960 I420 planes": (squash, yuvs),
    }
    for fn, xs in rows.values():
        for x in xs:
            fn(x)
    # interleaved call by call (each sample: one call per photograph), rows in a new random order each
    # step, so that every row sees the same share of a shared machine's load
    rng = np.random.default_rng(0)
    keys = list(rows)
    times = {k: [] for k in rows}
    for _ in range(rounds * 40):
        for i in rng.permutation(len(keys)):
            fn, xs = rows[keys[i]]
            t, c = time.perf_counter(), time.process_time()
            for x in xs:
                fn(x)
            times[keys[i]].append(((time.perf_counter() - t) / len(xs), (time.process_time() - c) / len(xs)))
    print(f"{'':55} {'wall median':>11} {'wall p10':>9} {'CPU median':>11} {'CPU p10':>9}  (ms per image)")
    for k, ts in times.items():
        w, c = np.array(ts).T * 1e3
        print(f"{k:55} {np.median(w):11.3f} {np.percentile(w, 10):9.3f} {np.median(c):11.3f} {np.percentile(c, 10):9.3f}")
    for col, name in ((0, "wall"), (1, "CPU")):
        cv, gp = (np.median([t[col] for t in times[k]]) for k in (
            "cv2 IMREAD_REDUCED_COLOR_2 + resize + crop + NumPy", "goprep reduce=auto (decode fused)"))
        print(f"ratio cv2 reduced / goprep reduce=auto ({name} medians): {cv / gp:.2f}x")


if __name__ == "__main__":
    main()
