"""from_hf on the vision-language processors with layouts of their own (goprep.transforms._hf_pixtral,
_hf_naflex, _hf_mllama, _hf_nougat): Pixtral, SigLIP2 (NaFlex), Mllama and Nougat, each class (torchvision
and PIL backend) against the processor itself on odd sizes (tall, wide, tiny, larger than the maximum
size), gray and RGBA inputs where the class converts them, batches of mixed sizes, PIL images, arrays
and tensors, and its common arguments; every output by its name, shape and dtype (tests/zoo_compare.py's
bounds). OWLv2 and ZoeDepth: refused with the measured reason."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from test_zoo_detect import _check  # the comparison of every output
from zoo_compare import as_kind, assert_config_dict_and_pickle, hf_processor
from zoo_compare import hf_pixel_bound_ok

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(13)
# (h, w): a photo's shape, tall, wide, tiny, larger than the maximum sizes, odd sides
_SHAPES = [(480, 640), (1500, 300), (60, 1900), (7, 9), (1400, 1700), (333, 517)]
_IMGS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}

FAMILIES = ("Pixtral", "Siglip2", "Mllama")
CLASSES = [f"{f}ImageProcessor{b}" for f in FAMILIES for b in ("", "Pil")]

_OUTPUTS = {"Pixtral": {"pixel_values": torch.float32, "image_sizes": torch.int64},
            "Siglip2": {"pixel_values": torch.float32, "pixel_attention_mask": torch.int32,
                        "spatial_shapes": torch.int64},
            "Mllama": {"pixel_values": torch.float32, "aspect_ratio_ids": torch.int64,
                       "aspect_ratio_mask": torch.int64, "num_tiles": list}}


@pytest.mark.parametrize("kind", CLASSES)
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
def test_odd_sizes_and_mixed_batches(kind, input_kind):
    proc = hf_processor(kind)
    imgs = [as_kind(input_kind, a) for a in _IMGS.values()]
    for shape, x in zip(_SHAPES, imgs):
        got = gt.from_hf(proc)(x)
        family = next(f for f in FAMILIES if kind.startswith(f))
        assert {k: (list if isinstance(v, list) else v.dtype) for k, v in got.items()} == _OUTPUTS[family]
        _check(proc, x, (kind, input_kind, shape))
    _check(proc, imgs, (kind, input_kind, "all"))  # one batch (Mllama: one sample of six images)
    _check(proc, imgs[3:5], (kind, input_kind, "tiny + large"))


@pytest.mark.parametrize("kind", ["PixtralImageProcessor", "PixtralImageProcessorPil"])
@pytest.mark.parametrize("kwargs", [
    {"size": {"longest_edge": 512}},
    {"size": {"height": 300, "width": 700}, "patch_size": {"height": 14, "width": 14}},
    {"patch_size": 28},
    {"resample": 2, "do_normalize": False},
    {"do_rescale": False, "image_mean": [10, 20, 30], "image_std": [50, 60, 70]},
    {"do_resize": False},
], ids=lambda kw: "-".join(kw))
def test_pixtral_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    _check(proc, imgs, (kind, kwargs, "batch"))


@pytest.mark.parametrize("kind", ["PixtralImageProcessor", "PixtralImageProcessorPil"])
def test_pixtral_without_pad(kind):
    """do_pad=False: images of one resized size stack; of several, both the processor and goprep fail."""
    proc = hf_processor(kind, do_pad=False)
    same = [as_kind("pil", _IMGS[(480, 640)]), as_kind("pil", _IMGS[(480, 640)][::-1].copy())]
    _check(proc, same, kind)
    mixed = [as_kind("pil", _IMGS[(480, 640)]), as_kind("pil", _IMGS[(7, 9)])]
    with pytest.raises(Exception):
        proc(mixed, return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="do_pad"):
        gt.from_hf(proc)(mixed)


@pytest.mark.parametrize("kind", ["Siglip2ImageProcessor", "Siglip2ImageProcessorPil"])
@pytest.mark.parametrize("kwargs", [
    {"max_num_patches": 64},
    {"max_num_patches": 1024},
    {"max_num_patches": 1},
    {"patch_size": 14, "max_num_patches": 729},
    {"resample": 3, "do_normalize": False},
    {"image_mean": [0.1, 0.2, 0.3], "image_std": [0.3, 0.2, 0.1], "rescale_factor": 1 / 127.5},
], ids=lambda kw: "-".join(kw))
def test_siglip2_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (60, 1900), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    _check(proc, imgs, (kind, kwargs, "batch"))


@pytest.mark.parametrize("kind", ["MllamaImageProcessor", "MllamaImageProcessorPil"])
@pytest.mark.parametrize("kwargs", [
    {"max_image_tiles": 1},
    {"max_image_tiles": 2},
    {"max_image_tiles": 6, "size": {"height": 112, "width": 112}},
    {"size": {"height": 560, "width": 560}, "resample": 3},
    {"do_normalize": False},
    {"do_rescale": False, "image_mean": [10, 20, 30], "image_std": [50, 60, 70]},
], ids=lambda kw: "-".join(kw))
def test_mllama_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    _check(proc, imgs, (kind, kwargs, "one sample"))


@pytest.mark.parametrize("kind", ["MllamaImageProcessor", "MllamaImageProcessorPil"])
def test_mllama_samples(kind):
    """Samples of different image counts (a list of lists): missing images are zero tiles, id 0, and the
    mask's first tile 1; (N, C, H, W) tensors are one sample each."""
    proc = hf_processor(kind)
    a, b, c = (as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (60, 1900)])
    _check(proc, [[a], [b, c, a]], kind)
    _check(proc, [[c, b], [a]], kind)
    t = torch.stack([as_kind("tensor", _IMGS[(333, 517)])] * 2)
    _check(proc, t, kind)
    _check(proc, [t, t[:1]], kind)
    got = gt.from_hf(proc)([[a], [b, c, a]])
    assert got["num_tiles"] == [[got["aspect_ratio_mask"][0, 0].sum().item()],
                                [int(v) for v in got["aspect_ratio_mask"][1].sum(-1)]]
    assert got["aspect_ratio_ids"][0, 1:].eq(0).all() and got["pixel_values"][0, 1:].eq(0).all()


