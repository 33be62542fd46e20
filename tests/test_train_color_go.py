"""The Go colour kernels (binding ColorBatch: engine.ColorPIL, engine.ColorTensor; ColorBatchF32:
engine.ColorTensorF32) equal the NumPy kernels of ``_color_kernels`` (Pillow's numerics, themselves
Pillow's bit for bit, and torchvision v1's and v2's tensor numerics, hue included, on uint8 and
float32 images) bit for bit, on random images, factors and orders, each item of a batch with its
own program; a converted training chain's batch, whose colour steps run as one Go call, equals the
item-by-item NumPy path bit for bit, JPEG files included, and torchvision under the same seed."""

from __future__ import annotations

import io

import numpy as np
import pytest

import goprep
import goprep.testing  # noqa: F401
from goprep import InvalidArgumentError
from goprep.transforms import _color_kernels as K
from goprep.transforms import _random_color as RC

OPS = ("brightness", "contrast", "saturation", "hue", "gray")


NUMERICS = ("pil", "v1", "v2")


def _numpy(a: np.ndarray, prog, numerics: str = "pil") -> np.ndarray:
    """A colour program with the NumPy kernels, one step at a time (the reference)."""
    for op, f in prog:
        a = K.to_gray(a, numerics) if op == "gray" else K.adjust(a, op, f, numerics)
    return a


def _factor(rng, op: str) -> float:
    if op == "hue":
        return float(rng.choice([rng.uniform(-0.5, 0.5), -0.5, 0.5, 0.0, 1 / 3]))
    return float(rng.choice([rng.uniform(0, 2.5), rng.uniform(0, 1), 0.0, 1.0]))


def _program(rng, most: int = 6):
    ops = rng.choice(OPS, int(rng.integers(0, most + 1)))
    return [(str(op), 0.0 if op == "gray" else _factor(rng, str(op))) for op in ops]


def _images(rng, n: int, h: int, w: int, c: int, dtype=np.uint8) -> np.ndarray:
    """Random images, some of them smooth with near-gray areas (where hue is ill-conditioned); float32
    ones are the bytes / 255 with one item of random floats in [0, 1]."""
    a = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    for k in range(0, n, 2):
        g = rng.integers(0, 256, (h, w, 1))
        a[k] = np.clip(g + rng.integers(-3, 4, (h, w, c)), 0, 255)
    if dtype == np.uint8:
        return a
    f = (a / np.float32(255)).astype(np.float32)
    f[-1] = rng.random((h, w, c), dtype=np.float32)
    return f


# (numerics, dtype): Pillow's take uint8 only; torchvision's tensor numerics uint8 and float32
KINDS = [("pil", np.uint8), ("v1", np.uint8), ("v2", np.uint8), ("v1", np.float32), ("v2", np.float32)]
KIND_IDS = [f"{n}-{np.dtype(d).name}" for n, d in KINDS]


