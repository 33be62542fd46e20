"""from_hf on the segmentation and matting processors (goprep.transforms._hf_seg): MaskFormer and Mask2Former
(DETR's sizing rounded up to size_divisor, the batch always padded, pixel_mask), OneFormer (the backends'
sizing, pixel_mask and task_inputs) and ViTMatte (the trimap as a 4th channel, padded to a multiple of
size_divisor); each class against the processor itself, both backends, on odd sizes (tall, wide, tiny,
larger than the maximum size), PIL images, arrays and tensors, gray and RGBA inputs where the class
converts them, batches of mixed sizes and its common arguments; every output by its name
(tests/zoo_compare.py's bounds). Their segmentation maps are refused by name."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
# odd sizes (a photo's, tall, wide, tiny, above 1333 on both sides, odd sides), the input kinds, the class
from test_zoo_detect import _IMGS, _SHAPES
from test_zoo_detect import test_detr_family_odd_sizes_and_mixed_batches as _detr_family_checks
from zoo_compare import as_kind, assert_hf_outputs, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(17)
_TRIMAPS = {s: _RNG.choice(np.array([0, 128, 255], np.uint8), s) for s in _SHAPES + [(90, 120)]}

MASK_CLASSES = [f"{m}ImageProcessor{b}" for m in ("MaskFormer", "Mask2Former", "OneFormer") for b in ("", "Pil")]
MATTE_CLASSES = ["VitMatteImageProcessor", "VitMatteImageProcessorPil"]


def _map(kind, m):
    """A 2-D trimap as the input kind ``kind``: a PIL ``L`` image, the array, or an (H, W) tensor."""
    return Image.fromarray(m) if kind == "pil" else torch.from_numpy(m.copy()) if kind == "tensor" else m


def _check(proc, src, what, *extra, **kw):
    assert_hf_outputs(proc, gt.from_hf(proc)(src, *extra, **kw), proc(src, *extra, return_tensors="pt", **kw), what)


# Every class on PIL images; the other input kinds on one class of each pixel code, both backends
_MASK_CASES = [(k, "pil") for k in MASK_CLASSES] + [
    (k, i) for k in ("Mask2FormerImageProcessor", "Mask2FormerImageProcessorPil", "OneFormerImageProcessor",
                     "OneFormerImageProcessorPil") for i in ("numpy", "tensor")]


@pytest.mark.parametrize("kind,input_kind", _MASK_CASES)
def test_mask_classes_odd_sizes_and_mixed_batches(kind, input_kind):
    """The DETR family's checks (each image alone, the whole mixed batch, tiny with large), then an
    (N, C, H, W) tensor as one batch."""
    _detr_family_checks(kind, input_kind)
    if input_kind == "tensor":
        x = as_kind("tensor", _IMGS[(333, 517)])
        _check(hf_processor(kind), torch.stack([x, x.flip(-1)]), (kind, "4-D"))


_MASK_KWARGS = [
    {"size": {"shortest_edge": 300, "longest_edge": 500}},
    {"size": {"max_height": 400, "max_width": 300}},
    {"size": {"height": 200, "width": 250}},
    {"size_divisor": 0},
    {"size_divisor": 7, "size": {"shortest_edge": 100, "longest_edge": 200}},
    {"pad_size": {"height": 1400, "width": 1400}},
    {"do_resize": False},
    {"do_normalize": False, "resample": 3},
    {"do_rescale": False, "image_mean": [10, 20, 30], "image_std": [50, 60, 70]},
    {"resample": 0, "do_reduce_labels": True, "ignore_index": 255, "num_labels": 150},  # labels: maps only
    {"do_pad": False},  # the class pads whatever do_pad says
]


@pytest.mark.parametrize("kind", ["Mask2FormerImageProcessor", "Mask2FormerImageProcessorPil",
                                  "MaskFormerImageProcessor"])
@pytest.mark.parametrize("kwargs", _MASK_KWARGS, ids=lambda kw: "-".join(kw))
def test_maskformer_arguments(kind, kwargs):
    _check_each_and_batch(hf_processor(kind, **kwargs), (kind, kwargs))


def _check_each_and_batch(proc, what):
    """``proc`` on a photo, tall, tiny and odd-sized PIL image, each alone and as one batch; the
    images."""
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, what)
    _check(proc, imgs, what + ("batch",))
    return imgs


_ONEFORMER_KWARGS = [
    {"size": {"shortest_edge": 300}},  # the backends' shorter side alone (MaskFormer's resize refuses it)
    {"size": {"shortest_edge": 300, "longest_edge": 500}},
    {"size": {"max_height": 400, "max_width": 300}},
    {"size": {"height": 200, "width": 250}},
    {"do_resize": False},
    {"resample": 0, "do_normalize": False},
    {"do_pad": False, "ignore_index": 255, "num_text": 134},  # always padded; the others: maps and labels only
]


@pytest.mark.parametrize("kind", ["OneFormerImageProcessor", "OneFormerImageProcessorPil"])
@pytest.mark.parametrize("kwargs", _ONEFORMER_KWARGS, ids=lambda kw: "-".join(kw))
def test_oneformer_arguments_and_task_inputs(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = _check_each_and_batch(proc, (kind, kwargs))
    # task_inputs: one string per entry (not per image), as the class formats them
    _check(proc, imgs[:2], (kind, kwargs, "tasks"), ["semantic", "instance"])
    _check(proc, imgs[0], (kind, kwargs, "one task"), task_inputs=["instance"])


@pytest.mark.parametrize("kind", MASK_CLASSES[:4] + MATTE_CLASSES)
@pytest.mark.parametrize("mode", ["L", "RGBA", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"])
def test_gray_and_rgba(kind, mode):
    """With do_convert_rgb the classes convert gray and RGBA images (OneFormer's default: below); without it
    both the processor and goprep refuse them (the processor fails on the normalisation)."""
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    a = rgba[..., :1].copy() if "gray" in mode or mode == "L" else rgba
    img = Image.fromarray(rgba).convert(mode) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], a)
    extra = (_TRIMAPS[(90, 120)],) if "VitMatte" in kind else ()
    proc = hf_processor(kind, do_convert_rgb=True)
    if "VitMatte" in kind:
        _check_matte(proc, img, extra[0], (kind, mode))
    else:
        _check(proc, img, (kind, mode))
    plain = hf_processor(kind)
    with pytest.raises(Exception):
        plain(img, *extra, return_tensors="pt")
    with pytest.raises(goprep.GoprepError):
        gt.from_hf(plain)(img, *extra)


@pytest.mark.parametrize("kind", ["OneFormerImageProcessor", "OneFormerImageProcessorPil"])
def test_oneformer_converts_gray_and_rgba_by_default(kind):
    proc = hf_processor(kind)  # do_convert_rgb is on by default
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    imgs = [Image.fromarray(rgba[..., 0]), Image.fromarray(rgba, "RGBA"), Image.fromarray(rgba, "RGBA").convert("LA"),
            Image.fromarray(rgba[..., :3]).quantize(16), rgba, rgba[..., :1].copy(), as_kind("tensor", rgba)]
    for img in imgs:
        _check(proc, img, (kind, getattr(img, "mode", getattr(img, "shape", None))))
    _check(proc, [imgs[0], as_kind("pil", _IMGS[(333, 517)])], (kind, "mixed modes"))


def _check_matte(proc, src, trimaps, what):
    """ViTMatte's pixel_values: the image channels within the bound, the trimap channel equal (the same
    float arithmetic as the class's backend)."""
    got, want = gt.from_hf(proc)(src, trimaps), proc(src, trimaps, return_tensors="pt")
    assert_hf_outputs(proc, got, want, what)
    assert torch.equal(got["pixel_values"][:, 3], want["pixel_values"][:, 3]), what


@pytest.mark.parametrize("kind", MATTE_CLASSES)
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
def test_vitmatte_odd_sizes(kind, input_kind):
    """Each image with its trimap, padded to a multiple of 32 (a tiny one to 32 x 32)."""
    proc = hf_processor(kind)
    for s in _SHAPES:
        _check_matte(proc, as_kind(input_kind, _IMGS[s]), _map(input_kind, _TRIMAPS[s]), (kind, input_kind, s))
    # a batch whose images pad to one size: 470 x 630 and 480 x 640 both to 480 x 640
    a, b = _IMGS[(480, 640)], _IMGS[(480, 640)][5:475, 3:633].copy()
    ta, tb = _TRIMAPS[(480, 640)], _TRIMAPS[(480, 640)][5:475, 3:633].copy()
    _check_matte(proc, [as_kind(input_kind, a), as_kind(input_kind, b)], [_map(input_kind, ta), _map(input_kind, tb)],
                 (kind, input_kind, "batch"))
    if input_kind == "tensor":  # an (N, C, H, W) tensor with an (N, H, W) one of trimaps
        _check_matte(proc, torch.stack([as_kind("tensor", a)] * 2), torch.stack([_map("tensor", ta)] * 2), (kind, "4-D"))


@pytest.mark.parametrize("kind", MATTE_CLASSES)
@pytest.mark.parametrize("kwargs", [{"do_pad": False}, {"size_divisor": 16}, {"size_divisibility": 64},
                                    {"do_rescale": False}, {"do_normalize": False},
                                    {"rescale_factor": 1 / 127.5, "image_mean": [0.1, 0.2, 0.3]},
                                    {"do_resize": True, "size": {"height": 64, "width": 64}, "resample": 2}],
                         # (its _preprocess never resizes)
                         ids=lambda kw: "-".join(kw))
def test_vitmatte_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    for s in [(480, 640), (333, 517), (7, 9)]:
        _check_matte(proc, as_kind("pil", _IMGS[s]), _map("pil", _TRIMAPS[s]), (kind, kwargs, s))


@pytest.mark.parametrize("kind", MATTE_CLASSES)
def test_vitmatte_refusals(kind):
    conv = gt.from_hf(hf_processor(kind))
    a, t = as_kind("pil", _IMGS[(333, 517)]), _TRIMAPS[(333, 517)]
    for bad, what in [(None, "trimap for each image"), (t[:100], "of one size"), (t.astype(np.float32) / 255, "uint8"),
                      (np.stack([t] * 3, -1), "2-D"), (Image.fromarray(t).convert("1"), "mode"),
                      ([t], "PIL image, an array")]:
        with pytest.raises(goprep.PipelineError, match=what) as ei:
            conv(a, bad)
        assert ei.value.argument == "trimaps", ei.value
    with pytest.raises(goprep.PipelineError, match="2 trimaps for 1"):
        conv([a], [t, t])
    # images padded to different sizes: the processor cannot stack them either
    b, tb = as_kind("pil", _IMGS[(480, 640)]), _TRIMAPS[(480, 640)]
    with pytest.raises(ValueError):
        hf_processor(kind)([a, b], [t, tb], return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="several sizes"):
        conv([a, b], [t, tb])
    with pytest.raises(goprep.PipelineError, match="out"):
        conv(a, t, out=torch.empty(1))
    for kwargs, key in [({"do_rescale": False, "do_normalize": False}, "do_rescale"),  # it returns uint8 then
                        ({"do_resize": True, "size": {"height": 64, "width": 64}}, "do_resize"),  # no resample: fails
                        ({"size_divisor": None}, "size_divisor")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, **kwargs))
        assert ei.value.argument == key and kind in str(ei.value), ei.value
    with pytest.raises(ValueError, match="resample"):
        hf_processor(kind, do_resize=True, size={"height": 64, "width": 64})(a, t, return_tensors="pt")