@pytest.mark.parametrize("kind", CLASSES)
@pytest.mark.parametrize("mode", ["L", "RGBA", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"])
def test_gray_and_rgba(kind, mode):
    """Pixtral and Mllama convert gray and RGBA images to RGB (do_convert_rgb, on by default), SigLIP2
    with do_convert_rgb=True; without it both the processor and goprep refuse an RGBA image."""
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    a = rgba[..., :1].copy() if "gray" in mode or mode == "L" else rgba
    img = Image.fromarray(rgba).convert(mode) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], a)
    other = _IMGS[(333, 517)]
    proc = hf_processor(kind, do_convert_rgb=True)
    _check(proc, img, (kind, mode))
    _check(proc, [img, as_kind("pil", other) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], other)],
           (kind, mode, "batch"))
    if "rgba" in mode.lower():
        plain = hf_processor(kind, do_convert_rgb=False)
        with pytest.raises(Exception):
            plain(img, return_tensors="pt")
        with pytest.raises(goprep.GoprepError):
            gt.from_hf(plain)(img)


@pytest.mark.parametrize("kind", ["PixtralImageProcessor", "Siglip2ImageProcessor", "MllamaImageProcessor"])
def test_config_dict_and_pickle(kind):
    """The config dict gives the same pipeline as the object; the pipeline pickles."""
    assert_config_dict_and_pickle(hf_processor(kind), [as_kind("pil", _IMGS[s]) for s in [(1500, 300), (333, 517)]])