@pytest.mark.parametrize("numerics,dtype", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("shape", [(6, 37, 53, 3), (5, 1, 1, 3), (4, 19, 8, 1), (3, 64, 64, 3)])
def test_go_batch_equals_numpy(shape, numerics, dtype):
    """Random programs (hue too), each item its own."""
    rng = np.random.default_rng(sum(shape))
    for rep in range(4):
        a = _images(rng, *shape, dtype=dtype)
        progs = [_program(rng) for _ in range(shape[0])]
        want = np.stack([_numpy(x, p, numerics) for x, p in zip(a, progs)])
        got = RC.run_steps_go(a.copy(), progs, numerics)
        for k in range(shape[0]):
            assert np.array_equal(got[k], want[k]), (shape, rep, k, progs[k])


@pytest.mark.parametrize("numerics,dtype", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("op", OPS)
def test_go_each_op_on_many_factors(op, numerics, dtype):
    """One op over a sweep of factors (inside and outside [0, 1], hue over its whole range) on an
    image of 2**16 random colours and a smooth one (float32: a smooth one and random floats)."""
    rng = np.random.default_rng(OPS.index(op))
    img = _images(rng, 2, 256, 256, 3, dtype=dtype)
    fs = np.linspace(-0.5, 0.5, 41) if op == "hue" else np.concatenate([np.linspace(0, 3, 31), [0.999, 1.001]])
    for f in fs:
        prog = [(op, float(f))]
        got = RC.run_steps_go(img.copy(), [prog, prog], numerics)
        for k in range(2):
            assert np.array_equal(got[k], _numpy(img[k], prog, numerics)), (op, f, k)


def test_go_rejects_bad_programs():
    a = np.zeros((1, 4, 4, 3), np.uint8)
    with pytest.raises(InvalidArgumentError, match="factors"):
        RC.run_steps_go(a, [[("brightness", float("nan"))]])
    f = np.zeros((1, 4, 4, 3), np.float32)
    with pytest.raises(InvalidArgumentError, match="numerics"):  # Pillow's numerics take uint8 only
        RC.run_steps_go(f, [[("brightness", 2.0), ("hue", 0.1)]], "pil")
    with pytest.raises(KeyError):
        RC.run_steps_go(a, [[("sharpness", 1.0)]])
    assert not a.any() and not f.any()  # nothing ran
    assert all(RC.go_ready(a, n, [[("hue", 0.1)]]) for n in NUMERICS)
    assert RC.go_ready(f, "v2", [[("hue", 0.1)]]) and not RC.go_ready(f, "pil", [[("hue", 0.1)]])
    assert not RC.go_ready(f.astype(np.float64), "v1", []) and not RC.go_ready(f[:, ::2], "v1", [])


# ---------------------------------------------------------------------------------------------
# a converted chain's batch

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
T2 = pytest.importorskip("torchvision.transforms.v2")
from PIL import Image  # noqa: E402

import goprep.transforms as gt  # noqa: E402
from conftest import gradient_photos as _photos, jpeg_bytes as _jpegs  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)



def _run(prep, src, seed, go: bool, one_call: bool = True):
    """The chain under ``seed`` with the Go kernels on or off; ``one_call`` False: a batch as one call
    per segment and one Go call per colour step (where run_steps_go runs), not the one engine call of
    staged jobs (tests/test_train_fused_color.py)."""
    with goprep.testing.colour_path(go=go, one_call=one_call):
        torch.manual_seed(seed)
        return prep(src)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_chain_batch_go_equals_numpy_and_items(M):
    """RandomResizedCrop + flip + ColorJitter (hue too) + RandomGrayscale + ToTensor + Normalize on a
    list of PIL images of different sizes: the batch (one engine call per segment, one Go call for
    the colour steps) equals the same batch with the NumPy kernels and the items called one by one,
    bit for bit; and torchvision within 1e-5."""
    t = M.Compose([M.RandomResizedCrop(48), M.RandomHorizontalFlip(), M.ColorJitter(0.4, 0.4, 0.4, 0.1),
                   M.RandomGrayscale(0.3), M.RandomVerticalFlip(), *([T2.ToImage(), T2.ToDtype(torch.float32, scale=True)]
                                                                   if M is T2 else [T.ToTensor()]),
                   M.Normalize(MEAN, STD)])
    prep = gt.from_torchvision(t)
    pils = [Image.fromarray(a) for a in _photos(9)]
    for seed in range(3):
        go = _run(prep, pils, seed, True)
        ref = _run(prep, pils, seed, False)
        assert torch.equal(go, ref), seed
        torch.manual_seed(seed)
        one = torch.stack([prep(x) for x in pils])
        assert torch.equal(go, one), seed
        torch.manual_seed(seed)
        want = torch.stack([t(x) for x in pils])
        assert float((go - want).abs().max()) <= 1e-5, seed


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_chain_batch_uint8_tensors_go_equals_numpy(M):
    """uint8 tensors (torchvision's tensor numerics, in Go, hue too): a batch equals the NumPy
    kernels bit for bit, and torchvision within one level."""
    level = 1 / 255 / min(STD) * 1.0001
    for hue in (0, 0.1):
        t = M.Compose([M.RandomResizedCrop(40), M.ColorJitter(0.4, 0.4, 0.4, hue), M.RandomGrayscale(0.3),
                       *([T2.ToDtype(torch.float32, scale=True)] if M is T2 else [T.ConvertImageDtype(torch.float32)]),
                       M.Normalize(MEAN, STD)])
        prep = gt.from_torchvision(t)
        batch = torch.stack([torch.from_numpy(a[:60, :60]).permute(2, 0, 1).contiguous() for a in _photos(6)])
        got = _run(prep, batch, 11, True)
        assert torch.equal(got, _run(prep, batch, 11, False)), hue
        torch.manual_seed(11)
        want = torch.stack([t(x) for x in batch])
        assert float((got - want).abs().max()) <= level, hue


def _tensor_batch(c: int, dtype):
    """Six 1- or 3-channel tensors (N, C, H, W) from the photographs, uint8 or float32 (bytes / 255)."""
    a = np.stack([p[:48, :56] for p in _photos(6)])
    a = a[..., :1] if c == 1 else a
    x = torch.from_numpy(np.ascontiguousarray(a)).permute(0, 3, 1, 2).contiguous()
    return x if dtype == torch.uint8 else x.to(dtype) / 255


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
@pytest.mark.parametrize("c", [3, 1])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32], ids=["uint8", "float32"])
@pytest.mark.parametrize("hue", [0, 0.2], ids=["hue-off", "hue-on"])
def test_tensor_chain_go_equals_torchvision(M, c, dtype, hue):
    """ColorJitter (random order, hue on and off) + RandomGrayscale on a batch of uint8 or float32 tensors,
    RGB and gray (torchvision leaves gray images to brightness and contrast): the colour steps run in
    Go, one call per step for the batch on the three-call path (count_colour_calls sees them; the one call of
    staged jobs gives the same bytes), equal the NumPy kernels bit for bit, and equal torchvision's own
    chain item by item under the same seed: uint8 within one level (measured equal), float32 within
    1.2e-7 without contrast (measured equal). With contrast on, a float32 image's contrast mean (float64
    here, PyTorch's float32 cascade sum there, whose order depends on its thread count and vector width:
    not reproducible) differs by up to an ulp (test_single_ops_equal_torchvision), which the steps after
    it stretch (brightness and saturation by their factors, to 1.8e-7 measured; hue on near-gray pixels,
    whose max - min is a few ulps, to 6.4e-7): 1e-6 there, the bound of test_train_color's per-op check;
    the NumPy path gives the same bytes."""
    x = _tensor_batch(c, dtype)
    for contrast in (0, 0.4):
        t = M.Compose([M.ColorJitter(0.4, contrast, 0.4, hue), M.RandomGrayscale(0.3)])
        prep = gt.from_torchvision(t)
        kind = (str(dtype).split(".")[1], "v2" if M is T2 else "v1")
        for seed in range(3):
            with goprep.testing.count_colour_calls() as seen:
                got = _run(prep, x, seed, True, one_call=False)
            assert seen and all(s == kind for s in seen), seen
            assert torch.equal(got, _run(prep, x, seed, False)), seed
            assert torch.equal(got, _run(prep, x, seed, True)), seed  # the one call of staged jobs
            torch.manual_seed(seed)
            want = torch.stack([t(v) for v in x])
            assert got.dtype == want.dtype and got.shape == want.shape
            err = float((got.double() - want.double()).abs().max())
            if dtype == torch.uint8:
                assert err <= 1, seed
            else:
                assert err <= (1e-6 if contrast else 1.2e-7), (seed, contrast, err)


