"""Nougat's image processor (both of transformers' backends, read in transformers 5.25): Donut's
geometry (the shorter side resized to the smaller side of ``size``, a bicubic thumbnail fitting ``size``,
a centred zero pad to ``size``), after ``crop_margin``: the image cut to the bounding box of its pixels
darker than 200 on a gray scale stretched to ``[0, 255]`` (the box is found here, in NumPy / PyTorch, with
the class's own gray conversion; the cut is a view). The resizes, the pad, the rescale and the
normalisation run in goprep's engine (``_hf_donut``'s ops). ``do_align_long_axis`` (a 90 degree rotation)
is refused, as for Donut.

The PIL class's thumbnail passes ``reducing_gap=2.0`` to Pillow, which first box-reduces an image shrunk
by 4 or more along an axis: goprep refuses such an image at the call (the other sizes are Pillow's plain
resize)."""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._errors import PipelineError
from .._inputs import is_pil, is_tensor
from ._chain import Chain
from ._converted import Converted
from ._hf_donut import CenterPadTo, HostResize, Thumbnail
from ._hf_pixels import _hf_size, hf_chain
from ._hf_images import Images
from ._rgb import to_rgb
from ._steps import Resize

# Keys Nougat's class reads beyond the generic ones.
NOUGAT_KEYS = frozenset({"do_crop_margin", "do_thumbnail", "do_align_long_axis", "do_pad"})
_GRAY_THRESHOLD = 200  # crop_margin's gray_threshold (its default; the class never passes another)
_REDUCING_GAP = 2.0  # the PIL class's thumbnail: Pillow's resize(reducing_gap=2.0)


def _gray_tensor(t: Any) -> Any:
    """torchvision's ``rgb_to_grayscale`` of a uint8 ``(C, H, W)`` tensor (the torchvision class's), the
    same PyTorch ops in the same order: float32 weights, truncated back to uint8."""
    if t.shape[0] == 1:
        return t[0]
    if t.shape[0] != 3:
        raise PipelineError(f"a {t.shape[0]}-channel image: Nougat's crop_margin converts RGB to gray (the processor "
                            "fails on it too; pass do_convert_rgb=True)", argument="src")
    r, g, b = t.unbind(0)
    return r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114).to(t.dtype)


def _gray_pil(a: np.ndarray) -> np.ndarray:
    """Pillow's ``convert("L")`` of a uint8 ``(H, W, C)`` array (the PIL class's)."""
    from PIL import Image

    if a.shape[-1] not in (1, 3):
        raise PipelineError(f"a {a.shape[-1]}-channel image: Nougat's crop_margin converts RGB to gray (the processor "
                            "fails on it too; pass do_convert_rgb=True)", argument="src")
    return np.asarray(Image.fromarray(a[..., 0] if a.shape[-1] == 1 else a).convert("L"))


def margin_box(gray: Any, torch_ops: bool) -> Optional[Tuple[int, int, int, int]]:
    """crop_margin's box ``(top, left, height, width)`` of a uint8 gray image (a tensor with ``torch_ops``,
    else an array): the gray stretched by ``(g - min) / (max - min) * 255`` (uint8 subtraction, then the
    backend's float division), the box of the values below 200; None where the image is flat (the class
    keeps it). The stretch is computed with the class's ops on the 256 possible values rather than on every
    pixel (elementwise and correctly rounded: the same result per value); it is non-decreasing, so the dark
    pixels are those below the first value that is not."""
    hi, lo = gray.max(), gray.min()
    if hi == lo:
        return None
    if torch_ops:
        import torch

        values = torch.arange(int(lo), int(hi) + 1, dtype=torch.uint8)
        dark_values = ((values - lo) / (hi - lo) * 255 < _GRAY_THRESHOLD).numpy()
        g = gray.numpy()
    else:
        values = np.arange(int(lo), int(hi) + 1, dtype=np.uint8)
        dark_values = (values - lo) / (hi - lo) * 255 < _GRAY_THRESHOLD
        g = gray
    first_light = int(lo) + int(np.argmin(dark_values))  # hi stretches to 255: at least one value is light
    dark = g < first_light
    rows, cols = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    return int(rows[0]), int(cols[0]), int(rows[-1] - rows[0] + 1), int(cols[-1] - cols[0] + 1)


