"""Random parameters drawn as torchvision (and timm) draw them, and the native random ops built on them.

A ``Source`` is where the numbers come from: torch's global generator (what torchvision's transforms
use), a ``torch.Generator``, a ``numpy.random.Generator``, or Python's ``random`` module (what timm's
``RandomResizedCropAndInterpolation`` uses). The drawing functions make the same calls in the same
order as the library they follow, so with torch's generator in the same state they return the same
crop boxes and flips; torch is imported only when a torch source draws.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import random as _pyrandom
import re
from typing import Any, Callable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .._errors import GoprepError, InvalidArgumentError, PipelineError
from .._validate import as_positive_int
from ._variants import ENABLED as VARIANTS
from ._variants import Batch, rrc_split


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


class Draws:
    """What a converted chain's ops draw from during one call: ``torch`` (a Source: torchvision's
    calls) and ``py`` (timm's calls: Python's ``random`` module, or with an explicit generator a
    ``random.Random`` seeded from one draw of it, made on first use)."""

    def __init__(self, generator: Any = None) -> None:
        self.torch = Source(generator)
        self._explicit = generator is not None
        self._py: Any = None if self._explicit else _pyrandom

    @property
    def py(self) -> Any:
        if self._py is None:
            self._py = _pyrandom.Random(self.torch.randint(0, 2**62, scalar=True))
        return self._py


_DRAWS: "contextvars.ContextVar[Draws]" = contextvars.ContextVar("goprep_transforms_draws", default=Draws())


def draws() -> Draws:
    """The sources the current call's ops draw from: torch's global generator and Python's ``random``
    (what torchvision and timm use) unless a converted chain was called with ``generator=``."""
    return _DRAWS.get()


@contextlib.contextmanager
def drawing_from(generator: Any) -> Iterator[None]:
    """Within it, this thread's (context's) converted-chain ops draw from ``generator`` (None: the
    global sources); context-local, so calls in other threads keep their own sources."""
    if generator is None:
        yield
        return
    token = _DRAWS.set(Draws(generator))
    try:
        yield
    finally:
        _DRAWS.reset(token)


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
    Python's ``random`` module (draws().py: ``random.uniform``, ``random.randint`` inclusive; no ``0 <`` test)."""
    area = width * height
    py = draws().py
    for _ in range(10):
        target_area = py.uniform(*scale) * area
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        aspect_ratio = math.exp(py.uniform(*log_ratio))
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if w <= width and h <= height:
            return py.randint(0, height - h), py.randint(0, width - w), h, w
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
                        return_params: bool = False, reduce: Optional[str] = None) -> Any:
    """goprep's RandomResizedCrop: for each image (one, or each item of a list or batch, in order), a box
    drawn by ``draw_resized_crop``, cropped, resized to ``size`` (``goprep.resize``'s ``interpolation``
    and ``antialias``) and flipped. Images are arrays, PIL images, tensors, or JPEG/PNG bytes or paths
    (decoded only as far as the box reaches); a list or batch gives one batch, run as one engine call
    (``run_drawn``; ``reduce="auto"``: its DCT-scaled decode). With ``return_params=True`` it returns
    ``(result, params)``, ``params`` a ``Params`` (a list of them for a list or batch) in the source's
    full-size pixels, so that boxes and masks can follow the image."""
    from .. import _validate

    size = _validate.parse_size(size, 1 << 30, "size")
    sc, ra = _range("scale", scale, False), _range("ratio", ratio, True)
    ph, pv = _prob("hflip", hflip), _prob("vflip", vflip)
    gen = Source(generator)
    drawn: List[Params] = []

    def draw(h: int, w: int) -> Params:
        i, j, bh, bw = resized_crop_box(h, w, sc, ra, gen)
        prm = Params(i, j, bh, bw, ph > 0 and gen.rand() < ph, pv > 0 and gen.rand() < pv)
        drawn.append(prm)
        return prm

    res = _resized_crops(src, draw, size, interpolation, antialias, reduce)
    if return_params:
        return res, (drawn if is_batch(src) else drawn[0])
    return res