@pytest.mark.parametrize("num", ["v1", "v2"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32], ids=["uint8", "float32"])
def test_single_ops_equal_torchvision(num, dtype):
    """Each op alone in Go (hue over its range, the others inside and outside [0, 1]) against
    torchvision's functional op on the photographs and on random images with near-gray areas: uint8
    equal, float32 within 1.2e-7 (the contrast mean's float32 rounding, one ulp; the other ops
    equal)."""
    F = T.functional if num == "v1" else T2.functional
    rng = np.random.default_rng(2)
    for a in (np.stack([p[:48, :56] for p in _photos(4)]), _images(rng, 4, 40, 50, 3)):
        x = torch.from_numpy(a).permute(0, 3, 1, 2).contiguous()
        x = x if dtype == torch.uint8 else x.to(dtype) / 255
        b = np.ascontiguousarray(x.permute(0, 2, 3, 1).numpy())
        for op in OPS:
            fs = [0.0] if op == "gray" else np.linspace(-0.5, 0.5, 9) if op == "hue" else np.linspace(0, 2, 9)
            for f in fs:
                got = RC.run_steps_go(b.copy(), [[(op, float(f))]] * len(b), num)
                want = torch.stack([F.rgb_to_grayscale(v, 3) if op == "gray" else getattr(F, f"adjust_{op}")(v, float(f))
                                    for v in x]).permute(0, 2, 3, 1).numpy()
                if dtype == torch.uint8:
                    assert np.array_equal(got, want), (op, f)
                else:
                    assert np.abs(got - want).max() <= (1.2e-7 if op == "contrast" else 0), (op, f)


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_float_chain_then_normalize(M):
    """Float32 tensors through RandomResizedCrop + flip + ColorJitter (hue on) + RandomGrayscale +
    the float conversion (a no-op on them) + Normalize as one batch: the colour steps in Go on float32 (count_colour_calls), the batch bit for bit the
    NumPy path and the items called one by one, and torchvision within 1e-5 (its resize)."""
    t = M.Compose([M.RandomResizedCrop(32), M.RandomHorizontalFlip(), M.ColorJitter(0.4, 0, 0.4, 0.1),
                   M.RandomGrayscale(0.3), T2.ToDtype(torch.float32, scale=True) if M is T2
                   else T.ConvertImageDtype(torch.float32), M.Normalize(MEAN, STD)])
    prep = gt.from_torchvision(t)
    x = _tensor_batch(3, torch.float32)
    with goprep.testing.count_colour_calls() as seen:
        got = _run(prep, x, 4, True)
    assert seen and all(d == "float32" for d, _ in seen), seen
    assert torch.equal(got, _run(prep, x, 4, False))
    torch.manual_seed(4)
    assert torch.equal(got, torch.stack([prep(v) for v in x]))
    torch.manual_seed(4)
    want = torch.stack([t(v) for v in x])
    assert float((got - want).abs().max()) <= 1e-5


