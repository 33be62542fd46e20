"""from_hf on the processors whose outputs go beyond one resized image (goprep.transforms._hf_layout,
_hf_patches, _hf_donut): DETR and its family, SAM, Qwen2-VL's patch rows, and Donut's two resizes, each
class against the processor itself on odd sizes (tall, wide, tiny, larger than the maximum size), gray
and RGBA inputs where the class converts them, batches of mixed sizes, and its common arguments; every
output by its name (tests/zoo_compare.py's bounds)."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from zoo_compare import as_kind, assert_hf_outputs, hf_pixel_bound_ok, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(11)
# (h, w): a photo's shape, tall, wide, tiny, larger than DETR's 1333 on both sides, odd sides
_SHAPES = [(480, 640), (1500, 300), (60, 1900), (7, 9), (1400, 1700), (333, 517)]
_IMGS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}

DETR_CLASSES = [f"{m}ImageProcessor{b}" for m in ("Detr", "DeformableDetr", "ConditionalDetr", "GroundingDino",
                                                    "RTDetr") for b in ("", "Pil")]


def _check(proc, src, what):
    assert_hf_outputs(proc, gt.from_hf(proc)(src), proc(src, return_tensors="pt"), what)


# Every class on PIL images; the other input kinds on DETR's two (the family's pixel code is one).
_DETR_CASES = [(k, "pil") for k in DETR_CLASSES] + [(k, i) for k in DETR_CLASSES[:2] for i in ("numpy", "tensor")]


@pytest.mark.parametrize("kind,input_kind", _DETR_CASES)
def test_detr_family_odd_sizes_and_mixed_batches(kind, input_kind):
    proc = hf_processor(kind)
    imgs = [as_kind(input_kind, a) for a in _IMGS.values()]
    for shape, x in zip(_SHAPES, imgs):  # one image: (1, 3, H, W), its mask all ones
        _check(proc, x, (kind, input_kind, shape))
    _check(proc, imgs, (kind, input_kind, "all"))  # one padded batch, one mask
    _check(proc, imgs[3:5], (kind, input_kind, "tiny + large"))


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "DetrImageProcessorPil"])
@pytest.mark.parametrize("kwargs", [
    {"size": {"shortest_edge": 300, "longest_edge": 500}},
    {"size": {"max_height": 400, "max_width": 300}},
    {"size": {"height": 200, "width": 250}},
    {"do_pad": False, "size": {"height": 128, "width": 96}},
    {"pad_size": {"height": 1400, "width": 1400}},
    {"do_normalize": False, "resample": 3},
    {"do_rescale": False, "image_mean": [10, 20, 30], "image_std": [50, 60, 70]},
], ids=lambda kw: "-".join(kw))
def test_detr_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    _check(proc, imgs, (kind, kwargs, "batch"))


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "DetrImageProcessorPil"])
def test_detr_batched_tensor_and_config_dict(kind):
    """A (N, C, H, W) uint8 tensor is one batch; the config dict gives the same pipeline as the object."""
    proc = hf_processor(kind)
    batch = torch.stack([as_kind("tensor", _IMGS[(480, 640)])] * 2)
    _check(proc, batch, kind)
    if kind.endswith("Pil"):  # to_dict() names the torchvision class (transformers' choice)
        return
    a = as_kind("pil", _IMGS[(1500, 300)])
    pair = [a, a.transpose(Image.Transpose.ROTATE_90)]  # 1500 x 300 and 300 x 1500: padded to a square
    got, got_d = gt.from_hf(proc)(pair), gt.from_hf(proc.to_dict())(pair)
    assert set(got) == set(got_d) == {"pixel_values", "pixel_mask"}
    assert all(torch.equal(got[k], got_d[k]) for k in got)
    h, w = got["pixel_values"].shape[-2:]
    assert h == w and not bool(got["pixel_mask"].all()), got["pixel_values"].shape


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "DetrImageProcessorPil"])
@pytest.mark.parametrize("mode", ["L", "RGBA", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"])
def test_detr_gray_and_rgba(kind, mode):
    """With do_convert_rgb the class converts gray and RGBA images (as the generic path does); without it
    both the processor and goprep refuse them (the processor fails on the normalisation)."""
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    a = rgba[..., :1].copy() if "gray" in mode or mode == "L" else rgba
    img = Image.fromarray(rgba).convert(mode) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], a)
    proc = hf_processor(kind, do_convert_rgb=True)
    _check(proc, img, (kind, mode))
    _check(proc, [img, as_kind("pil", _IMGS[(333, 517)]).convert("RGB") if mode in ("L", "RGBA")
                  else as_kind(mode.split("-")[1], _IMGS[(333, 517)])], (kind, mode, "batch"))
    plain = hf_processor(kind)
    with pytest.raises(Exception):
        plain(img, return_tensors="pt")
    with pytest.raises(goprep.GoprepError):
        gt.from_hf(plain)(img)


def test_detr_refusals():
    for src, key in [(hf_processor("DetrImageProcessor", size={"shortest_edge": 800}), "size"),  # DETR's resize: ValueError
                     ({"image_processor_type": "DetrImageProcessor", "pad_size": {"shortest_edge": 10}}, "pad_size"),
                     ({"image_processor_type": "DetrImageProcessor", "pad_size": {"height": 0, "width": 5}},
                      "pad_size['height']")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(src)
        assert ei.value.argument == key and "DetrImageProcessor" in str(ei.value), ei.value
    conv = gt.from_hf(hf_processor("DetrImageProcessor", pad_size={"height": 100, "width": 100}))
    with pytest.raises(goprep.PipelineError, match="pad_size"):  # transformers: "Padding dimensions are negative"
        conv(as_kind("pil", _IMGS[(480, 640)]))
    with pytest.raises(goprep.PipelineError, match="out"):
        gt.from_hf(hf_processor("DetrImageProcessor"))(as_kind("pil", _IMGS[(7, 9)]), out=torch.empty(1))
    for bad, what in [([], "empty list"), (np.zeros((0, 5, 3), np.uint8), "0x5"),
                      (np.zeros((2, 4, 4, 3), np.uint8), "dimensions")]:
        for kind in ("DetrImageProcessor", "Qwen2VLImageProcessor", "SamImageProcessorPil"):
            with pytest.raises(goprep.PipelineError, match=what):
                gt.from_hf(hf_processor(kind))(bad)
    # encoded data is decoded by the pipeline (tests/test_zoo_encoded.py): a bad item raises naming it
    for bad, what in [(b"\xff\xd8\xff", "truncated"), ("x.jpg", "x.jpg")]:
        for kind in ("DetrImageProcessor", "Qwen2VLImageProcessor", "SamImageProcessorPil"):
            with pytest.raises(goprep.DecodeError, match=what) as ei:
                gt.from_hf(hf_processor(kind))(bad)
            assert ei.value.argument == "src"
    thin = as_kind("pil", np.zeros((1, 5000, 3), np.uint8))  # its shorter side rounds to 0 pixels
    with pytest.raises(ValueError):  # transformers: "Size must contain 'height' and 'width' keys..."
        hf_processor("DetrImageProcessor")(thin, return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="0x1333"):
        gt.from_hf(hf_processor("DetrImageProcessor"))(thin)


_SAM_KWARGS = [
    {},
    {"pad_size": None},  # the batch's largest size
    {"size": {"longest_edge": 512}, "pad_size": {"height": 600, "width": 520}},
    {"do_center_crop": True, "crop_size": {"height": 500, "width": 700}},  # reshaped sizes are before the crop
]
# Each argument set on PIL images, the defaults on the other input kinds too
_SAM_CASES = [(k, kw, "pil") for k in ("SamImageProcessor", "SamImageProcessorPil") for kw in _SAM_KWARGS] + [
    (k, {}, i) for k in ("SamImageProcessor", "SamImageProcessorPil") for i in ("numpy", "tensor")]


@pytest.mark.parametrize("kind,kwargs,input_kind", _SAM_CASES,
                         ids=[f"{k}-{'-'.join(kw) or 'defaults'}-{i}" for k, kw, i in _SAM_CASES])
def test_sam_sizes_and_batches(kind, kwargs, input_kind):
    """original_sizes, reshaped_input_sizes and the padded pixel_values (1024 x 1024 by default) of
    odd sizes and a mixed batch."""
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (60, 1900), (7, 9)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs, input_kind))
    _check(proc, imgs, (kind, kwargs, input_kind, "batch"))


@pytest.mark.parametrize("kind", ["SamImageProcessor", "SamImageProcessorPil"])
def test_sam_converts_gray_and_rgba(kind):
    """SAM's do_convert_rgb is on by default: gray and RGBA images are composited and converted."""
    proc = hf_processor(kind)
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    for img in [Image.fromarray(rgba[..., 0]), Image.fromarray(rgba, "RGBA"), rgba, rgba[..., :1].copy()]:
        _check(proc, img, (kind, getattr(img, "mode", getattr(img, "shape", None))))
    with pytest.raises(goprep.PipelineError, match="pad_size"):
        gt.from_hf(hf_processor(kind, pad_size={"height": 100, "width": 100}))(as_kind("pil", _IMGS[(480, 640)]))
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind, size={"shortest_edge": 100}))
    assert ei.value.argument == "size" and kind in str(ei.value)


