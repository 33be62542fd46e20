"""ColorJitter, RandomGrayscale and RandomErasing: their draws, made as torchvision (and timm) make them,
the converter ops built on them, and the native ops with an explicit ``generator=``.

Where they run: the colour adjustments are host steps between the engine's fused segments (see
``Converted._pipe`` / ``Staged``). They run in Go (binding ``ColorBatch``: ``engine.ColorPIL`` with
Pillow's numerics, for PIL inputs, JPEG files, uint8 arrays; ``engine.ColorTensor`` with torchvision
v1's or v2's, for uint8 tensors; ``ColorBatchF32``: ``engine.ColorTensorF32``, v1's or v2's, for
float32 tensors), hue included: a batch's items each with their own steps and order in one
GIL-free call (``host_batch``). What Go does not take (other dtypes, strided arrays, ``GO[0]``
off) runs the NumPy kernels of ``_color_kernels`` item by item, the exact numerics of Pillow and
torchvision's tensor code; those kernels are also the reference the Go path equals bit for bit
(tests/test_train_color_go.py). Erasing is applied to each item's finished tensor (after
``Normalize``), as torchvision applies it. See docs/perf/2026-12-06-train-color.md and
2026-12-07-train-hue.md for the costs."""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .._errors import InvalidArgumentError, PipelineError
from . import _color_kernels as K
from ._random import Source, _prob, _range, draws
from ._random_ops import DrawOnly

_OPS = ("brightness", "contrast", "saturation", "hue")


def perm(src: Source, n: int) -> List[int]:
    """``torch.randperm(n)`` (NumPy's ``permutation`` for a NumPy generator) as a list."""
    if src.np is not None:
        return [int(v) for v in src.np.permutation(n)]
    import torch

    return [int(v) for v in torch.randperm(n, **src._kw())]


