"""GLM-4V's image processor (``Glm4vImageProcessor`` and ``Glm4vImageProcessorPil``, read in transformers 5.25;
GLM-4.6V's ``Glm46VImageProcessor`` / ``...Pil`` run the same code):
Qwen2-VL's layout (the normalised image cut into ``(patches, C * T * P * P)`` rows ordered by ``merge x merge``
blocks, each patch repeated ``temporal_patch_size`` times, and ``image_grid_thw``), with GLM-4V's own
``smart_resize``: a side below ``factor`` first scales the image up (``int(side * scale)``), and the pixel
bounds count the temporal axis (``t * h * w`` against ``size``'s ``shortest_edge`` / ``longest_edge``, which
are pixel counts). The layout is Qwen2-VL's ``PatchBatch`` (``_hf_patches``), given this sizing."""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from ._hf_canvas import resized_chain
from ._hf_patches import PatchBatch

# Keys GLM-4V's class reads beyond the generic ones (do_center_crop is taken and never applied).
GLM4V_KEYS = frozenset({"patch_size", "temporal_patch_size", "merge_size"})


class GlmSmartSize:
    """GLM-4V's ``smart_resize(num_frames=t, h, w, temporal_factor=t, factor, min_pixels, max_pixels)``,
    ``(h, w) -> (h, w)``: a side below ``factor`` scales the image by ``max(factor / h, factor / w)``
    (each side truncated); an aspect ratio above 200 raises; each side rounded (half to even) to a multiple
    of ``factor``; if ``t * h * w`` (``t`` rounded to a multiple of the temporal factor) passes ``max_pixels``
    both sides are floored to a multiple after dividing by ``sqrt(t * h * w / max_pixels)`` (at least
    ``factor``), below ``min_pixels`` ceiled after multiplying by ``sqrt(min_pixels / (t * h * w))``."""

    def __init__(self, factor: int, temporal: int, min_pixels: int, max_pixels: int) -> None:
        self.factor, self.temporal, self.min_pixels, self.max_pixels = factor, temporal, min_pixels, max_pixels

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        f, t = self.factor, self.temporal
        if h < f or w < f:
            scale = max(f / h, f / w)
            h, w = int(h * scale), int(w * scale)
        if max(h, w) / min(h, w) > 200:
            raise PipelineError(f"a {h}x{w} image: GLM-4V's smart_resize needs an aspect ratio below 200")
        hb, wb, tb = round(h / f) * f, round(w / f) * f, round(t / t) * t
        if tb * hb * wb > self.max_pixels:
            beta = math.sqrt((t * h * w) / self.max_pixels)
            hb, wb = max(f, math.floor(h / beta / f) * f), max(f, math.floor(w / beta / f) * f)
        elif tb * hb * wb < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (t * h * w))
            hb, wb = math.ceil(h * beta / f) * f, math.ceil(w * beta / f) * f
        if hb < 1 or wb < 1:
            raise PipelineError(f"a {h}x{w} image: GLM-4V's smart_resize gives {hb}x{wb}")
        return hb, wb


def build_glm4v(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> PatchBatch:
    """GLM-4V's pipeline from a complete config; its resize needs ``size``'s ``shortest_edge`` and
    ``longest_edge`` (the class raises otherwise). Without ``do_resize`` an image whose sides are not
    multiples of ``patch_size * merge_size`` fails at the call, as the class's reshape does."""
    patch, temporal, merge = (_validate.as_positive_int(k, cfg.get(k)) for k in ("patch_size", "temporal_patch_size",
                                                                                  "merge_size"))
    size = cfg.get("size")
    resize = bool(cfg.get("do_resize", True))
    sizer = None
    if resize:
        if not isinstance(size, Mapping) or not size.get("shortest_edge") or not size.get("longest_edge"):
            raise PipelineError(f"{size!r} ({kind}'s resize needs shortest_edge and longest_edge, pixel counts)",
                                argument="size")
        lo = _validate.as_positive_int("size['shortest_edge']", size["shortest_edge"])
        hi = _validate.as_positive_int("size['longest_edge']", size["longest_edge"])
        sizer = GlmSmartSize(patch * merge, temporal, lo, hi)
    chain = resized_chain({**cfg, "do_resize": resize}, kind, sizer if sizer is not None else (lambda h, w: (h, w)))
    return PatchBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), patch, temporal,
                      merge)


# base name -> (the keys its class reads beyond the generic ones, the builder). GLM-4.6V's classes
# (Glm46VImageProcessor, ...Pil) are GLM-4V's code, generated from it (read in 5.25: the same statements).
GLM4V = {"Glm4v": (GLM4V_KEYS, build_glm4v), "Glm46V": (GLM4V_KEYS, build_glm4v)}
