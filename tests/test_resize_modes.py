"""The model-zoo resize kinds on real photographs, down- and upscale, against the library each one is
defined by: bicubic (Pillow BICUBIC with antialias, cv2 INTER_CUBIC on uint8, PyTorch bicubic on
float32), PyTorch's uint8 kernels without antialias ("torch-noaa"), area (cv2 INTER_AREA),
nearest-exact and nearest-torch (PyTorch) and nearest-pil (Pillow NEAREST)."""

import cv2
import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import (
    PHOTOS,
    assert_array_identical,
    assert_close_to_cv2_u8,
    assert_goprep_error,
    cv2_resize,
    pil_resize,
    to_unit_f32,
)

NAMES = ["astronaut", "chelsea", "coffee", "camera", "chelsea_rgba"]
DOWN = [(224, 224), (123, 301), (150, 225)]  # (150, 225) is an exact 2x for chelsea
UP = [(700, 901), (613, 517)]
SIZES = DOWN + UP


def _torch(x, size, **kw):
    """torch interpolate on an HWC array, in the array's dtype (float64 gives the float64 evaluation)."""
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(np.ascontiguousarray(x)).permute(2, 0, 1)[None]
    return torch.nn.functional.interpolate(t, size=size, **kw)[0].permute(1, 2, 0).numpy()


# ------------------------------------------------------------------------------------------ bicubic


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", NAMES)
def test_bicubic_antialias_u8_equals_pillow(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size, interpolation="bicubic", antialias=True)
    assert_close_to_cv2_u8(got, pil_resize(img, size, Image.BICUBIC), min_equal=0.999)


# Pillow 13 resizes vertically first where the height shrinks by more than twice what the width does
# (its ImagingResampleInner); each pass rounds to uint8, so the order shows. Two Pillow calls, one
# axis each, give either order on every Pillow version; Pillow 13's own resize must agree.
PIL_13 = int(Image.__version__.split(".")[0]) >= 13
ORDER_SIZES = {
    "astronaut": [(300, 700), (100, 400), (100, 512), (300, 200), (2, 300)],
    "chelsea": [(250, 600), (120, 400), (299, 451)],
    "coffee": [(123, 900), (100, 450), (399, 300)],
}


def _vertical_first(h, w, oh, ow):
    """Pillow 13.0's rule (goprep's pillowVerticalFirst)."""
    return h - oh > 0 and h - oh > 2 * (w - ow)


@pytest.mark.parametrize("kind, resample", [("bicubic", Image.BICUBIC), ("bilinear", Image.BILINEAR)])
@pytest.mark.parametrize("name, size", [(n, s) for n, sizes in ORDER_SIZES.items() for s in sizes])
def test_antialias_u8_pass_order_equals_pillow(name, size, kind, resample):
    img = PHOTOS[name]
    (h, w), (oh, ow) = img.shape[:2], size
    got = goprep.resize(img, size, interpolation=kind, antialias=True)
    vfirst = Image.fromarray(img).resize((w, oh), resample).resize((ow, oh), resample)
    hfirst = Image.fromarray(img).resize((ow, h), resample).resize((ow, oh), resample)
    want, other = (vfirst, hfirst) if _vertical_first(h, w, oh, ow) else (hfirst, vfirst)
    assert_array_identical(got, np.asarray(want))
    if ow != w and oh != h:
        assert not np.array_equal(got, np.asarray(other))  # the order shows on these sizes
    if PIL_13:
        assert_array_identical(got, np.asarray(Image.fromarray(img).resize((ow, oh), resample)))


@pytest.mark.skipif(not PIL_13, reason="Pillow 13's pass order: older Pillow runs the horizontal pass first")
def test_antialias_u8_equals_pillow_on_random_crops():
    """Small random crops and sizes of a photograph, both filters: Pillow 13 bit for bit (its pass
    order differs by 1 level where both axes shrink)."""
    rng = np.random.default_rng(13)
    photo = PHOTOS["coffee"]
    orders = set()
    for _ in range(150):
        h, w = (int(v) for v in rng.integers(2, 90, 2))
        y, x = int(rng.integers(0, photo.shape[0] - h)), int(rng.integers(0, photo.shape[1] - w))
        img = np.ascontiguousarray(photo[y : y + h, x : x + w])
        oh, ow = int(rng.integers(1, 2 * h)), int(rng.integers(1, 2 * w))
        orders.add(_vertical_first(h, w, oh, ow))
        for kind, resample in (("bicubic", Image.BICUBIC), ("bilinear", Image.BILINEAR)):
            got = goprep.resize(img, (oh, ow), interpolation=kind, antialias=True)
            assert_array_identical(got, np.asarray(Image.fromarray(img).resize((ow, oh), resample)))
    assert orders == {True, False}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", NAMES)