def resized_crop_with(src: Any, params: Any, size: Any, *, interpolation: str = "bilinear",
                      antialias: Any = True) -> Any:
    """The crop, resize and flips of ``params`` (a ``Params``, or a list of them for a list or batch, as
    ``random_resized_crop(..., return_params=True)`` returns) applied to ``src``: a mask or another
    image that follows the drawn ones (a mask wants ``interpolation="nearest", antialias=False``)."""
    from .. import _validate

    size = _validate.parse_size(size, 1 << 30, "size")
    batch = is_batch(src)
    n = len(src) if batch else 1
    if not n:
        raise PipelineError("is an empty list", argument="src")
    prms = list(params) if batch and not isinstance(params, Params) else [params]
    if len(prms) != n or not all(isinstance(p, Params) for p in prms):
        raise InvalidArgumentError(f"must be a Params{' list of one per item' if batch else ''} (as random_resized_crop "
                                   f"returns), got {type(params).__name__}", argument="params")
    it = iter(prms)
    return _resized_crops(src, lambda h, w: next(it), size, interpolation, antialias, None)


def _resized_crops(src: Any, draw: Callable[[int, int], Params], size: Tuple[int, int], interpolation: str,
                   antialias: Any, reduce: Optional[str]) -> Any:
    """The native pipeline on ``src`` with each item's ``draw(h, w)``, as one engine call (run_drawn)."""
    from .. import _ops
    from .._pipeline import pipeline

    def reduced(h: int, w: int, prm: Tuple[Any, ...]) -> Tuple[int, Tuple[Any, ...]]:
        p, sz = prm[0], prm[1]
        s = draft_scale(p.height, p.width, sz[0], sz[1])
        if s == 1:
            return 1, prm
        return s, (p._replace(**dict(zip(("top", "left", "height", "width"), reduced_box(p[:4], s, h, w)))),) + prm[1:]

    p = _native_pipe(pipeline, _ops)
    return run_drawn(p, src, lambda h, w: (draw(h, w), size, interpolation, antialias), reduce=reduce, reducer=reduced,
                     split=rrc_split(lambda args: args[1]))


# -- one engine call per batch ------------------------------------------------------------------

def draft_scale(h: int, w: int, rh: int, rw: int) -> int:
    """The DCT scale reduce="auto" decodes an ``h x w`` crop at for a ``rh x rw`` resize (Pillow's
    draft rule, _decode.draft_scale)."""
    from .._decode import draft_scale as rule

    return rule(h, w, rh, rw)