def test_refusals():
    """Settings the classes fail on, or that goprep does not reproduce, refused by name at conversion."""
    for kind, src, key in [
        ("PixtralImageProcessor", hf_processor("PixtralImageProcessor", do_center_crop=True,
                                        crop_size={"height": 64, "width": 64}), "do_center_crop"),
        ("PixtralImageProcessor", {"image_processor_type": "PixtralImageProcessor", "size": {"shortest_edge": 9}},
         "size"),
        ("PixtralImageProcessor", {"image_processor_type": "PixtralImageProcessor", "patch_size": {"height": 4}},
         "patch_size"),
        ("Siglip2ImageProcessor", {"image_processor_type": "Siglip2ImageProcessor", "max_num_patches": 0},
         "max_num_patches"),
        ("Siglip2ImageProcessor", {"image_processor_type": "Siglip2ImageProcessor", "do_pad": True}, "do_pad"),
        ("MllamaImageProcessor", {"image_processor_type": "MllamaImageProcessor", "do_pad": False}, "do_pad"),
        ("MllamaImageProcessor", {"image_processor_type": "MllamaImageProcessor",
                                  "size": {"height": 224, "width": 200}}, "size"),
        ("MllamaImageProcessor", {"image_processor_type": "MllamaImageProcessor", "max_image_tiles": 0},
         "max_image_tiles"),
    ]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(src)
        assert ei.value.argument == key and kind in str(ei.value), ei.value


def test_call_errors():
    """Inputs the processors fail on fail in goprep too, with a clear error (never a different result)."""
    thin = as_kind("pil", np.zeros((3, 5000, 3), np.uint8))  # Pixtral floors the 3 pixels to 0
    proc = hf_processor("PixtralImageProcessor")
    with pytest.raises(Exception):
        proc(thin, return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="0x1024"):
        gt.from_hf(proc)(thin)
    raw = hf_processor("Siglip2ImageProcessor", do_resize=False)  # 333 x 517 is not a multiple of 16
    with pytest.raises(Exception):
        raw(as_kind("pil", _IMGS[(333, 517)]), return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="patch_size"):
        gt.from_hf(raw)(as_kind("pil", _IMGS[(333, 517)]))
    mllama = gt.from_hf(hf_processor("MllamaImageProcessor"))
    for bad in ([], [[]], [as_kind("pil", _IMGS[(7, 9)]), [as_kind("pil", _IMGS[(7, 9)])]]):
        with pytest.raises(goprep.PipelineError):
            mllama(bad)
    with pytest.raises(goprep.PipelineError, match="out"):
        mllama(as_kind("pil", _IMGS[(7, 9)]), out=torch.empty(1))


# --------------------------------------------------------------------------------------------------
# Nougat: crop_margin, then Donut's resize, thumbnail and centred pad


def _page(h, w, seed=0):
    """A white page of h x w with a noisy block inside (crop_margin cuts to it), or flat where it is tiny."""
    rng = np.random.default_rng(seed)
    a = np.full((h, w, 3), 255, np.uint8)
    a[h // 5:h * 3 // 4 + 1, w // 7:w * 5 // 6 + 1] = rng.integers(0, 256, (h * 3 // 4 + 1 - h // 5,
                                                                         w * 5 // 6 + 1 - w // 7, 3), np.uint8)
    return a


_PAGES = [_page(1100, 850), _page(300, 500, 1), _page(9, 7, 2), _page(1500, 1300, 3), _IMGS[(480, 640)],
          _IMGS[(333, 517)], np.full((50, 60, 3), 128, np.uint8)]  # the last one flat: kept uncropped


def _check_pixels(proc, src, what):
    got, want = gt.from_hf(proc)(src), proc(src, return_tensors="pt")["pixel_values"]
    if not isinstance(src, list) and not (torch.is_tensor(src) and src.ndim == 4):
        want = want[0]
    assert isinstance(got, torch.Tensor) and got.dtype == want.dtype == torch.float32, what
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert hf_pixel_bound_ok(proc, got, want, got.ndim - 3), what


@pytest.mark.parametrize("kind", ["NougatImageProcessor", "NougatImageProcessorPil"])
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
def test_nougat_pages_and_batches(kind, input_kind):
    proc = hf_processor(kind)
    imgs = [as_kind(input_kind, a) for a in _PAGES]
    for i, x in enumerate(imgs):
        _check_pixels(proc, x, (kind, input_kind, i))
    _check_pixels(proc, imgs, (kind, input_kind, "batch"))
    if input_kind == "tensor":
        _check_pixels(proc, torch.stack([imgs[1], imgs[1].flip(-1)]), (kind, "(N, C, H, W)"))


@pytest.mark.parametrize("kind", ["NougatImageProcessor", "NougatImageProcessorPil"])
@pytest.mark.parametrize("kwargs", [
    {"do_crop_margin": False},
    {"size": {"height": 300, "width": 200}, "resample": 3},
    {"do_thumbnail": False, "do_pad": False},
    {"do_resize": False},
    {"do_normalize": False},
], ids=lambda kw: "-".join(kw))
def test_nougat_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    for i, a in enumerate(_PAGES[:4]):
        _check_pixels(proc, as_kind("pil", a), (kind, kwargs, i))


@pytest.mark.parametrize("kind", ["NougatImageProcessor", "NougatImageProcessorPil"])
@pytest.mark.parametrize("mode", ["L", "RGBA", "rgba-array", "gray-tensor"])
def test_nougat_gray_and_rgba(kind, mode):
    """With do_convert_rgb, gray and RGBA pages are converted before crop_margin, as the class does."""
    rgba = np.concatenate([_page(200, 150, 4), np.full((200, 150, 1), 200, np.uint8)], axis=-1)
    a = rgba[..., :1].copy() if "gray" in mode or mode == "L" else rgba
    img = Image.fromarray(rgba).convert(mode) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], a)
    _check_pixels(hf_processor(kind, do_convert_rgb=True), img, (kind, mode))