def test_bicubic_u8_equals_cv2(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size, interpolation="bicubic")
    assert_close_to_cv2_u8(got, cv2_resize(img, size, cv2.INTER_CUBIC), min_equal=0.999)


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["astronaut", "chelsea", "coffee"])
def test_bicubic_f32_follows_torch(name, size, antialias):
    img = to_unit_f32(PHOTOS[name])
    got = goprep.resize(img, size, interpolation="bicubic", antialias=antialias)
    ref64 = _torch(img.astype(np.float64), size, mode="bicubic", align_corners=False, antialias=antialias)
    ref32 = _torch(img, size, mode="bicubic", align_corners=False, antialias=antialias)
    span = float(img.max() - img.min())
    assert got.dtype == np.float32 and got.shape == ref64.shape
    assert np.abs(got - ref64).max() <= 1e-5 * span
    # torch's own float32 kernels compute coordinates and weights in float32 and land up to ~2.5e-5 of
    # the range from the float64 evaluation on these photos: goprep is held to the float64 one
    assert np.abs(got - ref32).max() <= 1e-4 * span


def test_bicubic_differs_from_bilinear():
    # the point of the mode: bilinear is off by many levels on a real photograph
    img = PHOTOS["astronaut"]
    cub = goprep.resize(img, (224, 224), interpolation="bicubic", antialias=True).astype(int)
    lin = goprep.resize(img, (224, 224), antialias=True).astype(int)
    assert np.abs(cub - lin).max() >= 10


# --------------------------------------------------------------------------------------------- area


@pytest.mark.parametrize("size", DOWN + [(256, 256), (100, 150), (60, 60)])
@pytest.mark.parametrize("name", NAMES)
def test_area_u8_downscale_equals_cv2(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size, interpolation="area")
    assert_close_to_cv2_u8(got, cv2_resize(img, size, cv2.INTER_AREA), min_equal=0.99)


@pytest.mark.parametrize("size", UP + [(1000, 300)])  # (1000, 300): one axis grows, one shrinks
@pytest.mark.parametrize("name", ["astronaut", "chelsea", "camera"])
def test_area_u8_upscale_is_cv2s_rule(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size, interpolation="area")
    assert_close_to_cv2_u8(got, cv2_resize(img, size, cv2.INTER_AREA), min_equal=0.99)


@pytest.mark.parametrize("size", [(224, 224), (256, 256), (700, 901)])
def test_area_f32_follows_cv2(size):
    img = to_unit_f32(PHOTOS["coffee"])
    got = goprep.resize(img, size, interpolation="area")
    assert np.abs(got - cv2_resize(img, size, cv2.INTER_AREA)).max() <= 1e-5


# ------------------------------------------------------------------------------------------ nearest


def _assert_equals_torch(img, size, interpolation, mode):
    """goprep's ``interpolation`` gives exactly ``interpolate(mode=mode)``, on uint8 and on float32."""
    for x in (img, to_unit_f32(img)):
        assert_array_identical(goprep.resize(x, size, interpolation=interpolation), _torch(x, size, mode=mode))


@pytest.mark.parametrize("size", SIZES + [(7, 3)])
@pytest.mark.parametrize("name", NAMES)
def test_nearest_exact_equals_torch(name, size):
    _assert_equals_torch(PHOTOS[name], size, "nearest-exact", "nearest-exact")


@pytest.mark.parametrize("size", SIZES + [(7, 3)])
@pytest.mark.parametrize("name", NAMES)
def test_nearest_pil_equals_pillow(name, size):
    img = PHOTOS[name]
    assert_array_identical(goprep.resize(img, size, interpolation="nearest-pil"), pil_resize(img, size, Image.NEAREST))


@pytest.mark.parametrize("size", SIZES + [(7, 3), (300, 451), (600, 902)])
@pytest.mark.parametrize("name", NAMES)
def test_nearest_torch_equals_torch(name, size):
    """PyTorch's legacy ``nearest`` (torchvision's NEAREST on tensors), uint8 and float32."""
    _assert_equals_torch(PHOTOS[name], size, "nearest-torch", "nearest")


def test_nearest_torch_every_small_size_pair():
    # the index rule itself (float32 products landing below an integer, the 2x shift), on an image
    # whose values are their column index; cv2's rule (goprep's nearest) differs on some of them
    differs = 0
    for w in range(1, 60):
        row = np.tile(np.arange(w, dtype=np.float32)[None, :, None], (2, 1, 1))
        for ow in range(1, 130):
            got = goprep.resize(row, (2, ow), interpolation="nearest-torch")
            assert_array_identical(got, _torch(row, (2, ow), mode="nearest"))
            differs += not np.array_equal(got, goprep.resize(row, (2, ow), interpolation="nearest"))
    assert differs > 0


