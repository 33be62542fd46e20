"""Shared fixtures and independent reference implementations for the goprep test suite.

Everything here is written against docs/API.md only; none of it imports goprep internals.
The references are deliberately simple (float64 NumPy, OpenCV, Pillow) so that a failure points at
the package, not at a clever helper.
"""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import skimage.data
from PIL import Image

try:
    import cv2
except ImportError:  # no OpenCV wheel for this interpreter (free-threaded CPython): tests needing it skip
    cv2 = None

# --------------------------------------------------------------------------------------------------
# images

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _photos():
    astronaut = skimage.data.astronaut()  # (512, 512, 3)
    chelsea = skimage.data.chelsea()  # (300, 451, 3)  odd width
    coffee = skimage.data.coffee()  # (400, 600, 3)
    camera = skimage.data.camera()[..., None]  # (512, 512, 1)
    rng = np.random.default_rng(1234)
    alpha = rng.integers(0, 256, size=chelsea.shape[:2] + (1,), dtype=np.uint8)
    chelsea_rgba = np.concatenate([chelsea, alpha], axis=-1)  # (300, 451, 4)
    out = {
        "astronaut": astronaut,
        "chelsea": chelsea,
        "coffee": coffee,
        "camera": camera,
        "chelsea_rgba": chelsea_rgba,
    }
    for v in out.values():
        v.setflags(write=False)  # a test must never mutate the shared images
    return out


PHOTOS = _photos()
PHOTO_NAMES = list(PHOTOS)


@pytest.fixture(scope="session")
def photos():
    return PHOTOS


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


