"""Llama 4's image processor (``Llama4ImageProcessor``, torchvision backend only, read in transformers 5.25):
each image given the canvas of ``size`` tiles (at most ``max_patches``; the class's ``get_best_fit`` over
``find_supported_resolutions``: the smallest upscale, else the largest downscale, ties to the smaller area,
in the class's float32 arithmetic), resized keeping its aspect ratio to fit that canvas (without
``resize_to_max_canvas`` never upscaled past one tile side), padded with zeros at the bottom and right to the
canvas, rescaled and normalised *in bfloat16* (the class's ``rescale_and_normalize`` override), cut into its
tiles row by row; an image of more than one tile is followed by a global tile, the whole image resized to
``size``. Outputs, as ``processor(images, return_tensors="pt")``: ``pixel_values`` ``(tiles, 3, tile, tile)``
bfloat16 (the tiles of all images concatenated) and ``aspect_ratios`` ``(N, 2)`` int64 (tile rows and columns).

The resizes and pads run in goprep's engine (one call for the batch, each image padded to the largest canvas,
and one for the global tiles), as uint8 values; the bfloat16 rescale and normalisation is a 256-entry table per
channel computed with the class's own tensor operations, so every value equals the class's (a float32
normalisation would differ by one bfloat16 step)."""

from __future__ import annotations

import math
from collections import defaultdict
from functools import lru_cache
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import _validate
from .._errors import PipelineError
from ._chain import Chain
from ._converted import Converted
from ._hf_canvas import CanvasBatch, check_no_out, resized_chain
from ._hf_images import Images
from ._hf_pixels import hf_chain

# Keys Llama 4's class reads beyond the generic ones (do_center_crop is taken and never applied).
LLAMA4_KEYS = frozenset({"max_patches", "resize_to_max_canvas"})


