"""Mllama's (Llama 3.2 Vision's) image processor (both of transformers' backends, read in transformers
5.25): each image given the tile arrangement (rows x columns of ``size`` tiles, at most
``max_image_tiles``) that scales it least (the smallest upscale, else the largest downscale; ties to the
smaller area), resized to fit that canvas keeping its aspect ratio (each side clipped between the tile
side and the canvas), padded with zeros at the bottom and right to the canvas *before* the rescale and
normalisation (so the padding is ``-mean / std``), cut into its tiles, and the tiles of a batch of
samples stacked with zero tiles for the missing ones.

Outputs, as ``processor(images, return_tensors="pt")``: ``pixel_values`` ``(samples, images, max_image_tiles,
3, tile, tile)`` float32, ``aspect_ratio_ids`` ``(samples, images)`` int64 (1 + the arrangement's index, 0
for a missing image), ``aspect_ratio_mask`` ``(samples, images, max_image_tiles)`` int64 and ``num_tiles``
(a list of lists of ints, as the processor returns it). The images of all samples run as one engine call
(each padded to the largest canvas); the tiles are PyTorch reshapes of its result."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from .._inputs import is_tensor
from ._chain import Chain
from ._hf_canvas import CanvasBatch, check_no_out, is_image, resized_chain
from ._hf_images import Images

# Keys Mllama's class reads beyond the generic ones.
MLLAMA_KEYS = frozenset({"max_image_tiles", "do_pad"})


@lru_cache(maxsize=16)
def arrangements(max_tiles: int) -> Tuple[Tuple[int, int], ...]:
    """Mllama's ``get_all_supported_aspect_ratios``: every ``(a, b)`` with ``a * b <= max_tiles``, ``a``
    the outer loop (the processor reads ``a`` as the rows, ``b`` as the columns)."""
    return tuple((a, b) for a in range(1, max_tiles + 1) for b in range(1, max_tiles + 1) if a * b <= max_tiles)


def best_canvas(h: int, w: int, max_tiles: int, tile: int) -> Tuple[int, int]:
    """Mllama's ``get_optimal_tiled_canvas``: ``(rows, columns)`` of the arrangement whose scale
    ``min(canvas_h / h, canvas_w / w)`` is the smallest at or above 1, else the largest below 1; among
    equal scales the first of the smallest area."""
    cands = arrangements(max_tiles)
    scales = []
    for a, b in cands:
        sh, sw = a * tile / h, b * tile / w
        scales.append(sh if sw > sh else sw)
    up = [s for s in scales if s >= 1]
    chosen = min(up) if up else max(scales)
    best = None
    for (a, b), s in zip(cands, scales):
        if s == chosen and (best is None or a * b < best[0] * best[1]):
            best = (a, b)
    assert best is not None
    return best


class FitSize:
    """Mllama's ``get_image_size_fit_to_canvas`` on the canvas ``best_canvas`` chooses, ``(h, w) ->
    (h, w)``: each side clipped to ``[tile, canvas side]``; the side whose scale is smaller takes its
    clipped value, the other ``floor(side * scale)`` (at least 1, at most its clipped value)."""

    def __init__(self, tile: int, max_tiles: int) -> None:
        self.tile, self.max_tiles = tile, max_tiles

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        t = self.tile
        rows, cols = best_canvas(h, w, self.max_tiles, t)
        th, tw = min(max(h, t), rows * t), min(max(w, t), cols * t)
        sh, sw = th / h, tw / w
        if sw < sh:
            return min(math.floor(h * sw) or 1, th), tw
        return th, min(math.floor(w * sh) or 1, tw)


def nested(src: Any) -> List[List[Any]]:
    """``src`` as the processor's samples of images (``make_nested_list_of_images``): one image is one
    sample of one image, an ``(N, C, H, W)`` tensor or a list of images one sample, a list of lists (or
    of ``(N, C, H, W)`` tensors) one sample each."""
    if is_tensor(src) and src.ndim == 4:
        return [list(src)]
    if is_image(src):
        return [[src]]
    if isinstance(src, (list, tuple)) and src:
        if all(isinstance(s, (list, tuple)) for s in src):
            out = [list(s) for s in src]
        elif all(is_tensor(s) and s.ndim == 4 for s in src):
            out = [list(s) for s in src]
        elif all(is_image(s) for s in src):
            out = [list(src)]
        else:
            out = []
        if out and all(out) and all(is_image(x) for s in out for x in s):
            return out
    raise PipelineError("Mllama's processor takes an image, a list of images (one sample), a list of lists of "
                        "images (one per sample) or (N, C, H, W) tensors, none of them empty", argument="src")


class MllamaBatch(CanvasBatch):
    """Mllama's processor: a call returns ``{"pixel_values", "aspect_ratio_ids", "aspect_ratio_mask",
    "num_tiles"}`` (see the module)."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 tile: int, max_tiles: int) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb)
        self._tile, self._max_tiles = tile, max_tiles

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        check_no_out(out)
        import torch

        samples = nested(src)
        flat = [x for s in samples for x in s]
        t, m = self._tile, self._max_tiles
        # src[i]: the i-th image of the samples, in order (src for a single image)
        with Images(flat[0] if is_image(src) else flat, self.rgb()) as im:
            grids = [best_canvas(h, w, m, t) for h, w in im.sizes]
            pad = (max(a for a, _ in grids) * t, max(b for _, b in grids) * t)
            pv, _ = self.canvas(im, pad)  # the resized images padded (uint8 zeros) to at least their canvas
        c = pv.shape[1]
        n_img = max(len(s) for s in samples)
        pixel_values = torch.zeros((len(samples), n_img, m, c, t, t), dtype=pv.dtype, device=pv.device)
        ids = torch.zeros((len(samples), n_img), dtype=torch.int64)
        mask = torch.zeros((len(samples), n_img, m), dtype=torch.int64)
        mask[:, :, 0] = 1
        num_tiles: List[List[int]] = []
        k = 0
        for i, sample in enumerate(samples):
            num_tiles.append([])
            for j in range(len(sample)):
                rows, cols = grids[k]
                x = pv[k, :, :rows * t, :cols * t].reshape(c, rows, t, cols, t).permute(1, 3, 0, 2, 4)
                pixel_values[i, j, :rows * cols] = x.reshape(rows * cols, c, t, t)
                ids[i, j] = arrangements(m).index((rows, cols)) + 1
                mask[i, j, :rows * cols] = 1
                num_tiles[i].append(rows * cols)
                k += 1
        return {"pixel_values": pixel_values, "aspect_ratio_ids": ids, "aspect_ratio_mask": mask,
                "num_tiles": num_tiles}


def build_mllama(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> MllamaBatch:
    """Mllama's pipeline from a complete config; the class refuses ``do_pad=False`` and
    ``do_resize=False``, a size that is not a square, and never center-crops (do_center_crop and
    crop_size change nothing, as in the class)."""
    if not cfg.get("do_pad") or not cfg.get("do_resize", True):
        key = "do_pad" if not cfg.get("do_pad") else "do_resize"
        raise PipelineError(f"False ({kind} raises: it does not support {key}=False)", argument=key)
    size = cfg.get("size")
    if not isinstance(size, Mapping) or not size.get("height") or size.get("height") != size.get("width"):
        raise PipelineError(f"{size!r} ({kind} needs a dict of equal height and width)", argument="size")
    tile = _validate.as_positive_int("size['height']", size["height"])
    most = _validate.as_positive_int("max_image_tiles", cfg.get("max_image_tiles"))
    chain = resized_chain(cfg, kind, FitSize(tile, most))
    return MllamaBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), tile, most)


# base name -> (the keys its class reads beyond the generic ones, the builder)
MLLAMA = {"Mllama": (MLLAMA_KEYS, build_mllama)}
