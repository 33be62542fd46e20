"""Phi-4 multimodal's image processor (``Phi4MultimodalImageProcessor``, torchvision backend only, read in
transformers 5.25): each image given a grid of ``size`` crops (``ceil(side / size)`` per side, or, past
``dynamic_hd`` crops, the grid whose aspect ratio is closest: the class's ``_get_crop_layout``), resized keeping
its aspect ratio to fill the grid along one side (``tvF.resize``'s defaults: bilinear with antialias, whatever
``resample`` says), padded with white (255) at the bottom and right to the grid, rescaled and normalised, and
cut into its crops row by row behind a global crop: the normalised, padded image resized to ``size`` as floats
without antialias (``resample``, bicubic by default).

Outputs, as ``processor(images, return_tensors="pt")``: ``image_pixel_values`` ``(N, crops + 1, 3, size, size)``
float32 (zero crops up to the batch's most), ``image_sizes`` ``(N, 2)`` int64 (the grid's height and width in
pixels), ``image_attention_mask`` ``(N, crops + 1, size / patch, size / patch)`` float32 (0 on the patches that
the white pad fills whole, 1 elsewhere and on the padding crops) and ``num_img_tokens`` ``(N,)`` int64 (the
class's count from the mask). The resize, the white pad and the normalisation run in goprep's engine (one call
per grid size in the batch); the global crop is goprep's float32 resize of that result (as DepthPro's)."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .. import _ops, _validate
from .._errors import PipelineError
from ._chain import Chain
from ._converted import Converted
from ._hf_canvas import check_no_out, resized_chain
from ._hf_images import Images
from ._hf_layout import padded_variant
from ._steps import Resize

# Keys Phi-4 multimodal's class reads beyond the generic ones (do_resize and do_center_crop are taken and
# never applied: it always resizes to its grid, and never crops).
PHI4_KEYS = frozenset({"patch_size", "dynamic_hd"})

Size = Tuple[int, int]


def _closest_ratio(aspect: float, ratios: List[Size], w: int, h: int, tile: int) -> Size:
    """The class's ``find_closest_aspect_ratio``: the ``(columns, rows)`` whose ratio is nearest ``aspect``;
    on a tie the later one when the image's area passes half the grid's."""
    best_diff, best = float("inf"), (1, 1)
    for r in ratios:
        diff = abs(aspect - r[0] / r[1])
        if diff < best_diff:
            best_diff, best = diff, r
        elif diff == best_diff and w * h > 0.5 * tile * tile * r[0] * r[1]:
            best = r
    return best


def crop_layout(h: int, w: int, tile: int, max_num: int) -> Tuple[Size, Size, Size]:
    """The class's ``_get_crop_layout``: ``((columns, rows), (resized h, resized w), (pad right, pad bottom))``;
    a resized side below 10 raises, as the class does."""
    wc, hc = math.ceil(w / float(tile)), math.ceil(h / float(tile))
    if wc * hc > max_num:
        ratios = sorted({(i, j) for n in range(1, max_num + 1) for i in range(1, n + 1) for j in range(1, n + 1)
                         if 1 <= i * j <= max_num}, key=lambda x: x[0] * x[1])
        grid = _closest_ratio(w / h, ratios, w, h, tile)
    else:
        grid = (wc, hc)
    tw, th = tile * grid[0], tile * grid[1]
    rw, rh = tw / w, th / h
    if rw < rh:
        nw, nh, pw, ph = tw, int(h * rw), 0, th - int(h * rw)
    else:
        nw, nh, pw, ph = int(w * rh), th, tw - int(w * rh), 0
    if min(nh, th) < 10 or min(nw, tw) < 10:
        raise PipelineError(f"a {h}x{w} image: Phi-4 multimodal's crop layout resizes it to {nh}x{nw}, an aspect "
                            "ratio the processor refuses too")
    return grid, (nh, nw), (pw, ph)


class PadWhite:
    """Padding with 255 at the bottom and right up to ``(h, w)`` (an Op), before the rescale, as the class's
    ``tvF.pad(fill=[255, 255, 255])`` of the uint8 image."""

    def __init__(self, h: int, w: int) -> None:
        self.h, self.w = h, w

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.pad(img, (0, 0, self.w - img.width, self.h - img.height), value=255)


class _LayoutSize:
    """The resize of ``crop_layout``, ``(h, w) -> (h, w)``."""

    def __init__(self, tile: int, max_num: int) -> None:
        self.tile, self.max_num = tile, max_num

    def __call__(self, h: int, w: int) -> Size:
        return crop_layout(h, w, self.tile, self.max_num)[1]


def _mask(grid: Size, pad: Size, patch: int, m: int) -> Any:
    """The class's ``_get_crop_attention_mask``: ones over the grid's patches, the columns and rows that the
    white pad covers whole set to 0."""
    import torch

    mask = torch.ones((m * grid[1], m * grid[0]))
    if pad[0] >= patch:
        mask[:, -math.floor(pad[0] / patch):] = 0
    if pad[1] >= patch:
        mask[-math.floor(pad[1] / patch):, :] = 0
    return mask


def _tokens(mask: Any, m: int) -> int:
    """The class's ``_get_num_image_tokens`` of a grid's mask: 256 + 1 + 16 + the mask's patches kept by the
    2x subsampling of each crop, plus those of each subsampled row's first column."""
    mh, mw = mask.shape[-2:]
    x = mask.reshape(mh // m, m, mw // m, m).transpose(1, 2).reshape(-1, m, m)[:, 0::2, 0::2]
    k = m // 2 + m % 2
    x = x.reshape(mh // m, mw // m, k, k).transpose(1, 2).reshape((mh // m) * k, (mw // m) * k)
    return 256 + 1 + int(x.sum().item()) + int(x[:, 0].sum().item()) + 16


class Phi4Batch(Converted):
    """Phi-4 multimodal's processor: ``{"image_pixel_values", "image_sizes", "image_attention_mask",
    "num_img_tokens"}`` (see the module)."""

    _CACHE = 16  # pipelines kept (one per grid size)

    def __init__(self, chain: Chain, source: str, device: str, convert_rgb: bool, tile: int, patch: int,
                 max_num: int, glob: Resize) -> None:
        super().__init__(chain, source, flavor="tensor", device=device, convert_rgb=convert_rgb)
        self._tile, self._patch, self._max_num, self._glob = tile, patch, max_num, glob
        self._grids: "OrderedDict[Size, Converted]" = OrderedDict()

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_grids"] = OrderedDict()
        return state

    def _grid(self, size: Size) -> Converted:
        """The chain with a white pad to ``size`` before its rescale (memoised, the last _CACHE sizes)."""
        return padded_variant(self, self._grids, size, PadWhite, self._CACHE)

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        check_no_out(out)
        import torch

        t, m = self._tile, self._tile // self._patch
        with Images(src, self.rgb()) as im:
            layouts = [crop_layout(h, w, t, self._max_num) for h, w in im.sizes]
            groups: Dict[Size, List[int]] = {}
            for i, (grid, _, _) in enumerate(layouts):
                groups.setdefault((grid[1] * t, grid[0] * t), []).append(i)
            canvases: List[Any] = [None] * len(layouts)
            for size, idx in groups.items():  # the images of one grid size: one engine call
                pv = im.run(self._grid(size), idx)
                for j, i in enumerate(idx):
                    canvases[i] = pv[j]
        crops, masks, tokens = [], [], []
        for x, (grid, _, pad) in zip(canvases, layouts):
            cols, rows = grid
            hwc = x.permute(1, 2, 0).contiguous().cpu().numpy()
            g = torch.from_numpy(self._glob.float32(hwc)).permute(2, 0, 1).to(x.device)
            tiles = x.reshape(3, rows, t, cols, t).permute(1, 3, 0, 2, 4).reshape(rows * cols, 3, t, t)
            crops.append(torch.cat([g[None], tiles]))
            mask = _mask(grid, pad, self._patch, m)
            tiled = mask.reshape(rows, m, cols, m).transpose(1, 2).reshape(-1, m, m)
            masks.append(torch.cat([torch.ones((1, m, m)), tiled]))
            tokens.append(_tokens(mask, m))
        most = max(c.shape[0] for c in crops)
        pixel_values = torch.zeros((len(crops), most, 3, t, t), dtype=crops[0].dtype, device=crops[0].device)
        attention = torch.ones((len(crops), most, m, m))
        for i, (c, k) in enumerate(zip(crops, masks)):
            pixel_values[i, :c.shape[0]] = c
            attention[i, :k.shape[0]] = k
        sizes = torch.tensor([[c.shape[1], c.shape[2]] for c in canvases], dtype=torch.int64)
        return {"image_pixel_values": pixel_values, "image_sizes": sizes, "image_attention_mask": attention,
                "num_img_tokens": torch.tensor(tokens, dtype=torch.int64)}


def build_phi4(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Phi4Batch:
    """Phi-4 multimodal's pipeline from a complete config; the class raises on a size that is not a square."""
    size = cfg.get("size")
    if not isinstance(size, Mapping) or not size.get("height") or size.get("height") != size.get("width"):
        raise PipelineError(f"{size!r} ({kind} needs a dict of equal height and width)", argument="size")
    tile = _validate.as_positive_int("size['height']", size["height"])
    patch = _validate.as_positive_int("patch_size", cfg.get("patch_size"))
    most = _validate.as_positive_int("dynamic_hd", cfg.get("dynamic_hd"))
    if tile < patch:
        raise PipelineError(f"{patch} is larger than the crop size {tile} ({kind}'s masks would be empty)",
                            argument="patch_size")
    # the grid's resize: tvF.resize's defaults (bilinear, antialias), whatever resample says
    chain = resized_chain({**cfg, "do_resize": True, "resample": 2}, kind, _LayoutSize(tile, most))
    # the global crop: resample as the class's backend maps it (hf_chain's reading: PIL's NEAREST is
    # NEAREST_EXACT), the floats resized without antialias
    probe = resized_chain({**cfg, "do_resize": True}, kind, lambda h, w: (tile, tile)).ops[0]
    if probe.mode == "lanczos":
        raise PipelineError(f"1 (LANCZOS: {kind} resizes its global crop with antialias=False, which torchvision's "
                            "LANCZOS refuses)", argument="resample")
    glob = Resize("resize", (tile, tile), probe.mode, False, None, "v2")
    return Phi4Batch(chain, f"Hugging Face {kind}", device, bool(cfg.get("do_convert_rgb")), tile, patch, most, glob)


# base name -> (the keys its class reads beyond the generic ones, the builder)
PHI4 = {"Phi4Multimodal": (PHI4_KEYS, build_phi4)}
