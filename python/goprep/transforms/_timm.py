"""``from_timm``: timm's eval transform from its ``resolve_data_config`` dict (timm is not needed), and
timm's ``ResizeKeepRatio`` sizing, which ``from_torchvision`` also meets in timm's transform objects."""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping, Tuple

from .. import _validate
from .._errors import PipelineError
from ._chain import NO_DIM_LIMIT, Chain, mean_std, refusals
from ._converted import Converted
from ._steps import CenterCrop, Resize, interp_mode


def from_timm(data_config: Mapping[str, Any], *, device: str = "auto") -> Converted:
    """A goprep pipeline computing ``timm.data.create_transform(**data_config, is_training=False)``
    from timm's ``resolve_data_config`` dict (``input_size``, ``interpolation``, ``crop_pct``,
    ``crop_mode``, ``mean``, ``std``); timm is not needed. timm's resize is
    ``torchvision.transforms`` (v1), so tensors get v1's numerics. A value it cannot read raises
    ``goprep.PipelineError`` naming the key (``.argument``)."""
    return Converted(_timm_chain(data_config), "timm eval transform", device=device)


@refusals
def _timm_chain(data_config: Mapping[str, Any]) -> Chain:
    if not isinstance(data_config, Mapping):
        raise PipelineError(f"must be a dict (timm's resolve_data_config), got {type(data_config).__name__}",
                            argument="data_config")
    input_size = data_config.get("input_size", (3, 224, 224))
    channels, hw = 3, input_size
    if isinstance(input_size, (list, tuple)) and len(input_size) == 3:  # (channels, height, width)
        channels, hw = _validate.as_positive_int("input_size", input_size[0]), tuple(input_size[1:])
    img = _validate.parse_size(hw, NO_DIM_LIMIT, "input_size")
    pct = data_config.get("crop_pct")
    # timm: ``crop_pct or 0.875`` (None and 0 take the default; NaN fails in its math.floor)
    zero = pct is None or (isinstance(pct, numbers.Real) and pct == 0)
    crop_pct = 0.875 if zero else _validate.as_positive_float32("crop_pct", pct)
    crop_mode = _validate.as_choice("crop_mode", data_config.get("crop_mode") or "center", ("center", "squash", "border"))
    interp = data_config.get("interpolation", "bilinear")
    if interp == "random":
        raise PipelineError("'random' is a training setting; from_timm converts eval transforms", argument="interpolation")
    interp_mode("interpolation", interp)
    scale = tuple(math.floor(x / crop_pct) for x in img)
    if min(scale) < 1:
        raise PipelineError(f"{crop_pct} resizes {img} to {scale}", argument="crop_pct")
    mean, std = mean_std(data_config.get("mean", (0.485, 0.456, 0.406)), data_config.get("std", (0.229, 0.224, 0.225)),
                         channels=channels)
    chain = Chain()
    if crop_mode == "squash":
        chain.geometric("Resize", Resize("Resize", scale, interp, True, None, "v1"))
        chain.geometric("CenterCrop", CenterCrop(img))
    elif crop_mode == "border":
        # the longer side fits 1/crop_pct of the target, then padded (with the mean colour, as timm
        # rounds it) and cropped to the target: nothing of the image is lost at crop_pct 1
        chain.geometric("ResizeKeepRatio", keep_ratio_op(scale, interp, 1.0))
        chain.geometric("CenterCropOrPad", CenterCrop(img, [round(255 * v) for v in mean]))
    else:
        if scale[0] == scale[1]:
            chain.geometric("Resize", Resize("Resize", scale[0], interp, True, None, "v1"))
        else:
            chain.geometric("ResizeKeepRatio", keep_ratio_op(scale, interp))
        chain.geometric("CenterCrop", CenterCrop(img))
    chain.to_float("MaybeToTensor", 1 / 255)
    chain.normalize("Normalize", mean, std)
    return chain


class _KeepRatioSize:
    """timm's ``ResizeKeepRatio(size, longest)`` sizing, ``(h, w) -> (h, w)``: the ratio blends the
    per-axis ratios (``max * longest + min * (1 - longest)``; 0 covers ``target``), sides
    ``round(side / ratio)``."""

    def __init__(self, target: Tuple[int, int], longest: float) -> None:
        self.target, self.longest = target, longest

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        rh, rw = h / self.target[0], w / self.target[1]
        ratio = max(rh, rw) * self.longest + min(rh, rw) * (1.0 - self.longest)
        return (max(1, round(h / ratio)), max(1, round(w / ratio)))


def keep_ratio_op(target: Tuple[int, int], interp: Any, longest: float = 0.0) -> Resize:
    """timm's ``ResizeKeepRatio``: ``_KeepRatioSize``, then torchvision's v1 ``F.resize`` (antialias=True)."""
    return Resize("ResizeKeepRatio", _KeepRatioSize(target, longest), interp, True, None, "v1")
