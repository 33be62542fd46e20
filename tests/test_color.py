import numpy as np
import pytest

import goprep
from conftest import PHOTOS, assert_array_identical, rand_f32, rand_u8

REFS = {
    "rgb2bgr": (3, lambda x: x[..., ::-1]),
    "bgr2rgb": (3, lambda x: x[..., ::-1]),
    "rgba2rgb": (4, lambda x: x[..., :3]),
    "gray2rgb": (1, lambda x: np.repeat(x, 3, axis=-1)),
}


def _input(code, shape, dtype, seed=0):
    c = REFS[code][0]
    shape = tuple(shape) + (c,)
    return rand_u8(shape, seed) if dtype == "uint8" else rand_f32(shape, seed, lo=-2, hi=300)


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (31, 17), (3, 8, 5)])
@pytest.mark.parametrize("code", list(REFS))
def test_cvt_color_exact(code, shape, dtype):
    x = _input(code, shape, dtype)
    got = goprep.cvt_color(x, code)
    want = np.ascontiguousarray(REFS[code][1](x))
    assert_array_identical(got, want)


@pytest.mark.parametrize(
    "name,code", [("astronaut", "rgb2bgr"), ("coffee", "bgr2rgb"), ("chelsea_rgba", "rgba2rgb"), ("camera", "gray2rgb")]
)
def test_cvt_color_photos(name, code):
    img = PHOTOS[name]
    assert_array_identical(goprep.cvt_color(img, code), np.ascontiguousarray(REFS[code][1](img)))


def test_cvt_color_roundtrip(photos):
    img = photos["astronaut"]
    assert_array_identical(goprep.cvt_color(goprep.cvt_color(img, "rgb2bgr"), "bgr2rgb"), img)


@pytest.mark.parametrize("code", list(REFS))
def test_cvt_color_out(code):
    x = _input(code, (6, 7), "uint8", seed=3)
    want = np.ascontiguousarray(REFS[code][1](x))
    out = np.empty_like(want)
    got = goprep.cvt_color(x, code, out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, want)


@pytest.mark.parametrize("code,c", [("rgb2bgr", 4), ("rgb2bgr", 1), ("rgba2rgb", 3), ("gray2rgb", 3)])
def test_cvt_color_channel_mismatch_raises(code, c):
    x = rand_u8((4, 4, c))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.cvt_color(x, code)
    assert isinstance(ei.value, ValueError)
