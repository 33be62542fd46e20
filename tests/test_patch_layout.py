"""The engine's patch layout (``goprep._ops.patch_rows``, the engine's norm.patch): Qwen2-VL's
``pixel_values`` rows written by the engine. Checked bit for bit against the PyTorch flatten the
Qwen2-VL converter ran before (on the engine's CHW result), for the converter and for hand-written
pipelines with odd patch parameters and channel counts, and its refusals."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import goprep
from goprep import _ops
from goprep.transforms import Converted, from_hf

torch = pytest.importorskip("torch")

MEAN, STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)


def torch_flatten(x, p, m, t):
    """The Qwen2-VL converter's former flatten (the processor's reshape and permute): ``(B, C, H, W)`` ->
    ``(B, gh * gw, C * T * P * P)``."""
    b, c, h, w = x.shape
    gh, gw = h // p, w // p
    x = x.reshape(b, c, gh // m, m, p, gw // m, m, p).permute(0, 2, 5, 3, 6, 1, 4, 7)
    x = x.unsqueeze(6).expand(-1, -1, -1, -1, -1, -1, t, -1, -1)
    return x.reshape(b, gh * gw, c * t * p * p)


def photo(h, w, c=3, seed=0):
    """A smooth image with noise: resizes give values across the whole range."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = (np.sin(y[..., None] / 7.0 + np.arange(c)) * np.cos(x[..., None] / 11.0) + 1) * 110
    return np.clip(base + rng.normal(0, 12, (h, w, c)), 0, 255).astype(np.uint8)


def chw_reference(conv, src):
    """The converter's CHW result (B, C, H, W): the same pipelines without the patch layout."""
    ref = copy.copy(conv)
    ref._pipes = {}
    ref._laid_out = lambda img: img  # the engine result before the patch layout
    y = Converted.__call__(ref, src)
    return y[None] if y.ndim == 3 else y


@pytest.mark.parametrize("cls", ["Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil"])
@pytest.mark.parametrize("cfg", [{}, {"max_pixels": 200704, "temporal_patch_size": 1},
                                 {"patch_size": 7, "merge_size": 3, "temporal_patch_size": 3, "min_pixels": 4000}])
