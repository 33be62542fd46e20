"""LANCZOS in the converters (goprep.transforms): torchvision's Resize / RandomResizedCrop (v1 and v2), timm's
interpolation="lanczos" and Hugging Face's resample=LANCZOS (1), against the libraries themselves. PIL images:
Pillow's LANCZOS, bit for bit; v2 on uint8 tensors: PyTorch's uint8 lanczos, bit for bit. Refused by name
(the argument in .argument and first in the message): v1 on tensors and v2 with antialias=False on tensors
(torchvision raises on both), float tensors (PyTorch's float32 kernel is further than 1e-5 from goprep's), and
the Hugging Face classes that resize with LANCZOS in a way goprep does not reproduce."""

import warnings

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS
from zoo_compare import as_kind, close_pil, hf_pixel_bound_ok, hf_processor

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
v2 = pytest.importorskip("torchvision.transforms.v2")
Image = pytest.importorskip("PIL.Image")

LANCZOS = T.InterpolationMode.LANCZOS
M, S = IMAGENET_MEAN, IMAGENET_STD
# (size as torchvision takes it): odd pairs up and down, a shorter side, a tiny and a 1-pixel-wide target
SIZES = [(123, 301), (7, 9), 97, 700, (500, 3), (1, 40), (333, 517)]


def _odd_images():
    """A photo with an odd width (300 x 451), a random odd-sized image (upscaled by most SIZES) and a
    gray photo (mode "L")."""
    rng = np.random.default_rng(40)
    return {"chelsea": PHOTOS["chelsea"].copy(), "noise": rng.integers(0, 256, (37, 53, 3), dtype=np.uint8),
            "gray": np.ascontiguousarray(PHOTOS["camera"][..., :1])}


def _pil(a):
    return Image.fromarray(a[..., 0] if a.shape[-1] == 1 else a)


def _chw(a):
    return torch.from_numpy(a.copy()).permute(2, 0, 1).contiguous()


def _refused(fn, argument, *words):
    """fn() raises goprep.PipelineError with ``argument`` (first in the message) and ``words`` in it."""
    with pytest.raises(goprep.PipelineError) as ei:
        fn()
    e = ei.value
    assert e.argument == argument and str(e).startswith(argument), (e.argument, str(e))
    for w in words:
        assert w in str(e), (w, str(e))


@pytest.mark.parametrize("mod", [T, v2], ids=["v1", "v2"])
def test_resize_lanczos_on_pil_equals_pillow(mod):
    """Resize(LANCZOS) on a PIL image is Pillow's Image.resize(..., LANCZOS): equal bit for bit (uint8
    out), and within 1e-5 with ToTensor and Normalize after it."""
    for name, a in _odd_images().items():
        img = _pil(a)
        for size in SIZES:
            t = mod.Resize(size, interpolation=LANCZOS)
            got, want = gt.from_torchvision(t)(img), np.asarray(t(img))
            want = want.reshape(want.shape[:2] + (-1,))
            assert np.array_equal(got.reshape(want.shape), want), (name, size)
        norm = T.Compose([T.Resize(160, interpolation=LANCZOS), T.CenterCrop(150), T.ToTensor(), T.Normalize(M, S)]) \
            if mod is T else v2.Compose([v2.Resize(160, interpolation=LANCZOS), v2.CenterCrop(150), v2.ToImage(),
                                         v2.ToDtype(torch.float32, scale=True), v2.Normalize(M, S)])
        if name != "gray":
            got, want = gt.from_torchvision(norm)(img), norm(img)
            assert got.shape == want.shape and float((got - want).abs().max()) <= 1e-5, name