# Each argument set on PIL images, the defaults on the other input kinds too
_QWEN_KWARGS = [{}, {"min_pixels": 128 * 28 * 28, "max_pixels": 256 * 28 * 28},
                {"size": {"shortest_edge": 3136, "longest_edge": 200000}, "resample": 2},
                {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 1}]
_QWEN_CASES = [(k, kw, "pil") for k in ("Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil") for kw in _QWEN_KWARGS] + [
    (k, {}, i) for k in ("Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil") for i in ("numpy", "tensor")]


@pytest.mark.parametrize("kind,kwargs,input_kind", _QWEN_CASES,
                         ids=[f"{k}-{'-'.join(kw) or 'defaults'}-{i}" for k, kw, i in _QWEN_CASES])
def test_qwen2vl_patch_rows(kind, kwargs, input_kind):
    """pixel_values (patches, C * T * P * P) and image_grid_thw of odd sizes (a tiny image grows to
    min_pixels, a large one shrinks to max_pixels) and of a mixed batch with repeated sizes."""
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (1400, 1700)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs, input_kind))
    _check(proc, [imgs[0], imgs[1], imgs[0], imgs[2]], (kind, kwargs, input_kind, "batch"))


@pytest.mark.parametrize("kind", ["Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil"])
def test_qwen2vl_gray_rgba_and_refusals(kind):
    proc = hf_processor(kind)  # do_convert_rgb is on by default
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    for img in [Image.fromarray(rgba[..., 0]), Image.fromarray(rgba, "RGBA"), rgba, rgba[..., :1].copy()]:
        _check(proc, img, (kind, getattr(img, "mode", getattr(img, "shape", None))))
    with pytest.raises(goprep.PipelineError, match="aspect ratio"):  # smart_resize's ValueError
        gt.from_hf(proc)(as_kind("pil", np.zeros((2, 500, 3), np.uint8)))
    with pytest.raises(goprep.PipelineError, match="multiple"):  # without do_resize, the reshape fails there
        gt.from_hf(hf_processor(kind, do_resize=False))(as_kind("pil", _IMGS[(333, 517)]))
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind, size={"height": 224, "width": 224}))
    assert ei.value.argument == "size" and kind in str(ei.value)