def test_chain_batch_of_jpeg_files(tmp_path):
    """JPEG bytes, 1-D uint8 arrays of them and paths with a colour chain (before: refused, the colour
    ops ran item by item on decoded images): one batch, equal to the chain on Pillow's decodes
    (torchvision within 1e-5) and bit for bit to the NumPy kernels; reduce="auto" runs too."""
    t = T.Compose([T.RandomResizedCrop(40), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.2),
                   T.ToTensor(), T.Normalize(MEAN, STD)])
    prep = gt.from_torchvision(t)
    data = _jpegs(_photos(6))
    paths = []
    for k, d in enumerate(data):
        p = tmp_path / f"{k}.jpg"
        p.write_bytes(d)
        paths.append(str(p))
    pils = [Image.open(io.BytesIO(d)).convert("RGB") for d in data]
    torch.manual_seed(5)
    want = torch.stack([t(x) for x in pils])
    arrays = [np.frombuffer(d, np.uint8) for d in data]  # an encoded kind too (goprep.decode's)
    for src in (data, arrays, paths):
        got = _run(prep, src, 5, True)
        assert float((got - want).abs().max()) <= 1e-5
        assert torch.equal(got, _run(prep, src, 5, False))
    torch.manual_seed(5)
    assert prep(data, reduce="auto").shape == want.shape


def test_chain_batch_uint8_result_and_out():
    """No float conversion (uint8 results, compared exactly) and ``out=`` on the batch path; a list
    whose crops differ in size before the colour step runs item by item, with the same draws."""
    t = T2.Compose([T2.RandomResizedCrop(32), T2.ColorJitter(0.5, 0.5, 0.5, 0.3), T2.RandomGrayscale(0.5),
                    T2.PILToTensor()])
    prep = gt.from_torchvision(t)
    pils = [Image.fromarray(a) for a in _photos(5)]
    torch.manual_seed(1)
    want = torch.stack([t(x) for x in pils])
    torch.manual_seed(1)
    out = torch.empty_like(want)
    assert prep(pils, out=out) is out
    assert torch.equal(out, want)
    t = T2.Compose([T2.RandomCrop(50), T2.ColorJitter(0.5, 0.5), T2.PILToTensor()])  # sizes kept
    prep = gt.from_torchvision(t)
    pils = [Image.fromarray(a[:60, :60]) for a in _photos(3)]
    torch.manual_seed(2)
    want = torch.stack([t(x) for x in pils])
    torch.manual_seed(2)
    assert torch.equal(prep(pils), want)