def test_mask_class_refusals():
    # MaskFormer's resize needs shortest and longest edge, max height and width, or height and width
    for kind in ("Mask2FormerImageProcessor", "MaskFormerImageProcessorPil"):
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, size={"shortest_edge": 300}))
        assert ei.value.argument == "size" and kind in str(ei.value), ei.value
        with pytest.raises(ValueError):
            hf_processor(kind, size={"shortest_edge": 300})(as_kind("pil", _IMGS[(7, 9)]), return_tensors="pt")
        with pytest.raises(goprep.PipelineError) as ei:  # the class computes size_divisor > 0: None fails there
            gt.from_hf(hf_processor(kind, size_divisor=None))
        assert ei.value.argument == "size_divisor", ei.value
    conv = gt.from_hf(hf_processor("Mask2FormerImageProcessor", pad_size={"height": 100, "width": 100}))
    with pytest.raises(goprep.PipelineError, match="pad_size"):  # transformers: "Padding dimensions are negative"
        conv(as_kind("pil", _IMGS[(480, 640)]))
    conv = gt.from_hf(hf_processor("OneFormerImageProcessor"))
    for bad in ("panoptic", [1], ("semantic", None)):
        with pytest.raises(goprep.PipelineError) as ei:
            conv(as_kind("pil", _IMGS[(7, 9)]), bad)
        assert ei.value.argument == "task_inputs", ei.value
    # a key the classes do not read is refused by name, as for every class
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf({"image_processor_type": "Mask2FormerImageProcessor", "crop_pct": 0.9})
    assert ei.value.argument == "crop_pct"


