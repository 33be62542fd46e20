"""The silent traps a new user falls into are refused, saying what was probably meant."""

import numpy as np
import pytest

import goprep

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@goprep.pipeline
def prep(img):
    return goprep.normalize(goprep.resize(img, (8, 8)), mean=MEAN, std=STD)


def test_list_mixing_dtypes_is_refused():
    with pytest.raises(goprep.DTypeError) as ei:
        prep([np.zeros((10, 10, 3), np.uint8), np.zeros((12, 10, 3), np.float32)])
    assert ei.value.argument == "src" and "item 1 is float32 but item 0 is uint8" in str(ei.value)
    assert prep([np.zeros((10, 10, 3), np.float32)] * 2).shape == (2, 3, 8, 8)  # one dtype: fine


def test_rgba_image_with_rgb_mean_says_convert():
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        prep(np.zeros((10, 12, 4), np.uint8))
    assert ei.value.argument == "mean" and "4 channels" in str(ei.value) and "rgba2rgb" in str(ei.value)


def test_gray_image_with_rgb_mean_says_convert():
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        prep(np.zeros((10, 12, 1), np.uint8))
    assert "1 channel" in str(ei.value) and "gray2rgb" in str(ei.value)


@pytest.mark.parametrize("shape", [(3, 480, 640), (2, 3, 48, 64)])
def test_chw_array_says_it_looks_like_chw(shape):
    with pytest.raises(goprep.ShapeError) as ei:
        prep(np.zeros(shape, np.uint8))
    assert ei.value.argument == "src" and "looks like CHW" in str(ei.value)


def test_mean_on_the_255_scale_is_refused_unless_scale_is_given():
    img = np.full((10, 12, 3), 200, np.uint8)
    m255, s255 = (123.675, 116.28, 103.53), (58.395, 57.12, 57.375)
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.normalize(img, mean=m255, std=s255)
    assert ei.value.argument == "mean" and "scale=1" in str(ei.value)
    got = goprep.normalize(img, mean=m255, std=s255, scale=1)  # OpenCV / mmcv style, said explicitly
    np.testing.assert_allclose(got[:, 0, 0], (200 - np.array(m255)) / np.array(s255), rtol=1e-6)
    ok = goprep.normalize(img, mean=MEAN, std=STD)  # the [0, 1] scale: unchanged
    np.testing.assert_allclose(ok[:, 0, 0], (200 / 255 - np.array(MEAN)) / np.array(STD), rtol=1e-6)

