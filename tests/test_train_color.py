"""ColorJitter, RandomGrayscale and RandomErasing: converted torchvision (v1, v2) and timm chains give
torchvision's tensors under the same seed (PIL inputs within 1e-5, uint8 tensors within one level,
float tensors within 1e-5), item k of a batch the k-th draws; the NumPy numerics are Pillow's and
torchvision's; the native ops' draws have torchvision's distributions; what is not reproduced is refused
by name."""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
T2 = pytest.importorskip("torchvision.transforms.v2")
from PIL import Image, ImageEnhance  # noqa: E402

import goprep.transforms as gt  # noqa: E402
from goprep import InvalidArgumentError, PipelineError  # noqa: E402
from goprep.transforms import _color_kernels as K  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
LEVEL = 1 / 255 / min(STD)  # one uint8 level after the normalisation
SEEDS = range(8)


def _photo(h: int, w: int, seed: int) -> np.ndarray:
    """A smooth RGB image with noise and some near-gray areas (where hue is ill-conditioned)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (h + w)], -1)
    base[: h // 4] = base[: h // 4].mean(-1, keepdims=True)  # a gray band
    return np.clip(base + rng.normal(0, 20, (h, w, 3)), 0, 255).astype(np.uint8)


IMG = _photo(97, 131, 0)  # odd sizes
GRAY = _photo(83, 71, 1)[..., 0]


def _tensor(a: np.ndarray):
    a = a[..., None] if a.ndim == 2 else a
    return torch.from_numpy(a).permute(2, 0, 1).contiguous()


def _float(M, on_tensor: bool):
    if M is T2:
        return [T2.ToImage(), T2.ToDtype(torch.float32, scale=True)]
    return [T.ConvertImageDtype(torch.float32)] if on_tensor else [T.ToTensor()]


def _colour_ops(M):
    """Each converted colour op alone, and combinations with the geometric ones."""
    return {
        "brightness": [M.ColorJitter(brightness=0.5)],
        "contrast": [M.ColorJitter(contrast=(0.2, 1.8))],
        "saturation": [M.ColorJitter(saturation=0.6)],
        "hue": [M.ColorJitter(hue=0.3)],
        "all": [M.ColorJitter(0.4, 0.4, 0.4, 0.1)],
        "gray": [M.RandomGrayscale(0.5)],
        "gray-p1": [M.RandomGrayscale(1.0)],
        "rrc-jitter-gray-flip": [M.RandomResizedCrop(56), M.ColorJitter(0.4, 0.4, 0.4, 0.2), M.RandomGrayscale(0.3),
                                 M.RandomHorizontalFlip()],
        "crop-jitter": [M.RandomCrop(64, padding=3), M.ColorJitter(0.3, 0.3, 0.3, 0.05)],
        "apply": [M.RandomResizedCrop(50), M.RandomApply([M.ColorJitter(0.4, 0.4, 0.4, 0.1), M.RandomGrayscale(0.5)],
                                                         p=0.6)],
    }


def _erasings(M):
    return {
        "erase-0": [M.RandomErasing(p=0.7)],
        "erase-random": [M.RandomErasing(p=0.9, scale=(0.05, 0.5), value="random")],
        "erase-tuple": [M.RandomErasing(p=1.0, ratio=(0.5, 2.0), value=(0.5, -1.0, 2.0))],
        "erase-twice": [M.RandomErasing(p=0.6), M.RandomErasing(p=0.6, value="random")],
    }


def _chains(M, on_tensor: bool):
    for key, ops in _colour_ops(M).items():
        yield key, M.Compose([*ops, *_float(M, on_tensor), M.Normalize(MEAN, STD)])
    for key, ers in _erasings(M).items():
        yield key, M.Compose([M.RandomResizedCrop(48), M.ColorJitter(0.2, 0.2), *_float(M, on_tensor),
                              M.Normalize(MEAN, STD), *ers])


def _same_seed(t, img, bound, key="", timm=False):
    """``from_torchvision(t)`` against ``t`` after the same seeds: within ``bound``, and the generators
    left where the original leaves them."""
    prep = gt.from_torchvision(t)
    for s in SEEDS:
        torch.manual_seed(s)
        random.seed(s)
        want = t(img)
        after = (torch.rand(1).item(), random.random())
        torch.manual_seed(s)
        random.seed(s)
        got = prep(img)
        assert got.shape == want.shape and got.dtype == want.dtype, key
        assert float((got.double() - want.double()).abs().max()) <= bound, (key, s)
        assert (torch.rand(1).item(), random.random()) == after, key


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_pil(M):
    for key, t in _chains(M, False):
        _same_seed(t, Image.fromarray(IMG), 1e-5, key)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_uint8_tensor(M):
    for key, t in _chains(M, True):
        _same_seed(t, _tensor(IMG), LEVEL * 1.0001, key)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_float_tensor(M):
    """Float32 tensors in: the jitter in float (no rounding), within 1e-5 after Normalize (a resize
    before it is PyTorch's interpolate: goprep's float kernel, within 1e-5 before the jitter, was not
    after it)."""
    x = _tensor(IMG).float() / 255
    for key, ops in _colour_ops(M).items():
        t = M.Compose([*ops, *_float(M, True), M.Normalize(MEAN, STD)])
        _same_seed(t, x, 1e-5, key)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_same_seed_uint8_result(M):
    """No float conversion: the uint8 results themselves, within one level; erasing on uint8 tensors
    (v2 casts the value as torchvision's assignment does)."""
    to = [T2.ToImage()] if M is T2 else [T.PILToTensor()]
    t = M.Compose([M.RandomResizedCrop(40), M.ColorJitter(0.5, 0.5, 0.5, 0.2), M.RandomGrayscale(0.4), *to,
                   M.RandomErasing(0.8, value=(7, 100, 250))])
    _same_seed(t, Image.fromarray(IMG), 0, "pil")
    # v1's PILToTensor refuses tensors: its chain on tensors without it (RandomErasing takes the tensor)
    _same_seed(t if M is T2 else M.Compose(t.transforms[:3] + t.transforms[4:]), _tensor(IMG), 1, "tensor")
    if M is T2:  # v2 erases PIL images too (as uint8): goprep's PIL chain returns the (H, W, C) array
        t = M.Compose([M.RandomResizedCrop(40), M.ColorJitter(0.3, 0.3), M.RandomErasing(0.9, value=(5, 6, 7))])
        prep = gt.from_torchvision(t)
        for s in SEEDS:
            torch.manual_seed(s)
            want = np.asarray(t(Image.fromarray(IMG)))
            torch.manual_seed(s)
            assert np.array_equal(prep(Image.fromarray(IMG)), want), s


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_gray_inputs(M):
    """1-channel images: saturation and hue leave them as they are, contrast averages the one channel,
    RandomGrayscale keeps one channel; erasing draws its random patch with one channel."""
    t = M.Compose([M.RandomCrop(60), M.ColorJitter(0.5, 0.5, 0.5, 0.3), M.RandomGrayscale(0.5),
                   *_float(M, False), M.Normalize((0.5,), (0.25,)), M.RandomErasing(0.8, value="random")])
    _same_seed(t, Image.fromarray(GRAY), 1e-5, "L")
    tt = M.Compose([M.RandomCrop(60), M.ColorJitter(0.5, 0.5, 0.5, 0.3), M.RandomGrayscale(0.5),
                    *_float(M, True)[-1:], M.Normalize((0.5,), (0.25,)), M.RandomErasing(0.8, value="random")])
    _same_seed(tt, _tensor(GRAY), 1 / 255 / 0.25 * 1.0001, "1-channel tensor")


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_batches_take_the_kth_draws(M):
    other = _photo(90, 120, 5)
    t = M.Compose([M.RandomResizedCrop(48), M.ColorJitter(0.4, 0.4, 0.4, 0.1), M.RandomGrayscale(0.3),
                   *_float(M, False), M.Normalize(MEAN, STD), M.RandomErasing(0.8, value="random")])
    prep = gt.from_torchvision(t)
    items = [Image.fromarray(IMG), Image.fromarray(other), Image.fromarray(IMG)]
    torch.manual_seed(3)
    want = torch.stack([t(x) for x in items])
    torch.manual_seed(3)
    got = prep(items)
    assert float((got - want).abs().max()) <= 1e-5
    tt = M.Compose([M.RandomResizedCrop(48), M.ColorJitter(0.4, 0.4, 0.4, 0.1), *_float(M, True),
                    M.Normalize(MEAN, STD), M.RandomErasing(0.8)])
    prep = gt.from_torchvision(tt)
    batch = torch.stack([_tensor(IMG), _tensor(IMG).flip(-1), _tensor(IMG)])
    torch.manual_seed(4)
    want = torch.stack([tt(x) for x in batch])
    torch.manual_seed(4)
    out = torch.empty_like(want)
    assert prep(batch, out=out) is out
    assert float((out - want).abs().max()) <= LEVEL * 1.0001


def test_timm_training_transform():
    """timm's ``create_transform(is_training=True)``: its ColorJitter (torchvision v1), grayscale_prob
    (RandomGrayscale) and its own RandomErasing (Python's random for the boxes, torch's for the fill)."""
    timm_data = pytest.importorskip("timm.data")
    for mode in ("const", "rand", "pixel"):
        for count in (1, 3):
            t = timm_data.create_transform(72, is_training=True, color_jitter=0.4, grayscale_prob=0.2, re_prob=0.7,
                                           re_mode=mode, re_count=count)
            _same_seed(t, Image.fromarray(IMG), 1e-5, f"timm {mode} {count}", timm=True)
    # SimCLR-like: RandomApply([ColorJitter], color_jitter_prob)
    t = timm_data.create_transform(72, is_training=True, color_jitter=0.4, color_jitter_prob=0.7, grayscale_prob=0.3)
    _same_seed(t, Image.fromarray(IMG), 1e-5, "timm color_jitter_prob", timm=True)
    t = timm_data.create_transform(72, is_training=True, color_jitter=(0.3, 0.3, 0.3, 0.1), re_prob=0.5)
    # timm's Normalize takes float tensors (its MaybeToTensor passes tensors through)
    _same_seed(t, _tensor(IMG).float() / 255, 1e-5, "timm tensor", timm=True)
    with pytest.raises(PipelineError, match="num_splits"):
        gt.from_torchvision(timm_data.create_transform(72, is_training=True, re_prob=0.5, re_num_splits=2))


# ---------------------------------------------------------------------------------------------
# numerics


def test_pil_numerics_bit_for_bit():
    """Pillow's HSV maps on 2**20 colours (the whole cube in the slow test below), ``convert("L")``,
    and ImageEnhance's blends and torchvision's PIL hue, on random factors in and outside [0, 1]."""
    rng = np.random.default_rng(0)
    cols = rng.integers(0, 256, (1024, 1024, 3), dtype=np.uint8)
    assert np.array_equal(K._pil_rgb2hsv(cols), np.asarray(Image.fromarray(cols).convert("HSV")))
    hsv = Image.frombytes("HSV", (1024, 1024), cols.tobytes())
    assert np.array_equal(K._pil_hsv2rgb(cols), np.asarray(hsv.convert("RGB")))
    assert np.array_equal(K.np_luma(cols), np.asarray(Image.fromarray(cols).convert("L")))
    F = T.functional
    pil = Image.fromarray(IMG)
    for f in rng.uniform(0, 2.5, 30):
        f = float(f)
        for op, enh in (("brightness", ImageEnhance.Brightness), ("contrast", ImageEnhance.Contrast),
                        ("saturation", ImageEnhance.Color)):
            assert np.array_equal(K.adjust(IMG, op, f, "pil"), np.asarray(enh(pil).enhance(f))), (op, f)
        h = (f - 1.25) / 2.5
        assert np.array_equal(K.adjust(IMG, "hue", h, "pil"), np.asarray(F.adjust_hue(pil, h))), h


@pytest.mark.slow
def test_pil_hsv_on_every_colour():
    allc = np.arange(1 << 24, dtype=np.uint32)
    rgb = np.stack([(allc >> 16) & 255, (allc >> 8) & 255, allc & 255], -1).astype(np.uint8).reshape(4096, 4096, 3)
    assert np.array_equal(K._pil_rgb2hsv(rgb), np.asarray(Image.fromarray(rgb).convert("HSV")))
    hsv = Image.frombytes("HSV", (4096, 4096), rgb.tobytes())
    assert np.array_equal(K._pil_hsv2rgb(rgb), np.asarray(hsv.convert("RGB")))


@pytest.mark.parametrize("num", ["v1", "v2"])
def test_tensor_numerics(num):
    """The NumPy ports against torchvision's functional ops on uint8 (exact but one level allowed:
    float32 rounding order) and float32 images (1e-6)."""
    F = T.functional if num == "v1" else T2.functional
    rng = np.random.default_rng(1)
    for x in (_tensor(IMG), _tensor(IMG).float() / 255):
        a = x.permute(1, 2, 0).numpy()
        bound = 1 if x.dtype == torch.uint8 else 1e-6
        for op in ("brightness", "contrast", "saturation", "hue"):
            for f in (rng.uniform(-0.5, 0.5, 6) if op == "hue" else rng.uniform(0, 2, 6)):
                want = getattr(F, f"adjust_{op}")(x, float(f)).permute(1, 2, 0).numpy().astype(np.float64)
                assert np.abs(K.adjust(a, op, float(f), num) - want).max() <= bound, (op, f)
        want = F.rgb_to_grayscale(x, 3).permute(1, 2, 0).numpy()
        assert np.abs(K.to_gray(a, num).astype(np.float64) - want).max() <= bound


# ---------------------------------------------------------------------------------------------
# native ops and their draws


def test_native_torch_generator_is_torchvisions_draws():
    for s in SEEDS:
        torch.manual_seed(s)
        order, b, c, sat, h = T.ColorJitter.get_params((0.6, 1.4), (0.5, 1.5), None, (-0.2, 0.2))
        prm = gt.draw_color_jitter(0.4, 0.5, 0, 0.2, generator=torch.Generator().manual_seed(s))
        assert prm == (tuple(int(v) for v in order), b, c, None, h)
        img = torch.zeros((3, 60, 80))
        torch.manual_seed(s)
        hit = bool(torch.rand(1) < 0.5)
        box = T.RandomErasing.get_params(img, (0.02, 0.33), (0.3, 3.3), None) if hit else None
        got = gt.draw_erasing(60, 80, 3, value="random", generator=torch.Generator().manual_seed(s))
        if box is None:
            assert got is None
        else:
            assert tuple(got[:4]) == tuple(box[:4]) and torch.equal(got.value, box[4])


def test_native_ops_apply_their_params():
    F = T2.functional
    g = np.random.default_rng(5)
    pil = Image.fromarray(IMG)
    y, prm = gt.color_jitter(pil, 0.4, 0.4, 0.4, 0.1, generator=g, return_params=True)
    want = pil
    for k in prm.order:
        f = prm[1 + k]
        want = getattr(F, ("adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue")[k])(want, f)
    assert isinstance(y, Image.Image) and np.array_equal(np.asarray(y), np.asarray(want))
    x = _tensor(IMG)
    ys, prms = gt.color_jitter(torch.stack([x, x]), 0.4, 0.4, 0.4, 0.1, generator=g, return_params=True)
    assert ys.shape == (2, 3, 97, 131) and len(prms) == 2
    assert gt.random_grayscale(IMG, p=1.0).shape == IMG.shape
    y, hits = gt.random_grayscale([IMG, IMG, IMG], p=0.5, generator=np.random.default_rng(2), return_params=True)
    for k, hit in enumerate(hits):
        assert (np.ptp(y[k], axis=-1).max() == 0) == hit
    e, prm = gt.random_erasing(x.float(), p=1.0, value=(1, 2, 3), generator=g, return_params=True)
    assert prm is not None and (e[:, prm.top:prm.top + prm.height, prm.left:prm.left + prm.width]
                                == torch.tensor([1.0, 2, 3])[:, None, None]).all()
    assert float(e.sum() - x.float().sum()) != 0 and torch.equal(x, _tensor(IMG))  # a copy: the input kept
    with pytest.raises(InvalidArgumentError, match="hue"):
        gt.draw_color_jitter(hue=0.7)
    with pytest.raises(InvalidArgumentError, match="value"):
        gt.draw_erasing(10, 10, 3, value=(1, 2))
    with pytest.raises(InvalidArgumentError, match="numerics"):
        gt.color_jitter(IMG, 0.3, numerics="cv2")
    with pytest.raises(PipelineError, match="1- or 3-channel"):
        gt.color_jitter(np.zeros((8, 8, 4), np.uint8), 0.3)


def _hist(v, edges):
    return np.histogram(v, edges)[0] / len(v)


@pytest.mark.parametrize("gen", ["numpy", "torch"])
def test_native_distributions_match_torchvision(gen):
    """Factor histograms, the permutation's first element, the grayscale rate and the erased box's area
    and ratio of 4000 native draws against torchvision's own draws (fixed seeds; bounds ~5 standard
    deviations of a 4000-sample frequency)."""
    n = 4000
    g = np.random.default_rng(7) if gen == "numpy" else torch.Generator().manual_seed(7)
    torch.manual_seed(1234)
    ref = [T.ColorJitter.get_params((0.6, 1.4), (0.6, 1.4), (0.6, 1.4), (-0.1, 0.1)) for _ in range(n)]
    got = [gt.draw_color_jitter(0.4, 0.4, 0.4, 0.1, generator=g) for _ in range(n)]
    for k, edges in ((1, np.linspace(0.6, 1.4, 9)), (2, np.linspace(0.6, 1.4, 9)), (3, np.linspace(0.6, 1.4, 9)),
                     (4, np.linspace(-0.1, 0.1, 9))):
        assert np.abs(_hist([r[k] for r in ref], edges) - _hist([p[k] for p in got], edges)).max() < 0.04
    first = np.arange(5) - 0.5
    assert np.abs(_hist([int(r[0][0]) for r in ref], first) - _hist([p.order[0] for p in got], first)).max() < 0.04
    hits = gt.random_grayscale([np.zeros((2, 2, 3), np.uint8)] * n, p=0.2, generator=g, return_params=True)[1]
    assert abs(np.mean(hits) - 0.2) < 0.035
    h, w = 120, 160
    img = torch.zeros((3, h, w))
    ref_boxes = [T.RandomErasing.get_params(img, (0.02, 0.33), (0.3, 3.3), [0.0]) for _ in range(n)]
    got_boxes = [gt.draw_erasing(h, w, 3, p=1.0, generator=g) for _ in range(n)]
    got_boxes = [(b.top, b.left, b.height, b.width) if b is not None else (0, 0, h, w) for b in got_boxes]
    for f, edges in ((lambda b: b[2] * b[3] / (h * w), np.linspace(0, 0.4, 11)),
                     (lambda b: b[2] / max(b[3], 1), np.geomspace(0.25, 4, 11)),
                     (lambda b: b[0] / h, np.linspace(0, 1, 11))):
        assert np.abs(_hist([f(b) for b in ref_boxes], edges) - _hist([f(b) for b in got_boxes], edges)).max() < 0.04


# ---------------------------------------------------------------------------------------------
# refusals


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_refusals(M):
    with pytest.raises(PipelineError, match="ColorJitter after the float conversion"):
        gt.from_torchvision(M.Compose([*_float(M, False), M.ColorJitter(0.3)]))
    with pytest.raises(PipelineError, match="RandomGrayscale after the float conversion"):
        gt.from_torchvision(M.Compose([*_float(M, False), M.RandomGrayscale(0.3)]))
    with pytest.raises(PipelineError, match="Normalize after RandomErasing"):
        gt.from_torchvision(M.Compose([*_float(M, False), M.RandomErasing(), M.Normalize(MEAN, STD)]))
    if M is T:  # v1's RandomErasing refuses PIL images (v2 erases them as uint8)
        with pytest.raises(PipelineError, match="RandomErasing.*takes tensors"):
            gt.from_torchvision(M.Compose([M.RandomCrop(8), M.RandomErasing(1.0)]))(Image.fromarray(IMG))
    for tr in (M.RandAugment(), M.TrivialAugmentWide(), M.AutoAugment(),
               M.RandomApply([M.ColorJitter(0.2), M.RandomRotation(5)], p=0.5)):
        with pytest.raises(PipelineError, match=f"^{type(tr).__name__} is a random augmentation goprep does not"):
            gt.from_torchvision(M.Compose([M.RandomResizedCrop(32), M.ColorJitter(0.2), tr]))
    prep = gt.from_torchvision(M.Compose([M.ColorJitter(0.2), *_float(M, False)]))
    with pytest.raises(PipelineError, match="1- or 3-channel"):
        prep(Image.fromarray(np.zeros((8, 8, 4), np.uint8)))
    prep = gt.from_torchvision(M.Compose([*_float(M, False), M.RandomErasing(1.0, value=(1.0, 2.0))]))
    with pytest.raises(PipelineError, match="value has 2 entries"):
        prep(Image.fromarray(IMG))


def test_converted_colour_chain_pickles():
    """A converted chain with colour ops and erasing travels into DataLoader workers as its ops."""
    import pickle

    t = T.Compose([T.RandomResizedCrop(40), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.RandomGrayscale(0.3), T.ToTensor(),
                   T.Normalize(MEAN, STD), T.RandomErasing(0.7, value="random")])
    prep = gt.from_torchvision(t)
    copy = pickle.loads(pickle.dumps(prep))
    pil = Image.fromarray(IMG)
    torch.manual_seed(6)
    want = t(pil)
    torch.manual_seed(6)
    assert float((copy(pil) - want).abs().max()) <= 1e-5


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_erasing_in_the_fused_batch_call(M):
    """RandomErasing without a colour op: the chain runs as one engine call (run_drawn) and each item is
    erased after it, item k with the k-th draws: PIL images, a tensor batch and JPEG bytes (against
    torchvision on the images Pillow decodes)."""
    import io

    t = M.Compose([M.RandomResizedCrop(48), M.RandomHorizontalFlip(), *_float(M, False), M.Normalize(MEAN, STD),
                   M.RandomErasing(0.8, value="random"), M.RandomErasing(0.5, value=(1.0, 2.0, 3.0))])
    prep = gt.from_torchvision(t)
    arrays = [IMG, _photo(90, 120, 5), _photo(101, 77, 6)]
    data = []
    for a in arrays:
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "JPEG", quality=90)
        data.append(buf.getvalue())
    pils = [Image.open(io.BytesIO(b)).convert("RGB") for b in data]
    for src, ref in ((pils, pils), (data, pils)):
        torch.manual_seed(9)
        want = torch.stack([t(x) for x in ref])
        torch.manual_seed(9)
        got = prep(src)
        assert float((got - want).abs().max()) <= 1e-5
    tt = M.Compose([M.RandomResizedCrop(48), *_float(M, True), M.Normalize(MEAN, STD), M.RandomErasing(0.9)])
    batch = torch.stack([_tensor(IMG), _tensor(IMG).flip(-1)])
    torch.manual_seed(2)
    want = torch.stack([tt(x) for x in batch])
    torch.manual_seed(2)
    assert float((gt.from_torchvision(tt)(batch) - want).abs().max()) <= LEVEL * 1.0001
