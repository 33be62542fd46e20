"""The zoo sweep: every preprocessing the installed model zoos ship in code (torchvision weights presets,
timm pretrained data configs, transformers image-processor classes with their class defaults; no hub
access) either converts and matches the library within the stated bound, or is refused with a
goprep.PipelineError at conversion. A silent mismatch fails. Parametrized from what is installed, so a
new library version's new entries are covered without editing this file.

Bounds (tests/zoo_compare.py): on PIL images 1e-5, relative to the value where it is larger than 1; on
uint8 tensors one uint8 level before normalisation."""

import warnings

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from conftest import PHOTOS
from zoo_compare import assert_hf_outputs, hf_pixel_bound_ok
from zoo_compare import close_pil as _close_pil
from zoo_compare import levels as _levels

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
Image = pytest.importorskip("PIL.Image")

# A photo with an odd width, and a small random image (upscales in every preset).
_IMAGES = {
    "chelsea": np.ascontiguousarray(PHOTOS["chelsea"]),
    "noise": np.random.default_rng(7).integers(0, 256, size=(97, 131, 3), dtype=np.uint8),
}

def _pil(a):
    return Image.fromarray(a)


def _tensor(a):
    return torch.from_numpy(a.copy()).permute(2, 0, 1).contiguous()


def _convert_or_refusal(fn, *args):
    """(converted, None), or (None, the goprep.PipelineError raised at conversion)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except goprep.PipelineError as e:
            return None, e


# --------------------------------------------------------------------------------------------------
# torchvision: every weights entry of every model


def _tv_presets():
    """One weights entry per distinct preset (class, sizes, interpolation, antialias, mean, std)."""
    from torchvision.models import get_model_weights, list_models

    out = {}
    total = 0
    for model in list_models():
        for w in get_model_weights(model):
            total += 1
            t = w.transforms()
            key = (type(t).__name__, repr(t), getattr(t, "antialias", None))
            out.setdefault(key, f"{type(w).__name__}.{w.name}")
    return total, sorted(out.values())


TV_TOTAL, TV_PRESETS = _tv_presets()


def _weights(spec):
    import torchvision.models as m

    cls, entry = spec.split(".")
    for mod in (m, m.detection, m.segmentation, m.video, m.optical_flow, m.quantization):
        if hasattr(mod, cls):
            return getattr(getattr(mod, cls), entry)
    raise LookupError(spec)


def test_torchvision_sweep_covers_every_weights_entry():
    assert TV_TOTAL >= 100 and len(TV_PRESETS) >= 10, (TV_TOTAL, len(TV_PRESETS))


@pytest.mark.slow
@pytest.mark.parametrize("spec", TV_PRESETS)
def test_torchvision_weights_preset(spec):
    w = _weights(spec)
    t = w.transforms()
    conv, why = _convert_or_refusal(gt.from_torchvision, w)
    if conv is None:
        assert type(t).__name__ == "OpticalFlow", why  # the one preset goprep refuses, by name
        assert "OpticalFlow" in str(why)
        return
    std = getattr(t, "std", [1.0, 1.0, 1.0])
    for name, a in _IMAGES.items():
        x = _tensor(a)
        if type(t).__name__ == "VideoClassification":  # tensors only, as torchvision's
            clip = torch.stack([x, x.flip(-1), x.flip(-2)])  # (T, C, H, W)
            got, want = conv(clip), t(clip)
            assert got.shape == want.shape, (spec, got.shape, want.shape)
            assert _levels(got, want, std, 0) <= 1 + 1e-3, (spec, name)
            continue
        got, want = conv(_pil(a)), t(_pil(a))
        assert isinstance(got, torch.Tensor) and got.shape == want.shape, (spec, name, got.shape, want.shape)
        assert _close_pil(got, want) <= 1e-5, (spec, name)
        got, want = conv(x), t(x)
        assert got.shape == want.shape, (spec, name)
        assert _levels(got, want, std, 0) <= 1 + 1e-3, (spec, name)


def test_torchvision_presets_given_directly_and_batched():
    from torchvision.models import ResNet50_Weights
    from torchvision.models.video import R3D_18_Weights

    t = ResNet50_Weights.IMAGENET1K_V2.transforms()
    a = _IMAGES["chelsea"]
    assert _close_pil(gt.from_torchvision(t)(_pil(a)), t(_pil(a))) <= 1e-5  # the preset object itself
    batch = torch.stack([_tensor(a), _tensor(a).flip(-1)])
    got = gt.from_torchvision(ResNet50_Weights.DEFAULT)(batch)
    assert got.shape == (2, 3, 224, 224) and _levels(got, t(batch), t.std, 1) <= 1 + 1e-3
    vt = R3D_18_Weights.DEFAULT.transforms()
    conv = gt.from_torchvision(vt)
    clips = torch.stack([torch.stack([_tensor(a)] * 4)] * 2)  # (B, T, C, H, W)
    got, want = conv(clips), vt(clips)
    assert got.shape == want.shape == (2, 3, 4, 112, 112)
    assert _levels(got, want, vt.std, 1) <= 1 + 1e-3
    with pytest.raises(goprep.PipelineError, match="VideoClassification takes"):
        conv(_pil(a))
    with pytest.raises(goprep.PipelineError, match="out"):
        conv(clips[0], out=torch.empty(3, 4, 112, 112))


# --------------------------------------------------------------------------------------------------
# timm: every pretrained data config


def _timm_configs():
    timm = pytest.importorskip("timm")
    from timm.data import resolve_data_config

    out = {}
    names = timm.list_pretrained()
    for n in names:
        cfg = timm.models.get_pretrained_cfg(n)
        if cfg is None:
            continue
        dc = resolve_data_config(pretrained_cfg=cfg.to_dict())
        key = tuple(sorted((k, str(v)) for k, v in dc.items()))
        out.setdefault(key, (n, dc))
    return len(names), [out[k] for k in sorted(out)]


TIMM_TOTAL, TIMM_CONFIGS = _timm_configs()


def test_timm_sweep_covers_every_pretrained_config():
    assert TIMM_TOTAL >= 1000 and len(TIMM_CONFIGS) >= 100, (TIMM_TOTAL, len(TIMM_CONFIGS))


@pytest.mark.slow
@pytest.mark.parametrize("name,cfg", TIMM_CONFIGS, ids=[n for n, _ in TIMM_CONFIGS])
def test_timm_pretrained_config(name, cfg):
    from timm.data import create_transform

    tf = create_transform(**cfg, is_training=False)
    conv, why = _convert_or_refusal(gt.from_timm, cfg)
    assert conv is not None, f"{name}: timm's configs all convert today; refused: {why}"
    a = _IMAGES["chelsea"]
    got, want = conv(_pil(a)), tf(_pil(a))
    assert got.shape == want.shape, name
    assert _close_pil(got, want) <= 1e-5, name


# --------------------------------------------------------------------------------------------------
# transformers: every image-processor class, with its class defaults


def _hf_classes():
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto import image_processing_auto as ipa

    names = set()
    for v in ipa.IMAGE_PROCESSOR_MAPPING_NAMES.values():
        names.update(x for x in (v.values() if isinstance(v, dict) else v) if x)
    return sorted(names)


HF_CLASSES = _hf_classes()


def _hf_reference(proc, img):
    """The processor's pixel_values for one PIL image as a tensor, or None where the class cannot
    process a lone image with its defaults (it needs text, a second image, other arguments...)."""
    try:
        out = proc(img, return_tensors="pt")["pixel_values"]
    except Exception:
        return None
    return out[0] if isinstance(out, torch.Tensor) and out.ndim == 4 and out.shape[0] == 1 else out


# The classes goprep converts (and the slow sweep below finds equal), pinned: a class listed here that
# turns into a refusal fails, as does a class that converts without being listed (add it once the
# sweep finds it equal). Measured with transformers 5.25; a listed class that a transformers version
# does not have is left out of the check (HF_CLASSES decides what is swept).
HF_MATCHING = frozenset({
    "BeitImageProcessor", "BeitImageProcessorPil", "BitImageProcessor", "BitImageProcessorPil",
    "BlipImageProcessor", "BlipImageProcessorPil", "CLIPImageProcessor", "CLIPImageProcessorPil",
    "ChineseCLIPImageProcessor", "ChineseCLIPImageProcessorPil", "ConvNextImageProcessor",
    "ConvNextImageProcessorPil", "DINOv3ViTImageProcessor", "DeiTImageProcessor", "DeiTImageProcessorPil",
    "DepthProImageProcessor", "EfficientNetImageProcessor", "EfficientNetImageProcessorPil", "GLPNImageProcessor",
    "GLPNImageProcessorPil", "Gemma3ImageProcessor", "Gemma3ImageProcessorPil", "LevitImageProcessor",
    "LevitImageProcessorPil", "LlavaImageProcessor", "LlavaImageProcessorPil", "MobileNetV1ImageProcessor",
    "MobileNetV1ImageProcessorPil", "MobileNetV2ImageProcessor", "MobileNetV2ImageProcessorPil",
    "MobileViTImageProcessor", "MobileViTImageProcessorPil", "OwlViTImageProcessor", "OwlViTImageProcessorPil",
    "PPChart2TableImageProcessor", "PPChart2TableImageProcessorPil", "PPLCNetImageProcessor",
    "PoolFormerImageProcessor", "PoolFormerImageProcessorPil", "PvtImageProcessor", "PvtImageProcessorPil",
    "SegGptImageProcessor", "SegGptImageProcessorPil", "SegformerImageProcessor", "SegformerImageProcessorPil",
    "SiglipImageProcessor", "SiglipImageProcessorPil", "SuperPointImageProcessor", "SuperPointImageProcessorPil",
    "TextNetImageProcessor", "TextNetImageProcessorPil", "Tipsv2DptImageProcessor", "Tipsv2ImageProcessor",
    "ViTImageProcessor", "ViTImageProcessorPil", "VivitImageProcessor",
    # the batch padded to its largest image, with pixel_mask (goprep.transforms._hf_layout)
    "ConditionalDetrImageProcessor", "ConditionalDetrImageProcessorPil", "DeformableDetrImageProcessor",
    "DeformableDetrImageProcessorPil", "DetrImageProcessor", "DetrImageProcessorPil", "GroundingDinoImageProcessor",
    "GroundingDinoImageProcessorPil", "RTDetrImageProcessor", "RTDetrImageProcessorPil",
    "DPTImageProcessor", "DPTImageProcessorPil",  # keep_aspect_ratio, ensure_multiple_of
    "SamImageProcessor", "SamImageProcessorPil",  # padded to 1024 x 1024, original and reshaped sizes
    "Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil",  # smart_resize, patch rows, image_grid_thw
    "DonutImageProcessor", "DonutImageProcessorPil",  # resize, thumbnail, centred pad
    # vision-language processors with layouts of their own (goprep.transforms._hf_pixtral, _hf_naflex, _hf_mllama)
    "PixtralImageProcessor", "PixtralImageProcessorPil",  # patch-multiple sizes, padded batch, image_sizes
    "Siglip2ImageProcessor", "Siglip2ImageProcessorPil",  # NaFlex patch sequences, pixel_attention_mask
    "MllamaImageProcessor", "MllamaImageProcessorPil",  # tiles, aspect_ratio_ids / mask, num_tiles
    "NougatImageProcessor", "NougatImageProcessorPil",  # crop_margin, then Donut's resize, thumbnail and pad
    # any-resolution tiling: tiles stacked per image behind the global image, image_sizes (_hf_tiles)
    "LlavaNextImageProcessor", "LlavaNextImageProcessorPil", "LlavaOnevisionImageProcessor",
    "LlavaOnevisionImageProcessorPil",
    # image splitting with their default LANCZOS (the engine's "lanczos"): tiles, then the global image (_hf_tiles)
    "Idefics3ImageProcessor", "Idefics3ImageProcessorPil", "SmolVLMImageProcessor", "SmolVLMImageProcessorPil",
    "Idefics2ImageProcessor", "Idefics2ImageProcessorPil",  # quadrants + the image, each resized, padded, masked
    # segmentation and matting on images (goprep.transforms._hf_seg): the batch always padded, pixel_mask;
    # OneFormer's task_inputs strings; ViTMatte's trimap as a 4th channel, padded to a multiple of 32
    "MaskFormerImageProcessor", "MaskFormerImageProcessorPil", "Mask2FormerImageProcessor",
    "Mask2FormerImageProcessorPil", "OneFormerImageProcessor", "OneFormerImageProcessorPil",
    "VitMatteImageProcessor", "VitMatteImageProcessorPil",
    # SAM2 / SAM3 (the generic resize, original_sizes), Llama 4 (tiles + global tile, bfloat16, aspect_ratios),
    # GLM-4V and GLM-4.6V (its smart_resize, Qwen2-VL's patch rows), Phi-4 multimodal (crops behind a global
    # crop, masks, token counts): goprep.transforms._hf_sam2, _hf_llama4, _hf_glm4v, _hf_phi4
    "Sam2ImageProcessor", "Sam3ImageProcessor", "Llama4ImageProcessor", "Glm4vImageProcessor",
    "Glm4vImageProcessorPil", "Glm46VImageProcessor", "Glm46VImageProcessorPil",
    "Phi4MultimodalImageProcessor",
    # LANCZOS by default (Pillow's in the PIL class, PyTorch's uint8 lanczos in the torchvision one: _steps.Resize)
    "ChameleonImageProcessor", "ChameleonImageProcessorPil",
})


def _hf_extra_inputs(kind, a):
    """What a class takes beside the image (ViTMatte: a trimap of the image's size), as positional arguments."""
    if kind.startswith("VitMatte"):
        return (np.random.default_rng(1).choice(np.array([0, 128, 255], np.uint8), a.shape[:2]),)
    return ()


def _hf_instance(kind):
    """``kind()`` with its class defaults, or None for a class that needs constructor arguments."""
    import transformers

    transformers.logging.set_verbosity_error()
    try:
        return getattr(transformers, kind)()
    except TypeError:  # TimmWrapperImageProcessor needs its config
        return None


def test_hf_sweep_covers_every_processor_class():
    assert len(HF_CLASSES) >= 150, len(HF_CLASSES)


def test_hf_sweep_pins_the_matching_set(capsys):
    """Which classes convert (conversion only; the slow sweep checks their pixels): exactly HF_MATCHING
    among the swept classes, every other one refused by name. Prints the counts."""
    converted, refused, unbuilt = [], [], []
    for kind in HF_CLASSES:
        proc = _hf_instance(kind)
        if proc is None:
            unbuilt.append(kind)
            continue
        conv, why = _convert_or_refusal(gt.from_hf, proc)
        if conv is None:
            assert kind in str(why), why
            refused.append(kind)
        else:
            converted.append(kind)
    pinned = HF_MATCHING & set(HF_CLASSES)
    assert not pinned - set(converted), f"pinned as matching but now refused: {sorted(pinned - set(converted))}"
    assert not set(converted) - pinned, f"converted but not pinned in HF_MATCHING: {sorted(set(converted) - pinned)}"
    assert len(converted) + len(refused) + len(unbuilt) == len(HF_CLASSES)
    with capsys.disabled():
        print(f"\ntransformers zoo: {len(HF_CLASSES)} classes, {len(converted)} convert (pinned), "
              f"{len(refused)} refused by name, {len(unbuilt)} need constructor arguments")


@pytest.mark.slow
@pytest.mark.parametrize("kind", HF_CLASSES)
def test_hf_processor_class(kind):
    import transformers

    cls = getattr(transformers, kind)
    proc = _hf_instance(kind)
    if proc is None:  # a class that needs constructor arguments (TimmWrapperImageProcessor)
        pytest.skip(f"{kind}() needs arguments")
    conv, why = _convert_or_refusal(gt.from_hf, proc)
    if conv is None:  # refused by name: the message names the class, and the key where one is the cause
        assert kind not in HF_MATCHING, f"{kind} is pinned as matching but refused: {why}"
        assert kind in str(why), why
        assert why.argument == "processor_or_config" or why.argument in proc.to_dict(), why
        return
    a = _IMAGES["chelsea"]
    extra = _hf_extra_inputs(kind, a)
    got = conv(_pil(a), *extra)
    names = {c.__name__ for c in cls.__mro__}
    if isinstance(got, dict):  # a processor with auxiliary outputs: all of them, by name, as it returns them
        assert_hf_outputs(proc, got, proc(_pil(a), *extra, return_tensors="pt"), kind)
    else:
        want = _hf_reference(proc, _pil(a))
        assert isinstance(want, torch.Tensor), f"{kind}: converted, but the processor gives no single tensor"
        assert got.shape == want.shape, (kind, got.shape, want.shape)
        assert hf_pixel_bound_ok(proc, got, want, 0), kind
    # the config dict converts to the same pipeline (the class's defaults fill what it leaves out)
    d = proc.to_dict()
    if "PilBackend" not in names:
        got_d = gt.from_hf(d)(_pil(a), *extra)
        if isinstance(got, dict):
            assert set(got_d) == set(got), kind
            assert all(got_d[k] == got[k] if isinstance(got[k], list) else torch.equal(got_d[k], got[k])
                       for k in got), kind  # (Mllama's num_tiles is a list, as the processor returns it)
        else:
            assert torch.equal(got_d, got), kind


# Class rules goprep reproduces, beyond the class defaults: each variant against the class itself.
_HF_VARIANTS = [
    ("LevitImageProcessor", {"size": {"shortest_edge": 160}, "crop_size": {"height": 160, "width": 160}}),
    ("LevitImageProcessor", {"size": {"height": 200, "width": 180}}),
    ("PoolFormerImageProcessor", {"crop_pct": 0.8}),
    ("PoolFormerImageProcessor", {"size": {"height": 200, "width": 240}, "crop_size": {"height": 160, "width": 200}}),
    ("PoolFormerImageProcessorPil", {"size": {"height": 192, "width": 192}, "crop_pct": 0.95}),
    ("MobileViTImageProcessor", {"do_flip_channel_order": False}),
    ("MobileViTImageProcessorPil", {}),
    ("EfficientNetImageProcessor", {"rescale_offset": True, "rescale_factor": 1 / 127.5, "include_top": False}),
    ("EfficientNetImageProcessorPil", {"rescale_offset": True, "rescale_factor": 1 / 127.5}),
    ("EfficientNetImageProcessor", {"do_normalize": False}),
    ("PPLCNetImageProcessor", {"size_divisor": 32}),
    ("PPLCNetImageProcessor", {"resize_short": 100, "size_divisor": None, "crop_size": 96}),
    ("PPLCNetImageProcessor", {"resize_short": None, "do_center_crop": False}),  # size: 256x256
    ("GLPNImageProcessor", {"size_divisor": 16}),
    ("GLPNImageProcessorPil", {"size_divisor": 7, "do_normalize": True, "image_mean": 0.5, "image_std": 0.25}),
    ("GLPNImageProcessor", {"do_center_crop": True, "crop_size": 32}),  # GLPN's code never crops
    ("TextNetImageProcessor", {"size": {"shortest_edge": 100}, "size_divisor": 24}),
    ("TextNetImageProcessorPil", {"size": {"shortest_edge": 90}, "size_divisor": 32}),
    ("VivitImageProcessor", {"offset": False, "rescale_factor": 1 / 255}),
    ("VivitImageProcessor", {"size": {"height": 100, "width": 120}, "crop_size": {"height": 64, "width": 64}}),
    ("SuperPointImageProcessor", {"size": {"height": 60, "width": 80}, "do_normalize": True, "image_mean": 0.5,
                                  "image_std": 0.5}),  # SuperPoint's code never normalises
    ("SuperPointImageProcessorPil", {"size": {"height": 60, "width": 80}}),
    ("DepthProImageProcessor", {"size": {"height": 64, "width": 96}}),  # a downscale without antialias
    ("DepthProImageProcessor", {"size": {"height": 200, "width": 150}, "resample": 3}),
    # a crop larger than the resized image: torchvision's padding (floor before) in the torchvision backend,
    # NumPy's center_crop (ceil before) in PilBackend
    ("CLIPImageProcessor", {"size": {"shortest_edge": 100}, "crop_size": {"height": 151, "width": 177}}),
    ("CLIPImageProcessorPil", {"size": {"shortest_edge": 100}, "crop_size": {"height": 151, "width": 177}}),
    ("ViTImageProcessorPil", {"size": {"height": 61, "width": 99}, "do_center_crop": True,
                              "crop_size": {"height": 80, "width": 40}}),
    # PIL's NEAREST: transformers' torchvision backend resizes with NEAREST_EXACT, PilBackend with Pillow's
    ("ViTImageProcessor", {"resample": 0}),
    ("ViTImageProcessorPil", {"resample": 0}),
    ("LayoutLMv3ImageProcessor", {"apply_ocr": False}),
    ("LayoutLMv3ImageProcessorPil", {"apply_ocr": False, "size": {"height": 100, "width": 130}}),
    ("LayoutLMv3ImageProcessor", {"apply_ocr": False, "do_center_crop": True,
                                  "crop_size": {"height": 200, "width": 150}}),
    ("DPTImageProcessor", {"keep_aspect_ratio": True, "ensure_multiple_of": 32}),
    ("DPTImageProcessorPil", {"keep_aspect_ratio": True, "ensure_multiple_of": 14,
                              "size": {"height": 518, "width": 518}}),
    ("DPTImageProcessor", {"do_center_crop": True, "crop_size": {"height": 300, "width": 200}}),
    ("DPTImageProcessorPil", {"do_center_crop": True, "crop_size": {"height": 300, "width": 200}}),  # never crops
]


@pytest.mark.parametrize("kind,kwargs", _HF_VARIANTS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(_HF_VARIANTS)])
def test_hf_class_rules(kind, kwargs):
    import transformers

    transformers.logging.set_verbosity_error()
    proc = getattr(transformers, kind)(**kwargs)
    conv = gt.from_hf(proc)
    for a in _IMAGES.values():
        want, got = _hf_reference(proc, _pil(a)), conv(_pil(a))
        assert got.shape == want.shape, (kind, kwargs, got.shape, want.shape)
        if "TorchvisionBackend" not in {c.__name__ for c in type(proc).__mro__}:
            assert _close_pil(got, want) <= 1e-5, (kind, kwargs)
        else:
            normalizes = proc.do_normalize and not any(k in kind for k in ("MobileViT", "SuperPoint"))
            std = proc.image_std if normalizes else [1.0] * 3
            assert _levels(got, want, std, 0) <= 1 + 1e-3, (kind, kwargs)