def test_qwen2vl_hub_style_config_dict():
    """A preprocessor_config.json as the Hub ships Qwen2-VL's (min_pixels / max_pixels at the top level,
    which the class moves into size) converts to what the class built from it computes."""
    cfg = {"min_pixels": 3136, "max_pixels": 100352, "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2,
           "image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711],
           "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2VLProcessor"}
    transformers.logging.set_verbosity_error()
    proc = transformers.Qwen2VLImageProcessor.from_dict(cfg)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300)]]
    assert_hf_outputs(proc, gt.from_hf(cfg)(imgs), proc(imgs, return_tensors="pt"), "hub config")


_DONUT_KWARGS = [{"size": {"height": 400, "width": 300}}, {"size": {"height": 300, "width": 400}, "resample": 0},
                 {"do_resize": False, "size": {"height": 500, "width": 500}},
                 {"do_center_crop": True, "crop_size": {"height": 200, "width": 300},
                  "size": {"height": 300, "width": 300}}]
_DONUT_CASES = [(k, kw, "pil") for k in ("DonutImageProcessor", "DonutImageProcessorPil") for kw in _DONUT_KWARGS] + [
    (k, _DONUT_KWARGS[0], i) for k in ("DonutImageProcessor", "DonutImageProcessorPil") for i in ("numpy", "tensor")]


