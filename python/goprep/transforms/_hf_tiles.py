"""The any-resolution tiling processors of LLaVA-NeXT and LLaVA-OneVision (both of transformers'
backends): each image resized to fit the grid pinpoint that ``select_best_resolution`` picks, padded
to it (centred, zeros), cut into ``patch_size`` tiles, each tile and a global image (the original
resized to ``size``) run through the class's resize / center crop / rescale / normalize, stacked per
image behind the global image, the batch padded with zero tiles to its largest count.

Every resize, pad and normalisation runs in goprep's engine: one pass per image for the resized and
padded canvas (uint8, rounded as the processor rounds before it cuts), one for the global image's
first resize, then one call per tile shape for the tiles' chain (views of the canvas, no copy),
written into the stacked result. The stacking and ordering of tiles is Python (a slice per group)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .. import _ops, _validate
from .._errors import PipelineError
from .._inputs import is_pil, is_tensor
from .._pipeline import pipeline
from ._chain import Chain
from ._converted import Converted
from ._hf_layout import image_sizes
from ._rgb import to_rgb
from ._steps import Resize

# Keys each tiling class reads beyond the generic ones (by transformers' base name).
_LLAVA_KEYS = frozenset({"image_grid_pinpoints", "do_pad"})
TILE_KEYS = {"LlavaNext": _LLAVA_KEYS, "LlavaOnevision": _LLAVA_KEYS}


def select_best_resolution(h: int, w: int, pinpoints: Sequence[Tuple[int, int]]) -> Tuple[int, int]:
    """transformers' ``select_best_resolution``: the ``(height, width)`` pinpoint keeping the most of
    the image's pixels when it is scaled to fit (``int`` of each side, at most the original count),
    ties broken by the least padding (a thin image that keeps 0 pixels anywhere: the least padded),
    the first pinpoint winning a full tie."""
    best, most, waste = None, 0, float("inf")
    for ph, pw in pinpoints:
        scale = min(pw / w, ph / h)
        eff = min(int(w * scale) * int(h * scale), w * h)
        wasted = pw * ph - eff
        if eff > most or (eff == most and wasted < waste):
            best, most, waste = (ph, pw), eff, wasted
    assert best is not None  # pinpoints is not empty (_pinpoints), and the first one always sets it
    return best


def patch_output_size(h: int, w: int, target: Tuple[int, int]) -> Tuple[int, int]:
    """transformers' ``get_patch_output_size``: ``(h, w)`` scaled to fit ``target``, the side of the
    smaller scale set to the target's, the other ``ceil``-ed and capped at the target's."""
    th, tw = target
    sw, sh = tw / w, th / h
    if sw < sh:
        return min(math.ceil(h * sw), th), tw
    return th, min(math.ceil(w * sh), tw)


def _pinpoints(v: Any) -> List[Tuple[int, int]]:
    """``image_grid_pinpoints`` as a list of ``(height, width)`` positive ints."""
    if not isinstance(v, (list, tuple)) or not v:
        raise PipelineError(f"must be a non-empty list of [height, width] pairs, got {v!r}",
                            argument="image_grid_pinpoints")
    out = []
    for p in v:
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise PipelineError(f"must be a list of [height, width] pairs, got {p!r} in it",
                                argument="image_grid_pinpoints")
        out.append((_validate.as_positive_int("image_grid_pinpoints", p[0]),
                    _validate.as_positive_int("image_grid_pinpoints", p[1])))
    return out


class _Fit:
    """The size (a Resize's callable) that fits an image into ``target`` (patch_output_size)."""

    def __init__(self, target: Tuple[int, int]) -> None:
        self.target = target

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        return patch_output_size(h, w, self.target)


class AnyRes(Converted):
    """LLaVA-NeXT's / LLaVA-OneVision's processor: a call returns the processor's outputs by name, as
    ``processor(images, return_tensors="pt")``: ``pixel_values`` ``(N, tiles, 3, H, W)`` float32 (the
    global image first, then the tiles row by row; with ``do_pad`` the images' tile counts padded with
    zero tiles), ``image_sizes`` ``(N, 2)`` int64 (each image's size), and for OneVision
    ``batch_num_images`` ``(N,)`` int64 (ones: each image of a flat batch is a sample of its own).
    The chain is the class's per-tile steps (resize to ``size``, center crop, rescale, normalise)."""

    def __init__(self, chain: Chain, source: str, flavor: str, device: str, convert_rgb: bool, interp: Any,
                 pinpoints: List[Tuple[int, int]], size: Tuple[int, int], patch: int, do_pad: bool,
                 num_images: bool) -> None:
        super().__init__(chain, source, flavor=flavor, device=device)
        self._rgb, self._interp, self._pinpoints = convert_rgb, interp, pinpoints
        self._size, self._patch, self._do_pad, self._num_images = size, patch, do_pad, num_images
        self._stage: Dict[str, Any] = {}

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_stage"] = {}
        return state

    def _first(self) -> Any:
        """The first pass (memoised): an image resized with the class's resample and numerics to
        ``target``, or with ``fit`` to fit it (patch_output_size) and padded centred with zeros to it,
        as uint8 NumPy ``(H, W, 3)``."""
        p = self._stage.get("first")
        if p is None:
            flavor, interp = self._flavor or "tensor", self._interp

            def resize_pad(img: Any, target: Tuple[int, int], fit: bool) -> Any:
                img = Resize("resize", _Fit(target) if fit else target, interp, True, None, "v2")(img, flavor)
                return _ops.pad(img, size=target, value=0, center=True) if fit else img

            p = self._stage["first"] = pipeline(resize_pad, device="cpu", output="numpy")
        return p

    def _check_chain(self, runs: List[Any]) -> Tuple[int, int]:
        """The size every piece has after the tile chain (one size, as the processor stacks them)."""
        sizes = set()
        for r in runs:
            h, w = (r[0] if isinstance(r, list) else r).shape[-3:-1]
            for op in self._chain.ops:
                h, w = op.out_size(h, w) if hasattr(op, "out_size") else (op.h, op.w)  # type: ignore[attr-defined]
            sizes.add((h, w))
        if len(sizes) != 1:
            raise PipelineError(f"the tiles and the global image come out of the class's resize and crop in sizes "
                                f"{sorted(sizes)}: the processor fails to stack them (set do_center_crop and crop_size, "
                                "or size as height and width)", argument="size")
        return sizes.pop()

    def _pieces(self, img: Any, h: int, w: int) -> List[Any]:
        """The global image's first resize, then the tiles row by row, uint8 HWC, as runs of one shape:
        a ``(n, H, W, C)`` array (the global image; the tiles of a canvas that the tiles divide, copied
        tile-major in one NumPy copy, which the tile chain reads faster than strided views) or a list
        of views of the canvas (ragged tiles where the patch size does not divide it)."""
        best = select_best_resolution(h, w, self._pinpoints)
        first = self._first()
        canvas = first(img, best, True)
        runs: List[Any] = [first(img, self._size, False)[None]]
        p = self._patch
        if best[0] % p == 0 and best[1] % p == 0:
            nh, nw = best[0] // p, best[1] // p
            runs.append(np.ascontiguousarray(canvas.reshape(nh, p, nw, p, -1).swapaxes(1, 2)).reshape(
                nh * nw, p, p, canvas.shape[-1]))
            return runs
        for i in range(0, best[0], p):
            for j in range(0, best[1], p):
                t = canvas[i:i + p, j:j + p]
                if isinstance(runs[-1], list) and runs[-1][0].shape == t.shape:
                    runs[-1].append(t)
                else:
                    runs.append([t])
        return runs

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise PipelineError("is not supported by a processor that returns several outputs", argument="out")
        import torch

        sizes, _ = image_sizes(src)
        if self._num_images and is_tensor(src) and src.ndim == 4 and len(sizes) > 1:
            raise PipelineError("a (N, C, H, W) tensor: LLaVA-OneVision's processor counts it as one image and fails "
                                "(IndexError); pass a list of images", argument="src")
        items = list(src) if isinstance(src, (list, tuple)) or is_tensor(src) and src.ndim == 4 else [src]
        if self._rgb:
            items = [to_rgb(x, self._flavor or "tensor") for x in items]
        # an RGB PIL image read once (each pass would copy it out of Pillow again)
        items = [np.asarray(x) if is_pil(x) and x.mode == "RGB" else x for x in items]
        per_image = [self._pieces(x, h, w) for x, (h, w) in zip(items, sizes)]
        counts = [sum(len(r) for r in runs) for runs in per_image]
        if not self._do_pad and len(set(counts)) > 1:
            raise PipelineError(f"False with images of {sorted(set(counts))} tiles: the processor fails to stack "
                                "them into one tensor", argument="do_pad")
        th, tw = self._check_chain([r for runs in per_image for r in runs])
        dtype = torch.float32 if self._chain.scale is not None else torch.uint8
        pv = torch.empty((len(items), max(counts), 3, th, tw), dtype=dtype)
        tile_chain = self._pipe(self._flavor or "tensor")
        for i, runs in enumerate(per_image):
            k = 0
            for r in runs:  # each run of one input shape: one engine call, into its place in the result
                if dtype == torch.float32:
                    tile_chain(r, out=pv[i, k:k + len(r)])
                else:  # uint8 results are channels-last in memory: copied into place
                    pv[i, k:k + len(r)] = tile_chain(r)
                k += len(r)
            pv[i, k:] = 0  # do_pad's zero tiles, after the normalisation
        res = {"pixel_values": pv, "image_sizes": torch.tensor(sizes, dtype=torch.int64)}
        if self._num_images:
            res["batch_num_images"] = torch.ones(len(items), dtype=torch.int64)
        return res


def tile_convert(cfg: Dict[str, Any], kind: str, base: str, flavor: str, device: str) -> Converted:
    """The tiling processor of a complete config of class ``kind`` (``base`` in TILE_KEYS)."""
    from ._hf_pixels import hf_chain

    chain = hf_chain(cfg, kind, base)  # the per-tile steps
    if not cfg.get("do_rescale") and not cfg.get("do_normalize"):  # the processor's tiles stay uint8
        chain = Chain(ops=chain.ops, to_tensor=True)
    # the class's resample as goprep's Resize reads it (the processor's own resizes use it too)
    interp = hf_chain({**cfg, "do_resize": True, "do_center_crop": False}, kind, base).ops[0].mode
    size = cfg.get("size") or {}
    if not isinstance(size, dict):
        raise PipelineError(f"{size!r} ({kind} needs a dict: height and width, or shortest_edge)", argument="size")
    if size.get("height") and size.get("width"):
        glob = (int(size["height"]), int(size["width"]))
    elif size.get("shortest_edge"):
        glob = (int(size["shortest_edge"]),) * 2
    else:
        raise PipelineError(f"{size!r} ({kind} needs height and width, or shortest_edge)", argument="size")
    crop = cfg.get("crop_size") or {}
    patch = crop.get("height") if isinstance(crop, dict) and crop.get("height") else size.get("height") or \
        size.get("shortest_edge")
    return AnyRes(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), interp,
                  _pinpoints(cfg.get("image_grid_pinpoints")), glob,
                  _validate.as_positive_int("crop_size['height']", patch), bool(cfg.get("do_pad")),
                  base == "LlavaOnevision")
