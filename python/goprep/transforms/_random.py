"""Random parameters drawn as torchvision (and timm) draw them, and the native random ops built on them.

A ``Source`` is where the numbers come from: torch's global generator (what torchvision's transforms
use), a ``torch.Generator``, a ``numpy.random.Generator``, or Python's ``random`` module (what timm's
``RandomResizedCropAndInterpolation`` uses). The drawing functions make the same calls in the same
order as the library they follow, so with torch's generator in the same state they return the same
crop boxes and flips; torch is imported only when a torch source draws.
"""

from __future__ import annotations

import math
import random as _pyrandom
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from .._errors import InvalidArgumentError, PipelineError
from .._validate import as_positive_int


class Source:
    """A random source with torchvision's calls: ``uniform`` (``torch.empty(1).uniform_(lo, hi).item()``),
    ``exp_uniform_log`` (``torch.exp(torch.empty(1).uniform_(log lo, log hi)).item()``, the logs taken
    in float32 as ``torch.log(torch.tensor(ratio))``), ``randint`` (``torch.randint(lo, hi, size)``, hi
    exclusive), ``rand`` (``torch.rand(1)``), ``randperm`` (``torch.randperm(n)``). ``generator``: None
    (torch's global generator), a ``torch.Generator`` or a ``numpy.random.Generator`` (NumPy's own
    calls then: the same distributions, another stream)."""

    def __init__(self, generator: Any = None) -> None:
        self.np = None
        self.g = None
        if generator is None:
            return
        if type(generator).__module__.startswith("numpy.random") and hasattr(generator, "integers"):
            self.np = generator
        elif type(generator).__name__ == "Generator" and type(generator).__module__.startswith("torch"):
            if generator.device.type != "cpu":  # torchvision's draws are CPU tensors
                raise InvalidArgumentError(f"must be a CPU torch.Generator, got one on {generator.device}",
                                           argument="generator")
            self.g = generator
        else:
            raise InvalidArgumentError(
                f"must be None (torch's global generator), a torch.Generator or a numpy.random.Generator, got "
                f"{type(generator).__name__}", argument="generator")

    def _kw(self) -> dict:
        return {} if self.g is None else {"generator": self.g}

    def uniform(self, lo: float, hi: float) -> float:
        if self.np is not None:
            return float(self.np.uniform(lo, hi))
        import torch

        return float(torch.empty(1).uniform_(lo, hi, **self._kw()).item())

    def exp_uniform_log(self, lo: float, hi: float) -> float:
        if self.np is not None:
            return math.exp(float(self.np.uniform(math.log(lo), math.log(hi))))
        import torch

        lr = torch.log(torch.tensor((lo, hi)))
        return float(torch.exp(torch.empty(1).uniform_(lr[0], lr[1], **self._kw())).item())

    def randint(self, lo: int, hi: int, scalar: bool = False) -> int:
        if self.np is not None:
            return int(self.np.integers(lo, hi))
        import torch

        return int(torch.randint(lo, hi, size=() if scalar else (1,), **self._kw()).item())

    def rand(self) -> float:
        if self.np is not None:
            return float(self.np.random())
        import torch

        return float(torch.rand(1, **self._kw()).item())

    def randperm(self, n: int) -> None:
        if self.np is not None:
            self.np.permutation(n)
            return
        import torch

        torch.randperm(n, **self._kw())


def resized_crop_box(height: int, width: int, scale: Sequence[float], ratio: Sequence[float],
                     src: Source) -> Tuple[int, int, int, int]:
    """torchvision's ``RandomResizedCrop.get_params`` (v1, and v2's ``make_params``, which is the same):
    up to 10 tries of an area in ``scale`` and a log-uniform aspect ratio in ``ratio``, the first box
    inside the image placed uniformly; else the central crop clamped to ``ratio``. ``(top, left, h, w)``."""
    area = height * width
    for _ in range(10):
        target_area = area * src.uniform(scale[0], scale[1])
        aspect_ratio = src.exp_uniform_log(ratio[0], ratio[1])
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = src.randint(0, height - h + 1)
            j = src.randint(0, width - w + 1)
            return i, j, h, w
    return _central(height, width, ratio)


