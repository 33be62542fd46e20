"""The colour adjustments of torchvision's ``ColorJitter`` and ``RandomGrayscale``, in NumPy, with the
numerics of each path torchvision takes, on ``(H, W, C)`` images (``C`` 1 or 3):

- ``"pil"``: Pillow's (what torchvision runs on PIL images): ``ImageEnhance``'s ``Image.blend`` in
  single-precision float truncated to uint8, ``convert("L")``'s fixed-point ITU-R 601-2 luma, and
  ``adjust_hue``'s round trip through Pillow's 8-bit HSV. The conversions are Pillow's own C where
  Pillow is installed, else NumPy ports of ``Convert.c``'s ``rgb2hsv``/``hsv2rgb`` (float and double
  steps as there), bit for bit Pillow's (tests/test_train_color.py checks the HSV maps on all 2**24
  colours).
- ``"v1"``: ``torchvision.transforms`` on tensors (``_functional_tensor``): ``ratio * a + (1 - ratio)
  * b`` in float32, clamped, truncated for uint8; hue through float32 HSV.
- ``"v2"``: ``torchvision.transforms.v2`` on tensors (``v2.functional._color``): the same blends
  written as ``a.mul(r).add_(b, alpha=1 - r)`` (PyTorch fuses that into an FMA: done here in float64,
  one rounding to float32), the luma floored before a uint8 blend, its own HSV formulas.

uint8 images stay uint8 (``"pil"`` takes uint8 only), float32 images (values in [0, 1]) stay float32.
One float32 rounding (PyTorch's reduction order for the contrast mean, the FMA) can move a uint8
result by one level on tensors; float32 results agree within 1e-6."""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from .._errors import PipelineError

NUMERICS = ("pil", "v1", "v2")
F32 = np.float32


def _check(a: np.ndarray, numerics: str, what: str) -> None:
    if a.ndim != 3 or a.shape[-1] not in (1, 3):
        raise PipelineError(f"{what} takes 1- or 3-channel images (as torchvision), got shape {a.shape}")
    if numerics == "pil" and a.dtype != np.uint8:
        raise PipelineError(f"{what} with Pillow's numerics (PIL images, NumPy arrays) takes uint8 images, got "
                            f"{a.dtype} (pass a float tensor for torchvision's tensor numerics)")
    if a.dtype not in (np.uint8, np.float32):
        raise PipelineError(f"{what} takes uint8 or float32 images, got {a.dtype}")


# ------------------------------------------------------------------ Pillow


def _pillow() -> Any:
    """Pillow's ``Image`` module, or None: where it is installed its C conversions run (3 to 10 times
    faster than the NumPy ports below, which give the same bytes and serve without it)."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow is a test dependency
        return None
    return Image


def _pillow_convert(a: np.ndarray, mode_in: str, mode_out: str) -> np.ndarray:
    Image = _pillow()
    a = np.ascontiguousarray(a)
    return np.asarray(Image.frombuffer(mode_in, (a.shape[1], a.shape[0]), a, "raw", mode_in, 0, 1).convert(mode_out))


def pil_luma(a: np.ndarray) -> np.ndarray:
    """Pillow's ``convert("L")`` of an RGB uint8 image (``(H, W)`` uint8)."""
    if _pillow() is not None:
        return _pillow_convert(a, "RGB", "L")
    return np_luma(a)


def np_luma(a: np.ndarray) -> np.ndarray:
    """``convert("L")`` in NumPy: ``(R*19595 + G*38470 + B*7471 + 0x8000) >> 16``."""
    x = a.astype(np.int32)
    return ((x[..., 0] * 19595 + x[..., 1] * 38470 + x[..., 2] * 7471 + 0x8000) >> 16).astype(np.uint8)


