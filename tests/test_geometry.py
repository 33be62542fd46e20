"""torchvision sizing (shorter-side resize, max_size, center_crop), pad and fused crop -> resize ->
crop -> pad chains, checked against torchvision's own functions and against op-by-op NumPy."""

import numpy as np
import pytest

import goprep
from conftest import PHOTOS, assert_array_identical, rand_f32, rand_u8


def _tv_size(h, w, size, max_size=None):
    _compute_resized_output_size = pytest.importorskip("torchvision.transforms.functional")._compute_resized_output_size

    # torchvision's own size rule; goprep keeps a side of at least 1 where torchvision would reach 0
    return tuple(max(v, 1) for v in _compute_resized_output_size((h, w), size, max_size, allow_size_none=True))


@pytest.mark.parametrize("hw", [(400, 600), (600, 400), (300, 451), (451, 300), (224, 224), (7, 1000), (333, 334)])
@pytest.mark.parametrize("size,max_size", [(256, None), (224, None), (97, None), (256, 300), (100, 101), (None, 320)])
def test_shorter_side_rule_matches_torchvision(hw, size, max_size):
    img = np.zeros(hw + (3,), np.uint8)
    want = _tv_size(*hw, size if size is None else [size], max_size)
    assert goprep.resize(img, size, max_size=max_size).shape[:2] == want
    if size is not None:
        assert goprep.resize(img, [size], max_size=max_size).shape[:2] == want


def test_max_size_errors():
    img = rand_u8((10, 12, 3))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(img, 8, max_size=8)  # torchvision: max_size must exceed the shorter side
    assert ei.value.argument == "max_size"
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(img, (8, 9), max_size=20)
    assert ei.value.argument == "max_size"
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(img, None)
    assert ei.value.argument == "size"


@pytest.mark.parametrize("hw", [(400, 600), (300, 451), (224, 224), (225, 227), (100, 80), (50, 300)])
@pytest.mark.parametrize("size", [224, (224, 200), (101, 99), (120, 500), (1, 1)])
def test_center_crop_matches_torchvision(hw, size):
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    img = rand_u8(hw + (3,), seed=hash((hw, str(size))) % 2**32)
    want = F.center_crop(torch.from_numpy(img).permute(2, 0, 1), list(size) if isinstance(size, tuple) else [size])
    got = goprep.center_crop(img, size)
    assert_array_identical(got, want.permute(1, 2, 0).numpy())


def test_center_crop_float_and_batch():
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    img = rand_f32((2, 31, 40, 3))
    got = goprep.center_crop(img, (35, 20))
    want = F.center_crop(torch.from_numpy(img).permute(0, 3, 1, 2), [35, 20]).permute(0, 2, 3, 1).numpy()
    assert_array_identical(got, want)


@pytest.mark.parametrize("padding", [3, (2, 5), (1, 2, 3, 4), [0, 0, 7, 0]])
@pytest.mark.parametrize("value", [0, 17, (10, 20, 30)])
def test_pad_matches_torchvision(padding, value):
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    img = PHOTOS["chelsea"]
    got = goprep.pad(img, padding, value=value)
    t = torch.from_numpy(img.copy()).permute(2, 0, 1)
    fill = list(value) if isinstance(value, tuple) else value
    want = F.pad(t, list(padding) if not isinstance(padding, int) else padding, fill=fill)
    assert_array_identical(got, want.permute(1, 2, 0).numpy())


def test_pad_to_size_and_multiple():
    img = rand_u8((30, 41, 4))
    got = goprep.pad(img, size=(40, 50), value=(1, 2, 3, 4))
    want = np.empty((40, 50, 4), np.uint8)
    want[:] = (1, 2, 3, 4)
    want[5:35, 4:45] = img
    assert_array_identical(got, want)
    got = goprep.pad(img, multiple=32, center=False)
    want = np.zeros((32, 64, 4), np.uint8)
    want[:30, :41] = img
    assert_array_identical(got, want)
    assert goprep.pad(img, multiple=(8, 1)).shape == (32, 41, 4)
    f = rand_f32((5, 6, 1))
    assert goprep.pad(f, 1, value=-0.5)[0, 0, 0] == np.float32(-0.5)


def test_pad_errors():
    img = rand_u8((10, 12, 3))
    for kw, arg in [
        (dict(padding=1, size=(20, 20)), "size"),
        (dict(), "padding"),
        (dict(padding=-1), "padding"),
        (dict(padding=(1, 2, 3)), "padding"),
        (dict(size=(5, 20)), "size"),
        (dict(padding=1, value=(1, 2)), "value"),
        (dict(padding=1, value=256), "value"),
        (dict(padding=1, value=1.5), "value"),
        (dict(padding=1, value="x"), "value"),
        (dict(multiple=0), "multiple"),
    ]:
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            goprep.pad(img, **kw)
        assert ei.value.argument == arg, kw


def _numpy_chain(img, pre, size, post, padding, value):
    t, l, h, w = pre
    x = img[t:t + h, l:l + w]
    x = goprep.resize(np.ascontiguousarray(x), size)
    t, l, h, w = post
    x = x[t:t + h, l:l + w][:, ::-1]
    left, top, right, bottom = padding
    out = np.empty((x.shape[0] + top + bottom, x.shape[1] + left + right, x.shape[2]), x.dtype)
    out[:] = value
    out[top:top + x.shape[0], left:left + x.shape[1]] = x
    return out


