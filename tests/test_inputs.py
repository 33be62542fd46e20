"""PIL images and CPU torch tensors as inputs, tensors as outputs and out=; errors naming the argument;
torch and PIL stay unimported for NumPy users."""

import gc

import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS, assert_array_identical, rand_f32, rand_u8, run_python

MEAN, STD = IMAGENET_MEAN, IMAGENET_STD


def _prep(x):
    x = goprep.resize(x, (64, 80))
    x = goprep.flip(x)
    return goprep.normalize(x, mean=MEAN, std=STD)


prep = goprep.pipeline(_prep, device="cpu")


def _chw(a):
    torch = pytest.importorskip("torch")
    return torch.from_numpy(np.ascontiguousarray(np.moveaxis(a, -1, -3)))


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "sliced"])
@pytest.mark.parametrize("dtype", ["u8", "f32"])
def test_tensor_in_tensor_out(layout, dtype):
    torch = pytest.importorskip("torch")
    img = PHOTOS["coffee"] if dtype == "u8" else PHOTOS["coffee"].astype(np.float32) / 255
    want = prep(img)
    t = _chw(img)
    if layout == "channels_last":
        t = t[None].contiguous(memory_format=torch.channels_last)[0]
    elif layout == "sliced":
        big = _chw(np.pad(img, ((3, 4), (5, 6), (0, 0))))
        t = big[:, 3:-4, 5:-6]
    got = prep(t)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.shape == (3, 64, 80)
    assert_array_identical(got.numpy(), want)
    # eager ops: tensor in, tensor out, in torchvision's (C, H, W) layout
    r = goprep.resize(t, (64, 80))
    assert isinstance(r, torch.Tensor) and r.shape == (3, 64, 80)
    assert_array_identical(r.permute(1, 2, 0).numpy(), goprep.resize(img, (64, 80)))
    assert_array_identical(goprep.normalize(t, mean=MEAN, std=STD).numpy(), goprep.normalize(img, mean=MEAN, std=STD))


def test_tensor_batch_and_list():
    torch = pytest.importorskip("torch")
    batch = rand_u8((3, 40, 50, 3))
    t = torch.from_numpy(batch).permute(0, 3, 1, 2)  # an (N, C, H, W) view of NHWC memory
    got = prep(t)
    assert isinstance(got, torch.Tensor) and got.shape == (3, 3, 64, 80)
    assert_array_identical(got.numpy(), prep(batch))
    listed = prep([_chw(batch[0]), _chw(batch[1][:30])])
    assert isinstance(listed, torch.Tensor)
    assert_array_identical(listed.numpy(), prep([batch[0], batch[1][:30]]))
    c = goprep.crop(t, 1, 2, 10, 20)
    assert isinstance(c, torch.Tensor) and c.shape == (3, 3, 10, 20)


def test_output_option():
    torch = pytest.importorskip("torch")
    img = rand_u8((30, 40, 3))
    as_torch = goprep.pipeline(_prep, device="cpu", output="torch")
    got = as_torch(img)
    assert isinstance(got, torch.Tensor)
    assert_array_identical(got.numpy(), prep(img))
    as_numpy = goprep.pipeline(_prep, device="cpu", output="numpy")
    assert isinstance(as_numpy(_chw(img)), np.ndarray)
    hwc = goprep.pipeline(lambda x: goprep.resize(x, (10, 12)), output="torch")(img)
    assert hwc.shape == (3, 10, 12)  # (C, H, W), channels-last memory
    assert_array_identical(hwc.permute(1, 2, 0).numpy(), goprep.resize(img, (10, 12)))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.pipeline(_prep, output="jax")
    assert ei.value.argument == "output"