def pil_blend(im1: np.ndarray, im2: np.ndarray, alpha: float) -> np.ndarray:
    """``Image.blend(im1, im2, alpha)`` on uint8 data (``ImagingBlend``): ``alpha`` taken as a C float,
    ``in1 + alpha * (in2 - in1)`` in single precision, truncated (clipped to [0, 255] outside [0, 1])."""
    al = F32(alpha)
    if al == 0:
        return np.array(np.broadcast_to(im1, np.broadcast_shapes(im1.shape, im2.shape)), dtype=np.uint8)
    if al == 1:
        return np.array(np.broadcast_to(im2, np.broadcast_shapes(im1.shape, im2.shape)), dtype=np.uint8)
    i1 = im1.astype(F32)
    t = i1 + al * (im2.astype(F32) - i1)  # the int difference is exact in float32
    if not 0 <= al <= 1:
        np.clip(t, 0, 255, out=t)
    return t.astype(np.uint8)  # truncation toward zero, as the C cast


def _pil_rgb2hsv(a: np.ndarray) -> np.ndarray:
    """Pillow's ``convert("HSV")`` of RGB uint8 (``Convert.c``'s ``rgb2hsv_row``)."""
    r, g, b = (a[..., k].astype(np.int32) for k in range(3))
    maxc = np.maximum(r, np.maximum(g, b))
    minc = np.minimum(r, np.minimum(g, b))
    eq = maxc == minc
    cr = (maxc - minc).astype(F32)
    crd = np.where(eq, F32(1), cr)
    s = cr / np.where(maxc == 0, F32(1), maxc.astype(F32))
    rc = (maxc - r).astype(F32) / crd
    gc = (maxc - g).astype(F32) / crd
    bc = (maxc - b).astype(F32) / crd
    # the C computes "2.0 + rc - bc" in double and stores a float
    h = np.where(r == maxc, (bc - gc).astype(np.float64),
                 np.where(g == maxc, 2.0 + rc.astype(np.float64) - bc, 4.0 + gc.astype(np.float64) - rc))
    h = h.astype(F32).astype(np.float64)
    h = np.fmod(h / 6.0 + 1.0, 1.0).astype(F32)
    uh = np.clip((h.astype(np.float64) * 255.0).astype(np.int64), 0, 255)
    us = np.clip((s.astype(np.float64) * 255.0).astype(np.int64), 0, 255)
    out = np.empty(a.shape, np.uint8)
    out[..., 0] = np.where(eq, 0, uh)
    out[..., 1] = np.where(eq, 0, us)
    out[..., 2] = maxc
    return out


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's ``round`` of non-negative doubles (halves away from zero)."""
    f = np.floor(x)
    return f + (x - f >= 0.5)


def _pil_hsv2rgb(a: np.ndarray) -> np.ndarray:
    """Pillow's ``convert("RGB")`` of HSV uint8 (``Convert.c``'s ``hsv2rgb``)."""
    h, s, v = (a[..., k].astype(np.float64) for k in range(3))
    h6 = h.astype(F32).astype(np.float64) * 6.0 / 255.0
    i = np.floor(h6)
    f = (h6 - i).astype(F32)
    fs = (s / 255.0).astype(F32)
    p = _round_half_away(v * (1.0 - fs.astype(np.float64)))
    q = _round_half_away(v * (1.0 - (fs * f).astype(np.float64)))
    t = _round_half_away(v * (1.0 - fs.astype(np.float64) * (1.0 - f.astype(np.float64))))
    up, uq, ut = (np.clip(x, 0, 255) for x in (p, q, t))
    return _select(i.astype(np.int64) % 6, v, up, uq, ut, s == 0).astype(np.uint8)


def _select(i: np.ndarray, v: np.ndarray, p: np.ndarray, q: np.ndarray, t: np.ndarray,
            gray: "np.ndarray | None" = None) -> np.ndarray:
    """HSV's sector table (both libraries'): sector ``i`` picks R, G, B among ``v, p, q, t``."""
    tab = ((v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q))
    out = np.empty(i.shape + (3,), dtype=np.result_type(v, p))
    for c in range(3):
        out[..., c] = np.select([i == k for k in range(5)], [tab[k][c] for k in range(5)], tab[5][c])
        if gray is not None:
            out[..., c] = np.where(gray, v, out[..., c])
    return out


