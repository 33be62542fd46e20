"""``from_torchvision``: a torchvision transform (v1 or v2, a Compose of them, a weights preset, timm's
eval transform objects) read into a converted chain. torchvision is never imported: transform objects
are read by their type names and attributes."""

from __future__ import annotations

import warnings
from typing import Any

from .._errors import PipelineError
from ._chain import Chain, mean_std, refusals
from ._converted import Converted
from .._geometry import parse_padding
from ._random import _range
from ._random_color import colour_only, tv_color
from ._random_ops import DrawOnly, RandomCrop, RandomFlip, RandomResizedCrop
from ._steps import CenterCrop, Gray, Pad, Resize, pair
from ._timm import keep_ratio_op


def from_torchvision(t: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing what the torchvision transform ``t`` computes: a v1 or v2
    ``Compose`` (or ``nn.Sequential``) of, or a single, ``Resize``, ``CenterCrop``, ``Pad``,
    ``ToTensor``, ``PILToTensor``, ``ToImage``, ``ToDtype``, ``ConvertImageDtype``, ``Normalize``,
    ``Grayscale`` (on 1-channel images), timm's eval ``ResizeKeepRatio``, ``MaybeToTensor`` and
    ``MaybePILToTensor``, and the training transforms ``RandomResizedCrop``, ``RandomCrop`` (constant
    padding), ``RandomHorizontalFlip``/``RandomVerticalFlip``, ``ColorJitter``, ``RandomGrayscale``,
    ``RandomApply`` of those two, ``RandomErasing`` (last, on the finished tensor) and timm's
    ``RandomResizedCropAndInterpolation`` and ``RandomErasing``: each item (of a list or batch too, item k the k-th) draws its parameters
    with the original's calls from the original's generators (torch's global one; timm's crop and
    erasing boxes Python's ``random``), so after the same seeds the result is the original's. Random
    augmentations that are not reproduced (``RandAugment``, ``AutoAugment``, ...) are refused by name.
    An empty ``Compose`` is
    the identity (a copy). Eval-mode no-ops are skipped and listed in ``.notes``; anything else raises
    ``goprep.PipelineError`` naming the transform, at conversion, or at the first call where it
    depends on the input (``Grayscale`` on a multi-channel image).

    The model weights' presets convert too: ``from_torchvision(ResNet50_Weights.DEFAULT.transforms())``
    or the weights entry itself (``from_torchvision(ResNet50_Weights.DEFAULT)``), for
    ``ImageClassification``, ``SemanticSegmentation``, ``ObjectDetection`` and
    ``VideoClassification`` (whose clip layout is kept: ``(T, C, H, W)`` or ``(B, T, C, H, W)`` tensors
    in, ``(C, T, h, w)`` / ``(B, C, T, h, w)`` out, the frames run as one batch)."""
    if _is_weights(t):
        t = t.transforms()
    chain = _tv_chain(t)
    for n in chain.notes:
        warnings.warn(f"goprep.transforms.from_torchvision: {n}", stacklevel=2)
    clip = type(t).__name__ == "VideoClassification" and _is_preset(t)
    return Converted(chain, f"torchvision {type(t).__name__}", device=device, clip=clip)


@refusals
def _tv_chain(t: Any) -> Chain:
    chain = Chain()
    _tv_walk(t, chain)
    return chain


def _is_weights(t: Any) -> bool:
    """A torchvision ``WeightsEnum`` entry (``ResNet50_Weights.IMAGENET1K_V2``), found by its shape:
    this module imports no torchvision."""
    return callable(getattr(t, "transforms", None)) and isinstance(getattr(t, "meta", None), dict) and hasattr(t, "url")


def _is_preset(t: Any) -> bool:
    """One of torchvision's weights presets (``torchvision.transforms._presets``)."""
    return str(getattr(type(t), "__module__", "")).startswith("torchvision.transforms._presets")


def _tv_preset(t: Any, chain: Chain) -> None:
    """A weights preset's ``forward``, step for step: ``F.resize`` (v1, on tensors too), ``F.center_crop``,
    ``pil_to_tensor`` + ``convert_image_dtype(float)`` (1/255 on uint8, float input kept), ``F.normalize``."""
    name = type(t).__name__
    if name == "ObjectDetection":  # the image scaled to [0, 1], nothing else
        chain.to_float(name, 1 / 255, by_dtype=True)
        return
    if name == "OpticalFlow":
        raise PipelineError("OpticalFlow takes an image pair and returns a pair; goprep.transforms.from_torchvision "
                            "converts single-image transforms (use one ObjectDetection-like pipeline per image)")
    if name not in ("ImageClassification", "SemanticSegmentation", "VideoClassification"):
        raise PipelineError(f"the torchvision preset {name} is not supported by goprep.transforms.from_torchvision")
    # VideoClassification hard-codes antialias=False (torchvision keeps its trained models' numbers)
    antialias = False if name == "VideoClassification" else t.antialias
    if t.resize_size is not None:  # SemanticSegmentation(resize_size=None) does not resize
        chain.geometric(name, Resize(name, t.resize_size, t.interpolation, antialias, None, "v1"))
    if name != "SemanticSegmentation":
        chain.geometric(name, CenterCrop(t.crop_size))
    chain.to_float(name, 1 / 255, by_dtype=True)
    _tv_normalize(t, chain)


def _tv_normalize(t: Any, chain: Chain) -> None:
    """A ``Normalize`` (or a preset's ``F.normalize``) of ``t.mean`` and ``t.std``."""
    name = type(t).__name__
    chain.normalize(name, *mean_std(t.mean, t.std, (f"{name}.mean", f"{name}.std")))


_NOOPS = ("Identity", "ToPureTensor", "SanitizeBoundingBoxes", "ClampBoundingBoxes", "ClampKeyPoints")


def _tv_api(t: Any) -> str:
    """Which torchvision API a transform's resize follows on tensors: ``"v2"`` for
    ``torchvision.transforms.v2`` classes (and subclasses), ``"v1"`` for ``torchvision.transforms``
    ones and timm's (which call ``torchvision.transforms.functional``)."""
    for cls in type(t).__mro__:
        mod = getattr(cls, "__module__", None) or ""
        if mod == "torchvision.transforms.v2" or mod.startswith("torchvision.transforms.v2."):
            return "v2"
        if mod.startswith("torchvision.transforms") or mod.startswith("timm."):
            return "v1"
    return "v2"


def _for_images(v: Any, default: Any) -> Any:
    """A v2 setting given per input type (``{tv_tensors.Image: x, ...}``): the images' (``Image`` or
    plain ``Tensor`` key), else ``default``; any other value as it is."""
    if not isinstance(v, dict):
        return v
    return next((x for k, x in v.items() if getattr(k, "__name__", "") in ("Image", "Tensor")), default)


def _tv_walk(t: Any, chain: Chain) -> None:
    name = type(t).__name__
    if name in ("Compose", "Sequential"):
        # torchvision's Compose([]) (and an empty nn.Sequential) returns its input: an identity.
        subs = t.transforms if hasattr(t, "transforms") else list(t)
        for sub in subs:
            _tv_walk(sub, chain)
        return
    if name in _NOOPS:
        chain.notes.append(f"skipped {name} (no effect on an image)")
        return
    if _is_preset(t):
        _tv_preset(t, chain)
        return
    if name != "RandomErasing" and any(hasattr(op, "finish") for op in chain.ops):
        raise PipelineError(f"{name} after RandomErasing: goprep erases the finished tensor, so RandomErasing must "
                            "come last")
    p = getattr(t, "p", None)
    if name in ("RandomHorizontalFlip", "RandomVerticalFlip"):
        # a flip commutes with the per-channel normalisation: allowed after the float conversion too
        if p == 0:
            chain.notes.append(f"skipped {name}(p=0) (never applied)")
        chain.ops.append(RandomFlip(name == "RandomHorizontalFlip", _prob(name, p)))
        return
    if name in _ONE_DRAW and p == 0:
        chain.notes.append(f"skipped {name}(p=0) (never applied)")
        # torchvision still draws torch.rand(1) for it (RandomPhotometricDistort draws several: refused
        # in a chain that draws); an identity that keeps a random chain's later draws in step
        chain.ops.append(DrawOnly(name, 0 if name == "RandomPhotometricDistort" else 1))
        return
    if name == "ColorJitter" and all(getattr(t, k, None) is None for k in ("brightness", "contrast", "saturation", "hue")):
        chain.notes.append("skipped ColorJitter with every factor 0 (no effect; its torch.randperm(4) is drawn)")
        chain.ops.append(DrawOnly(name, perm=4))
        return
    if name in ("RandomResizedCrop", "RandomResizedCropAndInterpolation"):
        _tv_random_resized_crop(t, chain)
    elif name == "RandomCrop":
        _tv_random_crop(t, chain)
    elif name in ("ColorJitter", "RandomGrayscale", "RandomErasing") or name == "RandomApply" and colour_only(t):
        tv_color(t, chain, _tv_api(t))
    elif name in _NOT_REPRODUCED:
        raise PipelineError(f"{name} is a random augmentation goprep does not reproduce (its draws or its numerics); "
                            "refused rather than approximated: remove it, or run it in torchvision after goprep")
    elif name == "Resize":
        op = Resize(name, t.size, t.interpolation, getattr(t, "antialias", True), t.max_size, _tv_api(t))
        chain.geometric(name, op)
    elif name == "CenterCrop":
        chain.geometric(name, CenterCrop(t.size))
    elif name == "CenterCropOrPad":  # timm's (crop_mode="border")
        if getattr(t, "padding_mode", "constant") != "constant":
            raise PipelineError(f"CenterCropOrPad(padding_mode={t.padding_mode!r}) is not supported by goprep (constant only)")
        chain.geometric(name, CenterCrop(t.size, t.fill))
    elif name == "ResizeKeepRatio":  # timm's
        if getattr(t, "random_scale_prob", 0) or getattr(t, "random_aspect_prob", 0):
            raise PipelineError("ResizeKeepRatio with random scaling is a training transform")
        chain.geometric(name, keep_ratio_op(pair(t.size), t.interpolation, float(t.longest)))
    elif name == "Pad":
        if t.padding_mode != "constant":
            raise PipelineError(f"Pad(padding_mode={t.padding_mode!r}) is not supported by goprep (constant only)")
        fill = _for_images(t.fill, 0)
        chain.geometric(name, Pad(t.padding, 0 if fill is None else fill))
    elif name == "Grayscale":
        chain.geometric(name, Gray(int(t.num_output_channels)))
    elif name in ("ToTensor", "MaybeToTensor"):  # MaybeToTensor: timm's ToTensor that passes tensors through
        chain.to_float(name, 1 / 255, by_dtype=True)
    elif name in ("PILToTensor", "ToImage", "MaybePILToTensor"):  # MaybePILToTensor: timm's, tensors pass through
        chain.to_tensor = True
    elif name in ("ToDtype", "ConvertImageDtype"):
        dname = str(_for_images(t.dtype, None))
        scale = True if name == "ConvertImageDtype" else bool(getattr(t, "scale", False))
        if dname == "torch.uint8":
            chain.notes.append(f"skipped {name}(torch.uint8) (the image is uint8 already)")
            return
        if dname != "torch.float32":
            raise PipelineError(f"{name}({dname}) is not supported by goprep (float32 only)")
        chain.to_float(name, 1 / 255 if scale else 1.0, by_dtype=scale)
    elif name == "Normalize":
        _tv_normalize(t, chain)
    else:
        raise PipelineError(f"{name} is not supported by goprep.transforms.from_torchvision")




# random transforms that torchvision draws one torch.rand(1) for when p is 0 (RandomPhotometricDistort: several)
_ONE_DRAW = ("RandomGrayscale", "RandomApply", "RandomErasing", "RandomInvert", "RandomPosterize", "RandomSolarize",
             "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "RandomPhotometricDistort")

# random augmentations refused by name (torchvision's v1 and v2, timm's); anything else unknown is
# refused by the generic rule
_NOT_REPRODUCED = frozenset((
    "RandAugment", "TrivialAugmentWide", "AutoAugment", "AugMix",
    "AugMixAugment", "RandomRotation", "RandomAffine", "RandomPerspective", "ElasticTransform",
    "RandomPhotometricDistort", "RandomChannelPermutation", "RandomInvert", "RandomPosterize", "RandomSolarize",
    "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize", "GaussianBlur", "GaussianNoise", "RandomApply",
    "RandomChoice", "RandomOrder", "RandomZoomOut", "RandomIoUCrop", "ScaleJitter", "RandomShortestSize",
    "RandomResize", "FiveCrop", "TenCrop", "MixUp", "CutMix", "RandomCropOrPad", "RandomResizedCropToSequence",
))


def _prob(name: str, p: Any) -> float:
    """A flip's ``p`` as a float (torchvision compares ``torch.rand(1) < p``: any real works)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p != p:
        raise PipelineError(f"{name}(p={p!r}): p must be a number")
    return float(p)


def _tv_random_resized_crop(t: Any, chain: Chain) -> None:
    """torchvision's ``RandomResizedCrop`` (v1, v2) or timm's ``RandomResizedCropAndInterpolation``
    (Python's ``random``; ``interpolation="random"`` a choice among its modes, per item)."""
    name = type(t).__name__
    timm = name == "RandomResizedCropAndInterpolation"
    interps = list(t.interpolation) if timm and isinstance(t.interpolation, (list, tuple)) else [t.interpolation]
    scale = _range(f"{name}.scale", list(t.scale), False)
    ratio = _range(f"{name}.ratio", list(t.ratio), True)
    # timm calls F.resized_crop with its default antialias (True)
    antialias = True if timm else getattr(t, "antialias", True)
    chain.geometric(name, RandomResizedCrop(name, pair(t.size), scale, ratio, interps, antialias, _tv_api(t), timm))


def _tv_random_crop(t: Any, chain: Chain) -> None:
    """torchvision's ``RandomCrop`` with constant padding (goprep's pad is constant; the other modes are
    refused by name). v2 keeps ``padding`` parsed as (left, right, top, bottom)."""
    api = _tv_api(t)
    pads = t.padding is not None or t.pad_if_needed
    if pads and t.padding_mode != "constant":
        raise PipelineError(f"RandomCrop(padding_mode={t.padding_mode!r}) is not supported by goprep (constant only)")
    padding = None
    if t.padding is not None:
        if api == "v2":
            left, right, top, bottom = (int(v) for v in t.padding)
            padding = (left, top, right, bottom)
        else:
            padding = parse_padding(t.padding)
    fill = _for_images(t.fill, 0)
    chain.geometric("RandomCrop", RandomCrop("RandomCrop", pair(t.size), padding, t.pad_if_needed,
                                             0 if fill is None else fill, api))
