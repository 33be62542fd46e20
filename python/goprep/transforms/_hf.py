"""``from_hf``: a Hugging Face image processor (or its ``preprocessor_config.json`` dict) read into a
complete config, every key of which is either reproduced (``_hf_pixels``) or refused. transformers is
imported only to complete a dict that names a class, when it is installed."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from ._chain import refusals
from ._converted import Converted
from ._hf_donut import DONUT_KEYS
from ._hf_glm4v import GLM4V
from ._hf_images import flat_images, refuse_rotated_paths
from ._hf_layout import DETR_FAMILY, DETR_KEYS, DPT_KEYS, SAM_KEYS, PaddedBatch
from ._hf_llama4 import LLAMA4
from ._hf_mllama import MLLAMA
from ._hf_naflex import SIGLIP2
from ._hf_nougat import NOUGAT
from ._hf_patches import QWEN2VL_KEYS, PatchBatch
from ._hf_phi4 import PHI4
from ._hf_pixels import hf_chain
from ._hf_pixtral import PIXTRAL
from ._hf_refused import REFUSED
from ._hf_sam2 import SAM2
from ._hf_seg import SEG
from ._hf_tiles import TILE_KEYS, tile_convert

# Vision-language families with a builder of their own: base name -> (keys read, builder(cfg, kind, flavor, device))
_HF_FAMILIES = {**PIXTRAL, **SIGLIP2, **MLLAMA, **NOUGAT, **SEG, **REFUSED, **SAM2, **LLAMA4,
                **GLM4V, **PHI4}  # REFUSED: with the measured reason


# What from_hf reads: the generic resize / center-crop / rescale / normalize path.
_HF_READ = frozenset({"do_resize", "size", "resample", "do_center_crop", "crop_size", "do_rescale", "rescale_factor",
                      "do_normalize", "image_mean", "image_std", "default_to_square", "do_convert_rgb"})
# Keys read for one class only, with that class's meaning (by _hf_base_name).
_HF_CLASS_KEYS = {
    "ConvNext": frozenset({"crop_pct"}),  # shorter side se / crop_pct, then a crop (below 384)
    "PoolFormer": frozenset({"crop_pct"}),  # the shorter side (or a square's side) / crop_pct
    "MobileViT": frozenset({"do_flip_channel_order"}),  # RGB -> BGR after the rescale; never normalises
    "EfficientNet": frozenset({"rescale_offset", "include_top"}),  # x * f - 1; a second division by std
    "PPLCNet": frozenset({"resize_short", "size_divisor"}),  # round(side * s / short), ceil to a multiple
    "GLPN": frozenset({"size_divisor"}),  # each side floored to a multiple (size unused)
    "TextNet": frozenset({"size_divisor"}),  # the shortest_edge size, each side ceiled to a multiple
    "Vivit": frozenset({"offset"}),  # rescale(offset=True): x * f - 1
    "SuperPoint": frozenset({"do_grayscale"}),  # refused when on (goprep has no RGB -> gray op)
    **{b: DETR_KEYS for b in DETR_FAMILY},  # the batch padded to its largest image, and pixel_mask
    "DPT": DPT_KEYS,  # keep_aspect_ratio and ensure_multiple_of; do_pad refused
    "LayoutLMv3": frozenset({"apply_ocr", "ocr_lang", "tesseract_config"}),  # apply_ocr refused; OCR settings
    "Sam": SAM_KEYS,  # the longest side, the batch padded to pad_size, original and reshaped sizes
    "Qwen2VL": QWEN2VL_KEYS,  # smart_resize, the (patches, C*T*P*P) rows and image_grid_thw
    "Donut": DONUT_KEYS,  # the thumbnail and the centred pad; do_align_long_axis refused
    **{b: keys for b, (keys, _) in _HF_FAMILIES.items()},
    **TILE_KEYS,  # tiling (LLaVA-NeXT / OneVision, Idefics3 / SmolVLM, Idefics2): _hf_tiles
}
# Keys a class's own pixel code never reads (its _preprocess takes them and drops them): overridden
# with these values before the conversion, so that a value set there changes nothing, as in the class.
_HF_CLASS_IGNORES: Dict[str, Dict[str, Any]] = {
    "GLPN": {"do_center_crop": False, "do_pad": None, "size": None},
    "TextNet": {"do_pad": None},
    "SuperPoint": {"do_normalize": False, "do_center_crop": False, "do_pad": None},
    "DepthPro": {"do_center_crop": False, "do_pad": None},
    "PPLCNet": {"do_pad": None},
}
# Keys that never change pixel_values (metadata, and output-format options goprep has its own of).
_HF_INERT = frozenset({"image_processor_type", "feature_extractor_type", "processor_class", "_processor_class",
                       "auto_map", "return_tensors", "data_format", "input_data_format", "device", "disable_grouping",
                       "model_input_names"})
# The methods through which a processor class computes pixel_values. A class that defines one of them
# itself (below transformers' backends) has code of its own, which goprep reproduces only for the
# classes listed in _HF_VERIFIED: those whose own code was read (transformers 5.24) to run the generic
# resize / crop / rescale-and-normalize steps for the keys above (anything else they do is behind a key
# that is refused), and that the zoo sweep (tests/test_zoo.py) finds equal with their class defaults.
# (DepthPro, say, is equal with its defaults only because they upscale: it resizes without antialias.)
_HF_PIXEL_METHODS = frozenset({"_preprocess", "preprocess", "resize", "center_crop", "rescale", "normalize",
                               "rescale_and_normalize", "convert_to_rgb", "pad", "process_image",
                               "_preprocess_image_like_inputs", "_prepare_image_like_inputs",
                               "_prepare_images_structure", "_standardize_kwargs", "_further_process_kwargs"})
_HF_VERIFIED = frozenset({"ConvNext", "Beit", "DINOv3ViT", "Gemma3", "Llava", "MobileNetV2", "Segformer", "SegGpt",
                          "PPLCNet", "GLPN", "TextNet", "Vivit", "SuperPoint", "DepthPro",
                          "Levit", "PoolFormer", "MobileViT", "EfficientNet",
                          "DPT", "Sam", "LayoutLMv3", "Qwen2VL", "Donut", *DETR_FAMILY, *_HF_FAMILIES,
                          *TILE_KEYS})
_HF_BACKENDS = ("TorchvisionBackend", "PilBackend", "BaseImageProcessor", "ImageProcessingMixin")
# Classes on neither of transformers' backends: NumPy and Pillow code (Pillow's resize).
_HF_NUMPY_CLASSES = frozenset({"Vivit", "VideoLlava", "Emu3"})


def _hf_class(kind: str) -> Any:
    """The transformers class a config dict names, when transformers is installed (never imported
    here otherwise: a config dict needs no library), else None."""
    import importlib.util
    import sys

    if "transformers" not in sys.modules and importlib.util.find_spec("transformers") is None:
        return None
    import transformers

    try:
        return getattr(transformers, kind, None)
    except Exception:  # transformers' lazy module raises for a class whose backend is missing
        return None


def _hf_own_code(cls: Any) -> List[str]:
    """The pixel-path methods that ``cls`` (or a class between it and transformers' backends) defines."""
    own = set()
    for c in cls.__mro__:
        if c.__name__ in _HF_BACKENDS or c is object:
            break
        own |= _HF_PIXEL_METHODS & set(vars(c))
    return sorted(own)


def _hf_base_name(kind: str) -> str:
    """``ConvNextImageProcessorPil`` -> ``ConvNext``."""
    for suffix in ("Pil", "Fast"):
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
    for suffix in ("ImageProcessor", "FeatureExtractor"):
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
    return kind


def _hf_active(v: Any) -> bool:
    """Whether a config value turns something on (None, False and empty values do not)."""
    if v is None or v is False:
        return False
    if isinstance(v, (list, tuple, dict, str)) and not v:
        return False
    return True


def from_hf(processor_or_config: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing a Hugging Face image processor's ``pixel_values`` (for one image:
    ``(3, H, W)``; for a batch or list: ``(N, 3, H, W)``), from the processor or its
    ``preprocessor_config.json`` dict (which needs no transformers install). Covers the
    resize / center-crop / rescale / normalize processors: ViT, CLIP, ConvNeXt (``crop_pct``),
    DeiT, BEiT, SigLIP and the others the zoo sweep finds equal.

    Never silently different: every key of the config is read (a processor object's attributes, with
    its class defaults; a dict naming a class is completed with that class's defaults when transformers
    is installed), and a key that turns on something goprep does not reproduce, or a class with
    pixel code of its own that goprep does not reproduce, raises ``goprep.PipelineError`` naming the
    class, the key and its value. Pillow or tensor numerics follow the backend the class runs
    (transformers' ``PilBackend`` or ``TorchvisionBackend``). A config it cannot read raises
    ``goprep.PipelineError`` naming the field (``.argument``)."""
    obj = processor_or_config
    cls: Any = None
    if isinstance(obj, Mapping):
        cfg = dict(obj)
        kind = str(cfg.get("image_processor_type") or cfg.get("feature_extractor_type") or "dict")
        cls = _hf_class(kind) if kind != "dict" else None
        if cls is not None and callable(getattr(cls, "from_dict", None)):
            try:  # the class's defaults for every key the dict leaves out
                full = cls.from_dict(cfg).to_dict()
            except Exception:  # a config the class itself rejects: read as given, checked below
                full = None
            if isinstance(full, Mapping):
                cfg = {**dict(full), **{k: v for k, v in cfg.items() if k not in full}}
    elif callable(getattr(obj, "to_dict", None)) or hasattr(obj, "__dict__"):
        cfg = obj.to_dict() if callable(getattr(obj, "to_dict", None)) else dict(vars(obj))
        if not isinstance(cfg, Mapping):
            raise PipelineError(f"to_dict() returned {type(cfg).__name__}, not a dict", argument="processor_or_config")
        cfg = dict(cfg)
        cls = type(obj)
        kind = cls.__name__
    else:
        raise PipelineError(
            f"must be a Hugging Face image processor or its config dict, got {type(obj).__name__}",
            argument="processor_or_config",
        )
    if cls is not None:
        # to_dict() leaves out the keys whose value is None (GLPN's do_normalize, say): the class's
        # attributes then decide, and None there means off (as ``if do_normalize:`` reads it)
        src = cls if isinstance(obj, Mapping) else obj
        for k in _HF_READ | _HF_CLASS_KEYS.get(_hf_base_name(kind), frozenset()):
            if k not in cfg:
                cfg[k] = getattr(src, k, None)
    if cls is not None and isinstance(cls, type):
        own = _hf_own_code(cls)
        if own and _hf_base_name(kind) not in _HF_VERIFIED:
            raise PipelineError(
                f"{kind} computes pixel_values with code of its own ({', '.join(own)}), which goprep does not "
                "reproduce: refused rather than converted to something different", argument="processor_or_config")
        names = {c.__name__ for c in cls.__mro__}
        # transformers' backends, or the NumPy + Pillow code of a class on neither (Vivit, VideoLlava)
        flavor = "pil" if "PilBackend" in names else "tensor" if "TorchvisionBackend" in names else "pil"
    else:
        flavor = None
    try:
        return _hf_convert(cfg, kind, flavor, device)
    except PipelineError as e:  # every refusal names the class
        if kind in str(e):
            raise
        raise PipelineError(f"{e.detail} ({kind})", argument=e.argument, code=e.code) from None


@refusals  # before from_hf's naming of the class: a refusal of _validate's becomes a PipelineError
def _hf_convert(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Converted:
    """from_hf's conversion of a complete config (``kind``: the class name, for messages)."""
    base = _hf_base_name(kind)
    reads = _HF_READ | _HF_CLASS_KEYS.get(base, frozenset())
    cfg = {**cfg, **_HF_CLASS_IGNORES.get(base, {})}
    for k, v in cfg.items():
        if k not in reads and k not in _HF_INERT and _hf_active(v):
            raise PipelineError(f"{v!r} ({kind}) is not reproduced by goprep.transforms.from_hf: refused rather "
                                f"than ignored", argument=k)
    if flavor is None:  # no class to ask (a dict without transformers): transformers 5's naming
        flavor = "pil" if kind.endswith("Pil") or base in _HF_NUMPY_CLASSES else "tensor"
    if base == "DPT" and flavor == "pil":  # DPTImageProcessorPil's code never crops (the torchvision one does)
        cfg["do_center_crop"] = False
    if base == "DPT" and cfg.get("do_pad"):
        raise PipelineError(f"True ({kind} pads to a multiple of size_divisor after the normalisation: centred in the "
                            "torchvision class, the sides' amounts swapped in the PIL one; not reproduced)",
                            argument="do_pad")
    if base == "LayoutLMv3" and cfg.get("apply_ocr"):
        raise PipelineError(f"True ({kind} runs Tesseract OCR for its words and boxes outputs; goprep reproduces "
                            "pixel_values only: pass apply_ocr=False and run the OCR apart)", argument="apply_ocr")
    if base == "LayoutLMv3" and flavor == "pil" and cfg.get("do_center_crop"):
        raise PipelineError(f"True ({kind}'s call passes crop_size= to a center_crop that takes size=, and fails)",
                            argument="do_center_crop")
    if base == "SuperPoint" and cfg.get("do_grayscale"):
        raise PipelineError(f"True ({kind} converts to gray with tvF.rgb_to_grayscale; goprep has no RGB -> gray op)",
                            argument="do_grayscale")
    if base == "Vivit" and cfg.get("offset") and not cfg.get("do_rescale", True):
        raise PipelineError(f"True without do_rescale ({kind} raises 'For offset, do_rescale must also be set to True')",
                            argument="offset")
    if base in _HF_FAMILIES:
        return _HF_FAMILIES[base][1](cfg, kind, flavor, device)
    if base in TILE_KEYS:
        return tile_convert(cfg, kind, base, flavor, device)
    chain = hf_chain(cfg, kind, base)
    if base in DETR_FAMILY or base == "Sam":
        return PaddedBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")),
                           bool(cfg.get("do_pad")), _pad_size(cfg.get("pad_size")) if cfg.get("do_pad") else None,
                           mask=base != "Sam", sizes=base == "Sam")
    if base == "Qwen2VL":
        return PatchBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")),
                          *(_validate.as_positive_int(k, cfg.get(k)) for k in ("patch_size", "temporal_patch_size",
                                                                                "merge_size")))
    if base == "Vivit":
        return Converted(chain, f"Hugging Face {kind}", flavor=flavor, device=device,
                         convert_rgb=bool(cfg.get("do_convert_rgb")), hf_video=True)
    return FlatConverted(chain, f"Hugging Face {kind}", flavor=flavor, device=device,
                         convert_rgb=bool(cfg.get("do_convert_rgb")))


class FlatConverted(Converted):
    """A generic processor's pipeline (one tensor): a list of lists of images (one per sample) is flattened
    first, as the processor's ``make_flat_list_of_images`` flattens it (``(N, 3, H, W)`` in that order);
    paths with an EXIF rotation are refused (``refuse_rotated_paths``), as the layout pipelines refuse them."""

    def __call__(self, src: Any, *, out: Any = None, reduce: Optional[str] = None, generator: Any = None) -> Any:
        src = flat_images(src)
        one = not isinstance(src, (list, tuple))
        refuse_rotated_paths([src] if one else src, one=one)
        return super().__call__(src, out=out, reduce=reduce, generator=generator)


def _pad_size(v: Any) -> Optional[Tuple[int, int]]:
    """A processor's ``pad_size`` (a dict of ``height`` and ``width``, as transformers requires) as
    ``(height, width)``, or None when unset (the batch's largest size)."""
    if v is None:
        return None
    if not isinstance(v, Mapping) or v.get("height") is None or v.get("width") is None:
        raise PipelineError(f"must hold 'height' and 'width', got {v!r}", argument="pad_size")
    return (_validate.as_positive_int("pad_size['height']", v["height"]),
            _validate.as_positive_int("pad_size['width']", v["width"]))