def _pil(a: np.ndarray, op: str, factor: float) -> np.ndarray:
    c = a.shape[-1]
    if op == "brightness":
        return pil_blend(np.zeros((1, 1, 1), np.uint8), a, factor)
    if op == "contrast":
        lum = a[..., 0] if c == 1 else pil_luma(a)
        mean = int(float(int(lum.sum(dtype=np.int64))) / lum.size + 0.5)  # ImageStat's mean, rounded
        return pil_blend(np.full((1, 1, 1), mean, np.uint8), a, factor)
    if op == "saturation":
        if c == 1:
            return a.copy()
        return pil_blend(pil_luma(a)[..., None], a, factor)
    if op == "hue":
        if c == 1:  # torchvision returns "L" images as they are
            return a.copy()
        pil = _pillow() is not None
        hsv = _pillow_convert(a, "RGB", "HSV").copy() if pil else _pil_rgb2hsv(a)
        hsv[..., 0] += np.uint8(np.int64(np.int32(factor * 255)) % 256)  # numpy's uint8 wrap-around
        return _pillow_convert(hsv, "HSV", "RGB") if pil else _pil_hsv2rgb(hsv)
    raise ValueError(op)


# ------------------------------------------------------------------ torchvision's tensors


def _fma(x: np.ndarray, y: "np.ndarray | np.float32", z: np.ndarray) -> np.ndarray:
    """``x * y + z`` of float32 values with one rounding (PyTorch's vectorised ``add(z, x, alpha=y)``):
    the product is exact in float64."""
    return (np.asarray(x, np.float64) * np.float64(y) + np.asarray(z, np.float64)).astype(F32)


def _luma(a: np.ndarray, numerics: str) -> np.ndarray:
    """torchvision's float luma ``0.2989 R + 0.587 G + 0.114 B`` (float32, ``(H, W, 1)``), unrounded."""
    r, g, b = (a[..., k:k + 1].astype(F32) for k in range(3))
    if numerics == "v1":
        return F32(0.2989) * r + F32(0.587) * g + F32(0.114) * b
    return _fma(b, F32(0.114), _fma(g, F32(0.587), r * F32(0.2989)))


def _blend(a: np.ndarray, b: np.ndarray, ratio: float, numerics: str) -> np.ndarray:
    """torchvision's ``_blend``: ``ratio * a + (1 - ratio) * b`` clamped to the dtype's range, uint8
    truncated."""
    r, q = F32(ratio), F32(1.0 - float(ratio))
    x = a.astype(F32)
    if numerics == "v1":
        out = r * x + q * np.asarray(b, F32)
    else:
        out = _fma(np.asarray(b, F32), q, x * r)
    return _to_dtype(out, a.dtype)