def test_out_tensor():
    torch = pytest.importorskip("torch")
    img = rand_u8((30, 40, 3))
    out = torch.empty((3, 64, 80))
    res = prep(_chw(img), out=out)
    assert res is out
    assert_array_identical(out.numpy(), prep(img))
    out2 = torch.empty((3, 64, 80))
    assert goprep.normalize(goprep.resize(img, (64, 80)), mean=0.5, std=0.5, out=out2) is out2
    # an HWC result goes into a channels-last (C, H, W) tensor
    cl = torch.empty((1, 3, 10, 12), dtype=torch.uint8).contiguous(memory_format=torch.channels_last)[0]
    goprep.resize(img, (10, 12), out=cl)
    assert_array_identical(cl.permute(1, 2, 0).numpy(), goprep.resize(img, (10, 12)))
    batch = torch.empty((2, 3, 64, 80))
    assert prep([img, img[:20]], out=batch) is batch
    assert_array_identical(batch.numpy(), prep([img, img[:20]]))
    for bad in (torch.empty((3, 64, 81)), torch.empty((3, 10, 12), dtype=torch.uint8), torch.empty((64, 80, 3))):
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            if bad.dtype == torch.uint8:
                goprep.resize(img, (10, 12), out=bad)  # (C, H, W) contiguous is not the HWC result's memory
            else:
                prep(img, out=bad)
        assert ei.value.argument == "out"
    if torch.cuda.is_available():  # pinned host memory needs a CUDA driver
        pinned = torch.empty((3, 64, 80)).pin_memory()
        assert prep(img, out=pinned) is pinned
        assert_array_identical(pinned.numpy(), prep(img))


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L"])
def test_pil_images(mode):
    img = PHOTOS["chelsea_rgba"] if mode == "RGBA" else PHOTOS["camera"][..., 0] if mode == "L" else PHOTOS["chelsea"]
    pil = Image.fromarray(np.ascontiguousarray(img), mode)
    arr = img  # an "L" image reads as its (H, W) array: a one-channel image, whose results are 2-D
    got = goprep.resize(pil, (50, 60))
    assert isinstance(got, np.ndarray)
    assert got.shape == ((50, 60) if mode == "L" else (50, 60, img.shape[-1]))
    assert_array_identical(got, goprep.resize(arr, (50, 60)))
    f = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (20, 30)), mean=0.5, std=0.5))
    assert_array_identical(f(pil), f(arr))
    assert_array_identical(f([pil, pil]), f([arr, arr]))


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_pil_image_opened_not_loaded(fmt, tmp_path):
    """Image.open reads only the header: goprep loads the pixels (Pillow >= 11 asserts on img.im
    before that), eager, in pipelines and in lists; after Image.close() it is goprep's error."""
    path = tmp_path / f"chelsea.{fmt.lower()}"
    Image.fromarray(np.ascontiguousarray(PHOTOS["chelsea"])).save(path, fmt)
    with Image.open(path) as im:
        want = np.asarray(im.copy())
    f = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (20, 30)), mean=0.5, std=0.5))
    for run, ref in [(lambda im: goprep.resize(im, (50, 60)), goprep.resize(want, (50, 60))),
                     (f, f(want)), (lambda im: f([im, im]), f([want, want]))]:
        im = Image.open(path)
        assert_array_identical(run(im), ref)
        im.close()
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            run(im)
        assert ei.value.argument == "src"


@pytest.mark.parametrize("mode", ["RGBA", "L"])
def test_pil_images_read_in_place(mode):
    """Pillow >= 11.2 exports its own pixel memory (Arrow): RGBA and L images are read without the
    np.asarray copy, and the view keeps the image's memory alive. (RGB is stored RGBX: packed by the
    engine, so the fast kernels see packed pixels; see test_pil_rgb_packed_by_the_engine.)"""
    from goprep import _inputs

    img = PHOTOS["chelsea_rgba"] if mode == "RGBA" else PHOTOS["camera"][..., 0]
    pil = Image.fromarray(np.ascontiguousarray(img), mode).copy()  # Pillow's own memory, writable in place
    if not hasattr(pil, "__arrow_c_array__"):
        pytest.skip("this Pillow has no Arrow export: PIL images are copied (np.asarray)")
    view = _inputs.pil_as_hwc(pil)
    owner = view
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner, _inputs._ArrowView)
    assert_array_identical(view, img)  # "L": its (H, W) array
    pil.putpixel((3, 2), 7 if mode == "L" else (7,) * 4)  # the same memory: the view sees it
    assert (view[2, 3] == 7).all()
    expect = goprep.resize(np.ascontiguousarray(view), (50, 60))
    del pil
    gc.collect()
    assert_array_identical(goprep.resize(view, (50, 60)), expect)  # still valid after the image is gone


