"""The sizing rules and batch layouts of Hugging Face processors beyond one resized image: transformers'
keep-the-aspect-ratio sizes (``shortest_edge`` with ``longest_edge``, ``max_height`` with ``max_width``),
DPT's and SAM's, and the batches that are padded (DETR and its family, SAM: each image resized on its
own, the batch padded at the bottom and right to its largest size or a fixed one, with the auxiliary
outputs the class returns)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, Optional, Tuple

from .. import _ops
from .._errors import PipelineError
from ._chain import Chain
from ._converted import Converted
from ._hf_images import Images
from ._steps import CenterCrop, Resize

# Classes whose pixel code is DETR's (read in transformers 5.25: the same resize, rescale-and-normalize
# and pad in each, for both backends): the keys they read beyond the generic ones (``format`` and
# ``do_convert_annotations`` change only the annotations).
DETR_FAMILY = frozenset({"Detr", "DeformableDetr", "ConditionalDetr", "GroundingDino", "RTDetr"})
DETR_KEYS = frozenset({"do_pad", "pad_size", "format", "do_convert_annotations"})
# SAM's (both backends): mask_size and mask_pad_size apply to segmentation maps only.
SAM_KEYS = frozenset({"do_pad", "pad_size", "mask_size", "mask_pad_size"})
# DPT's (both backends): its sizing; do_reduce_labels applies to segmentation maps only (set False for
# the images); do_pad (a centred pad after the normalisation, transposed in the PIL class) is refused.
DPT_KEYS = frozenset({"ensure_multiple_of", "keep_aspect_ratio", "do_reduce_labels", "do_pad", "size_divisor"})


def _positive(h: int, w: int, oh: int, ow: int) -> Tuple[int, int]:
    """``(oh, ow)``, the size a rule gives an ``h x w`` image, when both are positive; a rule that
    rounds a side of a very thin image to 0 fails in the processor too."""
    if oh < 1 or ow < 1:
        raise PipelineError(f"a {h}x{w} image resizes to {oh}x{ow}: the processor fails on it too")
    return oh, ow


class AspectSize:
    """transformers' ``get_size_with_aspect_ratio(image_size, shortest_edge, longest_edge)``,
    ``(h, w) -> (h, w)``: the shorter side to ``shortest_edge`` unless the longer would pass
    ``longest_edge``; then the shorter side is ``round(longest * short / long)`` and the longer
    ``int(raw * long / short)`` of the unrounded value (so not always ``longest_edge``). A shorter side
    already at its size keeps the image as it is."""

    def __init__(self, shortest: int, longest: int) -> None:
        self.shortest, self.longest = shortest, longest

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        size, raw = self.shortest, None
        lo, hi = float(min(h, w)), float(max(h, w))
        if hi / lo * size > self.longest:
            raw = self.longest * lo / hi
            size = int(round(raw))
        if (h <= w and h == size) or (w <= h and w == size):
            return h, w
        if w < h:
            return _positive(h, w, int((size if raw is None else raw) * h / w), size)
        return _positive(h, w, size, int((size if raw is None else raw) * w / h))


class LongestSize:
    """SAM's ``_get_preprocess_shape``, ``(h, w) -> (h, w)``: the longer side to ``longest``, each side
    ``int(side * scale + 0.5)``."""

    def __init__(self, longest: int) -> None:
        self.longest = longest

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        scale = self.longest * 1.0 / max(h, w)
        oh, ow = int(h * scale + 0.5), int(w * scale + 0.5)
        if oh < 1 or ow < 1:
            raise PipelineError(f"a {h}x{w} image resizes to {oh}x{ow} (longest_edge {self.longest}): the processor "
                                "fails on it too")
        return oh, ow


class MultipleSize:
    """DPT's ``get_resize_output_image_size``, ``(h, w) -> (h, w)``: scaled to ``height x width`` (with
    ``keep_aspect_ratio``, both sides by the scale nearer 1: "scale as little as possible"), each side
    rounded (Python's ``round``, half to even) to a multiple of ``multiple``."""

    def __init__(self, height: int, width: int, keep_aspect_ratio: bool, multiple: int) -> None:
        self.height, self.width, self.keep, self.multiple = height, width, keep_aspect_ratio, multiple

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        sh, sw = self.height / h, self.width / w
        if self.keep:
            if abs(1 - sw) < abs(1 - sh):
                sh = sw
            else:
                sw = sh
        m = self.multiple
        oh, ow = round(sh * h / m) * m, round(sw * w / m) * m
        if oh < 1 or ow < 1:
            raise PipelineError(f"a {h}x{w} image resizes to {oh}x{ow} (ensure_multiple_of {m}): the processor "
                                "fails on it too")
        return oh, ow


class MaxSize:
    """transformers' ``get_image_size_for_max_height_width``, ``(h, w) -> (h, w)``: scaled by
    ``min(max_height / h, max_width / w)`` (up or down), each side truncated."""

    def __init__(self, max_height: int, max_width: int) -> None:
        self.max_height, self.max_width = max_height, max_width

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        s = min(self.max_height / h, self.max_width / w)
        return _positive(h, w, int(h * s), int(w * s))


def detr_size(size: Dict[str, int], raw: Any, kind: str) -> Any:
    """DETR's resize rule for a ``size`` dict (its ``resize``, in its order): shortest and longest
    edge, else max height and width, else height and width; anything else raises, as there."""
    if "shortest_edge" in size and "longest_edge" in size:
        return AspectSize(size["shortest_edge"], size["longest_edge"])
    if "max_height" in size and "max_width" in size:
        return MaxSize(size["max_height"], size["max_width"])
    if "height" in size and "width" in size:
        return (size["height"], size["width"])
    raise PipelineError(f"{raw!r} ({kind}'s resize needs shortest_edge and longest_edge, max_height and max_width, "
                        "or height and width)", argument="size")


class HFCenterCrop:
    """transformers' center crop (an Op): the torchvision backend's is HF's truncating window with
    torchvision's padding (``CenterCrop(floor=True)``); the NumPy one of ``PilBackend`` (flavor "pil")
    pads a side smaller than the crop with ``ceil((crop - side) / 2)`` zeros before it (torchvision
    puts the floor there), then crops at ``(side - crop) // 2``."""

    def __init__(self, size: Tuple[int, int]) -> None:
        self.h, self.w = size
        self._tv = CenterCrop(size, floor=True)

    def __call__(self, img: Any, flavor: str) -> Any:
        if flavor != "pil":
            return self._tv(img, flavor)
        H, W, h, w = img.height, img.width, self.h, self.w
        pt, pl = -(-max(h - H, 0) // 2), -(-max(w - W, 0) // 2)
        nh, nw = max(h, H), max(w, W)
        if (nh, nw) != (H, W):
            img = _ops.pad(img, (pl, pt, nw - W - pl, nh - H - pt), value=0)
        if (nh, nw) == (h, w):
            return img
        return _ops.crop(img, (H - h) // 2 + pt, (W - w) // 2 + pl, h, w)


class PadTo:
    """Padding at the bottom and right up to ``(h, w)`` (an Op). The value is 0 in the source's
    dtype; PaddedBatch sets the padded region of the normalised result to 0, as transformers pads
    after normalising."""

    def __init__(self, h: int, w: int) -> None:
        self.h, self.w = h, w

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.pad(img, (0, 0, self.w - img.width, self.h - img.height), value=0)


def padded_variant(conv: Converted, cache: "OrderedDict[Tuple[int, int], Converted]", size: Tuple[int, int],
                   pad: Any, most: int) -> Converted:
    """``conv``'s chain with the op ``pad(*size)`` after its geometry and before its normalisation, as a
    Converted of the same source, flavor, device and RGB rule; memoised in ``cache`` (the last ``most``
    sizes), since a batch's images share a few sizes."""
    p = cache.get(size)
    if p is None:
        c = conv._chain
        chain = Chain(ops=[*c.ops, pad(*size)], scale=c.scale, scale_by_dtype=c.scale_by_dtype, mean=c.mean,
                      std=c.std, to_tensor=c.to_tensor)
        p = Converted(chain, conv._source, flavor=conv._flavor, device=conv._device, convert_rgb=conv._convert_rgb)
        cache[size] = p
        while len(cache) > most:
            cache.popitem(last=False)
    return p


class PaddedBatch(Converted):
    """A processor that pads its batch (DETR's family, SAM): each image resized on its own (the chain,
    with a center crop where the class has one), rescaled and normalised, the batch padded at the bottom
    and right to its largest size (or ``pad_size``) with zeros after the normalisation. A call returns
    transformers' outputs by their names, always with the batch axis, as the processor's
    ``return_tensors="pt"``: ``pixel_values`` ``(N, 3, H, W)`` float32; with ``mask`` and ``do_pad``,
    ``pixel_mask`` ``(N, H, W)`` int64 (1 on the image, 0 on the padding); with ``sizes``,
    ``original_sizes`` and ``reshaped_input_sizes`` ``(N, 2)`` int64 (each image's size before and after
    the resize). The images of a batch run as one engine call (each padded in the fused pass, to one
    size)."""

    _CACHE = 32  # padded pipelines kept (one per batch size in pixels)

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 do_pad: bool, pad_size: Optional[Tuple[int, int]], mask: bool = True, sizes: bool = False) -> None:
        super().__init__(chain, source, flavor=flavor, device=device, convert_rgb=convert_rgb)
        self._do_pad, self._pad_size = do_pad, pad_size
        self._mask, self._sizes = mask, sizes
        self._padded: "OrderedDict[Tuple[int, int], Converted]" = OrderedDict()

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_padded"] = OrderedDict()
        return state

    def _target(self, h: int, w: int) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        """The size the chain's resize gives an ``h x w`` image, and its size after the chain (its
        geometric ops: a resize, then a center crop)."""
        resized = (h, w)
        for op in self._chain.ops:
            if isinstance(op, Resize):
                h, w = resized = op.target(h, w)
            elif isinstance(op, HFCenterCrop):
                h, w = op.h, op.w
            else:
                raise PipelineError(f"internal: {type(op).__name__} in a padded batch's chain")
        return resized, (h, w)

    def _padder(self, size: Tuple[int, int]) -> Converted:
        """The chain with a PadTo(size) before its normalisation (memoised, the last _CACHE sizes)."""
        return padded_variant(self, self._padded, size, PadTo, self._CACHE)

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise PipelineError("is not supported by a processor that returns several outputs", argument="out")
        with Images(src, self.rgb()) as im:
            return self._padded_call(im)

    def _padded_call(self, im: Images) -> Dict[str, Any]:
        sizes = im.sizes
        targets = [self._target(h, w) for h, w in sizes]
        final = [t[1] for t in targets]
        res: Dict[str, Any] = {}
        if not self._do_pad:
            res["pixel_values"] = im.run(super().__call__)
        else:
            if self._pad_size is not None:
                ph, pw = self._pad_size
                for h, w in final:
                    if h > ph or w > pw:  # transformers: "Padding dimensions are negative"
                        raise PipelineError(f"{(ph, pw)} is smaller than an image of {(h, w)}", argument="pad_size")
            else:
                ph, pw = max(h for h, _ in final), max(w for _, w in final)
            pv = im.run(super().__call__ if all(s == (ph, pw) for s in final) else self._padder((ph, pw)))
            for i, (h, w) in enumerate(final):
                if (h, w) != (ph, pw):  # zeros after the normalisation, as transformers pads
                    pv[i, :, h:, :] = 0
                    pv[i, :, :h, w:] = 0
            res["pixel_values"] = pv
            if self._mask:
                import torch

                if all(s == (ph, pw) for s in final):  # nothing padded: all ones, written once
                    mask = torch.ones((len(final), ph, pw), dtype=torch.int64, device=pv.device)
                else:
                    mask = torch.zeros((len(final), ph, pw), dtype=torch.int64, device=pv.device)
                    for i, (h, w) in enumerate(final):
                        mask[i, :h, :w] = 1
                res["pixel_mask"] = mask
        if self._sizes:
            import torch

            res["original_sizes"] = torch.tensor(sizes, dtype=torch.int64)
            res["reshaped_input_sizes"] = torch.tensor([t[0] for t in targets], dtype=torch.int64)
        return res
