import cv2
import numpy as np
import pytest

import goprep
from conftest import (
    PHOTO_NAMES,
    PHOTOS,
    assert_array_identical,
    assert_close_to_cv2_u8,
    bilinear_ref_f64,
    cv2_resize,
    pil_resize,
    rand_f32,
    rand_u8,
)

# (height, width) targets; mixed up/down, odd, non-square
PHOTO_SIZES = [(224, 224), (100, 150), (257, 131), (333, 517), (613, 901), (37, 53)]

# (input shape, output size) synthetic edge cases
SYNTH = [
    ((1, 1), (5, 7)),  # 1x1 upscale
    ((1, 1), (1, 1)),  # 1x1 identity
    ((1, 9), (1, 4)),  # 1xN
    ((1, 9), (3, 20)),
    ((9, 1), (4, 1)),  # Nx1
    ((9, 1), (20, 3)),
    ((7, 5), (1, 1)),  # down to a single pixel
    ((13, 17), (29, 31)),  # odd upscale
    ((31, 29), (7, 11)),  # odd downscale
    ((10, 100), (40, 20)),  # up in one axis, down in the other
    ((64, 64), (32, 32)),  # exact 2x down
    ((16, 16), (48, 48)),  # exact 3x up
    ((23, 37), (23, 37)),  # sizes equal
]
CHANNELS = [1, 3, 4]


def _shape(hw, c):
    return hw + (c,)


# ---------------------------------------------------------------------------- bilinear, uint8


@pytest.mark.parametrize("size", PHOTO_SIZES)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_bilinear_u8_photo_vs_cv2(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size)
    assert_close_to_cv2_u8(got, cv2_resize(img, size, cv2.INTER_LINEAR))


@pytest.mark.parametrize("c", CHANNELS)
@pytest.mark.parametrize("hw,size", SYNTH)
def test_bilinear_u8_synthetic_vs_cv2(hw, size, c):
    img = rand_u8(_shape(hw, c), seed=hash((hw, size, c)) % 2**32)
    got = goprep.resize(img, size)
    # random noise is the worst case for fixed-point rounding and tiny outputs make a percentage
    # meaningless; require the +-1 bound everywhere and the 99.9% bound where there are enough values
    assert_close_to_cv2_u8(got, cv2_resize(img, size, cv2.INTER_LINEAR), check_fraction=got.size >= 3000)


def test_bilinear_u8_smooth_synthetic_fraction():
    # a smooth gradient with many outputs: the >= 99.9% exact bound must hold on synthetic data too
    y, x = np.mgrid[0:300, 0:400]
    img = np.stack([(x * 255 / 399), (y * 255 / 299), ((x + y) * 255 / 699)], -1).round().astype(np.uint8)
    for size in [(123, 457), (611, 87), (150, 200)]:
        assert_close_to_cv2_u8(goprep.resize(img, size), cv2_resize(img, size, cv2.INTER_LINEAR))


@pytest.mark.parametrize("size", [(512, 512), (300, 700), (96, 400)])
@pytest.mark.parametrize("crop", [(100, 200, 32, 32), (0, 0, 48, 40), (250, 300, 17, 29)])
def test_bilinear_u8_large_upscale_photo_vs_cv2(crop, size):
    # upscaling a small patch (e.g. a detection crop): many output rows/cols lie on the clamped border
    t, l, h, w = crop
    img = PHOTOS["astronaut"][t:t + h, l:l + w]
    assert_close_to_cv2_u8(goprep.resize(img, size), cv2_resize(img, size, cv2.INTER_LINEAR))


def test_numpy_integer_sizes(photos):
    img = photos["coffee"]
    want = goprep.resize(img, (100, 50))
    assert_array_identical(goprep.resize(img, (np.int64(100), np.int32(50))), want)
    assert_array_identical(goprep.resize(img, [100, 50]), want)
    assert goprep.resize(img, np.int64(64)).shape == (64, 96, 3)  # coffee is 400x600: shorter side


def test_batch_of_one(photos):
    img = photos["chelsea"]
    got = goprep.resize(img[None], (77, 99))
    assert got.shape == (1, 77, 99, 3)
    assert_array_identical(got[0], goprep.resize(img, (77, 99)))


def test_int_size_is_the_shorter_side(photos):
    # torchvision's rule: the shorter side becomes size, the longer int(size * long / short)
    img = photos["coffee"]  # 400 x 600
    got = goprep.resize(img, 96)
    assert got.shape == (96, 144, 3)
    assert_array_identical(got, goprep.resize(img, (96, 144)))
    assert goprep.resize(img.transpose(1, 0, 2), 96).shape == (144, 96, 3)


# ---------------------------------------------------------------------------- bilinear, float32


# Tolerances, as fractions of the input's data range:
# - against the exact formula (float64 coordinates and interpolation): 1e-5, the accuracy target for float32 resizes.
# - against the formula with the coordinates rounded the way PyTorch's CPU kernel rounds them for
#   float32 tensors (scale = float(in)/float(out), src and lambda in float32): 1e-4. PyTorch itself
#   differs from the exact formula by up to ~4e-5 of the range on these ~500-pixel photos (lambda
#   inherits float32 rounding of `src`), so an implementation may sit close to either; 1e-4 still
#   catches every formula error (align_corners=True, a missing -0.5, no clamping... are >= 1e-2).
TOL_F64_COORDS = 1e-5
TOL_TORCH_COORDS = 1e-4


