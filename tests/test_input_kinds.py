"""Every input kind through one run path, and the API the same for each (issue 39): one-channel
(H, W) arrays as OpenCV takes them, goprep.yuv inside a pipeline as goprep.decode is, np.asarray of a
frame, lists mixing kinds that read alike, and the Python run path's import graph without a circle."""

import ast
import pathlib

import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import PHOTOS, assert_array_identical, cv2

needs_cv2 = pytest.mark.skipif(cv2 is None, reason="no OpenCV wheel for this interpreter")

GRAY = np.ascontiguousarray(PHOTOS["camera"][..., 0])  # (512, 512) uint8


def _nv12(rgb):
    """An NV12 frame (H*3/2, W) of an RGB image, through OpenCV's I420 encoder, interleaved."""
    h, w = rgb.shape[:2]
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    y, u, v = i420[:h], i420[h:h + h // 4].reshape(h // 2, w // 2), i420[h + h // 4:].reshape(h // 2, w // 2)
    return np.concatenate([y, np.stack([u, v], -1).reshape(h // 2, w)])


# -- one-channel (H, W) arrays --------------------------------------------------------------------

@needs_cv2
@pytest.mark.parametrize("size", [(200, 300), (700, 600)])
def test_two_d_array_resizes_to_two_d_as_cv2(size):
    got = goprep.resize(GRAY, size)
    assert got.shape == size
    assert_array_identical(got, cv2.resize(GRAY, size[::-1], interpolation=cv2.INTER_LINEAR))


def test_two_d_array_equals_one_channel_hwc_in_every_op():
    hwc = GRAY[..., None]
    for op in (lambda x: goprep.flip(x), lambda x: goprep.center_crop(x, 100), lambda x: goprep.pad(x, 3),
               lambda x: goprep.crop(x, 5, 7, 40, 50), lambda x: goprep.letterbox(x, 96)[0]):
        got, ref = op(GRAY), op(hwc)
        assert got.ndim == 2 and ref.ndim == 3
        assert_array_identical(got, ref[..., 0])


def test_two_d_in_pipelines_lists_and_chw():
    f = goprep.pipeline(lambda x: goprep.resize(x, (32, 48)), device="cpu")
    assert f(GRAY).shape == (32, 48)
    assert f([GRAY, GRAY[:300]]).shape == (2, 32, 48)  # a list of (H, W) images: (N, H, W)
    assert_array_identical(f([GRAY, GRAY[:300]])[1], f(GRAY[:300]))
    # CHW keeps its channel axis, as torchvision's ToTensor gives (1, H, W) for a gray image
    g = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (32, 48)), mean=0.5, std=0.25), device="cpu")
    assert g(GRAY).shape == (1, 32, 48)
    assert_array_identical(g(GRAY), g(GRAY[..., None]))
    out = np.empty((32, 48), np.uint8)
    assert f(GRAY, out=out) is out and np.array_equal(out, f(GRAY))


def test_gray_pil_image_comes_back_two_d():
    pil = Image.fromarray(GRAY, "L")
    got = goprep.resize(pil, (40, 50))
    assert got.shape == (40, 50)
    assert_array_identical(got, goprep.resize(GRAY, (40, 50)))


def test_rgb_only_op_on_one_channel_names_the_fix():
    with pytest.raises(goprep.ShapeError, match="gray2rgb") as ei:
        goprep.cvt_color(GRAY, "rgb2bgr")
    assert ei.value.argument == "src"
    with pytest.raises(goprep.InvalidArgumentError, match="gray2rgb") as ei:
        goprep.normalize(GRAY, mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2))
    assert ei.value.argument == "mean"
    rgb = goprep.cvt_color(GRAY, "gray2rgb")  # the fix works on a 2-D image
    assert rgb.shape == GRAY.shape + (3,) and np.array_equal(rgb[..., 1], GRAY)


def test_other_shapes_still_refused_by_name():
    with pytest.raises(goprep.ShapeError, match="channels must be 1, 3 or 4") as ei:
        goprep.resize(np.zeros((8, 8, 2), np.uint8), 4)
    assert ei.value.argument == "src"
    f = goprep.pipeline(lambda x: goprep.resize(x, 4), device="cpu")
    with pytest.raises(goprep.ShapeError, match="channels must be 1, 3 or 4"):
        f(np.zeros((8, 8, 2), np.uint8))
    with pytest.raises(goprep.ShapeError, match="channels must be 1, 3 or 4"):  # returned unread
        goprep.pipeline(lambda x: x, device="cpu")(np.zeros((8, 8, 2), np.uint8))
    with pytest.raises(goprep.ShapeError, match=r"\(H, W\), \(H, W, C\)"):
        goprep.resize(np.zeros((2, 2, 2, 2, 3), np.uint8), 4)


# -- goprep.yuv inside a pipeline, as goprep.decode -----------------------------------------------