def test_nougat_refusals():
    """do_align_long_axis (a rotation) refused at conversion; the PIL class's thumbnail on an image
    Pillow box-reduces first (reducing_gap=2.0) refused at the call (the torchvision class converts it)."""
    for kind in ("NougatImageProcessor", "NougatImageProcessorPil"):
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, do_align_long_axis=True))
        assert ei.value.argument == "do_align_long_axis" and kind in str(ei.value)
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, do_thumbnail=False))
        assert ei.value.argument == "do_pad" and kind in str(ei.value)
    wide = as_kind("pil", _IMGS[(60, 1900)])  # 672 x 21280 after the resize, a 31x thumbnail
    with pytest.raises(goprep.PipelineError, match="reducing_gap"):
        gt.from_hf(hf_processor("NougatImageProcessorPil"))(wide)
    _check_pixels(hf_processor("NougatImageProcessor"), wide, "torchvision class")


@pytest.mark.parametrize("kind", ["Owlv2ImageProcessor", "Owlv2ImageProcessorPil", "ZoeDepthImageProcessor",
                                  "ZoeDepthImageProcessorPil"])
def test_refused_with_the_measured_reason(kind):
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind))
    assert ei.value.argument == "processor_or_config" and kind in str(ei.value)
    assert ("Gaussian" if kind.startswith("Owlv2") else "align_corners") in str(ei.value)


def test_nougat_margin_box_is_the_class_arithmetic():
    """crop_margin's box, found by a threshold on the 256 gray values, equals the box of the class's
    per-pixel ops (uint8 subtraction, the backend's float division, < 200) on random gray images of any
    range, for both backends' arithmetic (PyTorch float32, NumPy float64)."""
    from goprep.transforms._hf_nougat import margin_box

    rng = np.random.default_rng(21)
    for i in range(600):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        lo, hi = sorted(int(v) for v in rng.integers(0, 256, 2))
        g = rng.integers(lo, hi + 1, (h, w)).astype(np.uint8)
        for torch_ops in (True, False):
            x = torch.from_numpy(g) if torch_ops else g
            mx, mn = x.max(), x.min()
            want = None
            if mx != mn:
                dark = (x - mn) / (mx - mn) * 255 < 200
                r, c = np.nonzero(dark.numpy() if torch_ops else dark)
                want = (int(r.min()), int(c.min()), int(r.max() - r.min() + 1), int(c.max() - c.min() + 1))
            assert margin_box(x, torch_ops) == want, (i, torch_ops, lo, hi)
