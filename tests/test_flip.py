import numpy as np
import pytest

import goprep
from conftest import PHOTO_NAMES, PHOTOS, assert_array_identical, rand_f32, rand_u8


def _np_flip(x, horizontal, vertical):
    if horizontal:
        x = x[..., :, ::-1, :]
    if vertical:
        x = x[..., ::-1, :, :]
    return np.ascontiguousarray(x)


HV = [(True, False), (False, True), (True, True), (False, False)]


@pytest.mark.parametrize("horizontal,vertical", HV)
@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_flip_photo_exact(name, horizontal, vertical):
    img = PHOTOS[name]
    got = goprep.flip(img, horizontal=horizontal, vertical=vertical)
    assert_array_identical(got, _np_flip(img, horizontal, vertical))


def test_flip_default_is_horizontal(photos):
    img = photos["coffee"]
    assert_array_identical(goprep.flip(img), np.ascontiguousarray(img[:, ::-1]))


@pytest.mark.parametrize("horizontal,vertical", HV)
@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 7, 1), (7, 1, 4), (5, 6, 3), (4, 3, 9, 4), (2, 1, 1, 1)])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_flip_synthetic_exact(shape, dtype, horizontal, vertical):
    img = rand_u8(shape, seed=2) if dtype == "uint8" else rand_f32(shape, seed=2, lo=-1e3, hi=1e3)
    got = goprep.flip(img, horizontal=horizontal, vertical=vertical)
    assert_array_identical(got, _np_flip(img, horizontal, vertical))


def test_flip_returns_new_array(photos):
    img = photos["astronaut"].copy()
    got = goprep.flip(img, horizontal=False, vertical=False)
    assert_array_identical(got, img)
    assert not np.shares_memory(got, img)


def test_flip_float_specials_preserved():
    img = np.array([[[np.nan, np.inf, -0.0], [1.5, -np.inf, 3.0]]], dtype=np.float32)
    got = goprep.flip(img)
    ref = img[:, ::-1]
    assert np.array_equal(got, ref, equal_nan=True)
    assert np.signbit(got[0, 1, 2])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_flip_out(dtype):
    img = rand_u8((9, 10, 3), seed=4).astype(dtype)
    out = np.zeros_like(img)
    got = goprep.flip(img, vertical=True, out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, _np_flip(img, True, True))
