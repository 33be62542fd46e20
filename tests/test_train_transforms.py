"""Training (random) transforms: converted torchvision / timm chains draw each item's parameters as the
original does from the same generators, and match its tensors under the same seed (PIL: 1e-5, uint8
tensors: 1 level); what is not reproduced is refused by name; the native ``generator=`` draws have
torchvision's distributions."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
T2 = pytest.importorskip("torchvision.transforms.v2")
from PIL import Image  # noqa: E402

import goprep  # noqa: E402
import goprep.transforms as gt  # noqa: E402
from goprep import PipelineError  # noqa: E402
from goprep import testing as gtest  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
LEVEL = 1 / 255 / min(STD)  # one uint8 level after the normalisation
SEEDS = range(6)


def _photo(h: int = 180, w: int = 240, seed: int = 0) -> np.ndarray:
    """A smooth RGB test image with detail (gradients plus noise), so that crops differ."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (h + w)], -1)
    return np.clip(base + rng.normal(0, 25, (h, w, 3)), 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def pil():
    return Image.fromarray(_photo())


@pytest.fixture(scope="module")
def tensor():
    return torch.from_numpy(_photo(seed=1)).permute(2, 0, 1).contiguous()


def _float(M, on_tensor: bool):
    """The float conversion of API ``M`` for the input kind."""
    if M is T2:
        return [T2.ToImage(), T2.ToDtype(torch.float32, scale=True)]
    return [T.ConvertImageDtype(torch.float32)] if on_tensor else [T.ToTensor()]


def _geometric(M):
    """Every converted random op of ``M``, one chain each (and a combination)."""
    return {
        "rrc": [M.RandomResizedCrop(64)],
        "rrc-bicubic": [M.RandomResizedCrop((48, 64), scale=(0.2, 0.9), ratio=(0.5, 2.0),
                                            interpolation=M.InterpolationMode.BICUBIC)],
        "rrc-noaa": [M.RandomResizedCrop(64, antialias=False)],
        "rrc-nearest": [M.RandomResizedCrop(64, interpolation=M.InterpolationMode.NEAREST)],
        "crop": [M.RandomCrop(100)],
        "crop-pad": [M.RandomCrop((190, 150), padding=(4, 8), fill=(10, 20, 30) if M is T2 else 7)],
        "crop-pad-if-needed": [M.RandomCrop(260, pad_if_needed=True)],
        "resize-crop": [M.Resize(120), M.RandomCrop(96, padding=4)],
        "flips": [M.RandomHorizontalFlip(), M.RandomVerticalFlip(p=0.3)],
        "rrc-flip-p1-p0": [M.RandomResizedCrop(64), M.RandomHorizontalFlip(1.0), M.RandomVerticalFlip(0.0),
                           M.RandomHorizontalFlip()],
    }


def _chains(M, on_tensor: bool):
    for key, geo in _geometric(M).items():
        yield key, M.Compose([*geo, *_float(M, on_tensor), M.Normalize(MEAN, STD)])


def _seed(s, timm):
    torch.manual_seed(s)
    if timm:  # timm's crop draws from Python's random
        random.seed(s)


def _same_seed(t, img, bound, key="", timm=False):
    """``from_torchvision(t)`` against ``t`` on ``img`` after the same seeds: within ``bound``, and the
    generators left where the original leaves them."""
    prep = gt.from_torchvision(t)
    for s in SEEDS:
        _seed(s, timm)
        want = t(img)
        after = (torch.rand(1).item(), random.random() if timm else None)
        _seed(s, timm)
        got = prep(img)
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert float((got.double() - want.double()).abs().max()) <= bound, (key, s)
        assert (torch.rand(1).item(), random.random() if timm else None) == after, key


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_pil(M, pil):
    for key, t in _chains(M, False):
        _same_seed(t, pil, 1e-5, key)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_uint8_tensor(M, tensor):
    for key, t in _chains(M, True):
        _same_seed(t, tensor, LEVEL * 1.0001, key)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_batches_take_the_kth_draws(M, pil, tensor):
    """A list (or an (N, C, H, W) batch) is item 0's draws, then item 1's, ...: torchvision's Compose
    called on each item in turn."""
    other = Image.fromarray(_photo(176, 232, seed=3))
    for key, t in _chains(M, False):
        prep = gt.from_torchvision(t)
        if key in ("crop-pad-if-needed",):
            continue  # larger than the images: covered single above
        items = [pil, pil, pil] if key == "flips" else [pil, other, pil]  # flips keep each size
        torch.manual_seed(11)
        want = torch.stack([t(x) for x in items])
        torch.manual_seed(11)
        got = prep(items)
        assert float((got - want).abs().max()) <= 1e-5, key
    t = M.Compose([*_geometric(M)["rrc"], *_float(M, True), M.Normalize(MEAN, STD)])
    prep = gt.from_torchvision(t)
    batch = torch.stack([tensor, tensor.flip(-1), tensor])
    torch.manual_seed(5)
    want = torch.stack([t(x) for x in batch])
    torch.manual_seed(5)
    got = prep(batch)
    assert got.shape == want.shape
    assert float((got - want).abs().max()) <= LEVEL * 1.0001
    out = torch.empty_like(want)
    torch.manual_seed(5)
    assert prep(batch, out=out) is out
    assert torch.equal(out, got)


def test_uint8_result_without_float_conversion(tensor):
    _same_seed(T2.Compose([T2.RandomResizedCrop(50), T2.RandomHorizontalFlip()]), tensor, 1)


def test_memo_stays_bounded(pil):
    """Each item's drawn box is its own plan: the pipeline's memo is bounded as every goprep memo."""
    t = T.Compose([T.RandomResizedCrop(32), T.ToTensor()])
    prep = gt.from_torchvision(t)
    torch.manual_seed(0)
    with gtest.cache_limits(signatures=8, plans=16):
        gtest.clear_caches()  # the sizes below are every memo's: start from none (earlier tests filled some)
        traces = gtest.trace_count()
        for _ in range(40):
            prep(pil)
        traced = gtest.trace_count() - traces
        sizes = gtest.cache_sizes()
    assert traced > 16  # more distinct boxes than either bound holds
    assert max(sizes["signatures"]) <= 8
    assert sizes["plans"] <= 16


def test_timm_training_transform(pil):
    timm_data = pytest.importorskip("timm.data")
    for interp in ("bilinear", "bicubic", "random"):
        t = timm_data.create_transform(96, is_training=True, color_jitter=None, interpolation=interp,
                                       hflip=0.5, vflip=0.25)
        _same_seed(t, pil, 1e-5, interp, timm=True)
    # uint8 tensors (timm's own Normalize needs float: without it), v1's numerics, bicubic or bilinear per item
    t = timm_data.create_transform(96, is_training=True, color_jitter=None, interpolation="random", vflip=0.3,
                                   normalize=False)
    _same_seed(t, torch.from_numpy(_photo(seed=1)).permute(2, 0, 1).contiguous(), 1, "tensor", timm=True)
    # timm's default draws ColorJitter(0.4, 0.4, 0.4): converted (tests/test_train_color.py covers it whole)
    _same_seed(timm_data.create_transform(96, is_training=True), pil, 1e-5, "jitter 0.4", timm=True)
    # color_jitter=0 still adds ColorJitter(0, 0, 0), which draws a permutation only: converted
    _same_seed(timm_data.create_transform(96, is_training=True, color_jitter=0), pil, 1e-5, "jitter 0", timm=True)
    for kw, name in ((dict(auto_augment="rand-m9-mstd0.5"), "RandAugment"),
                     (dict(auto_augment="augmix-m5-w4-d2"), "AugMix"), (dict(auto_augment="v0"), "AutoAugment")):
        with pytest.raises(PipelineError, match=name):
            gt.from_torchvision(timm_data.create_transform(96, is_training=True, color_jitter=None, **kw))


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_refused_by_name(M):
    # ColorJitter, RandomGrayscale and RandomErasing convert: tests/test_train_color.py
    cases = [M.RandomRotation(10), M.RandomAffine(5),
             M.RandomPerspective(), M.RandAugment(), M.TrivialAugmentWide(), M.AutoAugment(), M.AugMix(),
             M.GaussianBlur(3), M.RandomApply([M.RandomRotation(10)], p=0.5), M.RandomInvert()]
    for tr in cases:
        name = type(tr).__name__
        with pytest.raises(PipelineError, match=name):
            gt.from_torchvision(M.Compose([M.RandomResizedCrop(32), tr]))
    for mode in ("reflect", "edge", "symmetric"):
        with pytest.raises(PipelineError, match=f"RandomCrop.*{mode}"):
            gt.from_torchvision(M.RandomCrop(32, padding=4, padding_mode=mode))
    # a RandomPhotometricDistort(p=0) draws several numbers in torchvision: refused in a chain that draws
    if M is T2:
        prep = gt.from_torchvision(M.Compose([M.RandomResizedCrop(32), M.RandomPhotometricDistort(p=0)]))
        with pytest.raises(PipelineError, match="RandomPhotometricDistort"):
            prep(torch.zeros((3, 40, 40), dtype=torch.uint8))


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_p0_transforms_keep_the_draws_in_step(M, pil):
    """A random transform with p=0 changes nothing but torchvision still draws for it: the later draws
    stay in step."""
    t = M.Compose([M.RandomResizedCrop(40), M.RandomGrayscale(p=0), M.RandomHorizontalFlip(), M.ColorJitter(),
                   *_float(M, False), M.RandomErasing(p=0)])
    _same_seed(t, pil, 1e-5)


# ---------------------------------------------------------------------------------------------
# native draws with an explicit generator


def test_native_torch_generator_is_torchvisions_draws(pil):
    for s in SEEDS:
        torch.manual_seed(s)
        box = T.RandomResizedCrop.get_params(pil, (0.08, 1.0), (3 / 4, 4 / 3))
        flip = bool(torch.rand(1) < 0.5)
        prm = gt.draw_resized_crop(pil.size[1], pil.size[0], hflip=0.5, generator=torch.Generator().manual_seed(s))
        assert tuple(prm[:4]) == box and prm.hflip == flip and not prm.vflip


def test_native_random_resized_crop_returns_params():
    a = _photo()
    g = np.random.default_rng(3)
    y, prm = gt.random_resized_crop(a, (40, 50), hflip=0.5, generator=g, return_params=True)
    want = goprep.resize(a[prm.top:prm.top + prm.height, prm.left:prm.left + prm.width], (40, 50), antialias=True)
    if prm.hflip:
        want = want[:, ::-1]
    assert np.array_equal(y, want)
    batch, prms = gt.random_resized_crop([a, a, a], 32, generator=np.random.default_rng(3), return_params=True)
    assert batch.shape == (3, 32, 32, 3) and len(prms) == 3
    # the same generator state gives the same draws
    again = gt.random_resized_crop([a, a, a], 32, generator=np.random.default_rng(3))
    assert np.array_equal(batch, again)
    with pytest.raises(goprep.InvalidArgumentError, match="generator"):
        gt.random_resized_crop(a, 32, generator=42)
    with pytest.raises(goprep.InvalidArgumentError, match="scale"):
        gt.random_resized_crop(a, 32, scale=(0.9, 0.1), generator=g)


def _hist(v, edges):
    return np.histogram(v, edges)[0] / len(v)


@pytest.mark.parametrize("gen", ["numpy", "torch"])
def test_native_distributions_match_torchvision(gen):
    """Scale (box area / image area) and ratio (w / h) histograms of 4000 draws, and the flip rate,
    against torchvision's own ``get_params`` (fixed seeds: deterministic; the bounds are ~5 standard
    deviations of a 4000-sample bin frequency)."""
    n, h, w = 4000, 375, 500
    img = torch.zeros((1, h, w))
    torch.manual_seed(1234)
    ref = [T.RandomResizedCrop.get_params(img, [0.08, 1.0], [3 / 4, 4 / 3]) for _ in range(n)]
    g = np.random.default_rng(99) if gen == "numpy" else torch.Generator().manual_seed(99)
    got = [gt.draw_resized_crop(h, w, hflip=0.5, generator=g) for _ in range(n)]
    for f, edges in ((lambda b: b[2] * b[3] / (h * w), np.linspace(0, 1, 11)),
                     (lambda b: b[3] / b[2], np.linspace(0.5, 2.0, 11))):
        a = _hist([f(b) for b in ref], edges)
        b = _hist([f(tuple(p[:4])) for p in got], edges)
        assert np.abs(a - b).max() < 0.04
    rate = np.mean([p.hflip for p in got])
    assert abs(rate - 0.5) < 0.04


def test_converted_training_chain_pickles(pil):
    """A converted training chain travels into DataLoader workers (spawn) as its ops: the copy draws as
    the original does."""
    import pickle

    t = T.Compose([T.RandomResizedCrop(48), T.RandomHorizontalFlip(), T.ToTensor()])
    prep = gt.from_torchvision(t)
    copy = pickle.loads(pickle.dumps(prep))
    torch.manual_seed(4)
    want = prep([pil, pil])
    torch.manual_seed(4)
    assert torch.equal(copy([pil, pil]), want)


def test_boxes_and_masks_follow_the_params():
    """``Params.boxes`` moves boxes as torchvision v2 moves ``BoundingBoxes`` under the same resized crop
    and flips; ``resized_crop_with`` applies the drawn parameters to another image or a mask."""
    tv_tensors = pytest.importorskip("torchvision.tv_tensors")
    F = T2.functional
    a = _photo()
    g = np.random.default_rng(8)
    for _ in range(20):
        y, prm = gt.random_resized_crop(a, (40, 56), scale=(0.5, 1.0), hflip=0.5, vflip=0.5, generator=g,
                                        return_params=True)
        assert np.array_equal(gt.resized_crop_with(a, prm, (40, 56)), y)
        # boxes inside the crop (torchvision clamps the outside part)
        x0, y0 = prm.left + prm.width * 0.25, prm.top + prm.height * 0.25
        boxes = np.array([[x0, y0, x0 + prm.width * 0.5, y0 + prm.height * 0.3],
                          [prm.left, prm.top, prm.left + prm.width, prm.top + prm.height]])
        bb = tv_tensors.BoundingBoxes(torch.tensor(boxes), format="XYXY", canvas_size=a.shape[:2])
        bb = F.resized_crop(bb, prm.top, prm.left, prm.height, prm.width, [40, 56])
        if prm.hflip:
            bb = F.horizontal_flip(bb)
        if prm.vflip:
            bb = F.vertical_flip(bb)
        assert np.allclose(prm.boxes(boxes, (40, 56)), bb.numpy(), atol=1e-4)  # torchvision: float32 inside
    mask = (a[..., 0] > 128).astype(np.uint8)[..., None]
    ms = gt.resized_crop_with([mask, mask], [prm, prm], (40, 56), interpolation="nearest", antialias=False)
    assert ms.shape == (2, 40, 56, 1) and set(np.unique(ms)) <= {0, 1}
    with pytest.raises(goprep.InvalidArgumentError, match="params"):
        gt.resized_crop_with([mask, mask], [prm], (40, 56))
    with pytest.raises(goprep.InvalidArgumentError, match="height"):
        gt.draw_resized_crop(0, 10, generator=g)


def test_numpy_inputs_draw_as_pil(pil):
    """NumPy HWC images (and an (N, H, W, C) batch) get the PIL numerics and the same draws."""
    prep = gt.from_torchvision(T.Compose([T.RandomResizedCrop(40), T.RandomVerticalFlip(), T.ToTensor()]))
    a = np.asarray(pil)
    torch.manual_seed(9)
    want = prep([pil, pil])
    torch.manual_seed(9)
    assert torch.equal(prep(np.stack([a, a])), want)
    torch.manual_seed(9)
    assert torch.equal(prep(a), want[0])
