"""Processor classes that goprep refuses with the reason measured (transformers 5.25, 1080p photos,
goprep's nearest reproduction against the class, in uint8 levels before the normalisation), rather than
with the generic "code of its own" refusal: each needs an engine step goprep does not have."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .._errors import PipelineError

# The keys the classes read beyond the generic ones (read, so that the refusal below gives the reason).
OWLV2_KEYS = frozenset({"do_pad"})
ZOEDEPTH_KEYS = frozenset({"do_pad", "keep_aspect_ratio", "ensure_multiple_of"})

_WHY = {
    "Owlv2": "rescales to float, pads to a square, blurs with a Gaussian (sigma (factor - 1) / 2, torchvision's "
             "gaussian_blur in the torchvision class, scipy's gaussian_filter in the PIL one) and resizes the floats "
             "without antialias; goprep's engine has no Gaussian blur, and its antialiased resize is up to 23 uint8 "
             "levels away (8.5% of values above 1 level) on 1080p photos",
    "ZoeDepth": "rescales to float, pads by reflection (do_pad) and resizes with interpolate(align_corners=True); "
                "goprep's engine has neither step (its half-pixel bilinear is up to 155 uint8 levels away, 37% of "
                "values above 1 level, on 1080p photos with do_pad=False)",
}


def _refuse(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Any:
    base = next(b for b in _WHY if kind.startswith(b))
    raise PipelineError(f"{kind} {_WHY[base]}: refused rather than converted to something different",
                        argument="processor_or_config")


# base name -> (the keys its class reads beyond the generic ones, the builder: a refusal with the reason)
REFUSED = {"Owlv2": (OWLV2_KEYS, _refuse), "ZoeDepth": (ZOEDEPTH_KEYS, _refuse)}
