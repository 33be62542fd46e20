"""The pixel path of a Hugging Face processor's complete config (read and checked by ``_hf``): resize,
center crop, rescale and normalise as a converted chain, with the sizing rules of the classes that have
their own."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from .. import _validate
from .._errors import PipelineError
from ._chain import NO_DIM_LIMIT, Chain, mean_std
from ._hf_layout import DETR_FAMILY, HFCenterCrop, LongestSize, MultipleSize, detr_size
from ._hf_donut import donut_geometry
from ._hf_patches import SmartSize, qwen2vl_size
from ._steps import Cvt, Resize, interp_mode, tv_size

_HF_SIZE_KEYS = ("height", "width", "shortest_edge", "longest_edge", "max_height", "max_width")

# Processor types (of those goprep covers) whose int ``size`` is a square: transformers'
# ``default_to_square = True``, its base class's default. CLIP, SigLIP and ConvNeXt set it False (the
# shorter side), and goprep reads any other type's int that way too.
_HF_SQUARE = ("ViT", "DeiT", "Beit")


# Classes on the generic path whose LANCZOS goprep does not reproduce, and why (measured: transformers 5.25).
_NO_LANCZOS = {
    "DepthPro": "resizes with antialias=False, which torchvision's LANCZOS refuses",
    "DINOv3ViT": "rescales before it resizes: PyTorch's float lanczos, unclamped, which goprep's uint8 resize misses "
                 "by up to 2.8 uint8 levels on a photo (its overshoot clamped)",
}


def hf_chain(cfg: Dict[str, Any], kind: str, base: str) -> Chain:
    """The chain of a complete config of class ``kind`` (``base``: its name without the processor
    suffixes): resize, center crop, channel order, rescale, normalise, each as the class runs it."""
    chain = Chain()
    interp = cfg.get("resample")
    interp = 2 if interp is None else interp  # HF resizes bilinearly when resample is unset
    if interp_mode("resample", interp) == "lanczos" and base in _NO_LANCZOS:
        raise PipelineError(f"1 (LANCZOS: {kind} {_NO_LANCZOS[base]})", argument="resample")
    if _validate.is_int(interp) and int(interp) == 0:
        # PIL's NEAREST: transformers' torchvision backend maps it to NEAREST_EXACT
        # (pil_torch_interpolation_mapping); PilBackend's Pillow NEAREST is goprep's for either name
        interp = "nearest-exact"

    def resize(size: Any) -> Any:  # the torchvision backend's tvF.resize (v2, antialias=True)
        if base == "DepthPro":  # rescale and normalize first, then tvF.resize(antialias=False) of the floats
            return _FloatResize(Resize("resize", size, interp, False, None, "v2"))
        # (LANCZOS: Pillow's in the PIL class, PyTorch's uint8 lanczos in the torchvision one, or its
        # BICUBIC where torchvision is older than 0.27: Resize(hf=True))
        return Resize("resize", size, interp, True, None, "v2", hf=True)

    if base == "Donut":  # the resize, the thumbnail (a second resize) and the pad, whatever do_resize says
        donut_geometry(chain, cfg, kind, None if cfg.get("size") is None else _hf_size(cfg["size"], True), interp,
                       interp if cfg.get("resample") else 3)
    elif cfg.get("do_resize", True):
        _hf_resize(chain, cfg, kind, base, resize)
    if cfg.get("do_center_crop", False):
        chain.geometric("center_crop", HFCenterCrop(_hf_crop_size(cfg.get("crop_size"))))
    if base == "MobileViT" and cfg.get("do_flip_channel_order"):
        chain.geometric("flip_channel_order", Cvt("rgb2bgr"))  # a channel permutation: before the rescale
    if base == "PPLCNet":  # RGB -> BGR after the normalisation: here, with mean and std reversed below
        chain.geometric("RGB -> BGR", Cvt("rgb2bgr"))
    do_rescale = cfg.get("do_rescale", True)
    if do_rescale:
        rf = cfg.get("rescale_factor")
        chain.to_float("rescale", 1 / 255 if rf is None else _validate.as_positive_float32("rescale_factor", rf))
    else:
        chain.to_float("rescale", 1.0)
    if base == "EfficientNet" and do_rescale and cfg.get("rescale_offset"):
        chain.normalize("rescale_offset", [1.0], [1.0])  # EfficientNet's rescale(offset=True): x * f - 1
    if base == "Vivit" and do_rescale and cfg.get("offset"):
        chain.normalize("offset", [1.0], [1.0])  # Vivit's rescale(offset=True): x * f - 1
    std: Optional[List[float]] = None
    if cfg.get("do_normalize", True) and base != "MobileViT":  # MobileViT's code never normalises
        mean, std = mean_std(cfg.get("image_mean", 0.5), cfg.get("image_std", 0.5), ("image_mean", "image_std"),
                             channels=3)  # pixel_values are RGB
        if base == "PPLCNet":  # the channels were reversed before the normalisation (above)
            mean, std = mean[::-1], std[::-1]
        chain.normalize("normalize", mean, std)
    if base == "EfficientNet" and cfg.get("include_top"):  # normalize(image, 0, image_std) once more
        if std is None:
            std = _validate.float32_values("image_std", cfg.get("image_std", 0.5), nonzero=True, channels=3)
        chain.normalize("include_top", [0.0], std)
    return chain


def _hf_resize(chain: Chain, cfg: Dict[str, Any], kind: str, base: str, resize: Callable[[Any], Any]) -> None:
    """The config's resize (and ConvNeXt's crop below 384) onto ``chain``; ``resize(size)``: the op
    resizing to a torchvision size or a sizing function."""
    if base == "PPLCNet" and cfg.get("resize_short") is not None:
        div = cfg.get("size_divisor")
        short = _validate.as_positive_int("resize_short", cfg["resize_short"])
        chain.geometric("resize", resize(_ShortDivisorSize(short, None if div is None else
                                                           _validate.as_positive_int("size_divisor", div))))
        return
    if base == "GLPN":
        div = _validate.as_positive_int("size_divisor", cfg.get("size_divisor"))
        chain.geometric("resize", resize(_DivisorSize(div, floor=True)))
        return
    raw = cfg.get("size")
    square = cfg.get("default_to_square")
    square = kind.startswith(_HF_SQUARE) if square is None else bool(square)
    if raw is None:
        raise PipelineError(f"None ({kind} resizes but sets no size; goprep reproduces sizing by 'height' and "
                            "'width' or by 'shortest_edge')", argument="size")
    size = _hf_size(raw, square)
    pool_pct = cfg.get("crop_pct") if base == "PoolFormer" else None
    if base == "Levit" and "shortest_edge" in size:  # LeViT's resize: the shorter side to 256/224 of it
        chain.geometric("resize", resize(int((256 / 224) * size["shortest_edge"])))
    elif pool_pct is not None:  # PoolFormer's resize (an int is a shorter side, a pair exact)
        pct = _validate.as_positive_float32("crop_pct", pool_pct)
        if "shortest_edge" in size:
            target: Any = int(size["shortest_edge"] / pct)
        elif "height" in size and "width" in size:
            h, w = size["height"], size["width"]
            target = int(h / pct) if h == w else (int(h / pct), int(w / pct))
        else:
            raise PipelineError(f"{raw!r} (PoolFormer's resize needs shortest_edge or height and width)",
                                argument="size")
        if (min(target) if isinstance(target, tuple) else target) < 1:
            raise PipelineError(f"{pct} resizes to {target}", argument="crop_pct")
        chain.geometric("resize", resize(target))
    elif base in ("ConvNext", "ConvNeXt"):
        if "shortest_edge" not in size:  # HF: "Size dictionary must contain 'shortest_edge' key"
            raise PipelineError(f"ConvNeXt's resize needs 'shortest_edge', got {raw!r}", argument="size")
        se = size["shortest_edge"]
        pct = cfg.get("crop_pct")
        crop_pct = 224 / 256 if pct is None else _validate.as_positive_float32("crop_pct", pct)
        if se < 384:
            if int(se / crop_pct) < 1:
                raise PipelineError(f"{crop_pct} resizes the shorter side to {int(se / crop_pct)}", argument="crop_pct")
            chain.geometric("resize", resize(int(se / crop_pct)))
            chain.geometric("center_crop", HFCenterCrop((se, se)))
        else:
            chain.geometric("resize", resize((se, se)))
    elif base == "DPT":  # DPT's resize: height and width required, then its aspect and multiple rule
        if "height" not in size or "width" not in size:  # HF: "must contain the keys 'height' and 'width'"
            raise PipelineError(f"{raw!r} ({kind}'s resize needs height and width)", argument="size")
        m = cfg.get("ensure_multiple_of")
        m = 1 if m is None else _validate.as_positive_int("ensure_multiple_of", m)
        keep = bool(cfg.get("keep_aspect_ratio"))
        chain.geometric("resize", resize(MultipleSize(size["height"], size["width"], keep, m)))
    elif base == "Sam":  # SAM's resize: the longer side, each side rounded half up
        if "longest_edge" not in size:  # HF: "The `size` dictionary must contain the key `longest_edge`"
            raise PipelineError(f"{raw!r} ({kind}'s resize needs longest_edge)", argument="size")
        chain.geometric("resize", resize(LongestSize(size["longest_edge"])))
    elif base == "Qwen2VL":  # smart_resize: a multiple of patch_size * merge_size, the pixels bounded
        lo, hi = qwen2vl_size(cfg, size, kind)
        factor = _validate.as_positive_int("patch_size", cfg.get("patch_size")) * \
            _validate.as_positive_int("merge_size", cfg.get("merge_size"))
        chain.geometric("resize", resize(SmartSize(factor, lo, hi)))
    elif base in DETR_FAMILY:  # DETR's own resize: the same rules in another order, nothing else
        chain.geometric("resize", resize(detr_size(size, raw, kind)))
    elif "height" in size and "width" in size:
        chain.geometric("resize", resize((size["height"], size["width"])))
    elif base == "TextNet":  # the shorter side, then each side rounded up to a multiple of size_divisor
        if "shortest_edge" not in size:  # HF: "Size must contain 'shortest_edge' key"
            raise PipelineError(f"TextNet's resize needs 'shortest_edge', got {raw!r}", argument="size")
        div = _validate.as_positive_int("size_divisor", cfg.get("size_divisor"))
        chain.geometric("resize", resize(_DivisorSize(div, floor=False, shortest_edge=size["shortest_edge"])))
    elif "shortest_edge" in size and "longest_edge" not in size:
        chain.geometric("resize", resize(size["shortest_edge"]))
    else:  # (the backends' shortest_edge-with-longest_edge and max_height rules: for DETR's family only, above)
        raise PipelineError(f"{raw!r} is not supported by goprep.transforms.from_hf "
                            "(height and width, or shortest_edge alone)", argument="size")


def _hf_size(v: Any, square: bool) -> Dict[str, int]:
    """A processor's ``size`` as a dict of positive ints: an int is ``shortest_edge`` (or a square
    for ``square`` kinds), a pair ``(height, width)``; None entries (unset keys of a SizeDict) are
    dropped."""
    if _validate.is_int(v):
        n = _validate.as_positive_int("size", v)
        return {"height": n, "width": n} if square else {"shortest_edge": n}
    if isinstance(v, (list, tuple)) and len(v) == 2:
        h, w = _validate.parse_size(v, NO_DIM_LIMIT, "size")
        return {"height": h, "width": w}
    if isinstance(v, Mapping):
        return {str(_validate.as_choice("size", k, _HF_SIZE_KEYS)): _validate.as_positive_int(f"size[{k!r}]", x)
                for k, x in v.items() if x is not None}
    raise PipelineError(f"must be an int, a (height, width) pair or a dict such as {{'shortest_edge': 224}}, got {v!r}",
                        argument="size")


def _hf_crop_size(crop: Any) -> Tuple[int, int]:
    """``crop_size`` as ``(height, width)``: a dict of both, an int (a square) or a pair."""
    if not isinstance(crop, Mapping):
        return _validate.parse_size(crop, NO_DIM_LIMIT, "crop_size")
    if crop.get("height") is None or crop.get("width") is None:
        raise PipelineError(f"must hold 'height' and 'width', got {crop!r}", argument="crop_size")
    return (_validate.as_positive_int("crop_size['height']", crop["height"]),
            _validate.as_positive_int("crop_size['width']", crop["width"]))


class _ShortDivisorSize:
    """PPLCNet's sizing, ``(h, w) -> (h, w)``: each side ``round(side * short / min(h, w))``, then
    rounded up to a multiple of ``divisor`` (when given)."""

    def __init__(self, short: int, divisor: Optional[int]) -> None:
        self.short, self.divisor = short, divisor

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        scale = self.short / min(h, w)
        oh, ow = round(h * scale), round(w * scale)
        if self.divisor is not None:
            oh, ow = (math.ceil(v / self.divisor) * self.divisor for v in (oh, ow))
        return oh, ow


def round_up(h: int, w: int, d: int) -> Tuple[int, int]:
    """``(h, w)`` with each side rounded up to a multiple of ``d`` (kept for ``d`` 0): the classes'
    ``size_divisor`` padding and sizing."""
    return (-(-h // d) * d, -(-w // d) * d) if d > 0 else (h, w)


class _DivisorSize:
    """``size_divisor`` sizing, ``(h, w) -> (h, w)``: GLPN's (each side floored to a multiple, the
    image's own size otherwise kept) or TextNet's (the shorter side to ``shortest_edge`` as
    torchvision's int size, then each side rounded up to a multiple)."""

    def __init__(self, divisor: int, floor: bool, shortest_edge: Optional[int] = None) -> None:
        self.divisor, self.floor, self.shortest_edge = divisor, floor, shortest_edge

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        d = self.divisor
        if self.shortest_edge is not None:
            h, w = tv_size(h, w, self.shortest_edge)
        if self.floor:
            if h < d or w < d:
                raise PipelineError(f"a {h}x{w} image has a side below size_divisor {d}: GLPN resizes it to 0 pixels")
            return h // d * d, w // d * d
        return round_up(h, w, d)


class _FloatResize:
    """A resize of the rescaled and normalised floats (DepthPro: ``tvF.resize(antialias=False)`` after
    ``rescale_and_normalize``), an Op that always runs outside the engine (``host``): the uint8 image
    as float32, resized unrounded with PyTorch's float kernels (``Resize.float32``). Interpolation
    without antialias is a weighted sum whose weights add up to 1, so it commutes with the affine
    normalisation that follows in the last fused step (to float32 rounding)."""

    def __init__(self, inner: Resize) -> None:
        self.inner = inner

    def __call__(self, img: Any, flavor: str) -> Any:  # only through host (see Converted._pipe)
        raise PipelineError("internal: _FloatResize runs through host()")

    def host(self, flavor: str) -> Callable[[np.ndarray], np.ndarray]:
        return self.inner.float32
