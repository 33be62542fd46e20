"""Pillow resizes an "RGBA" image premultiplied by alpha ("RGBa", then back): goprep's uint8 resize with
Pillow's arithmetic (antialias=True) does the same for 4-channel images, byte for byte."""

import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import PHOTOS

RESAMPLE = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}
# downscales (one vertical-first: the height shrinks more than twice what the width does), an
# upscale, one axis unchanged
SIZES = [(224, 224), (100, 150), (37, 53), (60, 440), (420, 600), (300, 200)]


def _pil(img, size, kind):
    return np.asarray(Image.fromarray(np.ascontiguousarray(img), "RGBA").resize((size[1], size[0]), RESAMPLE[kind]))


@pytest.mark.parametrize("kind", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", SIZES)
def test_resize_rgba_equals_pillow(size, kind):
    img = PHOTOS["chelsea_rgba"]
    got = goprep.resize(img, size, interpolation=kind, antialias=True)
    np.testing.assert_array_equal(got, _pil(img, size, kind))


def test_resize_rgba_layouts_and_batches():
    """A batch, a flipped view and a planar (CHW-strided) view: premultiplied the same way."""
    img = PHOTOS["chelsea_rgba"]
    batch = np.stack([img, img[::-1].copy()])
    got = goprep.resize(batch, (90, 130), antialias=True)
    np.testing.assert_array_equal(got[0], _pil(img, (90, 130), "bilinear"))
    np.testing.assert_array_equal(got[1], _pil(img[::-1], (90, 130), "bilinear"))
    np.testing.assert_array_equal(goprep.resize(img[:, ::-1], (90, 130), antialias=True), _pil(img[:, ::-1], (90, 130), "bilinear"))
    planar = np.ascontiguousarray(img.transpose(2, 0, 1)).transpose(1, 2, 0)
    np.testing.assert_array_equal(goprep.resize(planar, (90, 130), antialias=True), _pil(img, (90, 130), "bilinear"))


def test_resize_rgba_unchanged_size_and_other_kernels():
    """An unchanged size is a copy (as Pillow's); without Pillow's arithmetic nothing is premultiplied."""
    img = PHOTOS["chelsea_rgba"]
    np.testing.assert_array_equal(goprep.resize(img, img.shape[:2], antialias=True), img)
    # RGB of the same pixels: the colour channels are resized alone
    per_channel = goprep.resize(img, (100, 150), antialias="torch")
    np.testing.assert_array_equal(per_channel[..., :3], goprep.resize(img[..., :3].copy(), (100, 150), antialias="torch"))


def test_pipeline_after_premultiplied_resize():
    """Crop, resize, flip, pad and normalise: the resize's numbers are Pillow's RGBA ones."""
    img = PHOTOS["chelsea_rgba"]
    crop = img[20:280, 30:400]
    want = _pil(crop, (120, 160), "bicubic")[::-1, ::-1]
    want = np.pad(want, ((3, 4), (5, 6), (0, 0)), constant_values=7)
    mean, std = (0.4, 0.5, 0.6, 0.5), (0.2, 0.25, 0.3, 0.5)

    def steps(x):
        x = goprep.crop(x, 20, 30, 260, 370)
        x = goprep.resize(x, (120, 160), interpolation="bicubic", antialias=True)
        x = goprep.flip(x, horizontal=True, vertical=True)
        return goprep.pad(x, (5, 3, 6, 4), value=7)  # left, top, right, bottom

    np.testing.assert_array_equal(goprep.pipeline(steps)(img), want)

    @goprep.pipeline
    def norm(x):
        return goprep.normalize(steps(x), mean=mean, std=std)

    ref = (want.astype(np.float64) / 255 - np.array(mean)) / np.array(std)
    np.testing.assert_allclose(norm(img), ref.transpose(2, 0, 1), atol=1e-5)


def test_gpu_placement_runs_premultiplied_on_cpu():
    """The GPU kernels decline premultiplied plans: device="cuda" runs them on the CPU engine
    (simulated GPU), with Pillow's numbers."""
    from goprep import testing

    if not testing.simulated_gpu_available():
        pytest.skip("no simulated GPU in this build")
    img = PHOTOS["chelsea_rgba"]
    testing.simulate_gpu(True)
    try:
        @goprep.pipeline(device="cuda")
        def prep(x):
            return goprep.resize(x, (100, 150), antialias=True)

        np.testing.assert_array_equal(prep(img), _pil(img, (100, 150), "bilinear"))
    finally:
        testing.simulate_gpu(False)


@pytest.mark.parametrize("api", ["v1", "v2"])
@pytest.mark.parametrize("interp", ["bilinear", "bicubic"])
def test_converted_resize_on_pil_rgba(api, interp):
    """torchvision's Resize (v1 and v2) on PIL RGBA images, converted: Pillow's bytes."""
    torch = pytest.importorskip("torch")
    if api == "v1":
        import torchvision.transforms as T
    else:
        import torchvision.transforms.v2 as T
    import goprep.transforms as gt

    mode = getattr(T.InterpolationMode, interp.upper())
    pil = Image.fromarray(PHOTOS["chelsea_rgba"], "RGBA")
    steps = [T.CenterCrop(280), T.Resize((150, 120), interpolation=mode), T.RandomHorizontalFlip(p=1.0), T.Pad(4)]
    tail = [T.PILToTensor()]
    tv = T.Compose(steps + tail)
    want = tv(pil)
    got = gt.from_torchvision(tv)(pil)
    assert torch.equal(torch.as_tensor(np.asarray(got)), torch.as_tensor(np.asarray(want)))
    assert torch.equal(gt.from_torchvision(tv)(np.asarray(pil)), want)
