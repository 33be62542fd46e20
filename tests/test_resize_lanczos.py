"""interpolation="lanczos": Pillow's LANCZOS (its antialiased convolution with the Lanczos-3 window, uint8
rounded after each pass, vertical-first where Pillow 13 is) bit for bit on uint8, PyTorch's uint8
mode="lanczos" with antialias="torch", PyTorch's / Pillow's float kernels within 1e-5 on float32, RGBA
premultiplied as Pillow's, and the simulated GPU kernels equal to the CPU engine."""

import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import PHOTOS, assert_array_identical, assert_goprep_error

PIL_13 = int(Image.__version__.split(".")[0]) >= 13


def _pil(img, size, box=None):
    """Pillow's LANCZOS resize of an (H, W, C) or (H, W) uint8 array to (h, w)."""
    im = Image.fromarray(img[..., 0] if img.ndim == 3 and img.shape[-1] == 1 else img)
    out = np.asarray(im.resize((size[1], size[0]), Image.LANCZOS, box=box))
    return out.reshape(out.shape[:2] + (img.shape[-1],)) if img.ndim == 3 and img.shape[-1] == 1 else out


def _random_sizes(rng, n):
    """(h, w, oh, ow): downscales, upscales, mixed, tiny and 1-pixel sides, odd sides."""
    cases = [(1, 1, 1, 1), (1, 1, 5, 3), (1, 9, 1, 4), (9, 1, 4, 1), (2, 3, 1, 1), (7, 5, 7, 5), (3, 200, 2, 17),
             (200, 3, 17, 2), (101, 67, 13, 9), (13, 9, 101, 67)]
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(1, 120, 2))
        oh, ow = (int(v) for v in rng.integers(1, 2 * max(h, w) + 2, 2))
        cases.append((h, w, oh, ow))
    return cases


@pytest.mark.skipif(not PIL_13, reason="Pillow 13's pass order: older Pillow runs the horizontal pass first")
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("channels", [3, 1, None])
def test_lanczos_u8_equals_pillow_on_random_images(channels, threads, restore_threads):
    goprep.set_num_threads(threads)
    rng = np.random.default_rng(40 + (channels or 0) + 10 * threads)
    for h, w, oh, ow in _random_sizes(rng, 60):
        shape = (h, w) if channels is None else (h, w, channels)
        img = rng.integers(0, 256, shape, dtype=np.uint8)
        got = goprep.resize(img, (oh, ow), interpolation="lanczos")
        assert_array_identical(got, _pil(img, (oh, ow)))


@pytest.mark.skipif(not PIL_13, reason="Pillow 13's pass order: older Pillow runs the horizontal pass first")
@pytest.mark.parametrize("name", ["astronaut", "chelsea", "coffee", "camera"])
def test_lanczos_u8_equals_pillow_on_photos(name):
    img = PHOTOS[name]
    for size in [(224, 224), (123, 301), (64, 900), (700, 901), (2, 300)]:
        assert_array_identical(goprep.resize(img, size, interpolation="lanczos", antialias=True), _pil(img, size))


@pytest.mark.skipif(not PIL_13, reason="Pillow 13's pass order: older Pillow runs the horizontal pass first")
@pytest.mark.parametrize("threads", [1, 3])
def test_lanczos_crop_then_resize_equals_pillow(threads, restore_threads):
    """goprep.crop then resize (one fused call) is Pillow's ``crop(box).resize``. Pillow's ``resize(box=)``
    is another thing: its filter reads past the box's edges (the taps are clamped to the whole image),
    so it equals crop-then-resize only where the box touches the image's edges or the taps stay inside."""
    goprep.set_num_threads(threads)
    rng = np.random.default_rng(7 + threads)
    photo = PHOTOS["coffee"]
    pipe = goprep.pipeline(lambda im, y, x, h, w, oh, ow: goprep.resize(goprep.crop(im, y, x, h, w), (oh, ow),
                                                                       interpolation="lanczos"))
    differs_from_box = 0
    for _ in range(60):
        h, w = (int(v) for v in rng.integers(1, 90, 2))
        y, x = int(rng.integers(0, photo.shape[0] - h)), int(rng.integers(0, photo.shape[1] - w))
        oh, ow = (int(v) for v in rng.integers(1, 2 * max(h, w), 2))
        crop = np.ascontiguousarray(photo[y:y + h, x:x + w])
        got = pipe(photo, y, x, h, w, oh, ow)
        assert_array_identical(got, _pil(crop, (oh, ow)))
        differs_from_box += not np.array_equal(got, _pil(photo, (oh, ow), box=(x, y, x + w, y + h)))
        # a box spanning the whole image is the plain resize
    assert differs_from_box > 0  # the two semantics do differ (an interior box reads outside itself)
    whole = PHOTOS["chelsea"]
    assert_array_identical(goprep.resize(whole, (77, 91), interpolation="lanczos"),
                           _pil(whole, (77, 91), box=(0, 0, whole.shape[1], whole.shape[0])))


