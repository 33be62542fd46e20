"""The native colour and erasing ops: ``color_jitter``, ``random_grayscale``, ``random_erasing`` and their
draws (``draw_color_jitter``, ``draw_erasing``), with an explicit ``generator=`` (None: torch's global
generator, so after ``torch.manual_seed(s)`` the draws are torchvision's; a ``torch.Generator``; a
``numpy.random.Generator``) and ``return_params=True`` to get what was drawn."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .._errors import InvalidArgumentError
from . import _color_kernels as K
from ._random import Source, _prob, _range, items_of
from ._random_color import (ErasingParams, JitterParams, erase, erasing_box, go_one, jitter_params, jitter_range,
                            jitter_steps, run_jitter)


def draw_color_jitter(brightness: Any = 0, contrast: Any = 0, saturation: Any = 0, hue: Any = 0, *,
                      generator: Any = None) -> JitterParams:
    """One item's ColorJitter draw, as torchvision's ``ColorJitter(brightness, contrast, saturation,
    hue)`` draws it (the factors read as its ``_check_input``: a number ``x`` is ``[max(0, 1 - x), 1 +
    x]``, hue's ``[-x, x]``; a pair as it is)."""
    src = Source(generator)
    return jitter_params(_ranges(brightness, contrast, saturation, hue), src)


def _ranges(b: Any, c: Any, s: Any, h: Any) -> List[Optional[Tuple[float, float]]]:
    return [jitter_range("brightness", b), jitter_range("contrast", c), jitter_range("saturation", s),
            jitter_range("hue", h, 0.0, (-0.5, 0.5), False)]


def _numerics(x: Any, numerics: Optional[str]) -> str:
    """The numerics for an image: given, else Pillow's for uint8 PIL / NumPy, torchvision v2's for
    tensors and float arrays."""
    from .._inputs import is_tensor

    if numerics is not None:
        if numerics not in K.NUMERICS:
            raise InvalidArgumentError(f"must be one of {K.NUMERICS}, got {numerics!r}", argument="numerics")
        return numerics
    if is_tensor(x) or np.asarray(x).dtype != np.uint8:
        return "v2"
    return "pil"


def _hwc(x: Any) -> Tuple[np.ndarray, Any]:
    """An image as a NumPy ``(H, W, C)`` array and how to give the result back in ``x``'s kind."""
    from .._inputs import is_pil, is_tensor

    if is_pil(x):
        from PIL import Image

        a = np.asarray(x)
        return (a[..., None] if a.ndim == 2 else a), (lambda y: Image.fromarray(y[..., 0] if y.shape[-1] == 1 else y))
    if is_tensor(x):
        import torch

        if x.ndim != 3:
            raise InvalidArgumentError(f"takes (C, H, W) tensors (or a batch of them), got {x.ndim}-D", argument="src")
        return x.permute(1, 2, 0).numpy(), (lambda y: torch.from_numpy(np.ascontiguousarray(y.transpose(2, 0, 1))))
    a = np.asarray(x)
    if a.ndim == 2:
        return a[..., None], (lambda y: y[..., 0])
    if a.ndim != 3:
        raise InvalidArgumentError(f"takes (H, W, C) arrays (or a batch of them), got shape {a.shape}", argument="src")
    return a, (lambda y: y)


def _each(src: Any, fn: Any) -> Any:
    """``fn(image) -> (result, params)`` over ``src``'s items: one result, or a stacked batch, with the
    params (one, or a list)."""
    from .._inputs import is_tensor
    from ._random import stack

    items, batch = items_of(src)
    res, prms = zip(*(fn(x) for x in items))
    if not batch:
        return res[0], prms[0]
    return stack(list(res), is_tensor(res[0])), list(prms)


def color_jitter(src: Any, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0, hue: Any = 0, *,
                 numerics: Optional[str] = None, generator: Any = None, return_params: bool = False) -> Any:
    """goprep's ColorJitter: for each image (one, or each of a list or batch, in order) a
    ``draw_color_jitter`` draw, then its adjustments in the drawn order with ``numerics`` ("pil":
    Pillow's ImageEnhance and HSV, the default for uint8 PIL images and arrays; "v1" / "v2":
    torchvision's tensor math, "v2" the default for tensors and float arrays). PIL in gives PIL out,
    tensors ``(C, H, W)`` give tensors, arrays ``(H, W, C)`` arrays. With ``return_params=True``:
    ``(result, params)`` (a ``JitterParams``, or a list of them)."""
    ranges = _ranges(brightness, contrast, saturation, hue)
    src_ = Source(generator)

    def one(x: Any) -> Tuple[Any, JitterParams]:
        a, back = _hwc(x)
        prm = jitter_params(ranges, src_)
        num = _numerics(x, numerics)
        b = go_one(a, lambda: jitter_steps(prm), num)  # Go where it takes the image, else NumPy
        return back(run_jitter(a, prm, num) if b is None else b), prm

    res, prms = _each(src, one)
    return (res, prms) if return_params else res


def random_grayscale(src: Any, p: float = 0.1, *, numerics: Optional[str] = None, generator: Any = None,
                     return_params: bool = False) -> Any:
    """goprep's RandomGrayscale: each image, with probability ``p`` (``rand() < p``, torchvision's
    draw), replaced by its luma over its own channels (``numerics`` as ``color_jitter``'s). With
    ``return_params=True``: ``(result, applied)`` (a bool, or a list)."""
    pr = _prob("p", p)
    src_ = Source(generator)

    def one(x: Any) -> Tuple[Any, bool]:
        a, back = _hwc(x)
        hit = bool(src_.rand() < pr)
        num = _numerics(x, numerics)
        b = go_one(a, lambda: [("gray", 0.0)] if hit else [], num)
        return back(b if b is not None else K.to_gray(a, num) if hit else a.copy()), hit

    res, prms = _each(src, one)
    return (res, prms) if return_params else res


def _erase_value(value: Any) -> Optional[List[float]]:
    if isinstance(value, str):
        if value != "random":
            raise InvalidArgumentError(f"must be a number, a sequence or 'random', got {value!r}", argument="value")
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
        return [float(v) for v in value]
    raise InvalidArgumentError(f"must be a number, a sequence or 'random', got {value!r}", argument="value")


def draw_erasing(height: int, width: int, channels: int = 3, *, p: float = 0.5,
                 scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3), value: Any = 0.0,
                 generator: Any = None) -> Optional[ErasingParams]:
    """One item's RandomErasing draw, as torchvision's ``RandomErasing(p, scale, ratio, value)``: the
    ``rand() < p`` test, then up to 10 tries of a box strictly inside ``height x width`` (``value``
    "random": a normal ``(channels, h, w)`` patch drawn before the offsets). None: nothing erased."""
    from .._validate import as_positive_int

    src = Source(generator)
    h, w, c = (as_positive_int(n, v) for n, v in (("height", height), ("width", width), ("channels", channels)))
    pr, sc, ra, val = _prob("p", p), _range("scale", scale, False), _range("ratio", ratio, True), _erase_value(value)
    if sc[1] > 1:
        raise InvalidArgumentError(f"must lie in [0, 1], got {scale!r}", argument="scale")
    if val is not None and len(val) not in (1, c):
        raise InvalidArgumentError(f"has {len(val)} entries for {c} channels (1 or {c})", argument="value")
    if not src.rand() < pr:
        return None
    return erasing_box(c, h, w, sc, ra, val, src)


