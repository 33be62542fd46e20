import numpy as np
import pytest

import goprep
from conftest import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    PHOTO_NAMES,
    PHOTOS,
    assert_array_identical,
    normalize_ref,
    rand_f32,
    rand_u8,
)

IMAGENET = (IMAGENET_MEAN, IMAGENET_STD)


def _mean_std(c):
    if c == 3:
        return IMAGENET
    if c == 1:
        return (0.449,), (0.226,)
    return (0.485, 0.456, 0.406, 0.5), (0.229, 0.224, 0.225, 0.25)


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_normalize_photo_exact(name, dtype, layout):
    img = PHOTOS[name]
    mean, std = _mean_std(img.shape[-1])
    got = goprep.normalize(img, mean=mean, std=std, dtype=dtype, layout=layout)
    assert_array_identical(got, normalize_ref(img, mean, std, dtype=dtype, layout=layout))


def test_normalize_defaults_are_float32_chw(photos):
    img = photos["chelsea"]
    got = goprep.normalize(img, mean=IMAGENET[0], std=IMAGENET[1])
    assert got.shape == (3, 300, 451) and got.dtype == np.float32
    assert got.flags.c_contiguous
    assert_array_identical(got, normalize_ref(img, *IMAGENET))


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("c", [1, 3, 4])
@pytest.mark.parametrize("shape", [(1, 1), (1, 13), (13, 1), (17, 23), (4, 9, 11)])
def test_normalize_u8_synthetic_exact(shape, c, dtype, layout):
    x = rand_u8(shape + (c,), seed=c)
    mean, std = _mean_std(c)
    got = goprep.normalize(x, mean=mean, std=std, dtype=dtype, layout=layout)
    want = normalize_ref(x, mean, std, dtype=dtype, layout=layout)
    if len(shape) == 3:
        assert want.shape == ((4, c, 9, 11) if layout == "CHW" else (4, 9, 11, c))
    assert_array_identical(got, want)


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("scale", [1.0, 1 / 255, 0.0123, 2.5])
def test_normalize_f32_input_exact(scale, dtype, layout):
    x = rand_f32((2, 15, 21, 3), seed=5, lo=-300.0, hi=300.0)
    mean, std = (0.1, -7.5, 100.0), (0.5, 3.0, 1e-3)
    got = goprep.normalize(x, mean=mean, std=std, scale=scale, dtype=dtype, layout=layout)
    assert_array_identical(got, normalize_ref(x, mean, std, scale=scale, dtype=dtype, layout=layout))


def test_normalize_float16_overflow_and_rounding():
    # values far outside float16's range must become +-inf exactly like NumPy's cast
    x = np.array([[[0, 128, 255]]], dtype=np.uint8)
    mean, std = (0.0, 0.0, 0.0), (1e-6, 3e-6, 7e-7)
    got = goprep.normalize(x, mean=mean, std=std, dtype="float16", layout="HWC")
    assert_array_identical(got, normalize_ref(x, mean, std, dtype="float16", layout="HWC"))
    # every uint8 value through the float16 path
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    got = goprep.normalize(x, mean=(0.5,), std=(0.3,), dtype="float16", layout="HWC")
    assert_array_identical(got, normalize_ref(x, (0.5,), (0.3,), dtype="float16", layout="HWC"))


def test_normalize_all_u8_values_float32():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=-1)
    got = goprep.normalize(x, mean=IMAGENET[0], std=IMAGENET[1], layout="HWC")
    assert_array_identical(got, normalize_ref(x, *IMAGENET, layout="HWC"))


@pytest.mark.parametrize("layout", ["CHW", "HWC"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_normalize_out(dtype, layout):
    x = rand_u8((2, 8, 9, 3), seed=1)
    want = normalize_ref(x, *IMAGENET, dtype=dtype, layout=layout)
    out = np.zeros(want.shape, dtype=want.dtype)
    got = goprep.normalize(x, mean=IMAGENET[0], std=IMAGENET[1], dtype=dtype, layout=layout, out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, want)
