"""SigLIP2's NaFlex image processor (both of transformers' backends, read in transformers 5.25): each image
resized to the largest size whose sides are multiples of ``patch_size`` with at most ``max_num_patches``
patches (the class's binary search over a scale, reproduced with the same float arithmetic), rescaled and
normalised, cut into ``patch_size`` squares, each flattened channel-last (``(P, P, C)``), and the sequence
padded with zero rows to ``max_num_patches``. Outputs ``pixel_values`` ``(N, max_num_patches, P * P * C)``
float32, ``pixel_attention_mask`` ``(N, max_num_patches)`` int32 (1 on the image's patches) and
``spatial_shapes`` ``(N, 2)`` int64 (the patch grid). The batch's images run as one engine call (each
padded to the largest resized size); the patch sequences are PyTorch reshapes of its result."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from ._chain import Chain
from ._hf_canvas import CanvasBatch, as_torch, check_no_out, resized_chain
from ._hf_images import Images

# Keys SigLIP2's class reads beyond the generic ones.
SIGLIP2_KEYS = frozenset({"patch_size", "max_num_patches"})


def _scaled(scale: float, size: int, patch: int) -> int:
    """SigLIP2's ``get_scaled_image_size``: ``size * scale`` rounded up to a multiple of ``patch``, at
    least one patch."""
    s = math.ceil(size * scale / patch) * patch
    return int(max(patch, s))


class NaFlexSize:
    """SigLIP2's ``get_image_size_for_max_num_patches(h, w, patch, max_num_patches)``, ``(h, w) -> (h, w)``:
    a binary search over the scale in ``[1e-6, 100]`` down to a width of 1e-5, keeping the largest scale
    whose rounded-up sides hold at most ``max_num_patches`` patches (the class's float steps in order)."""

    def __init__(self, patch: int, max_num_patches: int, eps: float = 1e-5) -> None:
        self.patch, self.max_num_patches, self.eps = patch, max_num_patches, eps

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        p, eps = self.patch, self.eps
        lo, hi = eps / 10, 100.0
        while (hi - lo) >= eps:  # bounded: the interval halves each step (about 24 steps)
            scale = (lo + hi) / 2
            if (_scaled(scale, h, p) / p) * (_scaled(scale, w, p) / p) <= self.max_num_patches:
                lo = scale
            else:
                hi = scale
        return _scaled(lo, h, p), _scaled(lo, w, p)


class NaFlexBatch(CanvasBatch):
    """SigLIP2's processor: a call returns ``{"pixel_values", "pixel_attention_mask", "spatial_shapes"}``
    as ``processor(images, return_tensors="pt")`` (see the module)."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 patch: int, max_num_patches: int) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb)
        self._patch, self._max_patches = patch, max_num_patches

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        check_no_out(out)
        import torch

        with Images(src, self.rgb()) as im:
            pv, final = self.canvas(im)
        p, m = self._patch, self._max_patches
        n, c = pv.shape[0], pv.shape[1]
        rows = torch.zeros((n, m, p * p * c), dtype=pv.dtype, device=pv.device)
        mask = torch.zeros((n, m), dtype=torch.int32)
        grids = []
        for i, (h, w) in enumerate(final):
            gh, gw = h // p, w // p
            if h % p or w % p:  # without do_resize: the processor's reshape fails on it
                raise PipelineError(f"a {h}x{w} image is not a multiple of patch_size {p} (without do_resize the "
                                    "processor fails on it too)", argument="src")
            if gh * gw > m:
                raise PipelineError(f"a {h}x{w} image has {gh * gw} patches, above max_num_patches {m} (without "
                                    "do_resize the processor fails on it too)", argument="src")
            x = pv[i, :, :gh * p, :gw * p].reshape(c, gh, p, gw, p).permute(1, 3, 2, 4, 0)
            rows[i, :gh * gw] = x.reshape(gh * gw, p * p * c)
            mask[i, :gh * gw] = 1
            grids.append([gh, gw])
        return {"pixel_values": rows, "pixel_attention_mask": mask, "spatial_shapes": as_torch(grids, torch.int64)}


def build_siglip2(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> NaFlexBatch:
    """SigLIP2's pipeline from a complete config (its code never reads size, crop_size or do_center_crop:
    they change nothing, as in the class)."""
    patch = _validate.as_positive_int("patch_size", cfg.get("patch_size"))
    most = _validate.as_positive_int("max_num_patches", cfg.get("max_num_patches"))
    chain = resized_chain(cfg, kind, NaFlexSize(patch, most))
    return NaFlexBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), patch, most)


# base name -> (the keys its class reads beyond the generic ones, the builder)
SIGLIP2 = {"Siglip2": (SIGLIP2_KEYS, build_siglip2)}