def test_hf_keys_of_another_class_are_refused():
    # ConvNeXt's and PoolFormer's crop_pct differ; EfficientNet's include_top means nothing to ViT
    for cfg, key in [({"image_processor_type": "ViTImageProcessor", "crop_pct": 0.9}, "crop_pct"),
                     ({"image_processor_type": "ViTImageProcessor", "include_top": True}, "include_top"),
                     ({"size": 224, "do_flip_channel_order": True}, "do_flip_channel_order")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(cfg)
        assert ei.value.argument == key, ei.value


@pytest.mark.parametrize("kind", ["CLIPImageProcessor", "CLIPImageProcessorPil", "SiglipImageProcessor"])
@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "LA"])
def test_hf_do_convert_rgb_on_non_rgb_pil_images(kind, mode):
    """do_convert_rgb: transparency composited onto white, then RGB, as the processor does."""
    import transformers

    transformers.logging.set_verbosity_error()
    proc = getattr(transformers, kind)(do_convert_rgb=True)
    rng = np.random.default_rng(5)
    rgba = Image.fromarray(rng.integers(0, 256, (90, 120, 4), np.uint8), "RGBA")
    img = rgba.convert(mode) if mode != "P" else rgba.convert("RGB").quantize(16)
    want, got = _hf_reference(proc, img), gt.from_hf(proc)(img)
    assert got.shape == want.shape
    if kind.endswith("Pil"):
        assert _close_pil(got, want) <= 1e-5
    else:
        assert _levels(got, want, proc.image_std, 0) <= 1 + 1e-3