def test_processor_rows_equal_the_torch_flatten(cls, cfg):
    """PatchBatch's pixel_values (the engine's patch rows) equal the old path bit for bit: the engine's
    CHW result flattened in PyTorch, per size group, concatenated in order; image_grid_thw agrees."""
    pytest.importorskip("transformers")
    conv = from_hf({"image_processor_type": cls, **cfg})
    p, m, t = conv._patch, conv._merge, conv._temporal
    imgs = [photo(300, 500, seed=1), photo(61, 1900, seed=2), photo(300, 500, seed=3), photo(97, 131, seed=4)]
    got = conv(imgs)
    pv, grid = got["pixel_values"], got["image_grid_thw"]
    rows, want_grid = [], []
    for img in imgs:
        x = chw_reference(conv, img)
        rows.append(torch_flatten(x, p, m, t)[0])
        want_grid.append([1, x.shape[2] // p, x.shape[3] // p])
    want = torch.cat(rows)
    assert pv.dtype == torch.float32 and pv.shape == want.shape
    assert torch.equal(pv, want)
    assert grid.tolist() == want_grid
    # one image, and one group of two same-size images (one engine call: its rows as they are)
    one = conv(imgs[1])["pixel_values"]
    assert torch.equal(one, rows[1])
    pair = conv([imgs[0], imgs[2]])["pixel_values"]
    assert torch.equal(pair, torch.cat([rows[0], rows[2]]))
    assert pair.is_contiguous()


@pytest.mark.parametrize("p,m,t,cmap", [(14, 2, 2, "rgb"), (3, 2, 3, "rgb"), (4, 1, 1, "gray"), (2, 3, 2, "rgba")])
def test_pipeline_rows_equal_the_permuted_chw(p, m, t, cmap):
    """patch_rows in a hand-written pipeline: the CHW result permuted, for 1, 3 and 4 channels, T 1-3,
    a single image and a batch list."""
    f = p * m
    h, w = 5 * f, 3 * f
    c = {"rgb": 3, "gray": 1, "rgba": 4}[cmap]
    mean, std = (MEAN + (0.5,))[:c], (STD + (0.25,))[:c]

    def make(patch):
        @goprep.pipeline(device="cpu")
        def fn(img):
            img = goprep.resize(img, (h, w), interpolation="bicubic", antialias=True)
            img = goprep.normalize(img, mean=mean, std=std)
            return _ops.patch_rows(img, p, m, t) if patch else img
        return fn

    src = [photo(71, 53, c, seed=5), photo(71, 53, c, seed=6)]
    got, chw = make(True)(src), make(False)(src)
    want = torch_flatten(torch.from_numpy(chw), p, m, t).numpy()
    assert got.shape == (2, (h // p) * (w // p), c * t * p * p)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    one = make(True)(src[0])
    assert one.shape == got.shape[1:] and np.array_equal(one, got[0])


def test_float_source_rows_equal_the_permuted_chw():
    """A float32 source (the emit stage's computed normalisation) laid out as patch rows."""
    src = photo(40, 44).astype(np.float32) + 0.25

    @goprep.pipeline(device="cpu")
    def chw(img):
        return goprep.normalize(goprep.resize(img, (28, 56)), mean=MEAN, std=STD, scale=1 / 255)

    @goprep.pipeline(device="cpu")
    def rows(img):
        return _ops.patch_rows(goprep.normalize(goprep.resize(img, (28, 56)), mean=MEAN, std=STD, scale=1 / 255), 14, 2, 2)

    want = torch_flatten(torch.from_numpy(chw(src))[None], 14, 2, 2)[0].numpy()
    assert np.array_equal(rows(src).view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("norm,arg,match", [
    (None, "patch", "normalised to float32 CHW"),
    ({"layout": "HWC"}, "patch", "normalised to float32 CHW"),
    ({"dtype": "float16"}, "patch", "normalised to float32 CHW"),
    ({}, "patch", "not a multiple of patch_size"),
])
def test_patch_rows_refusals(norm, arg, match):
    """The patch layout needs a float32 CHW normalised result whose sides are multiples of
    patch_size * merge_size; the error names the argument."""
    size = (28, 56) if norm != {} else (28, 42)

    @goprep.pipeline(device="cpu")
    def fn(img):
        img = goprep.resize(img, size)
        if norm is not None:
            img = goprep.normalize(img, mean=MEAN, std=STD, **norm)
        return _ops.patch_rows(img, 14, 2, 2)

    with pytest.raises(goprep.PipelineError, match=match) as e:
        fn(photo(30, 30))
    assert e.value.argument == arg


@pytest.mark.parametrize("bad", [(0, 2, 2, "patch_size"), (14, -1, 2, "merge_size"), (14, 2, True, "temporal_patch_size"),
                                 (14.0, 2, 2, "patch_size")])
def test_patch_rows_bad_parameters(bad):
    *args, arg = bad

    @goprep.pipeline(device="cpu")
    def fn(img):
        return _ops.patch_rows(goprep.normalize(goprep.resize(img, (28, 28)), mean=MEAN, std=STD), *args)

    with pytest.raises(goprep.InvalidArgumentError) as e:
        fn(photo(30, 30))
    assert e.value.argument == arg


def test_engine_bound_names_the_parameter():
    """A parameter past the engine's bound (MaxPatchParam) is refused by the engine's validation,
    naming it."""
    @goprep.pipeline(device="cpu")
    def fn(img):
        return _ops.patch_rows(goprep.normalize(img, mean=MEAN, std=STD), 1, 1, 1 << 20)

    with pytest.raises(goprep.GoprepError) as e:
        fn(photo(4, 4))
    assert e.value.argument == "temporal_patch_size"
