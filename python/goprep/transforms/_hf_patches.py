"""Qwen2-VL's image processor (and the classes that share its code): ``smart_resize`` sizing, then each
image's normalised pixels flattened into patch rows ``(patches, C * T * P * P)``, concatenated over the
batch, with ``image_grid_thw``. The resize, rescale, normalisation and the patch layout run in goprep's
engine, written as patch rows (``_ops.patch_rows``): a batch of any sizes in one call, each image's rows at its
row offset of the one result (``Pipeline._concat``), encoded images decoded in that call."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .. import _ops
from .._device import device_source
from .._errors import InvalidArgumentError, PipelineError
from .._inputs import is_tensor
from .._pipeline import Pipeline
from ._chain import Chain
from ._converted import Converted
from ._hf_images import Images
from ._rgb import to_rgb

# Keys read by Qwen2-VL's class: the patch layout, and min_pixels / max_pixels, which its __init__
# moves into size (shortest_edge / longest_edge: the pixel-count bounds, not sides).
QWEN2VL_KEYS = frozenset({"patch_size", "temporal_patch_size", "merge_size", "min_pixels", "max_pixels"})


class SmartSize:
    """Qwen2-VL's ``smart_resize(h, w, factor, min_pixels, max_pixels)``, ``(h, w) -> (h, w)``: each
    side rounded (half to even) to a multiple of ``factor``; above ``max_pixels`` both sides are
    floored to a multiple after dividing by ``sqrt(h * w / max_pixels)`` (at least ``factor``), below
    ``min_pixels`` ceiled after multiplying by ``sqrt(min_pixels / (h * w))``. An aspect ratio above
    200 raises, as there."""

    def __init__(self, factor: int, min_pixels: int, max_pixels: int) -> None:
        self.factor, self.min_pixels, self.max_pixels = factor, min_pixels, max_pixels

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        f = self.factor
        if max(h, w) / min(h, w) > 200:
            raise PipelineError(f"a {h}x{w} image: Qwen2-VL's smart_resize needs an aspect ratio below 200")
        hb, wb = round(h / f) * f, round(w / f) * f
        if hb * wb > self.max_pixels:
            beta = math.sqrt((h * w) / self.max_pixels)
            hb, wb = max(f, math.floor(h / beta / f) * f), max(f, math.floor(w / beta / f) * f)
        elif hb * wb < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (h * w))
            hb, wb = math.ceil(h * beta / f) * f, math.ceil(w * beta / f) * f
        if hb < 1 or wb < 1:  # a side rounded to 0 (min_pixels 0 lets it through): the processor fails
            raise PipelineError(f"a {h}x{w} image: smart_resize gives {hb}x{wb}")
        return hb, wb


def qwen2vl_size(cfg: Dict[str, Any], size: Dict[str, int], kind: str) -> Tuple[int, int]:
    """``(min_pixels, max_pixels)`` of a Qwen2-VL config: ``size``'s ``shortest_edge`` and
    ``longest_edge``, overridden by ``min_pixels`` / ``max_pixels`` keys (a raw preprocessor_config.json
    may hold them: the class's __init__ moves them into size)."""
    lo, hi = size.get("shortest_edge"), size.get("longest_edge")
    lo = cfg["min_pixels"] if cfg.get("min_pixels") is not None else lo
    hi = cfg["max_pixels"] if cfg.get("max_pixels") is not None else hi
    if not lo or not hi:  # HF: "`size` dict must contain 'shortest_edge' and 'longest_edge' keys"
        raise PipelineError(f"{size!r} ({kind}'s resize needs shortest_edge and longest_edge, its min_pixels and "
                            "max_pixels)", argument="size")
    return int(lo), int(hi)


def _on_device(x: Any) -> bool:
    """Whether ``x`` is a device array (a CUDA tensor, goprep's DeviceArray, any CUDA array interface or
    DLPack CUDA object), which ``Pipeline._concat`` does not take."""
    try:
        return device_source(x, None) is not None
    except InvalidArgumentError:  # a device array of a dtype goprep refuses: _grouped's call says so
        return True


class PatchBatch(Converted):
    """Qwen2-VL's processor: a call returns ``{"pixel_values": (patches, C * T * P * P) float32,
    "image_grid_thw": (N, 3) int64}`` as ``processor(images, return_tensors="pt")``: each image
    resized by its sizing (the chain), rescaled and normalised, its ``(C, H, W)`` pixels cut into
    ``P x P`` patches ordered by ``merge x merge`` blocks, each patch repeated ``T`` times (the
    temporal axis of a still image), the rows of all images concatenated in order."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 patch: int, temporal: int, merge: int) -> None:
        super().__init__(chain, source, flavor=flavor, device=device, convert_rgb=convert_rgb)
        self._patch, self._temporal, self._merge = patch, temporal, merge

    def _target(self, h: int, w: int) -> Tuple[int, int]:
        for op in self._chain.ops:  # the resize (the only geometric op)
            h, w = op.target(h, w)  # type: ignore[attr-defined]
        return h, w

    def _laid_out(self, img: Any) -> Any:
        """The normalised image as the processor's patch rows, written by the engine (``_ops.patch_rows``)."""
        return _ops.patch_rows(img, self._patch, self._merge, self._temporal)

    def _flatten(self, x: Any, size: Tuple[int, int]) -> Tuple[Any, int, int]:
        """The engine's patch rows of images of ``size``, ``(gh * gw, C * T * P * P)`` for one image or
        ``(B, gh * gw, C * T * P * P)``, as ``(B, gh * gw, C * T * P * P)`` (a view), ``gh``, ``gw``."""
        return (x[None] if x.ndim == 2 else x), size[0] // self._patch, size[1] // self._patch

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise PipelineError("is not supported by a processor that returns several outputs", argument="out")
        import torch

        with Images(src, self.rgb()) as im:
            targets = [self._target(h, w) for h, w in im.sizes]
            rows = self._concat(im)
            pixel_values = torch.from_numpy(rows) if rows is not None else self._grouped(im, targets)
        p = self._patch
        grids = [[1, h // p, w // p] for h, w in targets]
        return {"pixel_values": pixel_values, "image_grid_thw": torch.tensor(grids, dtype=torch.int64)}

    def _concat(self, im: Images) -> Optional[np.ndarray]:
        """The batch's patch rows from one engine call (``Pipeline._concat``: each image its own plan,
        its rows written at its row offset of one ``(sum of patches, C * T * P * P)`` result; encoded
        images decoded in the call), or None where that call cannot take the batch: a staged chain,
        CUDA tensors, or opened encoded images mixed with decoded ones (``_grouped`` runs those).
        The images are converted to RGB and the numerics flavor chosen as ``Converted._call`` does."""
        items = im.items
        if 0 < len(im.encoded) < len(items) or any(_on_device(x) for x in items):
            return None
        pipe = self._pipe(self._flavor or ("tensor" if is_tensor(items[0]) else "pil"))
        if not isinstance(pipe, Pipeline):
            return None
        how = self.rgb()
        if how is not None and not im.encoded:  # (encoded: JPEGs and RGB PNGs, which need none)
            items = [to_rgb(x, how) for x in items]
        return im.call(pipe._concat, items)  # type: ignore[no-any-return]

    def _grouped(self, im: Images, targets: List[Tuple[int, int]]) -> Any:
        """The batch's patch rows, the images of one resized size in one engine call each (decoding
        them), concatenated: the path of the batches ``_concat`` declines."""
        import torch

        groups: Dict[Tuple[int, int], List[int]] = {}
        for i, s in enumerate(targets):
            groups.setdefault(s, []).append(i)
        rows: List[Any] = [None] * len(targets)
        for idx in groups.values():
            flat, _, _ = self._flatten(im.run(super().__call__, idx), targets[idx[0]])
            for j, i in enumerate(idx):
                rows[i] = flat[j]
        if len(groups) == 1:  # one engine call: its rows are pixel_values as they are
            return torch.as_tensor(flat.reshape(-1, flat.shape[-1]))
        return torch.cat([torch.as_tensor(r) for r in rows], dim=0)  # NumPy rows from device inputs too