def reduced_box(box: Sequence[int], s: int, height: int, width: int) -> Tuple[int, int, int, int]:
    """A crop box ``(top, left, h, w)`` of a ``height x width`` image in the pixels of its decode
    DCT-scaled by ``s`` (``ceil(size / s)`` pixels a side): each edge divided by ``s`` and rounded to
    the nearest pixel (Python's round: ties to even), so that every edge is within half a reduced pixel
    of the exact one (Pillow's
    ``draft`` keeps a float box instead; goprep's crop is whole pixels), at least one pixel wide."""
    i, j, h, w = box
    hs, ws = -(-height // s), -(-width // s)
    y0, x0 = min(round(i / s), hs - 1), min(round(j / s), ws - 1)
    y1, x1 = min(max(round((i + h) / s), y0 + 1), hs), min(max(round((j + w) / s), x0 + 1), ws)
    return y0, x0, y1 - y0, x1 - x0


_ITEM = re.compile(r"^src\[(\d+)\]$")


def run_drawn(pipe: Any, src: Any, draw: Callable[[int, int], Tuple[Any, ...]], out: Any = None,
              reduce: Optional[str] = None,
              reducer: Optional[Callable[[int, int, Tuple[Any, ...]], Tuple[int, Tuple[Any, ...]]]] = None,
              split: Any = None, templates: Any = None) -> Any:
    """Run ``pipe`` (a goprep.pipeline whose extra arguments are an item's drawn parameters) on ``src``:
    one image, or each item of a list or an ``(N, ...)`` batch (arrays, PIL images, tensors, JPEG/PNG
    bytes or paths; sizes may differ) as ONE engine call into one batch. Item ``k`` gets the k-th draws:
    ``draw(h, w)`` for its ``h x w`` image (an encoded one's stored size, read from its header) is
    called for each item in order before the call, which builds (or finds) each item's plan and then
    runs them all, decoding every encoded item on the engine's threads with the GIL released, only
    the rows and columns its plan reads. ``reduce="auto"``: a JPEG item whose first crop is much larger
    than its resize (``reducer(h, w, args)`` gives the DCT scale and the arguments in the reduced
    image's pixels) is decoded DCT-scaled, as Pillow's ``draft`` would. ``split`` (_variants.Split):
    how the arguments' crop box can vary one traced plan, so that a batch's items of one class share
    a template and their plans are built in Go in parallel (_variants.py); ``templates``: the
    pipeline whose signatures and templates those are, when not ``pipe`` (a staged batch's one call,
    _staged_call.OneCall, uses its first segment's).

    An error about one item (a corrupt or unreadable file, a box that does not fit) raises naming it
    as ``src[k]``, its path in the message for a path, and carries ``index`` (k) and ``path`` (the
    path, or None) as attributes."""
    from .._decode import Encoded

    if reduce not in (None, "auto"):
        raise InvalidArgumentError(f'must be None or "auto", got {reduce!r}', argument="reduce")
    batch = is_batch(src)
    if batch and not isinstance(src, (list, tuple)):
        src = list(src)  # an (N, ...) array or tensor: its rows, each its own image
    variants = Batch(templates or pipe, split) if split is not None and batch and len(src) > 1 and VARIANTS[0] else None

    def each(i: int, it: Any) -> Tuple[Any, Tuple[Any, ...]]:
        try:
            enc = type(it) is Encoded
            if enc:
                h, w = it.header.height, it.header.width
            else:
                h, w = int(it.src.shape[0]), int(it.src.shape[1])
            args = draw(h, w)
            if reduce is not None and reducer is not None and enc and it.header.format == "jpeg":
                s, args = reducer(h, w, args)
                if s > 1:
                    it = it.at_scale(s)
                    h, w = it.header.decoded_size("RGB", s)[:2]
            if variants is not None:
                it = variants.prepare(it, h, w, args)
            return it, args
        except GoprepError as e:
            raise _tagged(e, i, src[i] if batch else src, batch) from None

    try:
        return pipe._call(src, (), {}, out, None, each=each)
    except GoprepError as e:
        m = _ITEM.match(e.argument or "") if batch else None
        if m is None or getattr(e, "index", None) is not None:
            raise
        k = int(m.group(1))
        raise _tagged(e, k, src[k] if k < len(src) else None, True) from None


def chain_reducer(ops: Sequence[Any]) -> Optional[Callable[[int, int, Tuple[Any, ...]], Tuple[int, Tuple[Any, ...]]]]:
    """run_drawn's ``reducer`` for a converted chain (its one argument: a tuple of per-op parameters):
    the first op's ``reduced`` (a RandomResizedCrop reads the decoded image first), or None."""
    f = getattr(ops[0], "reduced", None) if ops else None
    if f is None:
        return None

    def reducer(h: int, w: int, args: Tuple[Any, ...]) -> Tuple[int, Tuple[Any, ...]]:
        prm = args[0]
        s, first = f(h, w, prm[0])
        return s, ((first,) + tuple(prm[1:]),)

    return reducer


def _tagged(e: GoprepError, i: int, item: Any, batch: bool) -> GoprepError:
    """``e`` as an error about item ``i`` of a batch (``item``: what the caller passed): named
    ``src[i]``, its path in the message for a path, with ``index`` and ``path`` attributes."""
    path = os.fsdecode(item) if isinstance(item, (str, os.PathLike)) else None
    arg = f"src[{i}]" if batch else (e.argument or "src")
    detail = e.detail
    if path is not None and path not in detail:
        detail = f"{detail} (file {path!r})"
    if arg != e.argument or detail != e.detail:
        e = type(e)(detail, argument=arg, code=e.code)
    e.index, e.path = (i if batch else 0), path  # type: ignore[attr-defined]
    return e


def is_batch(src: Any) -> bool:
    """Whether a call's source is a batch: a list or tuple, or an ``(N, ...)`` array or tensor."""
    from .._inputs import is_pil

    return isinstance(src, (list, tuple)) or (not is_pil(src) and getattr(src, "ndim", 0) == 4)


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
    batch = is_batch(src)
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
