"""Views, crops, negative strides and other non-contiguous inputs are read in place: same result as a
contiguous copy, and no input-sized allocation happens during a call."""

import tracemalloc

import numpy as np
import pytest

import goprep
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS, assert_array_identical, rand_u8

MEAN, STD = IMAGENET_MEAN, IMAGENET_STD


def _base():
    return np.ascontiguousarray(PHOTOS["chelsea"])  # (300, 451, 3)


def _rgba():
    return np.ascontiguousarray(PHOTOS["chelsea_rgba"])


VIEWS = {
    "contiguous": lambda: _base(),
    "slice_view": lambda: _base()[13:250, 7:400],
    "goprep_crop": lambda: goprep.crop(_base(), 21, 30, 200, 333),
    "neg_w": lambda: _base()[:, ::-1],
    "neg_h": lambda: _base()[::-1],
    "neg_hw": lambda: _base()[::-1, ::-1],
    "stepped": lambda: _base()[::2, ::3],
    "neg_stepped": lambda: _base()[::-3, ::-2],
    "rgba_channel_slice": lambda: _rgba()[..., :3],
    "neg_channels": lambda: _base()[..., ::-1],
    "transposed": lambda: np.ascontiguousarray(_base().transpose(1, 0, 2)).transpose(1, 0, 2),
    "fortran": lambda: np.asfortranarray(_base()),
    "broadcast_row": lambda: np.broadcast_to(_base()[5:6], (120, 451, 3)),
    "float32_neg": lambda: (_base().astype(np.float32) / np.float32(255))[::-1, ::-2],
    "batch_stepped": lambda: np.stack([_base(), _base()[::-1], _base()[:, ::-1]])[::2, :, ::-1],
    "batch_transposed_hw": lambda: np.ascontiguousarray(np.stack([_base(), _base()[::-1]]).transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3),
}


def _chain(img):
    img = goprep.crop(img, 2, 4, 90, 140)
    img = goprep.resize(img, (64, 48))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD, dtype="float16")


_PIPE = goprep.pipeline(_chain)

OPS = {
    "resize": lambda x: goprep.resize(x, (101, 67)),
    "resize_up": lambda x: goprep.resize(x, (333, 517)),
    "nearest": lambda x: goprep.resize(x, (101, 67), interpolation="nearest"),
    "antialias": lambda x: goprep.resize(x, (51, 67), antialias=True),
    "flip": lambda x: goprep.flip(x, vertical=True),
    "cvt_color": lambda x: goprep.cvt_color(x, "rgb2bgr"),
    "normalize": lambda x: goprep.normalize(x, mean=MEAN, std=STD),
    "letterbox": lambda x: goprep.letterbox(x, (128, 128))[0],
    "pipeline": lambda x: _PIPE(x),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("view", list(VIEWS))
def test_strided_input_equals_contiguous_copy(view, op):
    v = VIEWS[view]()
    if view not in ("contiguous", "fortran"):
        assert not v.flags.c_contiguous or v.base is not None
    got = OPS[op](v)
    want = OPS[op](np.ascontiguousarray(v))
    assert_array_identical(got, want)


def test_list_of_views_in_pipeline():
    base = _base()
    views = [base[::-1], base[:, ::-2], goprep.crop(base, 0, 0, 150, 200), base[..., ::-1]]
    got = _PIPE(views)
    want = _PIPE([np.ascontiguousarray(v) for v in views])
    assert_array_identical(got, want)


# ----------------------------------------------------------------------------------- allocations

BIG = rand_u8((2000, 2000, 3), seed=42)


def _peak_during(fn):
    fn()  # warm-up: plan compilation, lazy imports, caches
    fn()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def _pipe_fn(img):
    img = goprep.resize(img, (1000, 1000))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD)


_BIG_PIPE = goprep.pipeline(_pipe_fn)

ALLOC_CASES = {
    "resize": (lambda s, o: goprep.resize(s, (1000, 1000), out=o), ((1000, 1000, 3), np.uint8)),
    "resize_antialias": (lambda s, o: goprep.resize(s, (500, 500), antialias=True, out=o), ((500, 500, 3), np.uint8)),
    "flip": (lambda s, o: goprep.flip(s, out=o), ((2000, 2000, 3), np.uint8)),
    "cvt_color": (lambda s, o: goprep.cvt_color(s, "rgb2bgr", out=o), ((2000, 2000, 3), np.uint8)),
    "normalize": (lambda s, o: goprep.normalize(s, mean=MEAN, std=STD, out=o), ((3, 2000, 2000), np.float32)),
    "letterbox": (lambda s, o: goprep.letterbox(s, (1000, 1200), out=o), ((1000, 1200, 3), np.uint8)),
    "pipeline": (lambda s, o: _BIG_PIPE(s, out=o), ((3, 1000, 1000), np.float32)),
}
ALLOC_INPUTS = {
    "contiguous": lambda: BIG,
    "neg_w": lambda: BIG[:, ::-1],
    "neg_hw": lambda: BIG[::-1, ::-1],
    "crop_view": lambda: BIG[1:, 1:],
}


@pytest.mark.parametrize("inp", list(ALLOC_INPUTS))
@pytest.mark.parametrize("case", list(ALLOC_CASES))
def test_no_input_sized_allocation_with_out(case, inp):
    fn, (oshape, odtype) = ALLOC_CASES[case]
    src = ALLOC_INPUTS[inp]()
    if src.shape != BIG.shape:  # crop_view: 1999 x 1999
        oshape = {"flip": src.shape, "cvt_color": src.shape, "normalize": (3,) + src.shape[:2]}.get(case, oshape)
    out = np.empty(oshape, odtype)
    peak = _peak_during(lambda: fn(src, out))
    limit = 0.10 * BIG.nbytes
    assert peak < limit, f"{peak / 1e6:.1f} MB traced during the call (limit {limit / 1e6:.1f} MB): the input was copied"


def test_results_do_not_alias_input():
    img = _base()
    for name, op in OPS.items():
        r = op(img)
        assert not np.shares_memory(r, img), f"{name} returned a view of its input"