@pytest.mark.parametrize("size", [(1, 1), (1, 7), (5, 1), (3, 9), (17, 23), (300, 451), (1080, 1920)])
def test_pil_rgb_packed_by_the_engine(size):
    """An RGB image (stored RGBX) is read through its Arrow view and packed by the engine
    (binding PackRGBX, bands of rows on the engine's threads): equal to np.asarray byte for byte at every
    width (the 8-pixel steps and the tail), on 1 and 3 threads, and a pipeline gives the same results."""
    from goprep import _inputs

    h, w = size
    arr = np.random.default_rng(h * 10007 + w).integers(0, 256, (h, w, 3), np.uint8)
    pil = Image.fromarray(arr, "RGB")
    if not hasattr(pil, "__arrow_c_array__"):
        pytest.skip("this Pillow has no Arrow export: RGB images are copied (np.asarray)")
    view = _inputs._pil_arrow_view(pil)
    assert view is not None and view.shape == (h, w, 4)
    old = goprep.get_num_threads()
    try:
        for t in (1, 3):
            goprep.set_num_threads(t)
            got = _inputs.pil_as_hwc(pil)
            assert got.shape == (h, w, 3) and got.flags.c_contiguous
            assert_array_identical(got, np.asarray(pil))
    finally:
        goprep.set_num_threads(old)
    f = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (20, 30)), mean=0.5, std=0.5))
    assert_array_identical(f(pil), f(arr))


def test_pil_image_in_several_blocks_is_copied():
    """An image Pillow stores in more than one memory block has no Arrow export: it is copied, with the
    same results."""
    from PIL import Image as PILImage

    from goprep import _inputs

    old = PILImage.core.get_block_size()
    PILImage.core.set_block_size(4096)
    try:
        pil = Image.fromarray(np.ascontiguousarray(PHOTOS["chelsea_rgba"]), "RGBA").copy()  # allocated in blocks
    finally:
        PILImage.core.set_block_size(old)
    assert _inputs._pil_arrow_view(pil) is None
    assert_array_identical(goprep.resize(pil, (50, 60)), goprep.resize(PHOTOS["chelsea_rgba"], (50, 60)))
    PILImage.core.set_block_size(4096)
    try:
        rgb = Image.fromarray(np.ascontiguousarray(PHOTOS["chelsea"]), "RGB").copy()
    finally:
        PILImage.core.set_block_size(old)
    assert _inputs._pil_arrow_view(rgb) is None  # RGB too: np.asarray packs it
    assert_array_identical(_inputs.pil_as_hwc(rgb), PHOTOS["chelsea"])


@pytest.mark.parametrize("mode", ["I;16", "I", "F", "P", "1", "CMYK", "LA"])
def test_pil_modes_rejected(mode):
    pil = Image.new(mode, (8, 6))
    with pytest.raises(goprep.DTypeError) as ei:
        goprep.resize(pil, (4, 4))
    assert ei.value.argument == "src" and mode in str(ei.value)
    with pytest.raises(goprep.DTypeError) as ei:
        prep(pil)
    assert ei.value.argument == "src"


def test_tensor_errors():
    torch = pytest.importorskip("torch")
    cases = [
        (torch.empty((3, 8, 8), device="meta"), goprep.InvalidArgumentError, "meta"),
        (torch.zeros((3, 8, 8), dtype=torch.int64), goprep.DTypeError, "int64"),
        (torch.zeros((8, 8, 3), dtype=torch.uint8), goprep.ShapeError, "(C, H, W)"),
        (torch.zeros((8, 8), dtype=torch.uint8), goprep.ShapeError, "(C, H, W)"),
        (torch.zeros((3, 8, 8)).to_sparse(), goprep.InvalidArgumentError, "layout"),
    ]
    for t, cls, text in cases:
        for fn in (lambda x: goprep.resize(x, (4, 4)), prep):
            with pytest.raises(cls) as ei:
                fn(t)
            assert ei.value.argument == "src" and text in str(ei.value), (t.shape, str(ei.value))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        prep(rand_u8((8, 8, 3)), out=torch.empty((3, 64, 80), device="meta"))
    assert ei.value.argument == "out"
    # requires_grad tensors are read (detached), never modified
    t = torch.rand((3, 8, 8), requires_grad=True)
    assert goprep.resize(t, (4, 4)).shape == (3, 4, 4)


@pytest.mark.slow
def test_numpy_users_never_import_torch_or_pil():
    code = (
        "import sys, numpy as np, goprep\n"
        "f = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, 32), mean=0.5, std=0.5))\n"
        "f(np.zeros((40, 50, 3), np.uint8)); goprep.letterbox(np.zeros((40, 50, 3), np.uint8), 64)\n"
        "goprep.pad(np.zeros((4, 5, 3), np.uint8), 1); goprep.center_crop(np.zeros((4, 5, 3), np.uint8), 3)\n"
        "bad = [m for m in ('torch', 'PIL', 'torchvision', 'transformers', 'timm') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "import goprep.transforms\n"
        "bad = [m for m in ('torch', 'torchvision', 'transformers', 'timm') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    r = run_python(code, timeout=120)
    assert r.returncode == 0, r.stderr