def test_segmentation_maps_are_not_inputs():
    """goprep's pipelines take images only: a segmentation map (mask_labels, class_labels) is no argument."""
    conv = gt.from_hf(hf_processor("Mask2FormerImageProcessor"))
    with pytest.raises(TypeError):
        conv(as_kind("pil", _IMGS[(7, 9)]), segmentation_maps=[_TRIMAPS[(7, 9)]])


@pytest.mark.parametrize("kind", ["Mask2FormerImageProcessor", "OneFormerImageProcessor", "VitMatteImageProcessor"])
def test_config_dict_and_hub_style_keys(kind):
    """The config dict converts to what the object computes; a hub-style dict with the old ``max_size``
    and ``reduce_labels`` keys converts to what the class built from it computes."""
    proc = hf_processor(kind)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (480, 640)]]
    extra = ([_TRIMAPS[(480, 640)]] * 2,) if "VitMatte" in kind else ()
    got, got_d = gt.from_hf(proc)(imgs, *extra), gt.from_hf(proc.to_dict())(imgs, *extra)
    assert set(got) == set(got_d) and all(got[k] == got_d[k] if isinstance(got[k], list)
                                          else torch.equal(got[k], got_d[k]) for k in got)
    if kind.startswith("Mask2Former"):
        cfg = {"image_processor_type": kind, "size": 384, "max_size": 640, "size_divisor": 32, "ignore_index": 255,
               "reduce_labels": False, "num_labels": 150, "do_reduce_labels": False}
        hub = transformers.Mask2FormerImageProcessor.from_dict(cfg)
        assert hub.size["longest_edge"] == 640
        imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (60, 1900)]]
        assert_hf_outputs(hub, gt.from_hf(cfg)(imgs), hub(imgs, return_tensors="pt"), "hub config")


@pytest.mark.parametrize("kind", ["Mask2FormerImageProcessorPil", "OneFormerImageProcessor", "VitMatteImageProcessor"])
def test_seg_pipelines_pickle(kind):
    import pickle

    conv = gt.from_hf(hf_processor(kind))
    imgs = [as_kind("pil", _IMGS[(480, 640)]), as_kind("pil", _IMGS[(480, 640)][:470, :630].copy() if "VitMatte" in kind
                                            else _IMGS[(333, 517)])]
    extra = ([np.zeros((480, 640), np.uint8), np.full((470, 630), 128, np.uint8)],) if "VitMatte" in kind else ()
    before = conv(imgs, *extra)
    again = pickle.loads(pickle.dumps(conv))(imgs, *extra)
    assert set(before) == set(again) and all(before[k] == again[k] if isinstance(before[k], list)
                                             else torch.equal(before[k], again[k]) for k in before)
