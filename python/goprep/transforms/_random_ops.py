"""The random ops of a converted training chain. Each is an Op with a ``draw(h, w)`` method that draws
one item's parameters for an ``h x w`` image, exactly as its torchvision (or timm) transform does, and
an ``apply(img, flavor, params)`` that runs it on the traced image with those parameters; ``out_size``
gives the size after it. ``random`` says whether the op makes a chain random; ops that only keep the
draws in step (a flip with ``p`` 1, a transform with ``p`` 0) have it False, and draw only in a chain
that is random (see Converted)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .. import _ops
from .._errors import PipelineError
from ._random import draft_scale, draws, reduced_box, resized_crop_box, timm_resized_crop_box
from ._steps import Resize



class RandomResizedCrop:
    """torchvision's ``RandomResizedCrop`` (v1 and v2: the same draws) or, with ``timm``, timm's
    ``RandomResizedCropAndInterpolation`` (Python's ``random``; a list of interpolations is a
    ``random.choice`` after the box). Params: ``(top, left, h, w, interpolation index)``."""

    random = True
    crop_first = True  # its parameters lead with the box it crops from its source (_variants.chain_split)

    def __init__(self, name: str, size: Tuple[int, int], scale: Sequence[float], ratio: Sequence[float],
                 interps: Sequence[Any], antialias: Any, api: str, timm: bool = False) -> None:
        self.name, self.size = name, size
        self.scale = (float(scale[0]), float(scale[1]))
        self.ratio = (float(ratio[0]), float(ratio[1]))
        self.timm = timm
        self.resizes = [Resize(name, size, m, antialias, None, api) for m in interps]

    def draw(self, h: int, w: int) -> Tuple[int, ...]:
        if self.timm:
            box = timm_resized_crop_box(h, w, self.scale, self.ratio)
            k = 0
            if len(self.resizes) > 1:
                k = self.resizes.index(draws().py.choice(self.resizes))
            return box + (k,)
        return resized_crop_box(h, w, self.scale, self.ratio, draws().torch) + (0,)

    def out_size(self, h: int, w: int, prm: Any) -> Tuple[int, int]:
        return self.size

    def reduced(self, h: int, w: int, prm: Tuple[int, ...]) -> Tuple[int, Tuple[int, ...]]:
        """reduce="auto" on an ``h x w`` JPEG (_random.run_drawn): the DCT scale of the drawn box
        against the output size (Pillow's draft rule) and the box in the reduced image's pixels."""
        s = draft_scale(prm[2], prm[3], self.size[0], self.size[1]) if prm[2] > 0 and prm[3] > 0 else 1
        return (s, prm) if s == 1 else (s, reduced_box(prm[:4], s, h, w) + (prm[4],))

    def apply(self, img: Any, flavor: str, prm: Tuple[int, ...]) -> Any:
        i, j, h, w, k = prm
        if h <= 0 or w <= 0:
            raise PipelineError(f"{self.name} drew an empty {h}x{w} box (torchvision fails on it too)")
        return self.resizes[k](_ops.crop(img, i, j, h, w), flavor)

    def host(self, flavor: str) -> Any:
        """v1's float resize outside the fused pass (see Resize.host), with the crop before it."""
        if not any(r.host(flavor) is not None for r in self.resizes):
            return None

        def run(a: np.ndarray, prm: Tuple[int, ...]) -> np.ndarray:
            i, j, h, w, k = prm
            a = a[..., i:i + h, j:j + w, :]
            r = self.resizes[k]
            f = r.host(flavor)
            if f is not None:
                return f(np.ascontiguousarray(a))
            kind, aa = r._tensor_kernel("u8" if a.dtype == np.uint8 else "f32")
            return _ops.resize(np.ascontiguousarray(a), self.size, interpolation=kind, antialias=aa)

        return run


class RandomCrop:
    """torchvision's ``RandomCrop`` with constant padding: ``padding`` (left, top, right, bottom) first,
    ``pad_if_needed`` padding each short side by the shortfall on both ends, then the window at a
    random place. ``api`` "v1" draws as ``RandomCrop.get_params`` (nothing when the padded image is the
    crop's size, else both offsets), "v2" as its ``make_params`` (an offset only along a longer side).
    Params: ``(left, top, right, bottom, top offset, left offset)``."""

    random = True

    def __init__(self, name: str, size: Tuple[int, int], padding: Optional[Tuple[int, int, int, int]],
                 pad_if_needed: bool, fill: Any, api: str) -> None:
        self.name, self.size, self.padding = name, size, padding or (0, 0, 0, 0)
        self.pad_if_needed, self.fill, self.api = bool(pad_if_needed), fill, api

    def draw(self, h: int, w: int) -> Tuple[int, ...]:
        left, top, right, bottom = self.padding
        ph, pw = h + top + bottom, w + left + right
        th, tw = self.size
        if self.pad_if_needed and pw < tw:
            d = tw - pw
            left, right, pw = left + d, right + d, pw + 2 * d
        if self.pad_if_needed and ph < th:
            d = th - ph
            top, bottom, ph = top + d, bottom + d, ph + 2 * d
        if ph < th or pw < tw:
            raise PipelineError(f"{self.name}: the crop {th}x{tw} is larger than the (padded) image {ph}x{pw}, "
                                "as torchvision refuses it (set pad_if_needed=True)")
        if self.api == "v1":
            if (ph, pw) == (th, tw):
                i = j = 0
            else:
                i = draws().torch.randint(0, ph - th + 1)
                j = draws().torch.randint(0, pw - tw + 1)
        else:
            i = draws().torch.randint(0, ph - th + 1, scalar=True) if ph > th else 0
            j = draws().torch.randint(0, pw - tw + 1, scalar=True) if pw > tw else 0
        return (left, top, right, bottom, i, j)

    def out_size(self, h: int, w: int, prm: Any) -> Tuple[int, int]:
        return self.size

    def apply(self, img: Any, flavor: str, prm: Tuple[int, ...]) -> Any:
        left, top, right, bottom, i, j = prm
        if left or top or right or bottom:
            img = _ops.pad(img, (left, top, right, bottom), value=self.fill)
        return _ops.crop(img, i, j, self.size[0], self.size[1])


class RandomFlip:
    """``RandomHorizontalFlip(p)`` / ``RandomVerticalFlip(p)``: ``torch.rand(1) < p`` (v1's test; v2's
    ``rand >= p`` skips, the same). ``p`` 1 is a flip that still draws, in a random chain."""

    def __init__(self, horizontal: bool, p: float) -> None:
        self.horizontal, self.p = horizontal, float(p)
        self.random = 0 < self.p < 1

    def draw(self, h: int, w: int) -> bool:
        return draws().torch.rand() < self.p

    def out_size(self, h: int, w: int, prm: Any) -> Tuple[int, int]:
        return h, w

    def apply(self, img: Any, flavor: str, prm: Optional[bool]) -> Any:
        if prm is None:  # a chain that draws nothing: p is 0 or 1 (or beyond: torchvision's rand < p)
            prm = self.p >= 1
        return _ops.flip(img, horizontal=self.horizontal, vertical=not self.horizontal) if prm else img

    def __call__(self, img: Any, flavor: str) -> Any:
        return self.apply(img, flavor, None)


class DrawOnly:
    """A transform that changes nothing here but draws in torchvision: ``p`` 0 (one ``torch.rand(1)``),
    or a ColorJitter with every factor off (one ``torch.randperm(4)``). Kept so that later draws stay in
    step; an identity in the fused pass."""

    random = False

    def __init__(self, name: str, rand: int = 1, perm: int = 0) -> None:
        self.name, self.rand, self.perm = name, rand, perm

    def draw(self, h: int, w: int) -> None:
        if self.perm:
            draws().torch.randperm(self.perm)
        elif self.rand:
            draws().torch.rand()
        else:
            raise PipelineError(f"{self.name}(p=0) in a random pipeline: torchvision still draws for it, which goprep "
                                "does not reproduce (the later draws would differ); remove it")
        return None

    def out_size(self, h: int, w: int, prm: Any) -> Tuple[int, int]:
        return h, w

    def apply(self, img: Any, flavor: str, prm: Any) -> Any:
        return img

    def __call__(self, img: Any, flavor: str) -> Any:
        return img
