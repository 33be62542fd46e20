"""Donut's pixel path (both of transformers' backends): the shorter side resized to the smaller side
of ``size``, then a thumbnail (a second resize fitting the image inside ``size``, keeping its aspect),
then a centred zero pad to ``size``, an optional center crop, rescale and normalise. Two resizes in a
row round to uint8 between them, as the processor does: the first runs as its own engine pass (a
``host`` step of the chain, see Converted._pipe), the rest fused."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from .. import _ops
from .._errors import PipelineError
from .._pipeline import pipeline
from ._chain import Chain
from ._steps import Resize

# Keys Donut's class reads beyond the generic ones.
DONUT_KEYS = frozenset({"do_thumbnail", "do_align_long_axis", "do_pad"})


class ThumbSize:
    """Donut's ``thumbnail`` sizing, ``(h, w) -> (h, w)``: each side capped at ``size``'s; unless both
    already fit, the other side of the longer one scaled with it, truncated (a square caps both)."""

    def __init__(self, height: int, width: int) -> None:
        self.height, self.width = height, width

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        oh, ow = min(h, self.height), min(w, self.width)
        if (oh, ow) == (h, w):
            return h, w
        if h > w:
            ow = int(w * oh / h)
        elif w > h:
            oh = int(h * ow / w)
        if oh < 1 or ow < 1:
            raise PipelineError(f"a {h}x{w} image's thumbnail is {oh}x{ow} pixels: the processor fails on it too")
        return oh, ow


class HostResize:
    """A resize run as its own engine pass, outside the fused chain (an Op whose ``host`` gives the
    NumPy step): the uint8 image resized with the flavor's numerics (``Resize``) and rounded, so
    that a second resize can follow, as in the processor."""

    def __init__(self, inner: Resize) -> None:
        self.inner = inner
        self._pipes: Dict[str, Any] = {}

    def __getstate__(self) -> Dict[str, Any]:
        return {"inner": self.inner, "_pipes": {}}

    def __call__(self, img: Any, flavor: str) -> Any:  # only through host (see Converted._pipe)
        raise PipelineError("internal: HostResize runs through host()")

    def host(self, flavor: str) -> Callable[[np.ndarray], np.ndarray]:
        p = self._pipes.get(flavor)
        if p is None:
            inner = self.inner

            def first_resize(img: Any) -> Any:
                return inner(img, flavor)

            p = self._pipes[flavor] = pipeline(first_resize, device="cpu", output="numpy")
        return p  # type: ignore[no-any-return]


class Thumbnail:
    """Donut's thumbnail resize (an Op): ``Resize`` to ThumbSize with the class's resample (``interp``),
    in the PIL class ``pil_interp`` (its ``resample or BICUBIC``: bicubic for NEAREST, 0, or None)."""

    def __init__(self, size: Tuple[int, int], interp: Any, pil_interp: Any) -> None:
        self.tensor = Resize("thumbnail", ThumbSize(*size), interp, True, None, "v2")
        self.pil = Resize("thumbnail", ThumbSize(*size), pil_interp, True, None, "v2")

    def __call__(self, img: Any, flavor: str) -> Any:
        return (self.pil if flavor == "pil" else self.tensor)(img, flavor)


class CenterPadTo:
    """Donut's ``pad_image`` (an Op): zeros around the image up to ``(h, w)``, ``delta // 2`` before
    (goprep's centred ``pad(size=)``)."""

    def __init__(self, h: int, w: int) -> None:
        self.h, self.w = h, w

    def __call__(self, img: Any, flavor: str) -> Any:
        if img.height > self.h or img.width > self.w:
            raise PipelineError(f"a {img.height}x{img.width} image is larger than size {self.h}x{self.w}: Donut's "
                                "pad would crop it (torchvision) or fail (NumPy)", argument="size")
        return _ops.pad(img, size=(self.h, self.w), value=0, center=True)


def donut_geometry(chain: Chain, cfg: Dict[str, Any], kind: str, size: Optional[Dict[str, int]], interp: Any,
                   pil_thumb_interp: Any) -> None:
    """Donut's geometric steps onto ``chain`` (``size``: the config's as a dict, ``interp``: its
    resample, ``pil_thumb_interp``: the PIL class's for the thumbnail): the resize of the shorter side,
    the thumbnail, the pad."""
    if cfg.get("do_align_long_axis"):
        raise PipelineError(f"True ({kind} rotates the image by 90 degrees where its long axis differs from size's; "
                            "goprep has no rotation)", argument="do_align_long_axis")
    if size is None or "height" not in size or "width" not in size:
        raise PipelineError(f"{cfg.get('size')!r} ({kind} needs height and width)", argument="size")
    h, w = size["height"], size["width"]
    if cfg.get("do_pad") and not cfg.get("do_thumbnail"):
        raise PipelineError(f"True without do_thumbnail ({kind} pads an image larger than size by cropping it in the "
                            "torchvision class and fails in the PIL one; not reproduced)", argument="do_pad")
    if cfg.get("do_resize", True):
        chain.geometric("resize", HostResize(Resize("resize", min(h, w), interp, True, None, "v2")))
    if cfg.get("do_thumbnail"):
        chain.geometric("thumbnail", Thumbnail((h, w), interp, pil_thumb_interp))
    if cfg.get("do_pad"):
        chain.geometric("pad", CenterPadTo(h, w))