@pytest.mark.parametrize("size", SIZES + [(300, 97)])
@pytest.mark.parametrize("name", NAMES)
def test_torch_noaa_u8_equals_torch(name, size):
    """antialias="torch-noaa": PyTorch's uint8 bilinear / bicubic without antialias (torchvision v2's
    Resize(antialias=False) on uint8 tensors), bit for bit, 3 and 4 channels, on the fast path too."""
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.v2.functional")

    img = PHOTOS[name]
    t = torch.from_numpy(img).permute(2, 0, 1)
    for kind in ("bilinear", "bicubic"):
        want = F.resize(t, list(size), interpolation=F.InterpolationMode(kind), antialias=False).permute(1, 2, 0).numpy()
        assert_array_identical(goprep.resize(img, size, interpolation=kind, antialias="torch-noaa"), want)
        if img.shape[-1] == 3:  # normalized: the fast antialias path's kernels
            norm = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, size, interpolation=kind, antialias="torch-noaa"), mean=0, std=1))
            assert_array_identical(np.rint(norm(img) * 255).astype(np.uint8), want.transpose(2, 0, 1))


def test_nearest_rules_differ_on_ties():
    # 512 -> 224: (x + 0.5) * 512/224 lands on integers every 7th column; PyTorch and Pillow round those
    # differently, which is why both rules exist.
    img = PHOTOS["astronaut"]
    a = goprep.resize(img, (224, 224), interpolation="nearest-exact")
    b = goprep.resize(img, (224, 224), interpolation="nearest-pil")
    assert not np.array_equal(a, b)


def test_nearest_exact_every_small_size_pair():
    # the index rule itself, on an image whose values are their column index
    for w in range(1, 40):
        row = np.tile(np.arange(w, dtype=np.float32)[None, :, None], (2, 1, 1))
        for ow in range(1, 60):
            got = goprep.resize(row, (2, ow), interpolation="nearest-exact")
            assert_array_identical(got, _torch(row, (2, ow), mode="nearest-exact"))


# ---------------------------------------------------------------------------------- fusion, errors


def _chain(kind, aa):
    def f(img):
        img = goprep.crop(img, 10, 20, 300, 280)
        img = goprep.resize(img, (224, 200), interpolation=kind, antialias=aa)
        img = goprep.flip(img)
        return goprep.normalize(img, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))

    return f


@pytest.mark.parametrize(
    "kind,aa", [("bicubic", True), ("bicubic", False), ("bicubic", "torch-noaa"), ("bilinear", "torch-noaa"), ("area", False),
                ("nearest-exact", False), ("nearest-pil", False), ("nearest-torch", False)]
)
def test_fusion_never_changes_results(kind, aa):
    for img in (PHOTOS["coffee"], to_unit_f32(PHOTOS["coffee"])):
        assert_array_identical(goprep.pipeline(_chain(kind, aa))(img), _chain(kind, aa)(img))


@pytest.mark.parametrize("kind", ["area", "nearest", "nearest-exact", "nearest-pil", "nearest-torch"])
def test_antialias_rejected_where_it_has_no_meaning(kind):
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.resize(PHOTOS["camera"], (10, 10), interpolation=kind, antialias=True)
    assert_goprep_error(e.value, goprep.InvalidArgumentError, argument="antialias")


def test_unknown_interpolation_lists_the_kinds():
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.resize(PHOTOS["camera"], (10, 10), interpolation="hamming")
    assert_goprep_error(e.value, goprep.InvalidArgumentError, argument="interpolation")
    assert "'bicubic'" in str(e.value) and "'nearest-exact'" in str(e.value) and "'lanczos'" in str(e.value)


# --------------------------------------------------------------------------------------------- GPU


@pytest.mark.parametrize(
    "kind,aa", [("bicubic", True), ("bicubic", False), ("bicubic", "torch-noaa"), ("area", False), ("nearest-exact", False),
                ("nearest-pil", False), ("nearest-torch", False)]
)
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_gpu_kernels_give_cpu_results(sim_gpu, kind, aa, dtype):
    # Every kind runs on the (simulated) GPU kernels, from the planner's tables, and returns the CPU
    # engine's result bit for bit: downscale (crop 300x280 -> 224x200) and upscale, flip, normalize.
    imgs = np.stack([PHOTOS["astronaut"]] * 2)
    if dtype == "float32":
        imgs = imgs.astype(np.float32) / 255
    for fn in (_chain(kind, aa), _upscale(kind, aa)):
        want = goprep.pipeline(device="cpu")(fn)(imgs)
        before = goprep.info()["gpu"]["gpu_calls"]
        assert_array_identical(goprep.pipeline(device="cuda")(fn)(imgs), want)
        assert goprep.info()["gpu"]["gpu_calls"] == before + 1
    assert goprep.info()["gpu"]["cpu_fallbacks"] == 0


def _upscale(kind, aa):
    def f(img):
        img = goprep.crop(img, 100, 120, 40, 50)
        return goprep.resize(img, (97, 131), interpolation=kind, antialias=aa)

    return f
