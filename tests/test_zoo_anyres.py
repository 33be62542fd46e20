"""LLaVA-NeXT's and LLaVA-OneVision's fused tiles (goprep.transforms._hf_anyres): every piece one plan
over the source image, the batch's pieces in one engine call. Bit for bit the two-pass path's result
(the uint8 canvas, its tiles cut in NumPy, the per-tile chain) on PIL images, NumPy arrays, tensors
and PNG bytes, batches of mixed sizes and tile counts, and taken where it applies (the class
comparisons themselves are tests/test_zoo_tiles.py's)."""

import io

import numpy as np
import pytest

import goprep.transforms as gt
from goprep.transforms import _hf_anyres
from zoo_compare import as_kind, hf_processor

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(40)
# a 1080p frame (its pinpoint fits it unresized: the pad alone), tall, wide, odd, tiny
_SHAPES = [(1080, 1920), (900, 200), (97, 1200), (333, 517), (5, 7)]
_IMGS = [_RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES]
LLAVA = [f"Llava{m}ImageProcessor{b}" for m in ("Next", "Onevision") for b in ("", "Pil")]


def _png(a):
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="PNG")
    return buf.getvalue()


def _both(g, src):
    """``g(src)`` fused, and with the fused pipeline switched off (the two-pass path)."""
    fused = g(src)
    g._stage["anyres"] = None
    try:
        return fused, g(src)
    finally:
        del g._stage["anyres"]


@pytest.fixture
def spy(monkeypatch):
    """The fused path's calls: each one's count of images."""
    calls = []
    run = _hf_anyres.run

    def counted(pipe, items, *a):
        calls.append(len(items))
        return run(pipe, items, *a)

    monkeypatch.setattr(_hf_anyres, "run", counted)
    return calls


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor", "png"])
@pytest.mark.parametrize("kind", LLAVA)
def test_fused_equals_two_pass(kind, input_kind, spy):
    g = gt.from_hf(hf_processor(kind))
    imgs = [_png(a) if input_kind == "png" else as_kind(input_kind, a) for a in _IMGS]
    for src in [imgs[0], imgs[:2], imgs]:
        fused, two = _both(g, src)
        assert set(fused) == set(two)
        for k in fused:
            assert torch.equal(fused[k], two[k]), (kind, input_kind, k)
    if "Onevision" in kind:  # every image fused (NeXt's 336-pinpoint canvases cut into ragged 224 tiles: not)
        assert spy == [1, 2, len(imgs)], spy


def test_fused_one_engine_call_per_batch(monkeypatch):
    """A batch's pieces run as one engine call, mixed tile counts too (each piece at its offset, the
    padding tiles zeros)."""
    g = gt.from_hf(hf_processor("LlavaOnevisionImageProcessor"))
    g(_IMGS[0])
    pipe = g._stage["anyres"]
    calls = []
    call = type(pipe)._call
    monkeypatch.setattr(type(pipe), "_call", lambda self, src, *a, **k: calls.append(len(src)) or call(self, src, *a, **k))
    same = [_IMGS[0], _IMGS[0][::-1].copy()]  # two 1080p frames: 16 pieces each
    out = g(same)["pixel_values"]
    assert calls == [32] and out.shape[:2] == (2, 16)
    calls.clear()
    batch = [_IMGS[2], _IMGS[0], _IMGS[2]]  # 5 + 16 + 5 pieces (a 1x4 pinpoint)
    out = g(batch)["pixel_values"]
    assert calls == [26] and out.shape[:2] == (3, 16)
    assert torch.all(out[0, 5:] == 0) and torch.all(out[2, 5:] == 0)  # do_pad's zero tiles
    for i, x in enumerate(batch):  # each image's pieces where it alone puts them
        assert torch.equal(out[i, :len(g(x)["pixel_values"][0])], g(x)["pixel_values"][0])


def test_at_refuses_what_does_not_fit():
    """Pipeline._at: results that leave the array, or the wrong dtype, are refused by name."""
    import goprep
    from goprep import GoprepError

    p = goprep.pipeline(lambda img, s: goprep.normalize(goprep.resize(img, (s, s)), mean=0.0, std=1.0), device="cpu")
    img = _IMGS[3]
    res = np.zeros((2, 3, 4, 4), np.float32)
    p._at([img, img], res, [0, 192], lambda k, it: (it, (4,)))
    assert np.array_equal(res[1], p(img, 4)) and np.array_equal(res[0], res[1])
    for offs, arr in [([0, 193], res), ([0, 200], res), ([0, 0], res.astype(np.float64)), ([0], res)]:
        with pytest.raises(GoprepError):
            p._at([img, img], arr, offs, lambda k, it: (it, (4,)))


def test_not_fused_where_the_chain_resizes(spy):
    """Tiles that the per-tile chain resizes (300x500 pinpoints of 224 tiles) and OneVision's samples of
    several images (padded to a square, resized) keep the two-pass path."""
    g = gt.from_hf(hf_processor("LlavaNextImageProcessor", image_grid_pinpoints=[[300, 500], [500, 300]]))
    g(_IMGS[3])
    assert g._stage["anyres"] is None and spy == []
    g = gt.from_hf(hf_processor("LlavaOnevisionImageProcessorPil"))
    fused, two = _both(g, [[_IMGS[3]], [_IMGS[1], _IMGS[4]]])
    assert spy == [1]  # the first sample's image only
    assert torch.equal(fused["pixel_values"], two["pixel_values"])