def test_hf_class_rule_refusals():
    import transformers

    transformers.logging.set_verbosity_error()
    for kind, kwargs, key in [("SuperPointImageProcessor", {"do_grayscale": True}, "do_grayscale"),
                              ("SuperPointImageProcessorPil", {"do_grayscale": True}, "do_grayscale"),
                              ("VivitImageProcessor", {"do_rescale": False}, "offset"),
                              ("GLPNImageProcessor", {"size_divisor": 0}, "size_divisor"),
                              ("PPLCNetImageProcessor", {"resize_short": -1}, "resize_short"),
                              ("DPTImageProcessor", {"do_pad": True, "size_divisor": 32}, "do_pad"),
                              ("DPTImageProcessorPil", {"do_pad": True, "size_divisor": 32}, "do_pad"),
                              ("DPTImageProcessor", {"size": {"shortest_edge": 384}}, "size"),
                              ("ZoeDepthImageProcessor", {}, "processor_or_config"),
                              ("Owlv2ImageProcessor", {}, "processor_or_config"),
                              ("LayoutLMv3ImageProcessor", {}, "apply_ocr"),
                              ("LayoutLMv3ImageProcessorPil", {"apply_ocr": False, "do_center_crop": True},
                               "do_center_crop")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(getattr(transformers, kind)(**kwargs))
        assert ei.value.argument == key and kind in str(ei.value), ei.value
    # GLPN floors each side to a multiple of size_divisor: a smaller side would be 0 pixels
    with pytest.raises(goprep.PipelineError, match="size_divisor"):
        gt.from_hf(transformers.GLPNImageProcessor())(_pil(_IMAGES["noise"][:20]))
    # DPT rounds each side to a multiple: a 60 x 1900 image kept in aspect has a side of 0 (the processor fails)
    with pytest.raises(goprep.PipelineError, match="ensure_multiple_of"):
        gt.from_hf(transformers.DPTImageProcessor(keep_aspect_ratio=True, ensure_multiple_of=32))(
            _pil(np.zeros((60, 1900, 3), np.uint8)))


def test_hf_vivit_video_layout():
    """Vivit's pixel_values: an image is a one-frame video, a list of frames one video."""
    import transformers

    transformers.logging.set_verbosity_error()
    proc = transformers.VivitImageProcessor()
    conv = gt.from_hf(proc)
    frames = [_pil(a) for a in (_IMAGES["chelsea"], _IMAGES["chelsea"][::-1].copy())]
    want = proc(frames, return_tensors="pt")["pixel_values"]
    got = conv(frames)
    assert got.shape == want.shape == (1, 2, 3, 224, 224)
    assert _close_pil(got, want) <= 1e-5
    assert conv(frames[0]).shape == (1, 1, 3, 224, 224)
    with pytest.raises(goprep.PipelineError):
        conv(torch.zeros(2, 3, 64, 64, dtype=torch.uint8))


@pytest.mark.parametrize("kind", ["CLIPImageProcessor", "CLIPImageProcessorPil", "ViTImageProcessor"])
@pytest.mark.parametrize("what", ["rgba-array", "gray-array", "rgba-tensor", "gray-tensor"])
def test_hf_do_convert_rgb_on_arrays_and_tensors(kind, what):
    """do_convert_rgb on arrays and tensors: 1 channel repeated, RGBA composited onto white as the
    class's backend does (NumPy rounding for PilBackend, float32 and to_dtype's truncation for the
    torchvision backend)."""
    import transformers

    transformers.logging.set_verbosity_error()
    proc = getattr(transformers, kind)(do_convert_rgb=True)
    rgba = np.random.default_rng(3).integers(0, 256, (90, 120, 4), np.uint8)
    a = rgba if what.startswith("rgba") else rgba[..., :1].copy()
    x = a if what.endswith("array") else torch.from_numpy(a).permute(2, 0, 1).contiguous()
    want, got = _hf_reference(proc, x), gt.from_hf(proc)(x)
    assert got.shape == want.shape == (3, 224, 224)
    if kind.endswith("Pil"):
        assert _close_pil(got, want) <= 1e-5
    else:
        assert _levels(got, want, proc.image_std, 0) <= 1 + 1e-3
    # a 2-D gray array (which the processor takes for a list of rows) converts as (H, W, 1)
    assert torch.equal(gt.from_hf(proc)(rgba[..., 0].copy()), gt.from_hf(proc)(rgba[..., :1].copy()))


def test_pillow_numerics_premultiply_alpha_resizes():
    """Pillow resizes RGBA premultiplied by alpha; where goprep promises Pillow's numerics (PIL images
    and arrays in a converted pipeline) it does the same, byte for byte (LA images and 2-channel arrays
    goprep reads not at all)."""
    import torchvision.transforms as T

    img = Image.fromarray(np.random.default_rng(4).integers(0, 256, (90, 120, 4), np.uint8), "RGBA")
    conv = gt.from_torchvision(T.Compose([T.Resize((40, 50)), T.PILToTensor()]))
    want = T.Compose([T.Resize((40, 50)), T.PILToTensor()])(img)
    assert torch.equal(conv(img), want)
    assert torch.equal(conv(np.asarray(img)), want)
    # no resize, nearest (Pillow does not premultiply for NEAREST), or a tensor: as torchvision
    same = gt.from_torchvision(T.Compose([T.Resize((90, 120)), T.PILToTensor()]))
    assert torch.equal(same(img), T.PILToTensor()(img))
    near = T.Compose([T.Resize((40, 50), interpolation=T.InterpolationMode.NEAREST), T.PILToTensor()])
    assert torch.equal(gt.from_torchvision(near)(img), near(img))
    t = T.PILToTensor()(img)
    assert _levels(conv(t).float(), T.Resize((40, 50))(t).float(), [1 / 255] * t.shape[0], 0) <= 1 + 1e-3