def _central(height: int, width: int, ratio: Sequence[float]) -> Tuple[int, int, int, int]:
    """RandomResizedCrop's fallback (torchvision's and timm's): the central box clamped to ``ratio``."""
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def timm_resized_crop_box(height: int, width: int, scale: Sequence[float],
                          ratio: Sequence[float]) -> Tuple[int, int, int, int]:
    """timm's ``RandomResizedCropAndInterpolation.get_params``: the same rule as torchvision's, drawn from
    Python's ``random`` module (``random.uniform``, ``random.randint`` inclusive; no ``0 <`` test)."""
    area = width * height
    for _ in range(10):
        target_area = _pyrandom.uniform(*scale) * area
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        aspect_ratio = math.exp(_pyrandom.uniform(*log_ratio))
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if w <= width and h <= height:
            return _pyrandom.randint(0, height - h), _pyrandom.randint(0, width - w), h, w
    return _central(height, width, ratio)


class Params(NamedTuple):
    """The parameters one item of a native random op drew: the crop box in the source image
    (``top``, ``left``, ``height``, ``width``) and the flips applied after the resize."""

    top: int
    left: int
    height: int
    width: int
    hflip: bool
    vflip: bool

    def boxes(self, xyxy: Any, size: Any) -> Any:
        """``(N, 4)`` boxes ``(x1, y1, x2, y2)`` in source pixels moved as the image was by
        ``random_resized_crop(..., size)``: shifted by the crop, scaled to ``size``, mirrored by the
        flips (float64; not clipped to the image: boxes that leave the crop keep their outside part)."""
        import numpy as np

        from .. import _validate

        oh, ow = _validate.parse_size(size, 1 << 30, "size")
        b = np.array(xyxy, dtype=np.float64).reshape(-1, 4)
        x = (b[:, [0, 2]] - self.left) * (ow / self.width)
        y = (b[:, [1, 3]] - self.top) * (oh / self.height)
        if self.hflip:
            x = ow - x[:, ::-1]
        if self.vflip:
            y = oh - y[:, ::-1]
        return np.stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]], axis=1)


def _prob(name: str, p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise InvalidArgumentError(f"must be a probability in [0, 1], got {p!r}", argument=name)
    return float(p)


def _range(name: str, v: Any, positive: bool) -> Tuple[float, float]:
    ok = isinstance(v, (list, tuple)) and len(v) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)
    if not ok or v[0] > v[1] or (positive and v[0] <= 0) or (not positive and v[0] < 0):
        raise InvalidArgumentError(f"must be a (min, max) pair of finite {'positive ' if positive else ''}numbers "
                                   f"with min <= max, got {v!r}", argument=name)
    return float(v[0]), float(v[1])


def draw_resized_crop(height: int, width: int, *, scale: Sequence[float] = (0.08, 1.0),
                      ratio: Sequence[float] = (3 / 4, 4 / 3), hflip: float = 0.0, vflip: float = 0.0,
                      generator: Any = None) -> Params:
    """One item's RandomResizedCrop box for an ``height x width`` image and its flips, drawn as
    torchvision's ``RandomResizedCrop`` then ``RandomHorizontalFlip(hflip)`` then
    ``RandomVerticalFlip(vflip)`` draw them (a flip of probability 0 draws nothing here). ``generator``:
    see ``Source`` (None: torch's global generator, so after ``torch.manual_seed(s)`` the box is
    torchvision's)."""
    src = Source(generator)
    height, width = as_positive_int("height", height), as_positive_int("width", width)
    sc, ra = _range("scale", scale, False), _range("ratio", ratio, True)
    ph, pv = _prob("hflip", hflip), _prob("vflip", vflip)
    i, j, h, w = resized_crop_box(height, width, sc, ra, src)
    hf = ph > 0 and src.rand() < ph
    vf = pv > 0 and src.rand() < pv
    return Params(i, j, h, w, bool(hf), bool(vf))


