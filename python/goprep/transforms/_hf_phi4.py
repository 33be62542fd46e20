"""Phi-4 multimodal's image processor (``Phi4MultimodalImageProcessor``, torchvision backend only, in transformers
5.25's ``IMAGE_PROCESSOR_MAPPING_NAMES``), refused by name with its reason rather than the generic "code of its
own": its ``_preprocess`` (read in 5.25) resizes each image to a grid of ``size`` crops (up to ``dynamic_hd``, 36),
pads it with white (255) at the bottom and right, normalises, and builds its global crop by resizing the
*normalised, padded* float image to ``size`` bicubic without antialias; it returns ``image_pixel_values``
``(N, crops + 1, 3, 448, 448)`` padded with zero crops, ``image_attention_mask`` per 14-pixel patch and the
``num_img_tokens`` list. goprep has no pipeline for that layout yet (the white pad and the float bicubic resize
of the padded image are the steps not built), so the class is refused, not approximated."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .._errors import PipelineError

# Keys Phi-4 multimodal's class reads beyond the generic ones (read, so that the refusal gives the reason).
PHI4_KEYS = frozenset({"patch_size", "dynamic_hd"})


def refuse_phi4(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Any:
    """The refusal of Phi-4 multimodal's processor, naming what goprep does not build."""
    raise PipelineError(f"{kind} pads each image with white to its grid of crops and resizes the normalised, padded "
                        "float image bicubic without antialias for its global crop (image_pixel_values, "
                        "image_attention_mask, num_img_tokens); goprep has no pipeline for this layout yet: refused "
                        "rather than converted to something different", argument="processor_or_config")


# base name -> (the keys its class reads beyond the generic ones, the builder: a refusal with the reason)
PHI4 = {"Phi4Multimodal": (PHI4_KEYS, refuse_phi4)}
