import numpy as np
import pytest

import goprep
from conftest import PHOTOS, assert_array_identical, rand_u8


@pytest.mark.parametrize(
    "top,left,height,width",
    [(0, 0, 512, 512), (10, 20, 100, 200), (511, 511, 1, 1), (0, 500, 512, 12), (300, 0, 1, 512)],
)
def test_crop_is_exact_view(top, left, height, width):
    img = PHOTOS["astronaut"]
    got = goprep.crop(img, top, left, height, width)
    assert isinstance(got, np.ndarray)
    assert_array_identical(got, img[top:top + height, left:left + width])
    assert np.shares_memory(got, img), "crop must be a zero-copy view"


def test_crop_batch_view():
    batch = rand_u8((3, 20, 30, 4), seed=1)
    got = goprep.crop(batch, 2, 3, 10, 11)
    assert_array_identical(got, batch[:, 2:12, 3:14])
    assert np.shares_memory(got, batch)


@pytest.mark.parametrize("c", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_crop_dtypes_channels(c, dtype):
    img = rand_u8((13, 17, c), seed=c).astype(dtype)
    got = goprep.crop(img, 1, 2, 5, 6)
    assert_array_identical(got, img[1:6, 2:8])


def test_crop_of_negative_stride_view():
    img = rand_u8((20, 30, 3), seed=8)
    v = img[::-1, ::-2]
    got = goprep.crop(v, 3, 4, 5, 6)
    assert_array_identical(got, v[3:8, 4:10])
    assert np.shares_memory(got, img)


def test_crop_view_writes_through():
    img = np.zeros((10, 10, 3), np.uint8)
    v = goprep.crop(img, 2, 3, 4, 5)
    if v.flags.writeable:
        v[...] = 9
        assert img[2:6, 3:8].min() == 9 and img.sum() == 9 * 4 * 5 * 3