def test_lanczos_rgba_is_premultiplied_as_pillow():
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (57, 43, 4), dtype=np.uint8)
    img[..., 3] = rng.integers(0, 4, (57, 43)) * 85  # transparent, partly and fully opaque pixels
    for size in [(20, 17), (100, 90), (57, 10)]:
        want = np.asarray(Image.fromarray(img, "RGBA").resize((size[1], size[0]), Image.LANCZOS))
        assert_array_identical(goprep.resize(img, size, interpolation="lanczos"), want)


def _torch_lanczos(img, size):
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(np.ascontiguousarray(img)).permute(2, 0, 1)[None]
    try:
        r = torch.nn.functional.interpolate(t, size=size, mode="lanczos", antialias=True, align_corners=False)
    except (NotImplementedError, RuntimeError, ValueError) as e:  # PyTorch before lanczos
        pytest.skip(f"this PyTorch has no mode='lanczos': {e}")
    return r[0].permute(1, 2, 0).numpy()


def test_lanczos_torch_u8_equals_pytorch():
    """antialias="torch": PyTorch's uint8 kernel (its int16 weights), which torchvision's LANCZOS on uint8
    tensors runs; it differs from Pillow's 22-bit weights by 1 level on some pixels."""
    rng = np.random.default_rng(11)
    off_pillow = 0
    for h, w, oh, ow in _random_sizes(rng, 40):
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        got = goprep.resize(img, (oh, ow), interpolation="lanczos", antialias="torch")
        assert_array_identical(got, _torch_lanczos(img, (oh, ow)))
        off_pillow += not np.array_equal(got, _pil(img, (oh, ow)))
    assert off_pillow > 0  # the two roundings are distinct kernels, so this test checks PyTorch's


def test_lanczos_f32_follows_pytorch_and_pillow():
    """float32: the float64 weights as float32, summed in float32 (PyTorch's float lanczos); within 1e-5
    of PyTorch's float64 evaluation and of Pillow's mode "F" (double weights, one channel), unclamped (Lanczos overshoots).
    PyTorch's float antialias kernels give every output row the first one's value for a 1-column output
    (measured on torch 2.15, bicubic alike; Pillow does not), so 1-column outputs are checked on Pillow's."""
    rng = np.random.default_rng(5)
    for h, w, oh, ow in _random_sizes(rng, 20):
        img = rng.random((h, w, 3), dtype=np.float32)
        got = goprep.resize(img, (oh, ow), interpolation="lanczos")
        if ow > 1:  # held to PyTorch's float64 evaluation; its float32 kernel lands up to ~1.2e-5 from it
            np.testing.assert_allclose(got, _torch_lanczos(img.astype(np.float64), (oh, ow)), atol=1e-5, rtol=0)
            np.testing.assert_allclose(got, _torch_lanczos(img, (oh, ow)), atol=1e-4, rtol=0)
        f = np.asarray(Image.fromarray(np.ascontiguousarray(img[..., 1]), "F").resize((ow, oh), Image.LANCZOS))
        np.testing.assert_allclose(got[..., 1], f, atol=1e-5, rtol=0)


def test_lanczos_is_not_bicubic():
    img = PHOTOS["astronaut"]
    a = goprep.resize(img, (100, 100), interpolation="lanczos")
    b = goprep.resize(img, (100, 100), interpolation="bicubic", antialias=True)
    assert not np.array_equal(a, b)


def test_lanczos_arguments():
    img = PHOTOS["camera"]
    # Pillow's LANCZOS has only its antialiased form: antialias False (the default) and True are the same
    assert_array_identical(goprep.resize(img, (33, 40), interpolation="lanczos", antialias=False),
                           goprep.resize(img, (33, 40), interpolation="lanczos", antialias=True))
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.resize(img, (10, 10), interpolation="lanczos", antialias="torch-noaa")
    assert_goprep_error(e.value, goprep.InvalidArgumentError, argument="antialias")
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.resize(img, (10, 10), interpolation="lanczos3")
    assert_goprep_error(e.value, goprep.InvalidArgumentError, argument="interpolation")
    assert "'lanczos'" in str(e.value)


@pytest.mark.parametrize("aa", [True, "torch"])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_lanczos_gpu_kernels_give_cpu_results(sim_gpu, aa, dtype):
    imgs = np.stack([PHOTOS["astronaut"]] * 2)
    if dtype == "float32":
        imgs = imgs.astype(np.float32) / 255

    def down(img):
        img = goprep.crop(img, 10, 20, 300, 280)
        return goprep.normalize(goprep.resize(img, (224, 200), interpolation="lanczos", antialias=aa),
                                mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.25))

    def up(img):
        return goprep.resize(goprep.crop(img, 100, 120, 40, 50), (97, 131), interpolation="lanczos", antialias=aa)

    for fn in (down, up):
        want = goprep.pipeline(device="cpu")(fn)(imgs)
        before = goprep.info()["gpu"]["gpu_calls"]
        assert_array_identical(goprep.pipeline(device="cuda")(fn)(imgs), want)
        assert goprep.info()["gpu"]["gpu_calls"] == before + 1
