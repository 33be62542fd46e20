import numpy as np
import pytest

import goprep
from conftest import PHOTOS, assert_array_identical, letterbox_geometries, rand_f32, rand_u8


def _check_letterbox(img, size, pad_value=None):
    kw = {} if pad_value is None else {"pad_value": pad_value}
    out, info = goprep.letterbox(img, size, **kw)
    oh, ow = (size, size) if isinstance(size, int) else size
    h, w, c = img.shape
    assert out.shape == (oh, ow, c) and out.dtype == img.dtype
    assert isinstance(info, goprep.LetterboxInfo)
    geo = (info.scale, info.top, info.left, info.height, info.width)
    allowed = letterbox_geometries(h, w, oh, ow)
    assert any(
        abs(geo[0] - a[0]) <= 1e-9 * a[0] and tuple(geo[1:]) == a[1:] for a in allowed
    ), f"geometry {geo} not in {allowed}"
    t, l, hh, ww = info.top, info.left, info.height, info.width
    # content == goprep.resize of the content size
    assert_array_identical(out[t:t + hh, l:l + ww], goprep.resize(img, (hh, ww)))
    # padding is exactly pad_value everywhere else
    pv = 114 if pad_value is None else pad_value
    mask = np.ones((oh, ow), bool)
    mask[t:t + hh, l:l + ww] = False
    pad = out[mask]
    assert pad.size == 0 or np.all(pad == np.asarray(pv, dtype=img.dtype)), "padding is not pad_value"
    return out, info


@pytest.mark.parametrize("size", [(640, 640), (320, 480), (480, 320), (224, 224), (1000, 300), (7, 5), 416])
@pytest.mark.parametrize("name", ["astronaut", "chelsea", "coffee", "camera", "chelsea_rgba"])
def test_letterbox_photos(name, size):
    _check_letterbox(PHOTOS[name], size)


@pytest.mark.parametrize(
    "hw,size",
    [((1, 1), (5, 9)), ((1, 100), (64, 64)), ((100, 1), (64, 64)), ((3, 5), (3, 5)), ((31, 17), (64, 48)),
     ((5, 4), (2, 2)), ((10, 5), (5, 5)), ((1000, 10), (30, 30)), ((10, 1000), (30, 30)), ((6, 10), (9, 9))],
)
@pytest.mark.parametrize("c", [1, 3, 4])
def test_letterbox_synthetic(hw, size, c):
    _check_letterbox(rand_u8(hw + (c,), seed=2), size)


@pytest.mark.parametrize("pad_value", [0, 255, 7])
def test_letterbox_pad_value_u8(pad_value):
    _check_letterbox(PHOTOS["chelsea"], (400, 400), pad_value=pad_value)


@pytest.mark.parametrize("pad_value", [0, 0.5, -3.25])
def test_letterbox_pad_value_f32(pad_value):
    img = rand_f32((30, 50, 3), seed=1)
    _check_letterbox(img, (64, 64), pad_value=pad_value)


def test_letterbox_default_pad_f32():
    _check_letterbox(rand_f32((30, 50, 3), seed=1), (64, 64))


def test_letterbox_out():
    img = PHOTOS["coffee"]
    want, _ = goprep.letterbox(img, (320, 320))
    out = np.zeros((320, 320, 3), np.uint8)
    got, info = goprep.letterbox(img, (320, 320), out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, want)
    # 400x600 -> 320x320: scale 0.5333, content 213x320, top (320-213)//2 = 53
    assert (info.top, info.left, info.height, info.width) == (53, 0, 213, 320)


def test_letterbox_known_geometry():
    # 400x600 -> 640x640: scale 640/600, content 427x640, top (640-427)//2 = 106
    _, info = goprep.letterbox(PHOTOS["coffee"], (640, 640))
    assert info.scale == pytest.approx(640 / 600, rel=1e-12)
    assert (info.top, info.left, info.height, info.width) == (106, 0, 427, 640)


def test_unmap_boxes():
    img = PHOTOS["coffee"]  # 400 x 600
    _, info = goprep.letterbox(img, (640, 640))
    boxes = np.array([[0, 0, 600, 400], [10.5, 20.25, 300, 200], [-1, -2, 3, 4]], dtype=np.float64)
    # forward-map the original boxes, then unmap them
    fwd = boxes.copy()
    fwd[:, [0, 2]] = fwd[:, [0, 2]] * info.scale + info.left
    fwd[:, [1, 3]] = fwd[:, [1, 3]] * info.scale + info.top
    back = np.asarray(info.unmap_boxes(fwd, clip=False))  # [-1, -2, ...] lies outside: not clipped here
    assert back.shape == (3, 4)
    np.testing.assert_allclose(back, boxes, rtol=1e-6, atol=1e-4)
    # and the documented formula directly
    want = fwd.copy()
    want[:, [0, 2]] = (fwd[:, [0, 2]] - info.left) / info.scale
    want[:, [1, 3]] = (fwd[:, [1, 3]] - info.top) / info.scale
    np.testing.assert_allclose(back, want, rtol=1e-6, atol=1e-4)


