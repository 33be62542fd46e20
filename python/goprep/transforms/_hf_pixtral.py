"""Pixtral's image processor (both of transformers' backends, read in transformers 5.25): each image
scaled down (never up) to fit ``size``'s longest edge (or height and width), each side floored, then
rounded up to a multiple of ``patch_size``; rescaled and normalised; the batch padded with zeros at the
bottom and right to its largest image after the normalisation (``do_pad``). Outputs ``pixel_values``
``(N, 3, H, W)`` float32 and ``image_sizes`` ``(N, 2)`` int64 (each image's resized size)."""

from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from ._chain import Chain
from ._hf_canvas import CanvasBatch, as_torch, check_no_out, resized_chain
from ._hf_images import Images
from ._hf_pixels import _hf_size

# Keys Pixtral's class reads beyond the generic ones.
PIXTRAL_KEYS = frozenset({"patch_size", "do_pad"})


class PixtralSize:
    """Pixtral's ``get_resize_output_image_size``, ``(h, w) -> (h, w)``: with ``ratio = max(h / max_h,
    w / max_w)`` above 1 each side ``floor(side / ratio)``; then each side rounded up to a multiple of its
    patch side (``(side - 1) // p + 1`` patches). A side floored to 0 (a very thin image) fails in the
    processor too."""

    def __init__(self, max_h: int, max_w: int, patch_h: int, patch_w: int) -> None:
        self.max_h, self.max_w, self.patch_h, self.patch_w = max_h, max_w, patch_h, patch_w

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        ratio = max(h / self.max_h, w / self.max_w)
        oh, ow = h, w
        if ratio > 1:
            oh, ow = int(math.floor(h / ratio)), int(math.floor(w / ratio))
        if oh < 1 or ow < 1:
            raise PipelineError(f"a {h}x{w} image scales to {oh}x{ow} pixels: Pixtral's resize fails on it too")
        return ((oh - 1) // self.patch_h + 1) * self.patch_h, ((ow - 1) // self.patch_w + 1) * self.patch_w


def _patch_size(v: Any) -> Tuple[int, int]:
    """``patch_size`` as ``(height, width)``: an int (a square) or a dict of both."""
    if _validate.is_int(v):
        n = _validate.as_positive_int("patch_size", v)
        return n, n
    if isinstance(v, Mapping) and v.get("height") is not None and v.get("width") is not None:
        return (_validate.as_positive_int("patch_size['height']", v["height"]),
                _validate.as_positive_int("patch_size['width']", v["width"]))
    raise PipelineError(f"must be an int or hold 'height' and 'width', got {v!r}", argument="patch_size")


class PixtralBatch(CanvasBatch):
    """Pixtral's processor: a call returns ``{"pixel_values": (N, 3, H, W) float32, "image_sizes": (N, 2)
    int64}`` as ``processor(images, return_tensors="pt")``: the batch padded to its largest image with
    zeros after the normalisation (one engine call); without ``do_pad`` the images must resize to one
    size (the processor cannot stack them otherwise)."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 do_pad: bool) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb)
        self._pixtral_pad = do_pad

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        check_no_out(out)
        import torch

        with Images(src, self.rgb()) as im:
            pv, final = self.canvas(im)
        if not self._pixtral_pad and len(set(final)) > 1:
            raise PipelineError(f"images of sizes {sorted(set(final))} after the resize cannot be stacked without "
                                "do_pad (the processor fails on them too)", argument="src")
        ph, pw = pv.shape[-2:]
        for i, (h, w) in enumerate(final):
            if (h, w) != (ph, pw):  # zeros after the normalisation, as the processor pads
                pv[i, :, h:, :] = 0
                pv[i, :, :h, w:] = 0
        return {"pixel_values": pv, "image_sizes": as_torch(final, torch.int64)}


def build_pixtral(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> PixtralBatch:
    """Pixtral's pipeline from a complete config (``_hf.from_hf``'s conversion)."""
    if cfg.get("do_center_crop"):
        raise PipelineError(f"True ({kind} reports image_sizes and pads by the sizes before the crop in the torchvision "
                            "class, after it in the PIL one; not reproduced)", argument="do_center_crop")
    raw = cfg.get("size")
    size = _hf_size(raw, True) if raw is not None else {}
    if "longest_edge" in size:
        mh = mw = size["longest_edge"]
    elif "height" in size and "width" in size:
        mh, mw = size["height"], size["width"]
    else:  # HF: "size must contain either 'longest_edge' or 'height' and 'width'."
        raise PipelineError(f"{raw!r} ({kind} needs longest_edge, or height and width)", argument="size")
    ph, pw = _patch_size(cfg.get("patch_size"))
    chain = resized_chain(cfg, kind, PixtralSize(mh, mw, ph, pw))
    return PixtralBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")),
                        bool(cfg.get("do_pad")))


# base name -> (the keys its class reads beyond the generic ones, the builder)
PIXTRAL = {"Pixtral": (PIXTRAL_KEYS, build_pixtral)}