@pytest.mark.parametrize("kind,kwargs,input_kind", _DONUT_CASES,
                         ids=[f"{k}-{'-'.join(kw)}-{i}" for k, kw, i in _DONUT_CASES])
def test_donut_resize_thumbnail_pad(kind, kwargs, input_kind):
    """The resize of the shorter side, then the thumbnail (a second resize, uint8 between them), the
    centred pad and crop, on odd sizes and a mixed batch (one size out). resample 0: the torchvision
    class resizes with NEAREST_EXACT, the PIL class's thumbnail falls back to bicubic."""
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (60, 1900), (7, 9), (333, 517)]]
    for x in imgs:
        want, got = proc(x, return_tensors="pt")["pixel_values"], gt.from_hf(proc)(x)
        assert got.shape == want.shape[1:] and hf_pixel_bound_ok(proc, got, want[0], 0), (kind, kwargs, input_kind)
    want, got = proc(imgs, return_tensors="pt")["pixel_values"], gt.from_hf(proc)(imgs)
    assert got.shape == want.shape and hf_pixel_bound_ok(proc, got, want, 1), (kind, kwargs, input_kind, "batch")


def test_donut_defaults_on_a_photo_and_refusals():
    a = _IMGS[(480, 640)]
    for kind in ("DonutImageProcessor", "DonutImageProcessorPil"):  # 2560 x 1920: both resizes, a large pad
        proc = hf_processor(kind)
        want, got = proc(as_kind("pil", a), return_tensors="pt")["pixel_values"], gt.from_hf(proc)(as_kind("pil", a))
        assert got.shape == want.shape[1:] == (3, 2560, 1920) and hf_pixel_bound_ok(proc, got, want[0], 0), kind
        for kwargs, key in [({"do_align_long_axis": True}, "do_align_long_axis"),
                            ({"do_thumbnail": False}, "do_pad")]:
            with pytest.raises(goprep.PipelineError) as ei:
                gt.from_hf(hf_processor(kind, **kwargs))
            assert ei.value.argument == key and kind in str(ei.value), ei.value


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "SamImageProcessorPil", "Qwen2VLImageProcessor",
                                  "DonutImageProcessor"])
def test_layout_pipelines_pickle(kind):
    """The converted pipelines pickle (their chain and options; compiled plans and padded variants are
    rebuilt on the first call), and compute the same after the round trip."""
    import pickle

    proc = hf_processor(kind, **({"size": {"height": 300, "width": 200}} if kind.startswith("Donut") else {}))
    conv = gt.from_hf(proc)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (333, 517)]]
    before = conv(imgs)
    again = pickle.loads(pickle.dumps(conv))(imgs)
    if isinstance(before, dict):
        assert set(before) == set(again) and all(torch.equal(before[k], again[k]) for k in before)
    else:
        assert torch.equal(before, again)