def rand_u8(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def rand_f32(shape, seed=0, lo=0.0, hi=1.0):
    r = np.random.default_rng(seed).random(size=shape, dtype=np.float32)
    return (r * np.float32(hi - lo) + np.float32(lo)).astype(np.float32)


# --------------------------------------------------------------------------------------------------
# reference resizes


def _per_image(fn, x, *args):
    """Apply a per-image (H, W, C) reference to a single image or an (N, H, W, C) batch."""
    if x.ndim == 4:
        return np.stack([fn(im, *args) for im in x])
    return fn(x, *args)


def _cv2_one(x, size, interp):
    h, w = size
    c = x.shape[-1]
    r = cv2.resize(np.ascontiguousarray(x), (w, h), interpolation=interp)  # dsize is (width, height)
    if c == 1:
        r = r[..., None]  # cv2 drops the channel axis for single-channel images
    assert r.shape == (h, w, c)
    return r


def cv2_resize(x, size, interp=None):
    if cv2 is None:
        pytest.skip("OpenCV is not installed (it has no wheel for this interpreter)")
    return _per_image(_cv2_one, x, size, cv2.INTER_LINEAR if interp is None else interp)


def _axis_coords(n_in, n_out, coord_dtype=np.float64):
    """PyTorch align_corners=False source coordinates:
    src = max((dst + 0.5) * in / out - 0.5, 0), i0 = floor(src), i1 = min(i0 + 1, in - 1), lambda = src - i0.

    coord_dtype=float64: the exact formula. coord_dtype=float32: the formula evaluated the way PyTorch's
    CPU kernel evaluates it for float32 tensors (scale = float(in) / float(out), everything in float32),
    whose rounding moves lambda by up to a few float32 ulps of `src` (~1e-5 for 500-pixel images).
    """
    t = coord_dtype
    dst = np.arange(n_out, dtype=t)
    scale = t(n_in) / t(n_out)
    src = np.maximum(scale * (dst + t(0.5)) - t(0.5), t(0))
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = np.clip(src - i0.astype(t), 0, 1).astype(np.float64)
    return i0, i1, lam


def _bilinear_f64_one(x, size, coord_dtype=np.float64):
    h, w = size
    x = x.astype(np.float64)
    r0, r1, ly = _axis_coords(x.shape[0], h, coord_dtype)
    c0, c1, lx = _axis_coords(x.shape[1], w, coord_dtype)
    ly = ly[:, None, None]
    lx = lx[None, :, None]
    top = x[r0][:, c0] * (1 - lx) + x[r0][:, c1] * lx
    bot = x[r1][:, c0] * (1 - lx) + x[r1][:, c1] * lx
    return top * (1 - ly) + bot * ly


def bilinear_ref_f64(x, size, coord_dtype=np.float64):
    """float64 NumPy reference of torch.nn.functional.interpolate(bilinear, align_corners=False); the
    interpolation is always float64, the coordinates in `coord_dtype` (see _axis_coords)."""
    return _per_image(_bilinear_f64_one, x, size, coord_dtype)


def _pil_one(x, size, resample):
    h, w = size
    if x.dtype == np.uint8 and x.shape[-1] == 4 and resample != Image.NEAREST:
        # Pillow's "RGBA" resize: premultiplied by alpha, as goprep's antialias resize of 4 channels
        return np.asarray(Image.fromarray(np.ascontiguousarray(x), "RGBA").resize((w, h), resample))
    chans = []
    for c in range(x.shape[-1]):
        # one channel at a time: mode "L" (uint8) or "F" (float32). This avoids Pillow's RGBA
        # premultiplication and gives the plain separable filter per channel.
        im = Image.fromarray(np.ascontiguousarray(x[..., c]))
        chans.append(np.asarray(im.resize((w, h), resample)))
    return np.stack(chans, axis=-1)


def pil_resize(x, size, resample=Image.BILINEAR):
    """Pillow's resize with `resample` (BILINEAR: the triangle filter), one channel at a time."""
    return _per_image(_pil_one, x, size, resample)


def to_unit_f32(img):
    """A uint8 image as float32 in [0, 1] (x / 255, in float32)."""
    return img.astype(np.float32) / np.float32(255)


def normalize_ref(x, mean, std, scale=1 / 255, dtype="float32", layout="CHW"):
    mean32 = np.asarray(mean, dtype=np.float32)
    std32 = np.asarray(std, dtype=np.float32)
    r = (x.astype(np.float32) * np.float32(scale) - mean32) / std32
    assert r.dtype == np.float32
    if dtype == "float16":
        with np.errstate(over="ignore"):  # out-of-range values become +-inf, as intended
            r = r.astype(np.float16)
    if layout == "CHW":
        r = np.moveaxis(r, -1, -3)
    return np.ascontiguousarray(r)


def _round_candidates(v):
    """round() of a geometry value: Python's round and round-half-up disagree only on exact .5 ties;
    the spec just says "round", so a tie may go either way."""
    lo, hi = math.floor(v), math.ceil(v)
    if v - lo == 0.5:
        return {lo, hi}
    return {int(round(v))}


def letterbox_geometries(h, w, out_h, out_w):
    """All (scale, top, left, height, width) the spec formula allows."""
    scale = min(out_h / h, out_w / w)
    res = set()
    for hh in _round_candidates(h * scale):
        for ww in _round_candidates(w * scale):
            hh2, ww2 = max(int(hh), 1), max(int(ww), 1)
            res.add((scale, (out_h - hh2) // 2, (out_w - ww2) // 2, hh2, ww2))
    return res


# --------------------------------------------------------------------------------------------------
# comparisons


def assert_close_to_cv2_u8(got, ref, min_equal=0.999, check_fraction=True):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == np.uint8
    diff = np.abs(got.astype(np.int16) - ref.astype(np.int16))
    assert int(diff.max()) <= 1, f"max abs diff {int(diff.max())} > 1"
    if check_fraction:
        frac = float(np.mean(diff == 0))
        assert frac >= min_equal, f"only {frac:.5%} of values equal cv2 (need >= {min_equal:.1%})"


def assert_array_identical(got, ref):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if not np.array_equal(got, ref):
        bad = np.argwhere(got != ref)
        raise AssertionError(
            f"{len(bad)} of {got.size} values differ; first at {tuple(bad[0])}: "
            f"got {got[tuple(bad[0])]!r}, want {ref[tuple(bad[0])]!r}"
        )


def assert_goprep_error(excinfo_value, cls, argument=None, code=None, builtin=None):
    """Check the documented error contract: class, builtin base, stable .code, .argument that the
    message starts with."""
    import goprep

    e = excinfo_value
    assert isinstance(e, goprep.GoprepError), f"{type(e).__name__} is not a GoprepError: {e}"
    if isinstance(cls, tuple):
        assert isinstance(e, cls), f"got {type(e).__name__} ({e}), want one of {[c.__name__ for c in cls]}"
    else:
        assert isinstance(e, cls), f"got {type(e).__name__} ({e}), want {cls.__name__}"
    if builtin is not None:
        assert isinstance(e, builtin), f"{type(e).__name__} is not a {builtin.__name__}"
    if code is not None:
        codes = code if isinstance(code, (set, tuple, list)) else {code}
        assert getattr(e, "code", None) in codes, f".code={getattr(e, 'code', None)!r}, want {codes}"
    if argument is not None:
        args = argument if isinstance(argument, (set, tuple, list)) else {argument}
        got_arg = getattr(e, "argument", None)
        assert got_arg in args, f".argument={got_arg!r}, want one of {args} (message: {e})"
        assert str(e).startswith(got_arg), f"message does not start with {got_arg!r}: {str(e)!r}"


def run_concurrently(fn, n=8, timeout=120):
    """Call fn(0) .. fn(n-1) on n threads released together; fail on a hang or on any exception."""
    import threading

    errors = []
    barrier = threading.Barrier(n)

    def run(i):
        try:
            barrier.wait(timeout=30)
            fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "concurrent calls deadlocked"
    assert not errors, errors


# --------------------------------------------------------------------------------------------------
# subprocesses


# A child's first line where it tests Ctrl-C: Python's KeyboardInterrupt handler even when the tests
# run with SIGINT ignored (a background job of a non-interactive shell), which children inherit.
SIGINT_HANDLER = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def run_python(code, *, env=None, timeout=60, sigint=False):
    """Run `code` in a fresh interpreter; a hang fails the test (TimeoutExpired) rather than blocking.
    sigint: the child handles SIGINT as KeyboardInterrupt (SIGINT_HANDLER) whatever it inherited."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        return subprocess.run(
            [sys.executable, "-c", (SIGINT_HANDLER if sigint else "") + textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full_env,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(
            f"subprocess hung for {timeout}s\nstdout:\n{e.stdout}\nstderr:\n{e.stderr}", pytrace=False
        )


def gradient_photos(n: int, seed: int = 7):
    """``n`` uint8 RGB images of 60-129 px a side: gradients with noise and a near-gray band on top
    (where hue is ill-conditioned); the training colour tests' images."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        h, w = int(rng.integers(60, 130)), int(rng.integers(60, 130))
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (h + w)], -1)
        base[: h // 4] = base[: h // 4].mean(-1, keepdims=True)
        out.append(np.clip(base + rng.normal(0, 20, (h, w, 3)), 0, 255).astype(np.uint8))
    return out


def jpeg_bytes(arrays, quality: int = 90):
    """Each image encoded as JPEG bytes by Pillow."""
    import io

    data = []
    for a in arrays:
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "JPEG", quality=quality)
        data.append(buf.getvalue())
    return data


@pytest.fixture
def restore_threads():
    import goprep

    n = goprep.get_num_threads()
    yield
    goprep.set_num_threads(n)


@pytest.fixture
def sim_gpu():
    """The simulated GPU (goprep.testing) for one test, its breaker reset before and after."""
    import goprep.testing as gt

    if not gt.simulated_gpu_available():
        pytest.skip("extension built without -tags cpukernel (no C++ compiler): no simulated GPU")
    gt.simulate_gpu(True)
    gt.reset_gpu(breaker_cooldown=0.2)
    yield
    gt.reset_gpu()
    gt.simulate_gpu(False)
