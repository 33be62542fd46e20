"""goprep.transforms: torchvision / Hugging Face / timm preprocessing converted to fused pipelines,
checked against the libraries themselves on real photographs (PIL images and uint8 tensors)."""

import warnings

import numpy as np
import pytest
from PIL import Image

import goprep
import goprep.transforms as gt
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS, run_python

# the converters are checked against torchvision itself (the torch extra), timm and transformers (the
# timm and hf extras, per test below): a machine without them skips these tests
torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
v2 = pytest.importorskip("torchvision.transforms.v2")

M, S = IMAGENET_MEAN, IMAGENET_STD
RGB = ["chelsea", "astronaut", "coffee"]
BIL, BIC = T.InterpolationMode.BILINEAR, T.InterpolationMode.BICUBIC


def _pil(name):
    return Image.fromarray(np.ascontiguousarray(PHOTOS[name]))


def _tensor(name):
    return torch.from_numpy(PHOTOS[name].copy()).permute(2, 0, 1).contiguous()


def _levels(got, want, std):
    """max |got - want| in uint8 levels of the normalised output (1 level = 1 / 255 / std)."""
    std = torch.as_tensor(std, dtype=torch.float64).reshape(-1, 1, 1)
    return float(((got.double() - want.double()).abs() * 255 * std).max())


@pytest.mark.parametrize("interp", [BIL, BIC])
@pytest.mark.parametrize("resize", [256, 160, 700, (300, 200)])
@pytest.mark.parametrize("name", RGB)
def test_v1_on_pil_equals_pil_numerics(name, resize, interp):
    t = T.Compose([T.Resize(resize, interpolation=interp), T.CenterCrop(224), T.ToTensor(), T.Normalize(M, S)])
    got = gt.from_torchvision(t)(_pil(name))
    want = t(_pil(name))
    assert isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype
    assert float((got - want).abs().max()) <= 1e-5


@pytest.mark.parametrize("interp", [BIL, BIC])
@pytest.mark.parametrize("resize", [256, 160, 700, (300, 200)])
@pytest.mark.parametrize("name", RGB)
def test_v2_on_uint8_tensors_within_one_level(name, resize, interp):
    t = v2.Compose([v2.Resize(resize, interpolation=interp), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                    v2.Normalize(M, S)])
    x = _tensor(name)
    got = gt.from_torchvision(t)(x)
    want = t(x)
    assert got.shape == want.shape
    assert _levels(got, want, S) <= 1e-3  # within 1 level asked; PyTorch's uint8 weights make it exact
    batch = torch.stack([x, x.flip(-1)])
    got_b = gt.from_torchvision(t)(batch)
    assert got_b.shape == (2, 3, 224, 224) and _levels(got_b, t(batch), S) <= 1e-3


def test_single_transforms_and_uint8_results():
    img = _pil("chelsea")
    x = _tensor("chelsea")
    r = gt.from_torchvision(T.Resize((100, 120)))
    assert np.array_equal(r(img), np.asarray(T.Resize((100, 120))(img)))  # PIL in: NumPy HWC out
    assert np.array_equal(gt.from_torchvision(T.CenterCrop(200))(img), np.asarray(T.CenterCrop(200)(img)))
    pad = T.Pad((1, 2, 3, 4), fill=(10, 20, 30))
    assert np.array_equal(gt.from_torchvision(pad)(img), np.asarray(pad(img)))
    pt = gt.from_torchvision(T.Compose([T.CenterCrop(64), T.PILToTensor()]))(img)
    assert isinstance(pt, torch.Tensor) and torch.equal(pt, T.PILToTensor()(T.CenterCrop(64)(img)))
    v = v2.Compose([v2.ToImage(), v2.Resize(64), v2.ConvertImageDtype(torch.float32), v2.Normalize([0.5] * 3, [0.5] * 3)])
    assert _levels(gt.from_torchvision(v)(x), v(x), [0.5] * 3) <= 1.0 + 1e-3
    raw = v2.Compose([v2.CenterCrop(50), v2.ToDtype(torch.float32, scale=False), v2.Normalize([100.0] * 3, [50.0] * 3)])
    assert float((gt.from_torchvision(raw)(x) - raw(x)).abs().max()) <= 1e-5
    double = T.Compose([T.ToTensor(), T.Normalize(M, S), T.Normalize([0.1, 0.2, 0.3], [2.0, 3.0, 4.0])])
    assert float((gt.from_torchvision(double)(img) - double(img)).abs().max()) <= 1e-5
    flip = T.Compose([T.RandomHorizontalFlip(p=1.0), T.ToTensor()])
    assert float((gt.from_torchvision(flip)(img) - flip(img)).abs().max()) <= 1e-5  # x * (1/255) vs x / 255


