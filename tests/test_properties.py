"""Property tests (hypothesis, bounded): over drawn shapes, strides, dtypes and op chains,

- eager == fused: ops called one by one give exactly what the same function fused by @goprep.pipeline
  gives;
- view == copy: a strided, flipped or transposed view gives what a contiguous copy of it gives;
- batch == per-image: an (N, H, W, C) batch and a list give what each image gives alone;
- uint8 bilinear == cv2.resize(INTER_LINEAR), bit for bit.

Each property runs a modest number of examples (100; GOPREP_HYPOTHESIS_EXAMPLES for a deep run) (no deadline: CI machines are shared), with no
example database, so a run is bounded and leaves nothing behind.
"""

import os

import cv2
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import goprep

SETTINGS = settings(
    max_examples=int(os.environ.get("GOPREP_HYPOTHESIS_EXAMPLES", "100")),  # more for a deep local run deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

frac = st.floats(0, 1, exclude_max=True, allow_nan=False)


@st.composite
def images(draw, batch=None):
    dtype = draw(st.sampled_from([np.uint8, np.float32]))
    n = draw(st.integers(0, 3)) if batch is None else batch
    h, w = draw(st.integers(1, 20)), draw(st.integers(1, 20))
    c = draw(st.sampled_from([1, 3, 4]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    shape = ((n,) if n else ()) + (h, w, c)
    if dtype == np.uint8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    return (rng.random(shape, dtype=np.float32) * 255).astype(np.float32)


@st.composite
def views(draw, img):
    """A view of ``img``'s values laid out differently in memory: padded rows, reversed axes, a
    transposed base, or channels taken from a wider array."""
    kind = draw(st.sampled_from(["pad", "reverse", "transpose", "channels"]))
    if kind == "pad":  # rows and pixels with gaps
        big = np.zeros(img.shape[:-3] + (img.shape[-3] * 2, img.shape[-2] * 3, img.shape[-1]), img.dtype)
        big[..., ::2, ::3, :] = img
        return big[..., ::2, ::3, :]
    if kind == "reverse":  # negative strides
        return np.ascontiguousarray(img[..., ::-1, ::-1, :])[..., ::-1, ::-1, :]
    if kind == "transpose":  # a column-major image
        t = np.ascontiguousarray(np.swapaxes(img, -3, -2))
        return np.swapaxes(t, -3, -2)
    wide = np.zeros(img.shape[:-1] + (img.shape[-1] + 2,), img.dtype)  # pixels wider than their channels
    wide[..., 1 : 1 + img.shape[-1]] = img
    return wide[..., 1 : 1 + img.shape[-1]]


# An op chain: at most one resize or letterbox (a pipeline's limit), normalize only last. Parameters
# are fractions mapped onto the current image at run time, so one chain fits any image.
op = st.one_of(
    st.tuples(st.just("crop"), frac, frac, frac, frac),
    st.tuples(st.just("flip"), st.booleans(), st.booleans()),
    st.tuples(st.just("cvt"), frac),
)
sizer = st.one_of(
    st.tuples(st.just("resize"), st.integers(1, 24), st.integers(1, 24), st.sampled_from(["bilinear", "nearest"]), st.booleans()),
    st.tuples(st.just("letterbox"), st.integers(1, 24), st.integers(1, 24), st.integers(0, 255)),
)
norm = st.tuples(
    st.just("normalize"), st.floats(-2, 2), st.floats(0.1, 3), st.sampled_from(["float32", "float16"]), st.sampled_from(["CHW", "HWC"])
)


@st.composite
def chains(draw):
    ops = draw(st.lists(op, max_size=3))
    if draw(st.booleans()):
        ops.insert(draw(st.integers(0, len(ops))), draw(sizer))
    ops += draw(st.lists(op, max_size=2))
    if draw(st.booleans()):
        ops.append(draw(norm))
    return tuple(ops)


_CVT = {1: ["gray2rgb"], 3: ["rgb2bgr", "bgr2rgb"], 4: ["rgba2rgb"]}


def apply_chain(img, chain, u8):
    """Apply ``chain`` to an array or, inside a pipeline, a traced image; ``u8``: the source is uint8."""
    for o in chain:
        h, w, c = img.shape[-3:]
        if o[0] == "crop":
            ch, cw = 1 + int(o[3] * h), 1 + int(o[4] * w)
            img = goprep.crop(img, int(o[1] * (h - ch + 1)), int(o[2] * (w - cw + 1)), ch, cw)
        elif o[0] == "flip":
            img = goprep.flip(img, horizontal=o[1], vertical=o[2])
        elif o[0] == "cvt":
            codes = _CVT[c]
            img = goprep.cvt_color(img, codes[int(o[1] * len(codes))])
        elif o[0] == "resize":
            img = goprep.resize(img, (o[1], o[2]), interpolation=o[3], antialias=o[4] and o[3] == "bilinear")
        elif o[0] == "letterbox":
            pad = o[3] if u8 else float(o[3]) / 3
            img, _ = goprep.letterbox(img, (o[1], o[2]), pad_value=pad)
        else:
            img = goprep.normalize(img, mean=o[1], std=o[2], scale=1 / 255, dtype=o[3], layout=o[4])
    return img


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    assert a.tobytes() == b.tobytes(), f"max |diff| {np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))}"


@SETTINGS
@given(img=images(), chain=chains())
def test_eager_equals_fused(img, chain):
    u8 = img.dtype == np.uint8
    fused = goprep.pipeline(lambda im: apply_chain(im, chain, u8), device="cpu")
    _same(apply_chain(img, chain, u8), fused(img))


@SETTINGS
@given(data=st.data(), chain=chains())
def test_view_equals_copy(data, chain):
    img = data.draw(images())
    view = data.draw(views(img))
    assert np.array_equal(view, img)
    u8 = img.dtype == np.uint8
    fused = goprep.pipeline(lambda im: apply_chain(im, chain, u8), device="cpu")
    copy = np.ascontiguousarray(view)
    _same(fused(view), fused(copy))
    _same(apply_chain(view, chain, u8), apply_chain(copy, chain, u8))


@SETTINGS
@given(data=st.data(), chain=chains())
def test_batch_equals_per_image(data, chain):
    batch = data.draw(images(batch=data.draw(st.integers(1, 3))))
    u8 = batch.dtype == np.uint8
    fused = goprep.pipeline(lambda im: apply_chain(im, chain, u8), device="cpu")
    per = np.stack([fused(im) for im in batch])
    _same(fused(batch), per)
    _same(fused(list(batch)), per)


@SETTINGS
@given(
    h=st.integers(1, 64), w=st.integers(1, 64), oh=st.integers(1, 96), ow=st.integers(1, 96),
    c=st.sampled_from([1, 3, 4]), seed=st.integers(0, 2**16),
)
def test_uint8_bilinear_equals_cv2(h, w, oh, ow, c, seed):
    img = np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)
    cv2.setNumThreads(1)
    want = cv2.resize(img, (ow, oh), interpolation=cv2.INTER_LINEAR).reshape(oh, ow, c)
    _same(goprep.resize(img, (oh, ow)), want)