def random_resized_crop(src: Any, size: Any, *, scale: Sequence[float] = (0.08, 1.0),
                        ratio: Sequence[float] = (3 / 4, 4 / 3), interpolation: str = "bilinear",
                        antialias: Any = True, hflip: float = 0.0, vflip: float = 0.0, generator: Any = None,
                        return_params: bool = False) -> Any:
    """goprep's RandomResizedCrop: for each image (one, or each item of a list or batch, in order), a box
    drawn by ``draw_resized_crop``, cropped, resized to ``size`` (``goprep.resize``'s ``interpolation``
    and ``antialias``) and flipped, in one fused pass per image. A list or batch gives one batch.
    With ``return_params=True`` it returns ``(result, params)``, ``params`` a ``Params`` (a list of them
    for a list or batch) so that boxes and masks can follow the image."""
    from .. import _validate

    _validate.parse_size(size, 1 << 30, "size")
    items, batch = items_of(src)
    drawn = []
    for x in items:
        h, w = image_hw(x)
        drawn.append(draw_resized_crop(h, w, scale=scale, ratio=ratio, hflip=hflip, vflip=vflip, generator=generator))
    res = resized_crop_with(src, drawn if batch else drawn[0], size, interpolation=interpolation, antialias=antialias)
    if return_params:
        return res, (drawn if batch else drawn[0])
    return res


def resized_crop_with(src: Any, params: Any, size: Any, *, interpolation: str = "bilinear",
                      antialias: Any = True) -> Any:
    """The crop, resize and flips of ``params`` (a ``Params``, or a list of them for a list or batch, as
    ``random_resized_crop(..., return_params=True)`` returns) applied to ``src``: a mask or another
    image that follows the drawn ones (a mask wants ``interpolation="nearest", antialias=False``)."""
    from .. import _ops, _validate
    from .._inputs import is_tensor
    from .._pipeline import pipeline

    oh, ow = _validate.parse_size(size, 1 << 30, "size")
    items, batch = items_of(src)
    prms = list(params) if batch and not isinstance(params, Params) else [params]
    if len(prms) != len(items) or not all(isinstance(p, Params) for p in prms):
        raise InvalidArgumentError(f"must be a Params{' list of one per item' if batch else ''} (as random_resized_crop "
                                   f"returns), got {type(params).__name__}", argument="params")
    p = _native_pipe(pipeline, _ops)
    outs = [p(x, prm, (oh, ow), interpolation, antialias) for x, prm in zip(items, prms)]
    return outs[0] if not batch else stack(outs, is_tensor(outs[0]))


_PIPE: List[Any] = []


def _native_pipe(pipeline: Any, ops: Any) -> Any:
    """The fused crop + resize + flip pipeline of ``random_resized_crop`` (built once; its memo is keyed
    by the drawn box, so it is bounded like every goprep memo)."""
    if not _PIPE:
        def rrc(img: Any, prm: Params, size: Tuple[int, int], interpolation: str, antialias: Any) -> Any:
            img = ops.crop(img, prm.top, prm.left, prm.height, prm.width)
            img = ops.resize(img, size, interpolation=interpolation, antialias=antialias)
            if prm.hflip or prm.vflip:
                img = ops.flip(img, horizontal=prm.hflip, vertical=prm.vflip)
            return img

        _PIPE.append(pipeline(rrc))
    return _PIPE[0]


def items_of(src: Any) -> Tuple[List[Any], bool]:
    """The images of a call, drawn for one by one, and whether it is a batch: a list's items, an
    ``(N, ...)`` array's or tensor's rows, or the one image."""
    from .._inputs import is_pil

    batch = isinstance(src, (list, tuple)) or (not is_pil(src) and getattr(src, "ndim", 0) == 4)
    items = list(src) if batch else [src]
    if not items:
        raise PipelineError("is an empty list", argument="src")
    return items, batch


def image_hw(x: Any) -> Tuple[int, int]:
    """An image's ``(height, width)``: a PIL image's size, a tensor's last two dims (``(C, H, W)``), an
    array's first two (``(H, W[, C])``)."""
    from .._inputs import is_pil, is_tensor

    if is_pil(x):
        return int(x.size[1]), int(x.size[0])
    if is_tensor(x):
        if x.ndim != 3:
            raise PipelineError(f"a random transform takes (C, H, W) tensors, got {x.ndim}-D", argument="src")
        return int(x.shape[-2]), int(x.shape[-1])
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) not in (2, 3):
        raise PipelineError(f"a random transform takes images (PIL, (H, W, C) arrays, (C, H, W) tensors), got "
                            f"{type(x).__name__}", argument="src")
    return int(shape[0]), int(shape[1])


def stack(outs: List[Any], tensor: bool, out: Optional[Any] = None) -> Any:
    """Per-item results as one batch (into ``out`` when given)."""
    if tensor:
        import torch

        return torch.stack(outs, out=out) if out is not None else torch.stack(outs)
    import numpy as np

    if out is not None:
        np.stack(outs, out=out)
        return out
    return np.stack(outs)
