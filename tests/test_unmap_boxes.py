"""LetterboxInfo.unmap_boxes: letterboxed-image boxes back to the source image, as ultralytics'
scale_boxes does (subtract the padding, divide by the gain, clip to the source), for a single box,
(K, 4) boxes, YOLO's (K, 6) detections (extra columns kept), and xyxy / xywh / cxcywh boxes."""

import numpy as np
import pytest

import goprep

SRC = np.zeros((300, 451, 3), np.uint8)


def _reference(boxes_xyxy, info, src_shape):
    """ultralytics.utils.ops.scale_boxes(img1_shape, boxes, img0_shape, ratio_pad=((gain,), (left, top))),
    written out: (x - left) / gain, (y - top) / gain, then clip_boxes to the source's (w, h)."""
    b = np.array(boxes_xyxy, np.float64)
    b[:, [0, 2]] = (b[:, [0, 2]] - info.left) / info.scale
    b[:, [1, 3]] = (b[:, [1, 3]] - info.top) / info.scale
    b[:, [0, 2]] = b[:, [0, 2]].clip(0, src_shape[1])
    b[:, [1, 3]] = b[:, [1, 3]].clip(0, src_shape[0])
    return b


@pytest.fixture(scope="module")
def info():
    _, info = goprep.letterbox(SRC, (640, 640))
    assert (info.src_height, info.src_width) == SRC.shape[:2]
    return info


BOXES = np.array([[10.0, 150.0, 300.0, 400.0],     # inside
                  [-5.0, 100.0, 700.0, 650.0],     # beyond every side: clipped
                  [320.0, 320.0, 320.0, 320.0]])   # degenerate


def test_xyxy_matches_scale_boxes_and_clips(info):
    got = info.unmap_boxes(BOXES)
    np.testing.assert_allclose(got, _reference(BOXES, info, SRC.shape), rtol=0, atol=1e-9)
    assert got[1, 0] == 0 and got[1, 2] == SRC.shape[1] and got[1, 3] == SRC.shape[0]
    unclipped = info.unmap_boxes(BOXES, clip=False)
    assert unclipped[1, 0] < 0 and unclipped[1, 2] > SRC.shape[1]


def test_single_box_and_empty(info):
    one = info.unmap_boxes(BOXES[0])
    assert one.shape == (4,)
    np.testing.assert_allclose(one, info.unmap_boxes(BOXES)[0])
    assert info.unmap_boxes(np.zeros((0, 4))).shape == (0, 4)


def test_yolo_detections_keep_extra_columns(info):
    det = np.concatenate([BOXES, [[0.9, 3], [0.5, 0], [0.1, 7]]], axis=1)  # (K, 6): box, score, class
    got = info.unmap_boxes(det)
    assert got.shape == (3, 6)
    np.testing.assert_array_equal(got[:, 4:], det[:, 4:])
    np.testing.assert_allclose(got[:, :4], info.unmap_boxes(BOXES))
    assert not np.shares_memory(got, det) and det[0, 0] == 10.0  # the input is not modified


@pytest.mark.parametrize("fmt", ["xywh", "cxcywh"])
def test_other_formats_round_trip_through_xyxy(info, fmt):
    x1, y1, x2, y2 = BOXES.T
    if fmt == "xywh":
        b = np.stack([x1, y1, x2 - x1, y2 - y1], axis=1)
    else:
        b = np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], axis=1)
    want = info.unmap_boxes(BOXES)  # corners
    got = info.unmap_boxes(b, format=fmt)
    wx1, wy1, wx2, wy2 = want.T
    if fmt == "xywh":
        expect = np.stack([wx1, wy1, wx2 - wx1, wy2 - wy1], axis=1)
    else:
        expect = np.stack([(wx1 + wx2) / 2, (wy1 + wy2) / 2, wx2 - wx1, wy2 - wy1], axis=1)
    np.testing.assert_allclose(got, expect, atol=1e-9)


def test_bad_arguments_name_them(info):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        info.unmap_boxes(BOXES, format="yolo")
    assert ei.value.argument == "format"
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        info.unmap_boxes(BOXES, clip="yes")
    assert ei.value.argument == "clip"
    for bad in ([1, 2, 3], [[1, 2, 3]], np.zeros((2, 2, 4))):
        with pytest.raises(goprep.ShapeError) as ei:
            info.unmap_boxes(bad)
        assert ei.value.argument == "boxes"


def test_info_built_by_hand_does_not_clip():
    info = goprep.LetterboxInfo(0.5, 10, 20, 100, 200)
    np.testing.assert_allclose(info.unmap_boxes([[0, 0, 1000, 1000]]), [[-40, -20, 1960, 1980]])