def test_native_ops_go_equals_numpy():
    """goprep.transforms.color_jitter / random_grayscale on uint8 arrays, a batch and PIL images
    (Pillow's numerics), float32 arrays and uint8 and float32 tensors (v2's), all in Go, hue on,
    equal the NumPy kernels bit for bit, with the same params."""
    photo = _photos(1)[0]
    chw = torch.from_numpy(photo).permute(2, 0, 1).contiguous()
    imgs = [photo, np.stack([photo, photo[::-1]]), Image.fromarray(photo), Image.fromarray(photo[..., 1]),
            (photo / np.float32(255)).astype(np.float32), chw, chw.float() / 255]
    runs = []
    with goprep.testing.count_colour_calls() as seen:
        for go in (True, False):
            with goprep.testing.colour_path(go=go):
                g1, g2 = np.random.default_rng(3), np.random.default_rng(4)
                runs.append([(gt.color_jitter(x, 0.5, 0.5, 0.5, 0.2, generator=g1, return_params=True),
                              gt.random_grayscale(x, 0.5, generator=g2, return_params=True)) for x in imgs * 3])
    for a, b in zip(*runs):
        for (ra, pa), (rb, pb) in zip(a, b):
            assert pa == pb
            assert np.array_equal(np.asarray(ra), np.asarray(rb))
    assert {("uint8", "pil"), ("float32", "v2"), ("uint8", "v2")} <= set(seen), set(seen)


@pytest.mark.slow
def test_go_hue_on_every_colour():
    """Hue in Go on all 2**24 colours, for shifts around the circle, against the NumPy kernel
    (Pillow's convert), bit for bit."""
    allc = np.arange(1 << 24, dtype=np.uint32)
    rgb = np.stack([(allc >> 16) & 255, (allc >> 8) & 255, allc & 255], -1).astype(np.uint8).reshape(1, 4096, 4096, 3)
    for f in (0.0, 0.1, -0.37, 0.5):
        got = RC.run_steps_go(rgb.copy(), [[("hue", f)]])
        assert np.array_equal(got[0], K.adjust(rgb[0], "hue", f, "pil")), f


@pytest.mark.slow
@pytest.mark.parametrize("num", ["v1", "v2"])
def test_go_tensor_hue_on_every_colour(num):
    """Hue with torchvision's tensor numerics in Go on all 2**24 colours, uint8 and float32 (bytes /
    255), for shifts around the circle, against torchvision's own adjust_hue: equal (in slices of
    2**21 colours, torchvision's float HSV temporaries being large)."""
    F = T.functional if num == "v1" else T2.functional
    allc = np.arange(1 << 24, dtype=np.uint32)
    rgb = np.stack([(allc >> 16) & 255, (allc >> 8) & 255, allc & 255], -1).astype(np.uint8).reshape(256, 65536, 3)
    for f in (0.1, -0.37, 0.5):
        for k in range(0, 256, 32):
            part = np.ascontiguousarray(rgb[k:k + 32])
            x = torch.from_numpy(part).permute(2, 0, 1)
            got = RC.run_steps_go(part[None].copy(), [[("hue", f)]], num)[0]
            assert np.array_equal(got, F.adjust_hue(x, f).permute(1, 2, 0).numpy()), (f, k)
            xf = x.float() / 255
            gotf = RC.run_steps_go(xf.permute(1, 2, 0).numpy()[None].copy(), [[("hue", f)]], num)[0]  # xf kept
            assert np.array_equal(gotf, F.adjust_hue(xf, f).permute(1, 2, 0).numpy()), (f, k)