def _check_f32_vs_torch_formula(img, size, coord_dtype, rel_tol):
    got = goprep.resize(img, size)
    assert got.dtype == np.float32
    ref = bilinear_ref_f64(img, size, coord_dtype)
    assert got.shape == ref.shape
    rng = float(img.max()) - float(img.min())
    tol = rel_tol * max(rng, 1e-12)
    err = float(np.max(np.abs(got.astype(np.float64) - ref)))
    assert err <= tol, f"max abs err {err:.3g} > {tol:.3g} ({rel_tol:g} of the data range {rng:.3g})"


@pytest.mark.parametrize("size", PHOTO_SIZES)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_bilinear_f32_photo_vs_torch_formula_f64(name, size):
    img = PHOTOS[name].astype(np.float32) / np.float32(255)
    _check_f32_vs_torch_formula(img, size, np.float64, TOL_F64_COORDS)


@pytest.mark.parametrize("size", PHOTO_SIZES)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_bilinear_f32_photo_vs_torch_formula_f32_coords(name, size):
    img = PHOTOS[name].astype(np.float32) / np.float32(255)
    _check_f32_vs_torch_formula(img, size, np.float32, TOL_TORCH_COORDS)


@pytest.mark.parametrize("c", CHANNELS)
@pytest.mark.parametrize("hw,size", SYNTH)
def test_bilinear_f32_synthetic_vs_torch_formula(hw, size, c):
    img = rand_f32(_shape(hw, c), seed=7, lo=-3.0, hi=5.0)
    _check_f32_vs_torch_formula(img, size, np.float64, TOL_F64_COORDS)
    _check_f32_vs_torch_formula(img, size, np.float32, TOL_TORCH_COORDS)


def test_bilinear_f32_catches_formula_errors():
    # guard for the tolerances above: an align_corners=True resize must be far outside them
    img = PHOTOS["astronaut"].astype(np.float32) / np.float32(255)
    got = goprep.resize(img, (224, 224)).astype(np.float64)
    ys = np.linspace(0, 511, 224)
    y0 = np.floor(ys).astype(int)
    y1 = np.minimum(y0 + 1, 511)
    ly = (ys - y0)[:, None, None]
    rows = img[y0] * (1 - ly) + img[y1] * ly
    ac = rows[:, y0] * (1 - ly.reshape(1, -1, 1)) + rows[:, y1] * ly.reshape(1, -1, 1)
    assert np.max(np.abs(got - ac)) > 100 * TOL_TORCH_COORDS


# ---------------------------------------------------------------------------- antialias


AA_SIZES = [(224, 224), (100, 150), (257, 131), (37, 53), (299, 200), (1, 1)]


@pytest.mark.parametrize("size", AA_SIZES)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_antialias_u8_downscale_vs_pillow(name, size):
    img = PHOTOS[name]
    got = goprep.resize(img, size, antialias=True)
    ref = pil_resize(img, size)
    assert got.shape == ref.shape and got.dtype == np.uint8
    diff = np.abs(got.astype(np.int16) - ref.astype(np.int16))
    assert int(diff.max()) <= 1, f"max abs diff vs Pillow {int(diff.max())} > 1"


@pytest.mark.parametrize("c", CHANNELS)
@pytest.mark.parametrize(
    "hw,size",
    [((64, 80), (16, 20)), ((50, 50), (1, 1)), ((9, 1000), (3, 7)), ((1, 90), (1, 7)), ((33, 33), (32, 32)),
     ((120, 40), (120, 13))],  # last: only one axis changes
)
def test_antialias_u8_synthetic_vs_pillow(hw, size, c):
    img = rand_u8(_shape(hw, c), seed=3)
    got = goprep.resize(img, size, antialias=True)
    ref = pil_resize(img, size)
    diff = np.abs(got.astype(np.int16) - ref.astype(np.int16))
    assert int(diff.max()) <= 1, f"max abs diff vs Pillow {int(diff.max())} > 1"


@pytest.mark.parametrize("size", [(224, 224), (100, 150), (37, 53)])
@pytest.mark.parametrize("name", ["astronaut", "camera", "chelsea_rgba"])
def test_antialias_f32_downscale_vs_pillow_F(name, size):
    # The spec gives Pillow's triangle filter for antialias; for float32 Pillow's mode "F" is the
    # unrounded version of the same filter. Tolerance: 1e-4 of the data range.
    img = PHOTOS[name].astype(np.float32) / np.float32(255)
    got = goprep.resize(img, size, antialias=True)
    assert got.dtype == np.float32
    ref = pil_resize(img, size)
    err = float(np.max(np.abs(got.astype(np.float64) - ref)))
    assert err <= 1e-4, f"max abs err vs Pillow 'F' {err:.3g}"


# ---------------------------------------------------------------------------- nearest