@lru_cache(maxsize=16)
def resolutions(max_chunks: int, tile: int) -> Tuple[Tuple[int, int], ...]:
    """``find_supported_resolutions``: every ``(rows * tile, cols * tile)`` with ``rows * cols <= max_chunks``,
    grouped by the ratio ``rows / cols`` in the order the class's dict first meets it (chunk counts from
    ``max_chunks`` down, factors ascending)."""
    by_ratio: Dict[float, List[Tuple[int, int]]] = defaultdict(list)
    for n in range(max_chunks, 0, -1):
        for a in sorted({d for i in range(1, int(n ** 0.5) + 1) if n % i == 0 for d in (i, n // i)}):
            by_ratio[a / (n // a)].append((a, n // a))
    return tuple((a * tile, b * tile) for v in by_ratio.values() for a, b in v)


def best_fit(h: int, w: int, max_chunks: int, tile: int, to_max: bool) -> Tuple[int, int]:
    """``get_best_fit``: the canvas ``(height, width)`` whose scale ``min(H / h, W / w)`` (float32, as the
    class divides int64 tensors) is the smallest at or above 1 (the largest with ``to_max``), else the largest
    below 1; among equal scales the first of the smallest area."""
    import torch

    res = torch.tensor(resolutions(max_chunks, tile))
    sw, sh = res[:, 1] / w, res[:, 0] / h
    scales = torch.where(sh > sw, sw, sh)
    up = scales[scales >= 1]
    chosen = (up.max() if to_max else up.min()) if len(up) > 0 else scales[scales < 1].max()
    cands = res[scales == chosen]
    best = cands[torch.argmin(cands[:, 0] * cands[:, 1])] if len(cands) > 1 else cands[0]
    return int(best[0]), int(best[1])


def fit_size(h: int, w: int, th: Any, tw: Any) -> Tuple[int, int]:
    """``get_max_res_without_distortion`` on the class's operands: ``th`` / ``tw`` are ints or 0-d int64
    tensors as its ``min`` leaves them (a tensor divides in float32, an int in float64), so the same
    expressions give the same sides; each at least 1, as the class clamps them."""
    sw, sh = tw / w, th / h
    if sw < sh:
        nh, nw = min(math.floor(h * sw), th), tw
    else:
        nh, nw = th, min(math.floor(w * sh), tw)
    return max(int(nh), 1), max(int(nw), 1)


class Llama4Size:
    """The class's sizing: ``canvas(h, w)`` is ``(the canvas best_fit picks, the size the image is resized to
    inside it)``; without ``resize_to_max_canvas`` the target side is first ``min(max(side, tile), canvas
    side)``, so an image is upscaled at most to one tile side. A call gives the resized size (the chain's rule)."""

    def __init__(self, tile: int, max_chunks: int, to_max: bool) -> None:
        self.tile, self.max_chunks, self.to_max = tile, max_chunks, to_max

    def canvas(self, h: int, w: int) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        import torch

        ch, cw = best_fit(h, w, self.max_chunks, self.tile, self.to_max)
        th: Any = torch.tensor(ch)  # the class's target_size[0] / [1]: 0-d int64 tensors
        tw: Any = torch.tensor(cw)
        if not self.to_max:  # Python's min keeps the int unless the tensor is smaller
            th, tw = min(max(h, self.tile), th), min(max(w, self.tile), tw)
        return (ch, cw), fit_size(h, w, th, tw)

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        return self.canvas(h, w)[1]


def value_table(rescale: bool, factor: float, normalize: bool, mean: Any, std: Any) -> Any:
    """The class's ``rescale_and_normalize`` of every uint8 value, ``(3, 256)``: with both, ``to(bfloat16) *
    factor`` then torchvision's ``normalize`` in bfloat16 (mean and std as bfloat16 tensors, a subtraction and a
    division, each rounded); rescale alone ``uint8 * factor`` (float32); neither: the uint8 values."""
    import torch

    v = torch.arange(256, dtype=torch.uint8).reshape(1, 1, 256).expand(3, 1, 256)
    if rescale and normalize:
        x = v.to(torch.bfloat16) * factor
        m, s = torch.as_tensor(mean, dtype=x.dtype), torch.as_tensor(std, dtype=x.dtype)
        x = x.sub(m.view(-1, 1, 1) if m.ndim == 1 else m).div_(s.view(-1, 1, 1) if s.ndim == 1 else s)
    elif rescale:
        x = v * factor
    else:
        x = v.clone()
    return x.reshape(3, 256).contiguous()


class Llama4Batch(CanvasBatch):
    """Llama 4's processor: ``{"pixel_values", "aspect_ratios"}`` (see the module). ``global_tile``: the
    uint8 pipeline resizing an image to ``tile x tile``."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 sizer: Llama4Size, table: Any, global_tile: Converted) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb)
        self._sizer, self._table, self._global = sizer, table, global_tile

    def _values(self, x: Any) -> Any:
        """The class's rescaled and normalised values of the engine's uint8-valued float32 ``(N, 3, H, W)``."""
        import torch

        t = self._table.to(x.device)
        idx = x.to(torch.int64) + torch.arange(0, 3 * 256, 256, device=x.device).reshape(1, 3, 1, 1)
        return t.reshape(-1)[idx]

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        check_no_out(out)
        import torch

        t = self._sizer.tile
        with Images(src, self.rgb()) as im:
            canvases = [self._sizer.canvas(h, w)[0] for h, w in im.sizes]
            pad = (max(c[0] for c in canvases), max(c[1] for c in canvases))
            pv, _ = self.canvas(im, pad)  # resized, padded with uint8 zeros to at least their canvas
            multi = [i for i, (ch, cw) in enumerate(canvases) if ch * cw > t * t]  # more than one tile
            glob = im.run(self._global, multi) if multi else None
            global_of = {i: k for k, i in enumerate(multi)}
        tiles: List[Any] = []
        for i, (ch, cw) in enumerate(canvases):
            rows, cols = ch // t, cw // t
            x = pv[i, :, :ch, :cw].reshape(3, rows, t, cols, t).permute(1, 3, 0, 2, 4).reshape(rows * cols, 3, t, t)
            tiles.append(x)
            if i in global_of:  # the global tile follows the image's tiles
                tiles.append(glob[global_of[i]][None])
        pixel_values = self._values(torch.cat(tiles, dim=0))
        ratios = torch.tensor([[ch // t, cw // t] for ch, cw in canvases], dtype=torch.int64)
        return {"pixel_values": pixel_values, "aspect_ratios": ratios}


def build_llama4(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Llama4Batch:
    """Llama 4's pipeline from a complete config; the class raises on ``do_resize=False``, a size that is
    not a square, and ``do_normalize`` without ``do_rescale`` (torchvision's normalize of uint8)."""
    from ._chain import mean_std

    if not cfg.get("do_resize", True):
        raise PipelineError(f"False ({kind} raises: it always resizes to one of its canvases)", argument="do_resize")
    size = cfg.get("size")
    if not isinstance(size, Mapping) or not size.get("height") or size.get("height") != size.get("width"):
        raise PipelineError(f"{size!r} ({kind} needs a dict of equal height and width)", argument="size")
    tile = _validate.as_positive_int("size['height']", size["height"])
    most = _validate.as_positive_int("max_patches", cfg.get("max_patches"))
    rescale, normalize = bool(cfg.get("do_rescale", True)), bool(cfg.get("do_normalize", True))
    if normalize and not rescale:
        raise PipelineError(f"True without do_rescale ({kind} normalises the uint8 image, which torchvision "
                            "refuses)", argument="do_normalize")
    factor = cfg.get("rescale_factor")
    factor = 1 / 255 if factor is None else factor
    _validate.as_positive_float32("rescale_factor", factor)  # checked; the class multiplies by the value given
    mean, std = cfg.get("image_mean", 0.5), cfg.get("image_std", 0.5)
    mean_std(mean, std, ("image_mean", "image_std"), channels=3)  # checked; the table reads them as the class
    table = value_table(rescale, float(factor), normalize, mean, std)
    raw = {**cfg, "do_rescale": False, "do_normalize": False, "do_center_crop": False}  # uint8 values out
    sizer = Llama4Size(tile, most, bool(cfg.get("resize_to_max_canvas")))
    source = f"Hugging Face {kind}"
    rgb = bool(cfg.get("do_convert_rgb"))
    glob = Converted(hf_chain({**raw, "size": {"height": tile, "width": tile}}, kind, "Llama4"), source,
                     flavor=flavor, device=device, convert_rgb=rgb)
    return Llama4Batch(resized_chain(raw, kind, sizer), source, flavor, device, rgb, sizer, table, glob)


# base name -> (the keys its class reads beyond the generic ones, the builder)
LLAMA4 = {"Llama4": (LLAMA4_KEYS, build_llama4)}