@needs_cv2
def test_yuv_inside_pipeline_equals_outside():
    rgb = np.ascontiguousarray(PHOTOS["astronaut"][:480, :400])
    nv12 = _nv12(rgb)

    @goprep.pipeline(device="cpu")
    def inside(frame):
        img = goprep.yuv(frame, "nv12", preset="opencv")
        return goprep.resize(img, (120, 100))

    outside = goprep.pipeline(lambda img: goprep.resize(img, (120, 100)), device="cpu")
    want = outside(goprep.yuv(nv12, "nv12", preset="opencv"))
    assert_array_identical(inside(nv12), want)
    assert_array_identical(want, cv2.resize(cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12), (100, 120)))
    # a list of frames is a batch; so is a batched (N, H*3/2, W) array
    batch = inside([nv12, nv12[:, ::-1].copy()])
    assert batch.shape == (2, 120, 100, 3)
    assert_array_identical(batch[0], want)
    assert_array_identical(inside(np.stack([nv12, nv12])), np.stack([want, want]))


@needs_cv2
def test_yuyv_inside_pipeline():
    rgb = np.ascontiguousarray(PHOTOS["chelsea"][:200, :300])
    yuyv = cv2.cvtColor(cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV), cv2.COLOR_RGB2BGR)[..., :2].copy()  # any (H, W, 2) bytes
    f = goprep.pipeline(lambda x: goprep.yuv(x, "yuyv", preset="opencv"), device="cpu")
    assert_array_identical(f(yuyv), cv2.cvtColor(yuyv, cv2.COLOR_YUV2RGB_YUYV))


def test_yuv_inside_pipeline_must_come_first():
    f = goprep.pipeline(lambda x: goprep.yuv(goprep.flip(x), "nv12", preset="opencv"), device="cpu")
    with pytest.raises(goprep.PipelineError, match="first op"):
        f(np.zeros((12, 8), np.uint8))
    g = goprep.pipeline(lambda x: goprep.yuv(x, "nv12", preset="opencv"), device="cpu")
    with pytest.raises(goprep.ShapeError, match="multiple of 3"):
        g(np.zeros((10, 8), np.uint8))


@needs_cv2
def test_yuv_inside_pipeline_on_device_arrays(sim_gpu):
    """A frame's array on the GPU (here the simulated one) through a pipeline that calls goprep.yuv:
    the same kinds, the same result as on the CPU."""
    rgb = np.ascontiguousarray(PHOTOS["astronaut"][:240, :320])
    nv12 = _nv12(rgb)
    f = goprep.pipeline(lambda x: goprep.resize(goprep.yuv(x, "nv12", preset="opencv"), (60, 80)), device="cuda")
    want = goprep.pipeline(lambda x: goprep.resize(goprep.yuv(x, "nv12", preset="opencv"), (60, 80)), device="cpu")(nv12)
    assert_array_identical(f(goprep.to_device(nv12)), want)
    assert_array_identical(f([goprep.to_device(nv12)] * 2), np.stack([want, want]))
    assert_array_identical(np.asarray(f(nv12)), want)


# -- np.asarray(frame), mixed lists ---------------------------------------------------------------

@needs_cv2
def test_asarray_of_a_frame_is_its_rgb_image():
    rgb = np.ascontiguousarray(PHOTOS["coffee"][:240, :320])
    nv12 = _nv12(rgb)
    frame = goprep.yuv(nv12, "nv12", preset="opencv")
    a = np.asarray(frame)
    assert a.shape == (240, 320, 3) and a.dtype == np.uint8
    assert_array_identical(a, cv2.cvtColor(nv12, cv2.COLOR_YUV2RGB_NV12))
    assert np.asarray(frame, np.float32).dtype == np.float32
    batch = goprep.yuv(np.stack([nv12, nv12]), "nv12", preset="opencv")
    assert_array_identical(np.asarray(batch), np.stack([a, a]))
    assert_array_identical(np.asarray(goprep.yuv(nv12, "nv12", preset="opencv", order="bgr")), a[..., ::-1])


@needs_cv2
def test_a_list_may_mix_kinds_that_read_alike():
    rgb = np.ascontiguousarray(PHOTOS["coffee"][:240, :320])
    frame = goprep.yuv(_nv12(rgb), "nv12", preset="opencv")
    f = goprep.pipeline(lambda x: goprep.resize(x, (60, 80)), device="cpu")
    got = f([frame, np.asarray(frame), Image.fromarray(np.asarray(frame))])
    assert_array_identical(got[0], got[1])
    assert_array_identical(got[0], got[2])


# -- the run path's modules -----------------------------------------------------------------------

PKG = pathlib.Path(goprep.__file__).parent


def _imports(path):
    """The goprep modules a module imports at its top level (its import-time edges)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
    return out


def test_run_path_imports_have_no_circle():
    mods = {p.stem: p for p in PKG.glob("_*.py") if p.stem != "__init__"}
    graph = {m: {d for d in _imports(p) if d in mods} for m, p in mods.items()}
    state = {}

    def visit(m, stack):
        state[m] = 1
        for d in graph[m]:
            if state.get(d) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack + [m, d]))
            if d not in state:
                visit(d, stack + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])
    # and no module below _pipeline reaches back up to it lazily (the circle a function-level import hides)
    for m, p in mods.items():
        if m in ("_ops", "_pipeline", "_bench", "_demo", "_profile"):
            continue
        assert "from ._pipeline import" not in p.read_text() and "from . import _pipeline" not in p.read_text(), m