def test_grayscale_where_expressible():
    gray = Image.fromarray(PHOTOS["camera"][..., 0], "L")
    t = T.Compose([T.Grayscale(num_output_channels=3), T.Resize(100), T.ToTensor()])
    assert float((gt.from_torchvision(t)(gray) - t(gray)).abs().max()) <= 1e-5
    with pytest.raises(goprep.PipelineError, match="Grayscale"):
        gt.from_torchvision(T.Compose([T.Grayscale(), T.ToTensor()]))(_pil("chelsea"))


def test_noops_noted_and_unsupported_named():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        c = gt.from_torchvision(v2.Compose([v2.RandomHorizontalFlip(p=0.0), v2.Identity(), v2.ToPureTensor(), v2.Resize(32)]))
    assert len(c.notes) == 3 and any("RandomHorizontalFlip" in n for n in c.notes)
    assert len([w for w in rec if "goprep.transforms" in str(w.message)]) == 3
    for t, name in [
        # RandomResizedCrop and RandomHorizontalFlip(p=0.5) convert since issue 36 (test_train_transforms.py);
        # a random crop after the float conversion and unreproduced augmentations are still refused by name
        (T.Compose([T.ToTensor(), T.RandomResizedCrop(224)]), "RandomResizedCrop"),
        # ColorJitter and RandomGrayscale convert too (test_train_color.py): after the float conversion refused
        (T.Compose([T.ToTensor(), T.ColorJitter(0.4)]), "ColorJitter"),
        (T.Compose([T.ToTensor(), T.RandomGrayscale(p=0.5)]), "RandomGrayscale"),
        (T.Pad(3, padding_mode="reflect"), "reflect"),
        # LANCZOS converts since issue 40 (test_transforms_lanczos.py); BOX is still refused by name
        (T.Resize(10, interpolation=T.InterpolationMode.BOX), "box"),
        (T.Compose([T.ToTensor(), T.Resize(10)]), "Resize"),
        (T.Normalize(M, S), "Normalize"),
        (v2.ToDtype(torch.float64, scale=True), "ToDtype"),
    ]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_torchvision(t)
        assert name in str(ei.value), (name, str(ei.value))


def _grace_hopper():
    """The issue's photo (matplotlib's grace_hopper.jpg, 600 x 512) when matplotlib ships it."""
    import os

    try:
        import matplotlib
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "sample_data", "grace_hopper.jpg")
    return np.asarray(Image.open(path).convert("RGB")) if os.path.exists(path) else None


def _norm(t, mod, pil=False):
    """t, then torchvision's float conversion and ImageNet Normalize (v1 or v2 classes; v1 takes
    ToTensor for PIL images, ConvertImageDtype for tensors)."""
    if mod is T:
        return T.Compose([t, T.ToTensor() if pil else T.ConvertImageDtype(torch.float32), T.Normalize(M, S)])
    return v2.Compose([t, v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(M, S)])


def _tensor_photos(names=("chelsea", "coffee")):
    """uint8 CHW tensors of some test photos and of the issue's grace_hopper.jpg."""
    out = {name: _tensor(name) for name in names}
    gh = _grace_hopper()
    if gh is not None:
        out["grace_hopper"] = torch.from_numpy(gh.copy()).permute(2, 0, 1).contiguous()
    return out


@pytest.mark.parametrize("mod", [T, v2], ids=["v1", "v2"])
def test_antialias_none_is_false_on_tensors_true_on_pil(mod):
    """torchvision: antialias=None means False for tensors (both APIs) and is ignored for PIL images
    (always antialiased). goprep read None as True: 124 levels off on grace_hopper -> 128."""
    for size in (128, (100, 900), 700):
        t = _norm(mod.Resize(size, antialias=None), mod)
        conv = gt.from_torchvision(t)
        for name, x in _tensor_photos().items():
            assert _levels(conv(x), t(x), S) <= 1 + 1e-3, (name, size)
        tp = _norm(mod.Resize(size, antialias=None), mod, pil=True)
        img = _pil("chelsea")
        assert float((gt.from_torchvision(tp)(img) - tp(img)).abs().max()) <= 1e-5