# sizes where cv2's floor(dst * (1 / (out / in))) in double differs from the exact integer
# floor(dst * in / out) for some dst (checked against OpenCV); the spec names cv2.INTER_NEAREST.
NEAREST_TRICKY = [((14, 6), (18, 34)), ((26, 21), (10, 27)), ((9, 22), (51, 18))]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("size", PHOTO_SIZES)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_nearest_photo_vs_cv2_exact(name, size, dtype):
    img = PHOTOS[name].astype(dtype)
    got = goprep.resize(img, size, interpolation="nearest")
    assert_array_identical(got, cv2_resize(img, size, cv2.INTER_NEAREST))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("c", CHANNELS)
@pytest.mark.parametrize("hw,size", SYNTH)
def test_nearest_synthetic_vs_cv2_exact(hw, size, c, dtype):
    img = rand_u8(_shape(hw, c), seed=11).astype(dtype)
    got = goprep.resize(img, size, interpolation="nearest")
    assert_array_identical(got, cv2_resize(img, size, cv2.INTER_NEAREST))


@pytest.mark.parametrize("hw,size", NEAREST_TRICKY)
def test_nearest_rounding_sensitive_sizes_vs_cv2_exact(hw, size):
    img = np.arange(hw[0] * hw[1] * 3, dtype=np.float32).reshape(hw + (3,))
    got = goprep.resize(img, size, interpolation="nearest")
    assert_array_identical(got, cv2_resize(img, size, cv2.INTER_NEAREST))


# ---------------------------------------------------------------------------- generic properties


MODES = [
    dict(interpolation="bilinear"),
    dict(interpolation="nearest"),
    dict(interpolation="bilinear", antialias=True),
]


@pytest.mark.parametrize("kw", MODES, ids=["bilinear", "nearest", "antialias"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("c", CHANNELS)
def test_equal_size_is_identity(kw, dtype, c):
    img = rand_u8((19, 23, c), seed=5).astype(dtype)
    got = goprep.resize(img, (19, 23), **kw)
    assert_array_identical(got, img)


# A constant region must stay exactly constant. For float32 bilinear PyTorch's float32 formulation
# (w1 = lambda, w0 = 1 - w1 in float32) gives exactly that in these cases; weights rounded independently
# from float64 (float32(1 - l), float32(l)) miss by one ulp. Float antialias has no bit-level reference.
@pytest.mark.parametrize("kw", MODES, ids=["bilinear", "nearest", "antialias"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_single_pixel_broadcasts(kw, dtype):
    img = np.array([[[17, 200, 3, 99]]], dtype=dtype)
    got = goprep.resize(img, (6, 9), **kw)
    want = np.broadcast_to(img, (6, 9, 4)).copy()
    if dtype == np.uint8 and kw.get("antialias"):
        want = pil_resize(img, (6, 9))  # Pillow's RGBA resize: premultiplied, which rounds the colours
    if dtype == np.float32 and kw.get("antialias"):
        np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)  # no float reference beyond Pillow's filter
    else:
        assert_array_identical(got, want)


@pytest.mark.parametrize("kw", MODES, ids=["bilinear", "nearest", "antialias"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("c", CHANNELS)
def test_batch_equals_per_image(kw, dtype, c):
    batch = rand_u8((5, 41, 67, c), seed=9).astype(dtype)
    got = goprep.resize(batch, (23, 31), **kw)
    assert got.shape == (5, 23, 31, c) and got.dtype == dtype
    for i in range(len(batch)):
        assert_array_identical(got[i], goprep.resize(batch[i], (23, 31), **kw))


def test_batch_u8_vs_cv2(photos):
    batch = np.stack([photos["astronaut"], np.ascontiguousarray(photos["astronaut"][::-1])])
    got = goprep.resize(batch, (200, 300))
    assert_close_to_cv2_u8(got, cv2_resize(batch, (200, 300)))


def test_constant_image_stays_constant():
    for dtype in (np.uint8, np.float32):
        img = np.full((37, 53, 3), 77, dtype=dtype)
        for kw in MODES:
            for size in [(10, 10), (100, 7), (211, 300)]:
                got = goprep.resize(img, size, **kw)
                want = np.full(size + (3,), 77, dtype=dtype)
                if dtype == np.float32 and kw.get("antialias"):
                    # normalised float32 weights need not sum to exactly 1: allow a couple of ulps
                    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)
                else:
                    assert_array_identical(got, want)


@pytest.mark.parametrize("kw", MODES, ids=["bilinear", "nearest", "antialias"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_out_is_honoured(kw, dtype):
    img = rand_u8((50, 60, 3), seed=1).astype(dtype)
    want = goprep.resize(img, (20, 25), **kw)
    out = np.full((20, 25, 3), 3, dtype=dtype)
    got = goprep.resize(img, (20, 25), out=out, **kw)
    assert np.shares_memory(got, out)
    assert_array_identical(out, want)
    assert_array_identical(np.asarray(got), want)


def test_input_not_modified(photos):
    img = photos["chelsea"].copy()
    before = img.copy()
    goprep.resize(img, (100, 100))
    goprep.resize(img, (1000, 100), antialias=True)
    assert_array_identical(img, before)