def random_erasing(src: Any, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33),
                   ratio: Sequence[float] = (0.3, 3.3), value: Any = 0.0, *, generator: Any = None,
                   return_params: bool = False) -> Any:
    """goprep's RandomErasing (torchvision's defaults): for each image (a ``(C, H, W)`` tensor or an
    ``(H, W, C)`` float or uint8 array, one or a list or batch), a ``draw_erasing`` draw and that box
    set to ``value`` in a copy. With ``return_params=True``: ``(result, params)`` (an ``ErasingParams``
    or None, or a list)."""
    from .._inputs import is_tensor

    src_ = Source(generator)
    gen = src_.g if src_.g is not None else src_.np

    def one(x: Any) -> Tuple[Any, Optional[ErasingParams]]:
        if is_tensor(x):
            if x.ndim != 3:
                raise InvalidArgumentError(f"takes (C, H, W) tensors, got {x.ndim}-D", argument="src")
            c, h, w = (int(v) for v in x.shape)
        else:
            x = np.asarray(x)
            if x.ndim != 3:
                raise InvalidArgumentError(f"takes (H, W, C) arrays, got shape {x.shape}", argument="src")
            h, w, c = x.shape
        prm = draw_erasing(h, w, c, p=p, scale=scale, ratio=ratio, value=value, generator=gen)
        y = x.clone() if is_tensor(x) else x.copy()
        return (y if prm is None else erase(y, prm)), prm

    res, prms = _each(src, one)
    return (res, prms) if return_params else res