def test_resize_lanczos_on_rgba_pil_premultiplied_as_pillow():
    """An RGBA PIL image: Pillow resizes it premultiplied by alpha, as goprep's engine does."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (41, 29, 4), dtype=np.uint8)
    a[::3, :, 3] = 0  # transparent rows
    for size in [(17, 61), (90, 13)]:
        t = v2.Resize(size, interpolation=LANCZOS)
        img = Image.fromarray(a, "RGBA")
        assert np.array_equal(gt.from_torchvision(t)(img), np.asarray(t(img))), size


@pytest.mark.parametrize("batched", [False, True])
def test_v2_resize_lanczos_on_uint8_tensors_equals_torchvision(batched):
    """v2's resize of a CPU uint8 tensor is PyTorch's uint8 lanczos (antialias=True): goprep's
    antialias="torch", equal bit for bit (a batch too)."""
    for name, a in _odd_images().items():
        x = _chw(a)
        if batched:
            x = torch.stack([x, x.flip(-1)])
        for size in SIZES:
            t = v2.Resize(size, interpolation=LANCZOS)
            got, want = gt.from_torchvision(t)(x), t(x)
            assert got.dtype == torch.uint8 and torch.equal(got, want), (name, size)
    x = _chw(_odd_images()["chelsea"])
    t = v2.Compose([v2.Resize(200, interpolation=LANCZOS), v2.CenterCrop(180), v2.ToDtype(torch.float32, scale=True),
                    v2.Normalize(M, S)])
    got, want = gt.from_torchvision(t)(x), t(x)
    assert float((got - want).abs().max()) <= 1e-5


def test_lanczos_on_tensors_refused_where_torchvision_fails_or_goprep_is_not_exact():
    """v1 on tensors and v2 with antialias False / None on tensors: torchvision raises, goprep refuses
    (naming the argument) at the call; PIL images convert. v2 on float tensors: refused (PyTorch's
    float32 lanczos is up to 3.3e-5 from goprep's on photos in [0, 1])."""
    a = _odd_images()["chelsea"]
    x = _chw(a)
    v1 = gt.from_torchvision(T.Resize(100, interpolation=LANCZOS))
    with pytest.raises(ValueError, match="antialias"):
        T.Resize(100, interpolation=LANCZOS)(x)
    _refused(lambda: v1(x), "Resize.interpolation", "torchvision.transforms (v1)")
    _refused(lambda: v1(x.float() / 255), "Resize.interpolation", "v1")
    for aa in (False, None):
        t = v2.Resize(100, interpolation=LANCZOS, antialias=aa)
        with pytest.raises(ValueError, match="antialias"):
            t(x)
        conv = gt.from_torchvision(t)
        _refused(lambda: conv(x), "Resize.antialias", "LANCZOS")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torchvision: antialias is always applied for PIL images
            assert np.array_equal(conv(_pil(a)), np.asarray(t(_pil(a))))
    t = v2.Resize(100, interpolation=LANCZOS)
    _refused(lambda: gt.from_torchvision(t)(x.float() / 255), "Resize.interpolation", "float tensor", "3.3e-5")
    # a NumPy array takes the PIL numerics, as bicubic's does
    assert np.array_equal(gt.from_torchvision(t)(a), np.asarray(t(_pil(a))))


@pytest.mark.parametrize("mod", [T, v2], ids=["v1", "v2"])
def test_random_resized_crop_lanczos_equals_torchvision(mod):
    """RandomResizedCrop(LANCZOS): the same draws (torch's generator), then Pillow's crop + LANCZOS on PIL
    images, PyTorch's uint8 lanczos on v2's uint8 tensors."""
    a = _odd_images()["chelsea"]
    t = mod.RandomResizedCrop((61, 47), interpolation=LANCZOS)
    conv = gt.from_torchvision(t)
    for seed in range(5):
        torch.manual_seed(seed)
        want = np.asarray(t(_pil(a)))
        torch.manual_seed(seed)
        assert np.array_equal(conv(_pil(a)), want), seed
        if mod is v2:
            x = _chw(a)
            torch.manual_seed(seed)
            want_t = t(x)
            torch.manual_seed(seed)
            assert torch.equal(conv(x), want_t), seed


def test_colour_jitter_after_v2_lanczos_on_uint8_tensors():
    """A colour op after the resize runs the chain's resizes as torchvision's (TorchResize): v2's uint8
    lanczos is goprep's kernel there too, so the jittered tensors are equal; v1's and float tensors are
    refused as without the jitter."""
    x = _chw(_odd_images()["chelsea"])
    t = v2.Compose([v2.Resize(90, interpolation=LANCZOS), v2.ColorJitter(0.4, 0.4, 0.4)])
    conv = gt.from_torchvision(t)
    for seed in range(3):
        torch.manual_seed(seed)
        want = t(x)
        torch.manual_seed(seed)
        got = conv(x)
        assert torch.equal(got, want), seed
    t1 = gt.from_torchvision(T.Compose([T.Resize(90, interpolation=LANCZOS), T.ColorJitter(0.4, 0.4, 0.4)]))
    _refused(lambda: t1(x), "Resize.interpolation", "v1")
    _refused(lambda: conv(x.float() / 255), "Resize.interpolation", "float tensor")


@pytest.mark.parametrize("crop_mode", ["center", "squash", "border"])
def test_timm_lanczos_equals_timm_on_pil(crop_mode):
    """timm's interpolation="lanczos" is PIL's LANCZOS through torchvision's v1 Resize (str_to_interp_mode):
    from_timm and from_torchvision(create_transform(...)) equal timm's transform on PIL images within
    1e-5 (non-square input_size: ResizeKeepRatio); on tensors v1's refusal."""
    timm_data = pytest.importorskip("timm.data")
    for size, pct in [((3, 224, 224), 0.875), ((3, 160, 200), 0.95), ((3, 97, 97), 1.0)]:
        cfg = {"input_size": size, "interpolation": "lanczos", "crop_pct": pct, "crop_mode": crop_mode,
               "mean": M, "std": S}
        tf = timm_data.create_transform(**cfg, is_training=False)
        img = _pil(_odd_images()["chelsea"])
        want = tf(img)
        for conv in (gt.from_timm(cfg), gt.from_torchvision(tf)):
            got = conv(img)
            assert got.shape == want.shape and float((got - want).abs().max()) <= 1e-5, (size, pct)
    op = "ResizeKeepRatio" if crop_mode == "border" else "Resize"  # (the last input_size is a square)
    _refused(lambda: gt.from_timm(cfg)(_chw(_odd_images()["chelsea"])), f"{op}.interpolation", "v1")


@pytest.mark.parametrize("kind", ["ViTImageProcessor", "ViTImageProcessorPil", "CLIPImageProcessor",
                                  "CLIPImageProcessorPil", "ChameleonImageProcessor", "ChameleonImageProcessorPil"])
@pytest.mark.parametrize("src", ["pil", "numpy", "tensor"])
def test_hf_resample_lanczos_equals_the_class(kind, src):
    """A generic Hugging Face class with resample=LANCZOS (1), from its class defaults (Chameleon's default
    is LANCZOS): Pillow's LANCZOS in the PIL class, PyTorch's uint8 lanczos in the torchvision class,
    within the sweep's bounds (1e-5 / 1 uint8 level), one image and a batch of odd sizes; the config
    dict converts to the same pipeline."""
    pytest.importorskip("transformers")
    proc = hf_processor(kind) if kind.startswith("Chameleon") else hf_processor(kind, resample=1)
    assert int(proc.resample) == 1
    conv = gt.from_hf(proc)
    imgs = [as_kind(src, a) for a in (_odd_images()["chelsea"], _odd_images()["noise"])]
    for img in imgs:
        got, want = conv(img), proc(img, return_tensors="pt")["pixel_values"][0]
        assert got.shape == want.shape and hf_pixel_bound_ok(proc, got, want, 0), kind
        if "Pil" in kind:
            assert close_pil(got, want) <= 1e-5
    if not kind.endswith("Pil"):
        assert torch.equal(gt.from_hf(proc.to_dict())(imgs[0]), conv(imgs[0]))
    square = [as_kind(src, PHOTOS[n][:200, :200].copy()) for n in ("coffee", "astronaut")]
    got, want = conv(square), proc(square, return_tensors="pt")["pixel_values"]
    assert got.shape == want.shape and hf_pixel_bound_ok(proc, got, want, 1)


def test_hf_resample_lanczos_equals_pillow_bit_for_bit():
    """The PIL class's resize is Pillow's LANCZOS: with nothing after it (no rescale, no normalise), the
    pixel values are equal."""
    pytest.importorskip("transformers")
    proc = hf_processor("ViTImageProcessorPil", resample=1, size={"height": 77, "width": 131}, do_rescale=False,
                        do_normalize=False)
    img = _pil(_odd_images()["noise"])
    want = np.asarray(img.resize((131, 77), Image.LANCZOS)).transpose(2, 0, 1)
    assert np.array_equal(gt.from_hf(proc)(img).numpy(), want)


@pytest.mark.parametrize("kind,why", [
    ("DepthProImageProcessor", "antialias=False"),
    ("DINOv3ViTImageProcessor", "rescales before it resizes"),
    ("Phi4MultimodalImageProcessor", "antialias=False"),
])
def test_hf_resample_lanczos_refused_by_name(kind, why):
    """Classes whose LANCZOS goprep does not reproduce: refused at conversion, naming resample and the class."""
    pytest.importorskip("transformers")
    proc = hf_processor(kind, resample=1)
    _refused(lambda: gt.from_hf(proc), "resample", kind, why)


def test_lanczos_on_a_tensor_outside_the_cpu_refused_by_name():
    """torchvision has no lanczos outside the CPU (v2 raises; transformers' torchvision backend falls back
    to BICUBIC there): a tensor on another device is refused, naming the Resize, not resized with goprep's
    lanczos. A "meta" tensor stands in for a CUDA one (its device is not the CPU; no data is read)."""
    away = torch.zeros(3, 40, 50, dtype=torch.uint8, device="meta")
    here = torch.zeros(3, 40, 50, dtype=torch.uint8)
    tv = gt.from_torchvision(v2.Resize((20, 30), interpolation=LANCZOS, antialias=True))
    assert tv(here).shape == (3, 20, 30)
    for src in (away, [here, away]):
        with pytest.raises(goprep.PipelineError) as e:
            tv(src)
        assert e.value.argument == "Resize.interpolation" and "on meta" in str(e.value)
    hf = gt.from_hf(hf_processor("ChameleonImageProcessor"))  # resample=LANCZOS by default
    with pytest.raises(goprep.PipelineError) as e:
        hf(away)
    assert e.value.argument.endswith("interpolation") and "BICUBIC" in str(e.value)