def jitter_range(name: str, value: Any, center: float = 1.0, bound: Tuple[float, float] = (0.0, math.inf),
                 clip_first_on_zero: bool = True) -> Optional[Tuple[float, float]]:
    """A ColorJitter factor range read as torchvision's ``_check_input``: a number ``x`` is
    ``[center - x, center + x]`` (the low end clipped at 0 except for hue), a pair as it is; None when
    it is the identity (``center`` at both ends)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < 0:
            raise InvalidArgumentError(f"a single number must be non-negative, got {value!r}", argument=name)
        lo, hi = center - float(value), center + float(value)
        if clip_first_on_zero:
            lo = max(lo, 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = float(value[0]), float(value[1])
    else:
        raise InvalidArgumentError(f"must be a number or a (min, max) pair, got {value!r}", argument=name)
    if not (bound[0] <= lo <= hi <= bound[1]):
        raise InvalidArgumentError(f"must lie in {bound} with min <= max, got {(lo, hi)}", argument=name)
    return None if lo == hi == center else (lo, hi)


class JitterParams(NamedTuple):
    """One item's ColorJitter draw: ``order`` (``torch.randperm(4)``: 0 brightness, 1 contrast,
    2 saturation, 3 hue) and each factor (None where that adjustment is off)."""

    order: Tuple[int, ...]
    brightness: Optional[float]
    contrast: Optional[float]
    saturation: Optional[float]
    hue: Optional[float]


def jitter_params(ranges: Sequence[Optional[Tuple[float, float]]], src: Source) -> JitterParams:
    """ColorJitter's ``get_params`` (v1) / ``make_params`` (v2), the same calls: the permutation, then
    ``torch.empty(1).uniform_(lo, hi)`` for each factor that is on, in the order b, c, s, h."""
    order = tuple(perm(src, 4))
    f = [None if r is None else src.uniform(r[0], r[1]) for r in ranges]
    return JitterParams(order, *f)


def run_jitter(a: np.ndarray, prm: JitterParams, numerics: str) -> np.ndarray:
    """The adjustments of ``prm`` on ``a`` (``(H, W, C)``) in its order (ColorJitter's ``forward``)."""
    for k in prm.order:
        f = prm[1 + k]
        if f is not None:
            a = K.adjust(a, _OPS[k], f, numerics)
    return a


# A colour program: one item's steps, (name, factor) in order, names those of the binding's
# ColorOpNames ("brightness", "contrast", "saturation", "hue", "gray").
Steps = List[Tuple[str, float]]

GO = [True]  # False: every colour step runs the NumPy kernels (the A/B switch of tests and benchmarks)


def jitter_steps(prm: JitterParams) -> Steps:
    """ColorJitter's draw as a colour program: its factors that are on, in its order."""
    return [(_OPS[k], float(prm[1 + k])) for k in prm.order if prm[1 + k] is not None]


def go_dtype(dtype: Any, numerics: str) -> bool:
    """Whether the Go kernels take images of ``dtype`` with ``numerics``: uint8 with any, float32 with
    torchvision's tensor numerics ("v1", "v2"; Pillow's take uint8 only)."""
    return dtype == np.uint8 or (dtype == np.float32 and numerics != "pil")


def go_ready(a: np.ndarray, numerics: str, programs: Sequence[Steps]) -> bool:
    """Whether the Go kernels take ``a`` (``(N, H, W, C)``) with ``programs`` (every op theirs, hue
    included): a C-contiguous, writable batch of 1 or 3 channels of a ``go_dtype``, with the switch
    (``GO``) on."""
    return (GO[0] and go_dtype(a.dtype, numerics) and a.ndim == 4 and a.shape[3] in (1, 3)
            and a.flags.c_contiguous and a.flags.writeable)


def go_one(a: np.ndarray, steps: Callable[[], Steps], numerics: str) -> Optional[np.ndarray]:
    """A copy of one image ``a`` (``(H, W[, C])``) changed by the program ``steps()`` in Go, or None
    where the Go kernels do not take it (then the NumPy kernels run: ``go_ready``)."""
    if not (GO[0] and go_dtype(a.dtype, numerics)):
        return None
    prog = steps()
    b = np.array(a, order="C")  # a copy: the step never writes its input
    b4 = (b if b.ndim == 3 else b[..., None])[None]  # a view of b
    if not go_ready(b4, numerics, [prog]):
        return None
    run_steps_go(b4, [prog], numerics)
    return b


def _codes(what: str) -> Dict[str, int]:
    """The binding's codes by name (their one source): "ops" (ColorOpNames), "numerics"
    (ColorNumerics)."""
    from .. import _native

    got = _CODES.get(what)
    if got is None:
        fn = _native.get().ColorOpNames if what == "ops" else _native.get().ColorNumerics
        got = _CODES[what] = {n: k for k, n in enumerate(str(fn()).split(",")) if n}
    return got


_CODES: Dict[str, Dict[str, int]] = {}


def run_steps_go(a: np.ndarray, programs: Sequence[Steps], numerics: str = "pil") -> np.ndarray:
    """Item ``k`` of ``a`` (a ``go_ready`` batch, uint8 or float32) changed in place by ``programs[k]``
    with ``numerics`` ("pil", "v1", "v2"), all items in one Go call on goprep's threads with the GIL
    released; ``a``."""
    from .. import _native

    codes = _codes("ops")
    n, h, w, c = a.shape
    if len(programs) != n:
        raise PipelineError(f"internal: {len(programs)} colour programs for {n} images")
    most = max((len(p) for p in programs), default=0)
    if most == 0 or a.size == 0:
        return a
    ops = np.zeros((n, most), np.int64)
    fac = np.zeros((n, most), np.float64)
    for k, prog in enumerate(programs):
        for j, (name, f) in enumerate(prog):
            ops[k, j], fac[k, j] = codes[name], f
    fn = _native.get().ColorBatchF32 if a.dtype == np.float32 else _native.get().ColorBatch
    _native.call(fn, id(a), n, h, w, c, _codes("numerics")[numerics], id(ops), id(fac), most)
    return a


class ErasingParams(NamedTuple):
    """One item's erased box, ``top``, ``left``, ``height``, ``width``, and ``value``: a float32 array
    broadcasting to ``(C, height, width)`` (a torch tensor when drawn from torch: torchvision's own),
    or None where nothing is erased (the draw found no box, or ``p`` said no)."""

    top: int
    left: int
    height: int
    width: int
    value: Any


def erasing_box(c: int, h: int, w: int, scale: Sequence[float], ratio: Sequence[float], value: Optional[List[float]],
                src: Source) -> Optional[ErasingParams]:
    """torchvision's ``RandomErasing.get_params`` (v1) / ``make_params`` (v2), call for call: up to 10
    tries of an area in ``scale`` and a log-uniform ratio (logs in float32), ``h = round(sqrt(area *
    ratio))``, a box strictly inside the image; the random value (``torch.empty(C, h, w).normal_()``)
    drawn before the offsets. None when no try fits (torchvision erases nothing then)."""
    area = h * w
    for _ in range(10):
        erase_area = area * src.uniform(scale[0], scale[1])
        aspect = src.exp_uniform_log(ratio[0], ratio[1])
        eh = int(round(math.sqrt(erase_area * aspect)))
        ew = int(round(math.sqrt(erase_area / aspect)))
        if not (eh < h and ew < w):
            continue
        v = _normal(src, (c, eh, ew)) if value is None else np.asarray(value, np.float32)[:, None, None]
        i = src.randint(0, h - eh + 1)
        j = src.randint(0, w - ew + 1)
        return ErasingParams(i, j, eh, ew, v)
    return None


def _normal(src: Source, shape: Tuple[int, ...]) -> Any:
    if src.np is not None:
        return src.np.standard_normal(shape, dtype=np.float32)
    import torch

    return torch.empty(shape, dtype=torch.float32).normal_(**src._kw())


def timm_erasing_boxes(c: int, h: int, w: int, t: "TimmErasing") -> List[ErasingParams]:
    """timm's ``RandomErasing._erase``: Python's ``random`` for the test, the count and the boxes
    (``random.uniform``, inclusive ``random.randint``), torch's generator for a random fill, drawn
    after the box."""
    py = draws().py
    if py.random() > t.p:
        return []
    count = t.min_count if t.min_count == t.max_count else py.randint(t.min_count, t.max_count)
    out = []
    for _ in range(count):
        for _attempt in range(10):
            target = py.uniform(t.min_area, t.max_area) * (h * w) / count
            aspect = math.exp(py.uniform(*t.log_aspect))
            eh = int(round(math.sqrt(target * aspect)))
            ew = int(round(math.sqrt(target / aspect)))
            if ew < w and eh < h:
                top = py.randint(0, h - eh)
                left = py.randint(0, w - ew)
                if t.mode == "pixel":
                    v = _normal(draws().torch, (c, eh, ew))
                elif t.mode == "rand":
                    v = _normal(draws().torch, (c, 1, 1))
                else:
                    v = np.zeros((c, 1, 1), np.float32)
                out.append(ErasingParams(top, left, eh, ew, v))
                break
    return out


def erase(y: Any, prm: ErasingParams) -> Any:
    """``prm``'s box of ``y`` set to its value, in place: a ``(C, H, W)`` tensor as torchvision's
    ``erase`` does it (``img[..., i:i+h, j:j+w] = v``), or an ``(H, W, C)`` array."""
    if prm.value is None:
        return y
    i, j, h, w, v = prm
    torch_out = type(y).__module__.startswith("torch")
    c = int(y.shape[0] if torch_out else (y.shape[2] if y.ndim == 3 else 1))
    if int(v.shape[0]) not in (1, c):
        raise PipelineError(f"RandomErasing drew a {int(v.shape[0])}-channel value for a {c}-channel result (the "
                            "channel count changed in a way goprep did not follow)")
    if torch_out:
        import torch

        y[..., i:i + h, j:j + w] = v if isinstance(v, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(v))
        return y
    vv = np.moveaxis(v.numpy() if hasattr(v, "numpy") else np.asarray(v), 0, -1)
    if y.ndim == 2:
        y[i:i + h, j:j + w] = vv[..., 0]
    else:
        y[i:i + h, j:j + w, :] = vv
    return y


# ----------------------------------------------------------------------------- converter ops


class _HostColour:
    """A colour op of the uint8 stage, run as a host step between the engine's segments: Pillow's
    numerics for the "pil" flavor, ``api``'s tensor numerics for tensors (in Go where ``go_ready``,
    uint8 and float32 images; else NumPy); the size and channel count kept. ``host`` runs one item,
    ``host_batch`` a batch."""

    name: str
    api: str

    def out_size(self, h: int, w: int, prm: Any) -> Tuple[int, int]:
        return h, w

    def numerics(self, flavor: str) -> str:
        """The numerics this op runs with for a flavor: Pillow's for "pil", ``api``'s tensor code else."""
        return "pil" if flavor == "pil" else self.api

    def host(self, flavor: str) -> Any:
        numerics = self.numerics(flavor)

        def run(a: np.ndarray, prm: Any = None) -> np.ndarray:
            b = go_one(a, lambda: self._steps(prm), numerics)
            return self._run(a, prm, numerics) if b is None else b

        return run

    def host_batch(self, flavor: str) -> Any:
        """The step on a batch: ``run(a, prms)`` changes ``a`` (``(N, H, W[, C])``, each item's
        result of the segment before) item ``k`` by ``prms[k]``, in place when the Go kernels take it
        (one call for all items), else item by item with the NumPy kernels; returns the batch."""
        numerics = self.numerics(flavor)

        def run(a: np.ndarray, prms: Sequence[Any]) -> np.ndarray:
            a4 = a if a.ndim == 4 else a[..., None]
            programs = [self._steps(p) for p in prms] if go_dtype(a.dtype, numerics) else []
            if go_ready(a4, numerics, programs):
                return run_steps_go(a4, programs, numerics).reshape(a.shape)
            for k, p in enumerate(prms):
                a[k] = self._run(a[k], p, numerics)
            return a

        return run

    def _run(self, a: np.ndarray, prm: Any, numerics: str) -> np.ndarray:
        if prm is None:
            raise PipelineError(f"{self.name} drew no parameters (a training chain draws for each item)")
        return self.run(a, prm, numerics)

    def run(self, a: np.ndarray, prm: Any, numerics: str) -> np.ndarray:
        """The NumPy reference of one item (``_color_kernels``): a new array."""
        raise NotImplementedError

    def steps(self, prm: Any) -> Steps:
        """One item's draw as a colour program (for the Go kernels)."""
        raise NotImplementedError

    def _steps(self, prm: Any) -> Steps:
        if prm is None:
            raise PipelineError(f"{self.name} drew no parameters (a training chain draws for each item)")
        return self.steps(prm)


class ColorJitter(_HostColour):
    """torchvision's ``ColorJitter`` (v1 and v2: the same draws), on the uint8 (or float input) image
    before the float conversion. Params: a ``JitterParams``."""

    random = True

    def __init__(self, name: str, ranges: Sequence[Optional[Tuple[float, float]]], api: str) -> None:
        self.name, self.ranges, self.api = name, tuple(ranges), api

    def draw(self, h: int, w: int) -> JitterParams:
        return jitter_params(self.ranges, draws().torch)

    def run(self, a: np.ndarray, prm: JitterParams, numerics: str) -> np.ndarray:
        return _hwc(run_jitter, a, prm, numerics)

    def steps(self, prm: JitterParams) -> Steps:
        return jitter_steps(prm)


class RandomGrayscale(_HostColour):
    """torchvision's ``RandomGrayscale(p)``: ``torch.rand(1) < p`` (v2's ``rand >= p`` skips: the same),
    then the luma over the image's own channel count. Params: applied or not."""

    random = True  # p 1 draws too (p 0 is a DrawOnly); the chain runs item by item anyway (a host step)

    def __init__(self, name: str, p: float, api: str) -> None:
        self.name, self.p, self.api = name, float(p), api

    def draw(self, h: int, w: int) -> bool:
        return draws().torch.rand() < self.p

    def run(self, a: np.ndarray, prm: bool, numerics: str) -> np.ndarray:
        return _hwc(K.to_gray, a, numerics) if prm else a

    def steps(self, prm: bool) -> Steps:
        return [("gray", 0.0)] if prm else []


class RandomApply(_HostColour):
    """torchvision's ``RandomApply([...], p)`` of colour ops (timm's ``color_jitter_prob``): one
    ``torch.rand(1)``, applied when ``not p < r`` (v1) / ``r < p`` (v2), then each inner op's draw in
    order. Params: the inner ops' params, or ``()`` when not applied."""

    random = True

    def __init__(self, p: float, inner: Sequence[_HostColour], api: str) -> None:
        self.name, self.p, self.inner, self.api = "RandomApply", float(p), list(inner), api

    def draw(self, h: int, w: int) -> Tuple[Any, ...]:
        r = draws().torch.rand()
        hit = not self.p < r if self.api == "v1" else r < self.p
        return tuple(op.draw(h, w) for op in self.inner) if hit else ()

    def run(self, a: np.ndarray, prm: Tuple[Any, ...], numerics: str) -> np.ndarray:
        for op, q in zip(self.inner, prm):
            a = op.run(a, q, numerics)
        return a

    def steps(self, prm: Tuple[Any, ...]) -> Steps:
        return [st for op, q in zip(self.inner, prm) for st in op.steps(q)]


def colour_only(t: Any) -> bool:
    """Whether a ``RandomApply`` holds only colour ops goprep converts (ColorJitter, RandomGrayscale)."""
    subs = list(getattr(t, "transforms", None) or [])
    return bool(subs) and all(type(x).__name__ in ("ColorJitter", "RandomGrayscale") for x in subs)


def _hwc(fn: Any, a: np.ndarray, *args: Any) -> np.ndarray:
    """``fn`` on an ``(H, W, C)`` view of a host step's array (a 1-channel image comes ``(H, W)``),
    the result in ``a``'s layout."""
    if a.ndim == 2:
        return fn(a[..., None], *args)[..., 0]
    return fn(a, *args)


class RandomErasing(DrawOnly):
    """torchvision's ``RandomErasing`` (v1, v2): ``torch.rand(1) < p``, then ``erasing_box`` on the
    finished ``(C, H, W)`` tensor (after ``Normalize``), which it changes in place (``finish``); an
    identity in the fused pass (a DrawOnly there). Draws need the channel count
    (``draws_channels``). Params: an ``ErasingParams`` or None."""

    random = True
    draws_channels = True

    def __init__(self, name: str, p: float, scale: Tuple[float, float], ratio: Tuple[float, float],
                 value: Optional[List[float]], api: str = "v2") -> None:
        self.name, self.p, self.scale, self.ratio, self.value = name, float(p), scale, ratio, value
        self.api = api

    def draw(self, h: int, w: int, c: int) -> Optional[ErasingParams]:  # type: ignore[override]
        if not draws().torch.rand() < self.p:
            return None
        if self.value is not None and len(self.value) not in (1, c):
            raise PipelineError(f"{self.name}: value has {len(self.value)} entries for a {c}-channel image (torchvision "
                                "fails on it too)")
        return erasing_box(c, h, w, self.scale, self.ratio, self.value, draws().torch)

    def finish(self, y: Any, prm: Optional[ErasingParams]) -> Any:
        if self.api == "v1" and not type(y).__module__.startswith("torch"):
            raise PipelineError(f"{self.name} (torchvision.transforms) takes tensors, as torchvision, which refuses PIL "
                                "images: put ToTensor / PILToTensor before it, or pass tensors")
        return y if prm is None else erase(y, prm)


class TimmErasing(RandomErasing):
    """timm's ``RandomErasing`` (``create_transform(re_prob=...)``): Python's ``random`` for the boxes,
    ``min_count..max_count`` boxes whose area shares the drawn one, fill 0 ("const"), a normal colour
    per box ("rand") or per pixel ("pixel") from torch's generator. Params: a list of
    ``ErasingParams``."""

    def __init__(self, t: Any) -> None:
        if getattr(t, "num_splits", 0) and t.num_splits > 1:
            raise PipelineError("timm's RandomErasing with num_splits > 1 splits a batch; goprep converts the "
                                "per-image transform (num_splits 0 or 1)")
        mode = str(t.mode).lower()
        if mode not in ("", "const", "rand", "pixel"):
            raise PipelineError(f"timm's RandomErasing(mode={t.mode!r}) is not supported by goprep")
        self.name, self.p, self.mode = "RandomErasing", float(t.probability), mode or "const"
        self.min_area, self.max_area = float(t.min_area), float(t.max_area)
        self.log_aspect = tuple(float(v) for v in t.log_aspect_ratio)
        self.min_count, self.max_count = int(t.min_count), int(t.max_count)

    def draw(self, h: int, w: int, c: int) -> List[ErasingParams]:  # type: ignore[override]
        return timm_erasing_boxes(c, h, w, self)

    def finish(self, y: Any, prm: Any) -> Any:
        for b in prm or ():
            y = erase(y, b)
        return y


def image_c(x: Any) -> int:
    """An image's channel count: a PIL image's bands, a ``(C, H, W)`` tensor's first dim, an
    ``(H, W[, C])`` array's last."""
    from .._inputs import is_pil, is_tensor

    if is_pil(x):
        return len(x.getbands())
    if is_tensor(x):
        return int(x.shape[0])
    return int(x.shape[2]) if getattr(x, "ndim", 2) == 3 else 1


def item_channels(src: Any) -> List[int]:
    """Each item's channel count, in order (``image_c``; an encoded JPEG/PNG, bytes or a path, is
    taken as decoded to RGB: 3, which ``erase`` checks against the result)."""
    from ._random import is_batch

    items = list(src) if is_batch(src) else [src]
    return [3 if isinstance(x, (bytes, bytearray, memoryview, str, os.PathLike)) else image_c(x) for x in items]


def engine_params(ops: Sequence[Any], prm: Sequence[Any]) -> Tuple[Any, ...]:
    """A drawn chain's parameters as the engine's plan gets them: None for the ops that run after it
    (``finish``: their values, tensors, stay out of the plan's key)."""
    return tuple(None if hasattr(op, "finish") else v for op, v in zip(ops, prm))


def finish_all(ops: Sequence[Any], res: Any, drawn: Sequence[Any], batch: bool) -> Any:
    """``finish`` on each item of a run's result (a batch's rows, in place), item k with the k-th draw."""
    if not batch:
        return finish(ops, res, drawn[0])
    for k, prm in enumerate(drawn):
        finish(ops, res[k], prm)
    return res


def finish(ops: Sequence[Any], y: Any, prm: Sequence[Any]) -> Any:
    """The post steps of a drawn chain (its erasings) on one item's finished result, in chain order."""
    for k, op in enumerate(ops):
        f = getattr(op, "finish", None)
        if f is not None:
            y = f(y, prm[k])
    return y


def tv_color(t: Any, chain: Any, api: str) -> None:
    """``from_torchvision``'s entry for torchvision's ``ColorJitter`` and ``RandomGrayscale`` (uint8 ops
    before the float conversion, as ``Chain.geometric`` requires) and ``RandomErasing`` (torchvision's
    or timm's: on the result the chain returns, last; v1's on tensors only, as there)."""
    name = type(t).__name__
    if name in ("ColorJitter", "RandomGrayscale", "RandomApply"):
        _exact_resizes(chain)
        chain.geometric(name, _colour_op(t, api))
        return
    if hasattr(t, "probability"):  # timm's (timm.data.random_erasing)
        chain.ops.append(TimmErasing(t))
        return
    scale = _range("RandomErasing.scale", list(t.scale), False)
    ratio = _range("RandomErasing.ratio", list(t.ratio), True)
    v = t.value
    if isinstance(v, str):  # v1's "random"
        value = None
    elif isinstance(v, (int, float)):
        value = [float(v)]
    else:  # v1's tuple, v2's parsed list (None: "random")
        value = None if v is None else [float(x) for x in v]
    chain.ops.append(RandomErasing(name, _prob("RandomErasing.p", t.p), scale, ratio, value, api))



def _colour_op(t: Any, api: str) -> _HostColour:
    name = type(t).__name__
    if name == "ColorJitter":
        # torchvision stores each factor already checked: None (off) or a (min, max) pair
        ranges = [None if getattr(t, k) is None else _factor_range(f"ColorJitter.{k}", list(getattr(t, k)), k == "hue")
                  for k in _OPS]
        return ColorJitter(name, ranges, api)
    if name == "RandomGrayscale":
        return RandomGrayscale(name, _prob("RandomGrayscale.p", t.p), api)
    return RandomApply(_prob("RandomApply.p", t.p), [_colour_op(x, api) for x in t.transforms], api)


def _factor_range(name: str, value: Any, hue: bool) -> Optional[Tuple[float, float]]:
    """A ColorJitter factor's range: torchvision's ``_check_input`` rules (hue in [-0.5, 0.5], centred
    at 0; the others non-negative, centred at 1)."""
    if hue:
        return jitter_range(name, value, 0.0, (-0.5, 0.5), False)
    return jitter_range(name, value)


def _exact_resizes(chain: Any) -> None:
    """Before a colour op, on tensors: the chain's resizes (``Resize``, each of a RandomResizedCrop's)
    run as ``TorchResize`` (``Resize.host``) where goprep's kernels are only close to torchvision's
    (v1's uint8 within a level, float32 within 1e-5): the jitter's factors (and hue on near-gray
    pixels) would stretch that (measured: 8 levels after Normalize with goprep's uint8 kernel, 2 with
    its float32 kernel rounded once; 1.35e-5 on v2 float tensors)."""
    for op in chain.ops:
        for r in getattr(op, "resizes", None) or [op]:
            if hasattr(r, "_float_resize"):
                r.exact_torch = True


class TorchResize:
    """torchvision's tensor resize by PyTorch itself, on a host step's ``(H, W, C)`` array: v1's
    (``_functional_tensor.resize``: to a contiguous float32 NCHW tensor, ``interpolate`` with
    align_corners False and antialias for bilinear/bicubic only, bicubic clamped, uint8 rounded half
    to even) and v2's on float32 (``interpolate`` alone); v2's uint8 is goprep's kernel, equal to
    PyTorch's bit for bit. Only for tensor inputs (torch is there) whose chain jitters colours after
    the resize."""

    def __init__(self, resize: Any) -> None:
        self.resize = resize

    def __call__(self, a: np.ndarray) -> np.ndarray:
        r = self.resize
        h, w = a.shape[0], a.shape[1]
        oh, ow = r.target(h, w)
        if (oh, ow) == (h, w):
            return a
        if r.api == "v2" and a.dtype == np.uint8 or r.mode == "lanczos":  # lanczos: v2 uint8 alone, else refused
            from .. import _ops

            kind, aa = r._tensor_kernel("u8" if a.dtype == np.uint8 else "f32")
            return _ops.resize(np.ascontiguousarray(a), (oh, ow), interpolation=kind, antialias=aa)
        import torch
        import torch.nn.functional as F

        mode = r.mode
        aa = r.aa and mode in ("bilinear", "bicubic")
        x = torch.from_numpy(np.ascontiguousarray(np.moveaxis(a.reshape(h, w, -1), -1, 0)))[None]
        x = x.to(torch.float32)
        y = F.interpolate(x, size=[oh, ow], mode=mode, align_corners=False if mode in ("bilinear", "bicubic") else None,
                          antialias=aa)
        if a.dtype == np.uint8:
            if mode == "bicubic":
                y = y.clamp(0, 255)
            y = torch.round(y).to(torch.uint8)
        out = y[0].permute(1, 2, 0).numpy()
        return np.ascontiguousarray(out if a.ndim == 3 else out[..., 0])
