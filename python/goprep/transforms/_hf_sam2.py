"""SAM2's and SAM3's image processors (``Sam2ImageProcessor``, ``Sam3ImageProcessor``: torchvision backend
only, read in transformers 5.25; the two classes' code is the same, their defaults differ: 1024 x 1024 with
ImageNet's mean and std, 1008 x 1008 with 0.5). Unlike SAM's, their pixel path is the backend's generic one:
each image resized to ``size`` (``height`` / ``width``, or the other forms the generic resize reads), an
optional center crop, rescale and normalise, and with ``do_pad`` (off: the classes set it None) the batch
padded at the bottom and right to ``pad_size`` or its largest image, with zeros after the normalisation.

Outputs, as ``processor(images, return_tensors="pt")``: ``pixel_values`` ``(N, 3, H, W)`` float32 and
``original_sizes`` ``(N, 2)`` int64 (each image's size before the resize; the classes return no
``reshaped_input_sizes``). The batch runs as one engine call (``_hf_layout.PaddedBatch``)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ._hf_layout import PaddedBatch
from ._hf_pixels import hf_chain

# Keys the classes read beyond the generic ones: the backend's pad, and mask_size (applied to
# segmentation maps only, which the pipeline does not take); mask_pad_size is never read by their code.
SAM2_KEYS = frozenset({"do_pad", "pad_size", "mask_size", "mask_pad_size"})


class Sam2Batch(PaddedBatch):
    """SAM2's / SAM3's processor: ``{"pixel_values", "original_sizes"}`` (see the module)."""

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        res = super().__call__(src, out=out)
        del res["reshaped_input_sizes"]  # SAM's output; SAM2 and SAM3 return original_sizes only
        return res


def build_sam2(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Sam2Batch:
    """SAM2's or SAM3's pipeline from a complete config (``_hf.from_hf``'s conversion)."""
    from ._hf import _pad_size  # the pad_size reading shared with DETR's family and SAM (no import cycle at load)

    pad = bool(cfg.get("do_pad"))
    return Sam2Batch(hf_chain(cfg, kind, "Sam2"), f"Hugging Face {kind}", flavor, device,
                     bool(cfg.get("do_convert_rgb")), pad, _pad_size(cfg.get("pad_size")) if pad else None,
                     mask=False, sizes=True)


# base name -> (the keys its class reads beyond the generic ones, the builder)
SAM2 = {"Sam2": (SAM2_KEYS, build_sam2), "Sam3": (SAM2_KEYS, build_sam2)}
