"""from_hf on the named issue-40 processors (goprep.transforms._hf_sam2, _hf_llama4, _hf_glm4v, _hf_phi4): SAM2
and SAM3 (the generic resize, original_sizes), Llama 4 (tiles with a global tile, bfloat16 values,
aspect_ratios), GLM-4V and GLM-4.6V (its smart_resize, Qwen2-VL's patch rows) and Phi-4 multimodal (crops
behind a global crop, masks, token counts), each class against the processor itself on odd sizes (tall, wide,
tiny, larger than the maximum), gray and RGBA inputs (converted: do_convert_rgb is on in each), batches of
mixed sizes, encoded inputs and its common arguments, every output by its name (tests/zoo_compare.py's
bounds); what the classes fail on refused by name."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from zoo_compare import as_kind, assert_hf_outputs, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(17)
# (h, w): a photo's shape, tall, wide, tiny, larger than the maximum sizes, odd sides, one tile
_SHAPES = [(480, 640), (1500, 300), (60, 1900), (7, 9), (1400, 1700), (333, 517), (336, 336)]
_IMGS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}

CLASSES = ["Sam2ImageProcessor", "Sam3ImageProcessor", "Llama4ImageProcessor", "Glm4vImageProcessor",
           "Glm4vImageProcessorPil", "Glm46VImageProcessor", "Glm46VImageProcessorPil",
           "Phi4MultimodalImageProcessor"]
_OUTPUTS = {"Sam": {"pixel_values": torch.float32, "original_sizes": torch.int64},
            "Llama4": {"pixel_values": torch.bfloat16, "aspect_ratios": torch.int64},
            "Glm4": {"pixel_values": torch.float32, "image_grid_thw": torch.int64},  # GLM-4V and GLM-4.6V
            "Phi4": {"image_pixel_values": torch.float32, "image_sizes": torch.int64,
                     "image_attention_mask": torch.float32, "num_img_tokens": torch.int64}}


def _check(proc, src, what):
    assert_hf_outputs(proc, gt.from_hf(proc)(src), proc(src, return_tensors="pt"), what)


@pytest.mark.parametrize("kind", CLASSES)
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
def test_odd_sizes_and_mixed_batches(kind, input_kind):
    proc = hf_processor(kind)
    imgs = [as_kind(input_kind, a) for a in _IMGS.values()]
    conv = gt.from_hf(proc)
    for shape, x in zip(_SHAPES, imgs):
        got = conv(x)
        family = next(f for f in _OUTPUTS if kind.startswith(f))
        assert {k: v.dtype for k, v in got.items()} == _OUTPUTS[family], (kind, shape)
        _check(proc, x, (kind, input_kind, shape))
    _check(proc, imgs, (kind, input_kind, "all"))
    _check(proc, imgs[3:5], (kind, input_kind, "tiny + large"))


@pytest.mark.parametrize("kind,kwargs", [
    ("Sam2ImageProcessor", {"do_pad": True}),  # the backend's pad: to the batch's largest image
    ("Sam2ImageProcessor", {"size": {"height": 500, "width": 300}, "do_pad": True,
                            "pad_size": {"height": 520, "width": 333}}),
    ("Sam3ImageProcessor", {"do_center_crop": True, "crop_size": {"height": 800, "width": 600}}),
    ("Sam3ImageProcessor", {"size": {"shortest_edge": 200}, "do_pad": True, "resample": 3}),
    ("Sam3ImageProcessor", {"do_normalize": False}),
    ("Llama4ImageProcessor", {"max_patches": 4}),
    ("Llama4ImageProcessor", {"resize_to_max_canvas": True}),
    ("Llama4ImageProcessor", {"size": {"height": 224, "width": 224}, "resample": 3}),
    ("Llama4ImageProcessor", {"do_normalize": False}),  # rescale alone: float32, as the class
    ("Llama4ImageProcessor", {"do_rescale": False, "do_normalize": False}),  # uint8, as the class
    ("Llama4ImageProcessor", {"image_mean": [0.48, 0.45, 0.4], "image_std": [0.27, 0.26, 0.28]}),
    ("Glm4vImageProcessor", {"size": {"shortest_edge": 3136, "longest_edge": 200000}, "resample": 2}),
    ("Glm4vImageProcessorPil", {"size": {"shortest_edge": 3136, "longest_edge": 200000}}),
    ("Glm4vImageProcessor", {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 1}),
    ("Glm4vImageProcessorPil", {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 1}),
    ("Phi4MultimodalImageProcessor", {"dynamic_hd": 4}),  # past 4 crops: the grid of the closest aspect ratio
    ("Phi4MultimodalImageProcessor", {"size": {"height": 224, "width": 224}, "patch_size": 16, "resample": 2}),
    ("Phi4MultimodalImageProcessor", {"do_normalize": False, "resample": 0}),
], ids=lambda x: x if isinstance(x, str) else "-".join(x) or "defaults")
def test_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    _check(proc, imgs, (kind, kwargs, "batch"))
    tensors = [as_kind("tensor", _IMGS[s]) for s in [(60, 1900), (1400, 1700)]]
    _check(proc, tensors, (kind, kwargs, "tensors"))


def test_llama4_values_are_the_class_bfloat16_values():
    """The bfloat16 rescale and normalisation is the class's, value for value (a float32 normalisation
    rounded to bfloat16 would differ by a step on some values): equal, not only within a level."""
    proc = hf_processor("Llama4ImageProcessor")
    imgs = [as_kind("tensor", _IMGS[s]) for s in [(480, 640), (7, 9), (336, 336)]]
    got, want = gt.from_hf(proc)(imgs), proc(imgs, return_tensors="pt")
    assert torch.equal(got["pixel_values"], want["pixel_values"])
    assert got["pixel_values"].shape[0] == sum(int(r * c) + (r * c > 1) for r, c in want["aspect_ratios"].tolist())


@pytest.mark.parametrize("kind", CLASSES)
@pytest.mark.parametrize("mode", ["L", "RGBA", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"])
def test_gray_and_rgba(kind, mode):
    """do_convert_rgb is on in each class: gray and RGBA images are converted as the class converts them."""
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    a = rgba[..., :1].copy() if "gray" in mode or mode == "L" else rgba
    img = Image.fromarray(rgba).convert(mode) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], a)
    proc = hf_processor(kind)
    _check(proc, img, (kind, mode))
    other = _IMGS[(333, 517)]
    _check(proc, [img, as_kind("pil", other) if mode in ("L", "RGBA") else as_kind(mode.split("-")[1], other)],
           (kind, mode, "batch"))


@pytest.mark.parametrize("kind", ["Sam2ImageProcessor", "Llama4ImageProcessor", "Glm4vImageProcessor",
                                  "Phi4MultimodalImageProcessor"])
def test_config_dict_and_pickle(kind):
    """The config dict gives the same pipeline as the object; the pipeline pickles."""
    import pickle

    proc = hf_processor(kind)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(1500, 300), (333, 517)]]
    got, got_d = gt.from_hf(proc)(imgs), gt.from_hf(proc.to_dict())(imgs)
    again = pickle.loads(pickle.dumps(gt.from_hf(proc)))(imgs)
    assert set(got) == set(got_d) == set(again)
    for k in got:
        assert torch.equal(got[k], got_d[k]) and torch.equal(got[k], again[k]), k


def test_refusals():
    """Settings the classes fail on refused by name at conversion, and calls the classes fail on at the call."""
    for kind, cfg, arg in [
        ("Llama4ImageProcessor", {"do_resize": False}, "do_resize"),
        ("Llama4ImageProcessor", {"size": {"height": 336, "width": 224}}, "size"),
        ("Llama4ImageProcessor", {"do_rescale": False}, "do_normalize"),
        ("Llama4ImageProcessor", {"max_patches": 0}, "max_patches"),
        ("Glm4vImageProcessor", {"size": {"height": 336, "width": 336}}, "size"),
        ("Sam2ImageProcessor", {"do_pad": True, "pad_size": {"height": 100}}, "pad_size"),
    ]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf({"image_processor_type": kind, **cfg})
        assert ei.value.argument == arg and kind in str(ei.value), (kind, cfg, ei.value)
    with pytest.raises(Exception):  # the class cannot stack what it does not resize
        hf_processor("Llama4ImageProcessor", do_resize=False)(as_kind("pil", _IMGS[(7, 9)]), return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="pad_size"):  # an image larger than pad_size
        gt.from_hf(hf_processor("Sam2ImageProcessor", do_pad=True, pad_size={"height": 100, "width": 100}))(
            as_kind("pil", _IMGS[(480, 640)]))
    thin = _RNG.integers(0, 256, (3, 900, 3), dtype=np.uint8)  # aspect above 200
    with pytest.raises(Exception):
        hf_processor("Glm4vImageProcessor")(as_kind("pil", thin), return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="aspect ratio"):
        gt.from_hf(hf_processor("Glm4vImageProcessor"))(as_kind("pil", thin))
    with pytest.raises(goprep.PipelineError, match="out"):
        gt.from_hf(hf_processor("Llama4ImageProcessor"))(as_kind("pil", _IMGS[(7, 9)]), out=torch.empty(1))
    # GLM-4V without do_resize: sides that are multiples of patch_size * merge_size as the class, others fail
    glm = hf_processor("Glm4vImageProcessor", do_resize=False)
    a = _IMGS[(480, 640)][:280, :336]
    _check(glm, a, "GLM-4V without do_resize")
    with pytest.raises(RuntimeError):
        glm(a[:270], return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="multiple of patch_size"):
        gt.from_hf(glm)(a[:270])


def test_phi4_layout_and_refusals():
    """Phi-4 multimodal: a grid past dynamic_hd crops, the masks and token counts of a batch whose images pad
    differently (zero crops and ones masks up to the batch's most); a size that is not a square and an image
    the class's layout refuses (a resized side below 10) refused by name."""
    kind = "Phi4MultimodalImageProcessor"
    proc = hf_processor(kind, dynamic_hd=6)
    big = _RNG.integers(0, 256, (1800, 2000, 3), dtype=np.uint8)  # 5 x 5 crops: past 6
    imgs = [as_kind("tensor", a) for a in (big, _IMGS[(480, 640)], _IMGS[(60, 1900)])]
    got = gt.from_hf(proc)(imgs)
    _check(proc, imgs, (kind, "grid"))
    assert got["image_attention_mask"].eq(0).any()  # the white pad covers whole patches somewhere
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf({"image_processor_type": kind, "size": {"height": 448, "width": 336}})
    assert ei.value.argument == "size" and kind in str(ei.value)
    thin = _RNG.integers(0, 256, (3, 900, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="extreme"):
        proc(as_kind("tensor", thin), return_tensors="pt")
    with pytest.raises(goprep.PipelineError, match="aspect ratio"):
        gt.from_hf(proc)(as_kind("tensor", thin))


def _encode(a, fmt):
    import io

    buf = io.BytesIO()
    Image.fromarray(a).save(buf, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buf.getvalue()


@pytest.mark.skipif(not goprep.info()["codecs"], reason="this build has no JPEG/PNG decoders")
@pytest.mark.parametrize("kind,kwargs", [
    ("Sam2ImageProcessor", {"size": {"height": 96, "width": 80}}),
    ("Llama4ImageProcessor", {"size": {"height": 56, "width": 56}}),
    ("Glm4vImageProcessorPil", {}),
    ("Phi4MultimodalImageProcessor", {"size": {"height": 56, "width": 56}}),
], ids=lambda x: x if isinstance(x, str) else "")
def test_encoded_nested_and_paths(kind, kwargs, tmp_path):
    """JPEG / PNG bytes of mixed sizes (decoded in the engine call), a list of lists (flattened, as
    transformers flattens it), paths the processor loads itself, and a list mixing bytes and decoded images."""
    proc = hf_processor(kind, **kwargs)
    arrs = [_IMGS[(480, 640)][:70, :90], _IMGS[(333, 517)][:40, :110], _IMGS[(7, 9)]]
    enc = [_encode(arrs[0], "JPEG"), _encode(arrs[1], "PNG"), _encode(arrs[2], "PNG")]
    pil = [Image.fromarray(goprep.decode(e)) for e in enc]  # the decoded pixels, equal to Pillow's

    def check(src, want_src, what):
        assert_hf_outputs(proc, gt.from_hf(proc)(src), proc(want_src, return_tensors="pt"), (kind, what))

    check(enc, pil, "bytes")
    check(enc[0], pil[0], "one JPEG")
    check([[enc[0], enc[2]], [enc[1]]], [pil[0], pil[2], pil[1]], "nested")
    check([enc[0], arrs[1], pil[2]], [pil[0], arrs[1], pil[2]], "mixed kinds")
    paths = []
    for k, data in enumerate(enc):
        p = tmp_path / f"img{k}.{'jpg' if k == 0 else 'png'}"
        p.write_bytes(data)
        paths.append(str(p))
    check(paths, paths, "paths")