def test_unmap_boxes_float32_and_empty():
    _, info = goprep.letterbox(PHOTOS["chelsea"], (320, 320))
    b = np.array([[info.left, info.top, info.left + info.width, info.top + info.height]], dtype=np.float32)
    back = np.asarray(info.unmap_boxes(b))
    np.testing.assert_allclose(back, [[0, 0, 451, 300]], rtol=0, atol=0.75)
    empty = np.asarray(info.unmap_boxes(np.zeros((0, 4), np.float32)))
    assert empty.shape == (0, 4)


def test_letterbox_batch_equals_per_image():
    a = PHOTOS["chelsea"]
    batch = np.stack([a, np.ascontiguousarray(a[::-1]), rand_u8(a.shape, seed=3)])
    got, _ = goprep.letterbox(batch, (320, 320), pad_value=9)
    assert got.shape == (3, 320, 320, 3)
    for i in range(3):
        assert_array_identical(got[i], goprep.letterbox(batch[i], (320, 320), pad_value=9)[0])



# ---------------------------------------------------------------------- ultralytics LetterBox


def _ultralytics_letterbox(img, new_shape, pad, scaleup=True, auto=False, stride=32):
    """ultralytics.data.augment.LetterBox(center=True).__call__, step for step with cv2."""
    import cv2

    shape = img.shape[:2]
    r = min(new_shape[0] / shape[0], new_shape[1] / shape[1])
    if not scaleup:
        r = min(r, 1.0)
    new_unpad = int(round(shape[1] * r)), int(round(shape[0] * r))
    dw, dh = new_shape[1] - new_unpad[0], new_shape[0] - new_unpad[1]
    if auto:
        dw, dh = np.mod(dw, stride), np.mod(dh, stride)
    dw /= 2
    dh /= 2
    if shape[::-1] != new_unpad:
        img = cv2.resize(img, new_unpad, interpolation=cv2.INTER_LINEAR)
    if img.ndim == 2:
        img = img[..., None]
    top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
    left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
    out = np.empty((img.shape[0] + top + bottom, img.shape[1] + left + right, img.shape[2]), img.dtype)
    out[:] = pad
    out[top:top + img.shape[0], left:left + img.shape[1]] = img
    return out, r, (top, left)


@pytest.mark.parametrize("name", ["chelsea", "coffee", "camera"])
@pytest.mark.parametrize("size", [(640, 640), (320, 480), (1000, 300), (256, 256)])
@pytest.mark.parametrize("scaleup,auto", [(True, False), (False, False), (True, True), (False, True)])
def test_letterbox_matches_ultralytics(name, size, scaleup, auto):
    from conftest import assert_close_to_cv2_u8

    img = PHOTOS[name]
    pad = (114,) * img.shape[2]
    want, r, (top, left) = _ultralytics_letterbox(img, size, pad, scaleup, auto, 32)
    got, info = goprep.letterbox(img, size, scaleup=scaleup, auto=auto, stride=32)
    assert got.shape == want.shape
    assert (info.top, info.left, info.scale) == (top, left, r)
    assert_close_to_cv2_u8(got, want)


def test_letterbox_no_scaleup_keeps_small_images():
    img = rand_u8((100, 60, 3))
    got, info = goprep.letterbox(img, (640, 640), scaleup=False, auto=True, stride=64)
    # no resize at all, padded to the next multiple of 64 on each axis: 128 x 64
    assert got.shape == (128, 64, 3) and info.scale == 1.0 and (info.height, info.width) == (100, 60)
    assert_array_identical(got[14:114, 2:62], img)


def test_letterbox_per_channel_pad_value():
    img = rand_u8((50, 100, 3))
    pad = (10, 20, 30)
    got, info = goprep.letterbox(img, (100, 100), pad_value=pad)
    want, _, _ = _ultralytics_letterbox(img, (100, 100), pad)
    assert_array_identical(got, want)
    f = rand_f32((50, 100, 3))
    got, _ = goprep.letterbox(f, (100, 100), pad_value=(0.25, 0.5, 0.75))
    assert got[0, 0].tolist() == [0.25, 0.5, 0.75]
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.letterbox(img, (100, 100), pad_value=(1, 2))
    assert ei.value.argument == "pad_value"
    for kw, arg in [({"scaleup": 1}, "scaleup"), ({"auto": "yes"}, "auto"), ({"stride": 0}, "stride")]:
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            goprep.letterbox(img, (100, 100), **kw)
        assert ei.value.argument == arg