@pytest.mark.parametrize("dtype", ["u8", "f32"])
@pytest.mark.parametrize("value", [0, (5, 60, 200)])
def test_crop_resize_crop_pad_fuses(dtype, value):
    img = PHOTOS["coffee"] if dtype == "u8" else PHOTOS["coffee"].astype(np.float32) / 255

    @goprep.pipeline(device="cpu")
    def prep(x):
        x = goprep.crop(x, 20, 30, 300, 400)
        x = goprep.resize(x, 200)
        x = goprep.crop(x, 10, 40, 150, 200)
        x = goprep.flip(x)
        return goprep.pad(x, (3, 7, 11, 2), value=value)

    want = _numpy_chain(img, (20, 30, 300, 400), (200, 266), (10, 40, 150, 200), (3, 7, 11, 2), value)
    assert_array_identical(prep(img), want)
    # normalised, the fused result equals normalising the op-by-op result
    norm = goprep.pipeline(lambda x: goprep.normalize(prep._fn(x), mean=0.5, std=0.25), device="cpu")
    assert_array_identical(norm(img), goprep.normalize(want, mean=0.5, std=0.25))


def test_pad_then_crop_then_pad_and_padding_only():
    img = rand_u8((20, 30, 3))

    @goprep.pipeline(device="cpu")
    def prep(x):
        x = goprep.resize(x, (40, 60))
        x = goprep.pad(x, 5, value=9)
        x = goprep.crop(x, 0, 0, 30, 8)  # mostly padding
        return goprep.pad(x, (1, 1, 1, 1), value=9)

    r = goprep.resize(img, (40, 60))
    want = np.full((32, 10, 3), 9, np.uint8)
    want[6:31, 6:9] = r[:25, :3]
    assert_array_identical(prep(img), want)
    only = goprep.pipeline(lambda x: goprep.crop(goprep.pad(goprep.resize(x, (4, 4)), 10, value=7), 0, 0, 5, 5))
    assert_array_identical(only(img), np.full((5, 5, 3), 7, np.uint8))


def test_pipeline_geometry_errors():
    img = rand_u8((20, 30, 3))
    with pytest.raises(goprep.PipelineError):
        goprep.pipeline(lambda x: goprep.resize(goprep.pad(x, 2), (8, 8)))(img)
    with pytest.raises(goprep.PipelineError):
        goprep.pipeline(lambda x: goprep.pad(goprep.pad(x, 2, value=1), 2, value=3))(img)
    # a pad that a crop removes again is only a view: a resize may follow
    f = goprep.pipeline(lambda x: goprep.resize(goprep.crop(goprep.pad(x, 2), 2, 2, 20, 30), (8, 8)))
    assert_array_identical(f(img), goprep.resize(img, (8, 8)))


def test_per_channel_pad_follows_the_channel_map():
    img = rand_u8((10, 12, 3))
    got = goprep.pipeline(lambda x: goprep.cvt_color(goprep.pad(x, 1, value=(1, 2, 3)), "rgb2bgr"))(img)
    assert tuple(got[0, 0]) == (3, 2, 1)
    assert_array_identical(got[1:-1, 1:-1], img[..., ::-1])


def test_normalize_default_scale_depends_on_dtype():
    u8 = rand_u8((6, 7, 3))
    f = u8.astype(np.float32) / 255
    a = goprep.normalize(u8, mean=0.5, std=0.25)
    b = goprep.normalize(f, mean=0.5, std=0.25)
    np.testing.assert_allclose(a, b, atol=1e-5)
    want = ((f - 0.5) / 0.25).transpose(2, 0, 1)
    np.testing.assert_allclose(b, want, atol=1e-6)
    assert_array_identical(goprep.normalize(u8, mean=0.5, std=0.25, scale=1 / 255), a)


def test_per_channel_pad_runs_on_the_gpu_kernels():
    # The CUDA kernels take one pad value per output channel: a letterbox with differing per-channel
    # values runs on the (simulated) GPU and gives the CPU engine's result.
    import goprep.testing as gt

    if not gt.simulated_gpu_available():
        pytest.skip("extension built without -tags cpukernel (no C++ compiler): no simulated GPU")

    img = rand_u8((3, 50, 70, 3))

    def prep(x):
        x, _ = goprep.letterbox(x, (64, 64), pad_value=(1, 2, 3))
        return goprep.normalize(x, mean=0.5, std=0.25)

    def uniform(x):
        x, _ = goprep.letterbox(x, (64, 64), pad_value=7)
        return goprep.normalize(x, mean=0.5, std=0.25)

    want = goprep.pipeline(prep, device="cpu")(img)
    gt.simulate_gpu(True)
    gt.reset_gpu()
    try:
        assert_array_identical(goprep.pipeline(prep, device="cuda")(img), want)
        assert goprep.info()["gpu"]["gpu_calls"] == 1
        assert_array_identical(goprep.pipeline(uniform, device="cuda")(img), goprep.pipeline(uniform, device="cpu")(img))
        assert goprep.info()["gpu"]["gpu_calls"] == 2
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)


def test_framed_plan_on_the_simulated_gpu_equals_cpu():
    # a frame (pad after a post-resize crop) is folded into the axis tables the kernels read
    import goprep.testing as gt

    img = rand_u8((2, 300, 400, 3))

    def prep(x):
        x = goprep.crop(x, 10, 20, 280, 360)
        x = goprep.resize(x, 200)
        x = goprep.flip(goprep.crop(x, 5, 30, 180, 200))
        x = goprep.pad(x, (7, 3, 1, 9), value=114)
        return goprep.normalize(x, mean=0.5, std=0.25, dtype="float16", layout="HWC")

    want = goprep.pipeline(prep, device="cpu")(img)
    gt.simulate_gpu(True)
    gt.reset_gpu()
    try:
        got = goprep.pipeline(prep, device="cuda")(img)
        assert goprep.info()["gpu"]["gpu_calls"] == 1
        assert_array_identical(got, want)
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)