def _assert_raises_naming(fn, *words):
    with pytest.raises(goprep.PipelineError) as ei:
        fn()
    for w in words:
        assert w in str(ei.value), (w, str(ei.value))


@pytest.mark.filterwarnings("ignore:Anti-alias option is always applied")
@pytest.mark.parametrize("aa", [False, None])
@pytest.mark.parametrize("interp", [BIL, BIC])
def test_v2_without_antialias_on_uint8_tensors_exact(interp, aa):
    """v2 runs PyTorch's native uint8 kernel without antialias on uint8 tensors (2 or 4 taps, A = -0.75
    for bicubic, int16 weights, uint8 rounding between the passes): goprep's antialias="torch-noaa",
    the same uint8 image, down- and upscale and one axis kept (OpenCV's cubic was 13-20 levels off and
    its bilinear 1). PIL images keep Pillow's numerics."""
    for name, x in _tensor_photos().items():
        H, W = x.shape[-2:]
        for size in ((H // 3, W // 2), (H + 37, W * 2), (H // 2, W + 11), (H, W + 50), 256):
            t = _norm(v2.Resize(size, interpolation=interp, antialias=aa), v2)
            conv = gt.from_torchvision(t)
            assert _levels(conv(x), t(x), S) <= 1e-3, (name, size)
    x = _tensor("coffee")
    assert _levels(conv(torch.stack([x, x])), t(torch.stack([x, x])), S) <= 1e-3
    img = _pil("coffee")
    assert float((conv(img) - t(img)).abs().max()) <= 1e-5


def test_resize_torch_noaa_equals_torch_uint8_on_random_sizes():
    """antialias="torch-noaa" against PyTorch's uint8 kernels without antialias, bit for bit, on random
    sizes from 1 pixel up (the folded border taps), on noise and on 0/255 images (the clamps), through
    tensors (CHW and channels-last) and arrays; float32 takes goprep's float kernels (PyTorch's)."""
    import torchvision.transforms.v2.functional as F

    rng = np.random.default_rng(7)
    for it in range(150):
        h, w = (int(v) for v in rng.integers(1, 70, 2))
        oh, ow = (int(v) for v in rng.integers(1, 150, 2))
        x = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        if it % 3 == 0:
            x = np.where(rng.random((h, w, 3)) < 0.5, 0, 255).astype(np.uint8)
        t = torch.from_numpy(x).permute(2, 0, 1)
        for interp in ("bilinear", "bicubic"):
            want = F.resize(t, [oh, ow], interpolation=F.InterpolationMode(interp), antialias=False)
            got = goprep.resize(x, (oh, ow), interpolation=interp, antialias="torch-noaa")
            np.testing.assert_array_equal(got, want.permute(1, 2, 0).numpy(), err_msg=f"{interp} {h}x{w} -> {oh}x{ow}")
            src = t if it % 2 else t.contiguous()  # a channels-last view, or planar CHW
            assert torch.equal(goprep.resize(src, (oh, ow), interpolation=interp, antialias="torch-noaa"), want)
    xf = rng.random((40, 30, 3), dtype=np.float32)
    np.testing.assert_array_equal(goprep.resize(xf, (61, 17), interpolation="bicubic", antialias="torch-noaa"),
                                  goprep.resize(xf, (61, 17), interpolation="bicubic", antialias=False))


@pytest.mark.parametrize("mod", [T, v2], ids=["v1", "v2"])
def test_nearest_on_tensors_equal(mod):
    """Tensors: NEAREST_EXACT is PyTorch's rule (goprep's nearest-exact); NEAREST is PyTorch's float32
    floor(dst * (in / out)) (goprep's nearest-torch), which cv2's nearest (float64) misses on ~6% of
    size pairs (e.g. 300 -> 224): equal everywhere, uint8 and float32."""
    x = _tensor("chelsea")  # 300 x 451
    for size in ((150, 225), (600, 902), (256, 256), (224, 336), (97, 1000), (1000, 97), (40, 41)):
        for interp in (T.InterpolationMode.NEAREST, T.InterpolationMode.NEAREST_EXACT):
            t = mod.Resize(size, interpolation=interp)
            conv = gt.from_torchvision(t)
            assert torch.equal(conv(x), t(x)), (size, interp)
            xf = x.float() / 255
            assert torch.equal(conv(xf), t(xf)), (size, interp)
            img = _pil("chelsea")
            assert np.array_equal(conv(img), np.asarray(t(img)))
    col = torch.from_numpy(PHOTOS["astronaut"][:2].copy()).permute(2, 0, 1).contiguous()  # 2 x 512
    differs = 0
    for w in range(100, 1400, 7):  # the sizes where cv2's rule reads other pixels are among them
        t = mod.Resize((2, w), interpolation=T.InterpolationMode.NEAREST)
        got = gt.from_torchvision(t)(col)
        assert torch.equal(got, t(col)), w
        differs += not torch.equal(got, torch.from_numpy(goprep.resize(PHOTOS["astronaut"][:2], (2, w), interpolation="nearest")).permute(2, 0, 1))
    assert differs > 0


@pytest.mark.parametrize("aa", [True, False, None])
@pytest.mark.parametrize("interp", [BIL, BIC])
def test_v1_on_uint8_tensors_within_one_level(interp, aa):
    """torchvision.transforms (v1) resizes a uint8 tensor in float32 (clamped for bicubic), rounds half
    to even and casts back; goprep copied v2's uint8 kernel (up to 7 levels off, 17 on small
    upscales). Bicubic with antialias now takes goprep's float32 resize and rounds (three steps), the
    rest stays fused (within 1 level: non-negative weights, or the same float formula)."""
    photos = _tensor_photos(RGB)
    for name, size in (("grace_hopper", 224), ("chelsea", (97, 220)), ("coffee", (523, 700)), ("astronaut", (200, 600))):
        if name not in photos:
            continue
        x = photos[name]
        t = _norm(T.Resize(size, interpolation=interp, antialias=aa), T)
        assert _levels(gt.from_torchvision(t)(x), t(x), S) <= 1 + 1e-3, (name, size)
    small = _tensor("coffee")[:, 100:123, 200:231].contiguous()  # small upscales: 17 levels off before
    for size in ((61, 83), (23 * 4, 31 * 3)):
        t = _norm(T.Resize(size, interpolation=interp, antialias=aa), T)
        assert _levels(gt.from_torchvision(t)(small), t(small), S) <= 1 + 1e-3, size


def test_v1_bicubic_on_tensors_batches_lists_out_and_chains():
    """The three-step path of v1 bicubic (antialias) keeps what a fused pipeline takes and gives:
    batches, lists of differently sized images, out=, ops before the resize, uint8 results."""
    t = T.Compose([T.CenterCrop((280, 400)), T.Resize(160, interpolation=BIC), T.CenterCrop(128),
                   T.ConvertImageDtype(torch.float32), T.Normalize(M, S)])
    conv = gt.from_torchvision(t)
    x, y = _tensor("chelsea"), _tensor("coffee")
    assert _levels(conv(x), t(x), S) <= 1 + 1e-3
    batch = torch.stack([y, y.flip(-1)])
    got = conv(batch)
    assert got.shape == (2, 3, 128, 128) and _levels(got, t(batch), S) <= 1 + 1e-3
    got = conv([x, y])
    assert got.shape == (2, 3, 128, 128) and _levels(got, torch.stack([t(x), t(y)]), S) <= 1 + 1e-3
    buf = torch.empty((3, 128, 128))
    assert conv(x, out=buf) is buf and _levels(buf, t(x), S) <= 1 + 1e-3
    tp = T.Compose(t.transforms[:3] + [T.ToTensor(), T.Normalize(M, S)])
    img = _pil("chelsea")  # PIL stays on Pillow's numerics, fused
    assert float((gt.from_torchvision(tp)(img) - tp(img)).abs().max()) <= 1e-5
    r = T.Resize((70, 90), interpolation=BIC)  # uint8 out: a tensor for a tensor
    got = gt.from_torchvision(r)(x)
    assert got.dtype == torch.uint8 and got.shape == (3, 70, 90)
    assert int((got.int() - r(x).int()).abs().max()) <= 1
    # a subclass of v1's Resize is v1; of v2's, v2 (v2 bicubic is PyTorch's uint8 kernel: exact)
    my_v1, my_v2 = type("Resize", (T.Resize,), {}), type("Resize", (v2.Resize,), {})
    assert int((gt.from_torchvision(my_v1((70, 90), interpolation=BIC))(x).int() - r(x).int()).abs().max()) <= 1
    w2 = v2.Resize((70, 90), interpolation=BIC)
    assert torch.equal(gt.from_torchvision(my_v2((70, 90), interpolation=BIC))(x), w2(x))


@pytest.mark.parametrize("cfg", [
    dict(input_size=(3, 224, 224), interpolation="bicubic", crop_pct=0.875, crop_mode="center", mean=M, std=S),
    dict(input_size=(3, 256, 320), interpolation="bicubic", crop_pct=0.95, crop_mode="center", mean=M, std=S),
], ids=["square", "keep-ratio"])
def test_from_timm_on_tensors_follows_v1(cfg):
    """timm builds its eval transform from torchvision.transforms (v1) and its ResizeKeepRatio calls
    v1's F.resize, so tensors get v1's numerics (timm's own transform cannot take uint8 tensors: its
    MaybeToTensor passes them to Normalize unconverted); from_timm and from_torchvision(timm's
    transform) agree."""
    timm = pytest.importorskip("timm")
    pytest.importorskip("timm.data")

    conv = gt.from_timm(cfg)
    tf = timm.data.create_transform(**cfg, is_training=False)
    via_tv = gt.from_torchvision(tf)
    for name in RGB:
        x = _tensor(name)
        ref = tf.transforms[1](tf.transforms[0](x))  # v1 Resize / ResizeKeepRatio, CenterCrop, on the tensor
        ref = T.Normalize(M, S)(T.ConvertImageDtype(torch.float32)(ref))
        got = conv(x)
        assert got.shape == ref.shape and _levels(got, ref, S) <= 1 + 1e-3, name
        assert torch.equal(got, via_tv(x))


def test_empty_compose_is_the_identity():
    """torchvision's Compose([]) returns its input; goprep raised TypeError ('Compose' object is not
    iterable). It is now an identity pipeline: a copy, NumPy HWC for PIL, a tensor for a tensor."""
    img, x = _pil("chelsea"), _tensor("chelsea")
    for t in (T.Compose([]), torch.nn.Sequential()):
        conv = gt.from_torchvision(t)
        assert np.array_equal(conv(img), np.asarray(img))
        got = conv(x)
        assert isinstance(got, torch.Tensor) and torch.equal(got, x)
    nested = T.Compose([T.Compose([]), T.ToTensor()])
    assert float((gt.from_torchvision(nested)(img) - nested(img)).abs().max()) <= 1e-5


def test_normalize_that_cannot_broadcast_names_it():
    for t in (
        T.Compose([T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3), T.Normalize([0.5, 0.5], [0.5, 0.5])]),  # IndexError
        T.Compose([T.ToTensor(), T.Normalize([0.5] * 3, [0.5, 0.5])]),
    ):
        _assert_raises_naming(lambda: gt.from_torchvision(t), "Normalize", "broadcast")
    _assert_raises_naming(lambda: gt.from_torchvision(T.Compose([T.ToTensor(), T.Normalize(M, [0.2, 0.0, 0.2])])),
                          "Normalize.std")


_BAD_CONFIGS = [
    ("timm", None, "data_config"),  # AttributeError before
    ("timm", [], "data_config"),
    ("timm", {"input_size": (224,)}, "input_size"),  # IndexError
    ("timm", {"input_size": (3, 0, 224)}, "input_size"),  # ZeroDivisionError at the first call
    ("timm", {"input_size": "224"}, "input_size"),
    ("timm", {"crop_pct": float("nan")}, "crop_pct"),  # ValueError: cannot convert NaN
    ("timm", {"crop_pct": -1}, "crop_pct"),
    ("timm", {"crop_pct": 1000}, "crop_pct"),  # resizes to 0 pixels
    ("timm", {"crop_mode": "random"}, "crop_mode"),
    ("timm", {"interpolation": None}, "interpolation"),
    ("timm", {"interpolation": "hamming"}, "interpolation"),  # (lanczos converts: test_transforms_lanczos.py)
    ("timm", {"mean": None}, "mean"),
    ("timm", {"mean": (0.5, 0.5)}, "mean"),
    ("timm", {"std": (0.2, 0.0, 0.2)}, "std"),
    ("hf", None, "processor_or_config"),  # TypeError: vars() argument
    ("hf", 3, "processor_or_config"),
    ("hf", {"size": 224.0}, "size"),  # TypeError
    ("hf", {"size": "224"}, "size"),
    ("hf", {"size": {"height": 0, "width": 8}}, "size['height']"),
    ("hf", {"size": {"height": 8}}, "size"),
    ("hf", {"size": {"shortest_edge": 8, "longest_edge": 16}}, "size"),
    ("hf", {"size": {"height": 8, "width": 8}, "do_center_crop": True, "crop_size": {}}, "crop_size"),  # KeyError
    ("hf", {"size": {"height": 8, "width": 8}, "do_center_crop": True, "crop_size": 8.5}, "crop_size"),
    ("hf", {"image_processor_type": "ConvNextImageProcessor", "size": {"height": 8, "width": 8}}, "size"),  # KeyError
    ("hf", {"image_processor_type": "ConvNextImageProcessor", "size": {"shortest_edge": 8}, "crop_pct": float("nan")},
     "crop_pct"),
    ("hf", {"size": 8, "resample": 4}, "resample"),  # BOX (LANCZOS, 1, converts: test_transforms_lanczos.py)
    ("hf", {"size": 8, "rescale_factor": "x"}, "rescale_factor"),
    ("hf", {"size": 8, "image_mean": None}, "image_mean"),
    ("hf", {"size": 8, "image_std": [0.5, 0.0, 0.5]}, "image_std"),
    ("hf", {"size": 8, "image_mean": [0.5] * 3, "image_std": [0.5] * 2}, "image_std"),  # RGB: 1 or 3 values
    ("timm", {"input_size": (1, 64, 64), "mean": M}, "mean"),
    ("hf", {"size": 8, "do_pad": True}, "do_pad"),
]


@pytest.mark.parametrize("which,cfg,field", _BAD_CONFIGS, ids=[f"{w}-{f}-{i}" for i, (w, _, f) in enumerate(_BAD_CONFIGS)])
def test_bad_configs_raise_pipeline_error_naming_the_field(which, cfg, field):
    conv = gt.from_timm if which == "timm" else gt.from_hf
    with pytest.raises(goprep.PipelineError) as ei:
        conv(cfg)(_pil("chelsea"))
    assert ei.value.argument == field and str(ei.value).startswith(field + ": "), str(ei.value)


def test_good_configs_still_convert():
    img = _pil("chelsea")
    assert gt.from_timm({"crop_pct": None, "crop_mode": None})(img).shape == (3, 224, 224)
    assert gt.from_timm({"input_size": 64, "crop_pct": 0})(img).shape == (3, 64, 64)  # timm: crop_pct or 0.875
    assert gt.from_timm({"input_size": (96, 128)})(img).shape == (3, 96, 128)
    assert gt.from_hf({"size": (8, 9)})(img).shape == (3, 8, 9)  # HF: a pair is (height, width)
    assert gt.from_hf({"size": {"height": 8, "width": 9, "shortest_edge": None}, "rescale_factor": None})(img).shape == (3, 8, 9)


def _hf_processors():
    transformers = pytest.importorskip("transformers")
    from transformers import (
        BeitImageProcessor,
        CLIPImageProcessor,
        ConvNextImageProcessor,
        DeiTImageProcessor,
        SiglipImageProcessor,
        ViTImageProcessor,
    )

    transformers.logging.set_verbosity_error()
    return {
        "vit": ViTImageProcessor(),
        "clip": CLIPImageProcessor(),
        "convnext-224": ConvNextImageProcessor(size={"shortest_edge": 224}),
        "convnext-384": ConvNextImageProcessor(),
        "deit": DeiTImageProcessor(),
        "beit": BeitImageProcessor(),
        "siglip": SiglipImageProcessor(),
        "clip-pil": transformers.CLIPImageProcessorPil(),
        "vit-pil": transformers.ViTImageProcessorPil(),
    }


# The torchvision-backed processors resize the uint8 tensor with PyTorch's uint8 antialias kernel
# (int16 weights at the largest precision that fits, rounded to uint8 between the passes); goprep's
# tensor path rounds its weights the same way (antialias="torch"), so the uint8 images are equal and
# the normalised values differ by float rounding only. Pillow's 22-bit weights were 2 levels off on
# rare pixels (ConvNeXt-384, CLIP bicubic).
@pytest.mark.parametrize("key", ["vit", "clip", "convnext-224", "convnext-384", "deit", "beit", "siglip", "clip-pil", "vit-pil"])
def test_from_hf_within_one_level(key):
    proc = _hf_processors()[key]
    conv, from_dict = gt.from_hf(proc), gt.from_hf(proc.to_dict())
    std = list(proc.image_std)
    for name in RGB:
        img = _pil(name)
        want = proc(img, return_tensors="pt")["pixel_values"][0]
        for c in (conv, from_dict) if not key.endswith("pil") else (conv,):
            got = c(img)
            assert got.shape == want.shape
            assert _levels(got, want, std) <= 1e-3, (key, name)  # the issue asks for 1 level: exact here
        if key.endswith("pil"):
            assert float((conv(img) - want).abs().max()) <= 1e-5  # Pillow numerics: exact


@pytest.mark.parametrize("interp", ["bilinear", "bicubic"])
@pytest.mark.parametrize("name", RGB)
def test_resize_antialias_torch_equals_torchvision_uint8(name, interp):
    """antialias="torch": torchvision's Resize on uint8 tensors (PyTorch's uint8 kernel), bit for bit,
    down- and upscale, one axis kept; antialias=True (Pillow's weights) is not, which is the point."""
    import torchvision.transforms.v2.functional as F

    x = PHOTOS[name]
    t = _tensor(name)
    mode = F.InterpolationMode(interp)
    pillow_off = 0
    for size in ((224, 224), (384, 300), (37, 91), (700, 1050), (x.shape[0], 200)):
        want = F.resize(t, list(size), interpolation=mode, antialias=True).permute(1, 2, 0).numpy()
        got = goprep.resize(x, size, interpolation=interp, antialias="torch")
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {interp} {size}")
        got_t = goprep.resize(t, size, interpolation=interp, antialias="torch")  # tensors in, tensors out
        assert torch.equal(got_t, torch.from_numpy(want).permute(2, 0, 1))
        pillow_off += int((goprep.resize(x, size, interpolation=interp, antialias=True) != want).sum())
    assert pillow_off > 0
    # float32: PyTorch's weights are Pillow's float ones, so "torch" is antialias=True there
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(goprep.resize(xf, (100, 90), interpolation=interp, antialias="torch"),
                                  goprep.resize(xf, (100, 90), interpolation=interp, antialias=True))


def test_resize_antialias_torch_errors_name_the_argument():
    x = PHOTOS["chelsea"]
    for bad in ("Torch", "pil", 1):
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            goprep.resize(x, (10, 10), antialias=bad)
        assert ei.value.argument == "antialias"
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(x, (10, 10), interpolation="area", antialias="torch")
    assert ei.value.argument == "antialias"


@pytest.mark.parametrize("kind", ["ViTImageProcessor", "DeiTImageProcessor", "CLIPImageProcessor", "SiglipImageProcessor"])
def test_from_hf_int_size_in_a_config_dict(kind):
    """An int size in a raw preprocessor_config.json is a square for ViT-style processors
    (transformers' default_to_square) and the shorter side for CLIP/SigLIP; goprep read every int as
    the shorter side, which gave ViT configs another shape."""
    transformers = pytest.importorskip("transformers")

    transformers.logging.set_verbosity_error()
    cfg = {"image_processor_type": kind, "size": 96, "do_center_crop": False, "resample": 2, "do_rescale": True,
           "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5] * 3, "image_std": [0.5] * 3}
    proc = getattr(transformers, kind).from_dict(cfg)
    img = _pil("chelsea")
    want = proc(img, return_tensors="pt")["pixel_values"][0]
    got = gt.from_hf(cfg)(img)
    assert got.shape == want.shape and _levels(got, want, [0.5] * 3) <= 1 + 1e-3
    old_style = {**cfg, "feature_extractor_type": kind.replace("ImageProcessor", "FeatureExtractor")}
    del old_style["image_processor_type"]
    assert gt.from_hf(old_style)(img).shape == want.shape


@pytest.mark.slow
def test_from_hf_dict_needs_no_transformers():
    code = (
        "import sys, numpy as np, goprep.transforms as gt\n"
        "cfg = {'do_resize': True, 'size': {'shortest_edge': 224}, 'resample': 3, 'do_center_crop': True,\n"
        "       'crop_size': {'height': 224, 'width': 224}, 'do_rescale': True, 'rescale_factor': 1/255,\n"
        "       'do_normalize': True, 'image_mean': [0.5, 0.5, 0.5], 'image_std': [0.5, 0.5, 0.5]}\n"
        "x = gt.from_hf(cfg)(np.zeros((300, 400, 3), np.uint8))\n"
        "assert x.shape == (3, 224, 224), x.shape\n"
        "bad = [m for m in ('transformers', 'timm', 'torchvision') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr


_TIMM = [
    dict(input_size=(3, 224, 224), interpolation="bicubic", crop_pct=0.875, crop_mode="center", mean=M, std=S),
    dict(input_size=(3, 224, 224), interpolation="bilinear", crop_pct=0.9, crop_mode="center", mean=(0.5,) * 3, std=(0.5,) * 3),
    dict(input_size=(3, 288, 288), interpolation="bicubic", crop_pct=1.0, crop_mode="center", mean=M, std=S),
    dict(input_size=(3, 256, 320), interpolation="bicubic", crop_pct=0.95, crop_mode="center", mean=M, std=S),
    dict(input_size=(3, 224, 224), interpolation="bicubic", crop_pct=0.875, crop_mode="squash", mean=M, std=S),
    dict(input_size=(3, 224, 224), interpolation="bicubic", crop_pct=1.0, crop_mode="border", mean=M, std=S),
    dict(input_size=(3, 256, 320), interpolation="bilinear", crop_pct=0.9, crop_mode="border", mean=(0.5,) * 3, std=(0.5,) * 3),
]


@pytest.mark.parametrize("cfg", _TIMM, ids=lambda c: f"{c['input_size'][1]}x{c['input_size'][2]}-{c['interpolation']}-{c['crop_mode']}")
def test_from_timm_matches_create_transform(cfg):
    timm = pytest.importorskip("timm")
    pytest.importorskip("timm.data")

    tf = timm.data.create_transform(**cfg, is_training=False)
    conv = gt.from_timm(cfg)
    for name in RGB:
        img = _pil(name)
        want, got = tf(img), conv(img)
        assert got.shape == want.shape
        assert float((got - want).abs().max()) <= 1e-5
    # timm's own transform object converts too (MaybeToTensor is its ToTensor)
    assert float((gt.from_torchvision(tf)(_pil("coffee")) - tf(_pil("coffee"))).abs().max()) <= 1e-5


@pytest.mark.slow
def test_importing_transforms_loads_no_ml_library():
    code = (
        "import sys, goprep.transforms\n"
        "bad = [m for m in ('torch', 'torchvision', 'transformers', 'timm', 'PIL') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr


def test_float_inputs_are_not_rescaled_again():
    """torchvision's conversions scale by the source's dtype: a float32 [0, 1] tensor (or array) passes
    ToDtype(scale=True) / ConvertImageDtype / ToTensor unscaled, where a uint8 one is divided by 255;
    goprep's pipelines must do the same, not divide the float image by 255 again. Hugging Face's
    rescale multiplies whatever it gets."""
    f = _tensor("chelsea").float() / 255  # (C, H, W) float32 in [0, 1]
    for t in [
        v2.Compose([v2.CenterCrop(200), v2.ToDtype(torch.float32, scale=True), v2.Normalize(M, S)]),
        T.Compose([T.CenterCrop(200), T.ConvertImageDtype(torch.float32), T.Normalize(M, S)]),
    ]:
        got, want = gt.from_torchvision(t)(f), t(f)
        assert float((got - want).abs().max()) <= 1e-5, t
        u = _tensor("chelsea")  # the same chain on uint8 still divides by 255
        assert float((gt.from_torchvision(t)(u) - t(u)).abs().max()) <= 1e-5, t
    arr = np.ascontiguousarray(PHOTOS["chelsea"].astype(np.float32) / 255)  # HWC float, as ToTensor takes it
    t = T.Compose([T.ToTensor(), T.Normalize(M, S)])
    assert float((gt.from_torchvision(t)(arr) - t(arr)).abs().max()) <= 1e-5
    hf = gt.from_hf({"do_resize": False, "do_center_crop": False, "do_rescale": True, "rescale_factor": 0.5,
                     "do_normalize": False})
    got = hf(f)
    assert float((torch.as_tensor(got) - f * 0.5).abs().max()) <= 1e-6