def _to_dtype(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.uint8:
        return np.clip(x, 0, 255).astype(np.uint8)
    return np.clip(x, 0, 1).astype(F32)


def _gray(a: np.ndarray, numerics: str) -> np.ndarray:
    """The luma image torchvision blends with (saturation) or averages (contrast): v1 cast to the
    image's dtype (truncated for uint8), v2 floored for uint8 and kept float32."""
    lum = _luma(a, numerics)
    if a.dtype != np.uint8:
        return lum
    return lum.astype(np.uint8) if numerics == "v1" else np.floor(lum)


def _rgb2hsv(x: np.ndarray, numerics: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """torchvision's float32 RGB -> HSV (v1 ``_rgb2hsv``, v2 ``_rgb_to_hsv``)."""
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    maxc, minc = x.max(axis=-1), x.min(axis=-1)
    eqc = maxc == minc
    cr = maxc - minc
    one = F32(1)
    s = cr / np.where(eqc, one, maxc)
    crd = np.where(eqc, one, cr)
    rc, gc, bc = (maxc - r) / crd, (maxc - g) / crd, (maxc - b) / crd
    hr = (bc - gc) * (maxc == r)
    hg = (F32(2) + rc - bc) * ((maxc == g) & (maxc != r))
    hb = (F32(4) + gc - rc) * ((maxc != g) & (maxc != r))
    h = hr + hg + hb
    h = h / F32(6) if numerics == "v1" else h * F32(1.0 / 6.0)
    return np.fmod(h + one, one), s, maxc


def _hsv2rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray, numerics: str) -> np.ndarray:
    h6 = h * F32(6)
    i = np.floor(h6)
    f = h6 - i
    one = F32(1)
    if numerics == "v1":
        p = v * (one - s)
        q = v * (one - s * f)
        t = v * (one - s * (one - f))
    else:
        sxf = s * f
        p = (one - s) * v
        q = (one - sxf) * v
        t = (sxf + (one - s)) * v
    p, q, t = (np.clip(z, 0, 1) for z in (p, q, t))
    return _select(i.astype(np.int32) % 6, v, p, q, t)


def _hue(a: np.ndarray, factor: float, numerics: str) -> np.ndarray:
    if a.shape[-1] == 1 or a.size == 0:
        return a.copy()
    x = a.astype(F32)
    if a.dtype == np.uint8:
        x = x / F32(255) if numerics == "v1" else x * F32(1.0 / 255)
    h, s, v = _rgb2hsv(x, numerics)
    h = np.mod(h + F32(factor), F32(1))
    out = _hsv2rgb(h, s, v, numerics)
    if a.dtype == np.uint8:
        return (out * F32(255.999)).astype(np.uint8)
    return out


def _tensor(a: np.ndarray, op: str, factor: float, numerics: str) -> np.ndarray:
    c = a.shape[-1]
    if op == "brightness":
        if numerics == "v1":
            return _blend(a, np.zeros((1, 1, 1), F32), factor, "v1")
        return _to_dtype(a.astype(F32) * F32(factor), a.dtype)
    if op == "contrast":
        g = _gray(a, numerics) if c == 3 else a.astype(F32)
        mean = F32(np.mean(g, dtype=np.float64))
        return _blend(a, np.full((1, 1, 1), mean, F32), factor, numerics)
    if op == "saturation":
        if c == 1:
            return a.copy()
        return _blend(a, _gray(a, numerics), factor, numerics)
    if op == "hue":
        return _hue(a, factor, numerics)
    raise ValueError(op)


def adjust(a: np.ndarray, op: str, factor: float, numerics: str) -> np.ndarray:
    """``a`` (``(H, W, C)``) with torchvision's ``adjust_<op>(factor)`` (``op``: brightness, contrast,
    saturation, hue) under ``numerics`` ("pil", "v1", "v2"); a new array."""
    _check(a, numerics, f"ColorJitter's {op}")
    return _pil(a, op, factor) if numerics == "pil" else _tensor(a, op, factor, numerics)


def to_gray(a: np.ndarray, numerics: str) -> np.ndarray:
    """torchvision's ``rgb_to_grayscale(img, num_output_channels=C)`` (``RandomGrayscale``): the luma
    repeated over the image's ``C`` channels (a 1-channel image as it is). Pillow: ``convert("L")``;
    tensors: the float luma cast to the dtype (uint8 truncated)."""
    _check(a, numerics, "RandomGrayscale")
    if a.shape[-1] == 1:
        return a.copy()
    if numerics == "pil":
        lum = pil_luma(a)[..., None]
    else:
        lum = _luma(a, numerics)
        lum = lum.astype(np.uint8) if a.dtype == np.uint8 else lum
    return np.repeat(lum, 3, axis=-1)