class NougatPipeline(Converted):
    """Nougat's processor: ``pixel_values`` as the processor computes them, ``(3, H, W)`` for one image and
    ``(N, 3, H, W)`` for a list or an ``(N, C, H, W)`` tensor (as goprep's other converted pipelines)."""

    def __init__(self, chain: Chain, source: str, flavor: str, device: str, convert_rgb: bool, crop_margin: bool,
                 thumb: Optional[Resize]) -> None:
        super().__init__(chain, source, flavor=flavor, device=device, convert_rgb=False)
        self._rgb, self._crop_margin, self._thumb = convert_rgb, crop_margin, thumb

    def _prepared(self, x: Any) -> Any:
        """One image converted to RGB (do_convert_rgb) and cut to its margin box (do_crop_margin)."""
        flavor = self._flavor or "pil"
        if self._rgb:
            x = to_rgb(x, flavor)
        if not self._crop_margin:
            return x
        if is_tensor(x):
            t = x if x.ndim == 3 else x[None]
        else:
            a = np.asarray(x)
            a = a[..., None] if a.ndim == 2 else a
            t = None
        if flavor == "tensor":
            import torch

            if t is None:
                with warnings.catch_warnings():  # a PIL image's read-only array: only read here
                    warnings.simplefilter("ignore", UserWarning)
                    t = torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1)
            box = margin_box(_gray_tensor(t), True)
        else:
            box = margin_box(_gray_pil(a if t is None else t.permute(1, 2, 0).numpy()), False)
        if box is None:
            return x
        top, left, h, w = box
        if t is not None and is_tensor(x):
            return t[:, top:top + h, left:left + w]
        return a[top:top + h, left:left + w]

    def _check_reduce(self, x: Any) -> None:
        """The PIL class's thumbnail: refuses an image that Pillow would box-reduce first (reducing_gap)."""
        h, w = (x.height, x.width) if is_pil(x) else (int(x.shape[-2]), int(x.shape[-1])) if is_tensor(x) \
            else (int(x.shape[0]), int(x.shape[1]))
        for op in self._chain.ops:
            if isinstance(op, HostResize):
                h, w = op.inner.target(h, w)
        if self._thumb is None:
            return
        th, tw = self._thumb.target(h, w)
        if (th, tw) != (h, w) and (int(w / tw / _REDUCING_GAP) > 1 or int(h / th / _REDUCING_GAP) > 1):
            raise PipelineError(f"a {h}x{w} image thumbnailed to {th}x{tw}: the PIL class's Pillow resize "
                                "(reducing_gap=2.0) box-reduces it first, which goprep does not reproduce; use "
                                "NougatImageProcessor's pipeline (the torchvision class)", argument="src")

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        # encoded images decoded first, in one call (the margin crop reads their pixels); a list of lists flattened
        with Images(src, (self._flavor or "pil") if self._rgb else None, decode=True) as im:
            items: List[Any] = [self._prepared(x) for x in im.items]
        if self._flavor == "pil":
            for x in items:
                self._check_reduce(x)
        return super().__call__(items[0] if im.one else items, out=out)


def build_nougat(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> NougatPipeline:
    """Nougat's pipeline from a complete config (its code never center-crops: do_center_crop and
    crop_size change nothing, as in the class)."""
    if cfg.get("do_align_long_axis"):
        raise PipelineError(f"True ({kind} rotates the image by 90 degrees where its long axis differs from size's; "
                            "goprep has no rotation)", argument="do_align_long_axis")
    raw = cfg.get("size")
    size = _hf_size(raw, True) if raw is not None else {}
    if "height" not in size or "width" not in size:
        raise PipelineError(f"{raw!r} ({kind} needs height and width)", argument="size")
    h, w = size["height"], size["width"]
    if cfg.get("do_pad") and not cfg.get("do_thumbnail"):
        raise PipelineError(f"True without do_thumbnail ({kind} pads an image larger than size by cropping it in the "
                            "torchvision class and fails in the PIL one; not reproduced)", argument="do_pad")
    flavor = flavor or ("pil" if kind.endswith("Pil") else "tensor")
    chain = hf_chain({**cfg, "do_resize": False, "do_center_crop": False}, kind, "")  # rescale and normalise
    ops: List[Any] = []
    if cfg.get("do_resize", True):
        # the resize op with the config's resample, built where it is read (hf_chain), for the shorter side
        first = hf_chain({**cfg, "size": {"shortest_edge": min(h, w)}, "do_center_crop": False}, kind, "").ops[0]
        ops.append(HostResize(first))
    thumb = None
    if cfg.get("do_thumbnail"):
        t = Thumbnail((h, w), 3, 3)  # bicubic in both classes, whatever resample says
        ops.append(t)
        thumb = t.pil
    if cfg.get("do_pad"):
        ops.append(CenterPadTo(h, w))
    chain.ops[:0] = ops
    return NougatPipeline(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")),
                          bool(cfg.get("do_crop_margin")), thumb)


# base name -> (the keys its class reads beyond the generic ones, the builder)
NOUGAT = {"Nougat": (NOUGAT_KEYS, build_nougat)}
