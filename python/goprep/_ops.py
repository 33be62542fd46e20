"""The eager ops. Each one builds a Traced image and runs it through the same engine path a fused
pipeline uses, so calling ops one by one and fusing them give identical results by construction."""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._device import DeviceArray
from ._errors import DTypeError, InvalidArgumentError, ShapeError, from_native
from ._trace import (
    LetterboxInfo,
    Traced,
    check_out_size,
    check_window,
    letterbox_geometry,
    parse_size,
    trace_array,
    typed_key,
)

Size = Union[int, Tuple[int, int]]

# ---------------------------------------------------------------------------------------------
# plans


class PlanRef:
    """Owns one engine plan handle; freed when the last user drops it (caches evict by dropping)."""

    __slots__ = ("handle", "pid")

    def __init__(self, spec: str) -> None:
        mod = _native.get()
        self.handle: int = _native.call(mod.NewPlan, spec)
        self.pid = os.getpid()

    def __del__(self) -> None:
        try:  # at interpreter shutdown module globals (even _native) may already be None
            if _native.loaded() and self.pid == os.getpid():
                _native.get().FreePlan(self.handle)
        except Exception:  # interpreter shutdown: nothing to free into
            pass


_PLAN_CACHE_SIZE = 1024
_plans: "OrderedDict[Traced, PlanRef]" = OrderedDict()
_plans_lock = threading.Lock()


def plan_for(t: Traced) -> PlanRef:
    with _plans_lock:
        ref = _plans.get(t)
        if ref is not None:
            _plans.move_to_end(t)
            return ref
    check_out_size(t)
    ref = PlanRef(t.spec())
    with _plans_lock:
        _plans[t] = ref
        if len(_plans) > _PLAN_CACHE_SIZE:
            _plans.popitem(last=False)
    return ref


def prepare_out(out: Any, shape: Tuple[int, ...], dtype: np.dtype, sources: Sequence[np.ndarray]) -> np.ndarray:
    """Return ``out`` checked against the result, or a new array for it."""
    if out is None:
        return np.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise InvalidArgumentError(f"must be a numpy.ndarray, got {type(out).__name__}", argument="out")
    if out.shape != shape:
        raise ShapeError(f"must have shape {shape}, got {out.shape}", argument="out")
    if out.dtype != dtype:
        raise DTypeError(f"must have dtype {dtype}, got {out.dtype}", argument="out")
    flags = out.flags
    if not flags.writeable:
        raise InvalidArgumentError("is read-only", argument="out", code="read_only")
    if not flags.c_contiguous or not flags.aligned:
        raise InvalidArgumentError("must be C-contiguous and aligned", argument="out")
    for s in sources:
        if np.may_share_memory(out, s):
            raise InvalidArgumentError("overlaps an input; results are written while inputs are read", argument="out", code="overlap")
    return out


_EAGER_CACHE_SIZE = 512
_eager: Dict[Any, Tuple[PlanRef, Tuple[int, ...], np.dtype, bool, Any]] = {}


def run_eager(op: Tuple[Any, ...], src: Any, out: Any, build: Callable[[Traced], Tuple[Traced, Any]]) -> Tuple[Any, Any]:
    """Run an eager op: ``build`` turns the traced source into the op's result (and an extra value,
    such as letterbox's info). Results of ``build`` are memoised per op arguments and source layout,
    so a repeated call skips tracing (about 20 us of Python) and only runs the plan."""
    if isinstance(src, Traced):
        return build(src)
    key: Any = (typed_key(op), getattr(src, "shape", None), getattr(src, "strides", None), getattr(src, "dtype", None))
    try:
        hit = _eager.get(key)
    except TypeError:  # an unhashable argument (a list of means, say): no memo
        key, hit = None, None
    if hit is None or type(src) is not np.ndarray:
        r, extra = build(trace_array(src))
        hit = (plan_for(r), r.shape, r.out_dtype, r.dtype == "f32", extra)
        if key is not None and type(src) is np.ndarray:
            if len(_eager) >= _EAGER_CACHE_SIZE:
                _eager.clear()
            _eager[key] = hit
    ref, shape, dtype, f32, extra = hit
    return run_plan(ref, shape, dtype, f32, src, out), extra


def run_plan(
    ref: PlanRef,
    shape: Tuple[int, ...],
    dtype: np.dtype,
    f32: bool,
    src: np.ndarray,
    out: Any,
    device: str = "cpu",
    output: str = "numpy",
) -> Any:
    """Run a plan on one array: the single path every eager op and every pipeline call ends in.
    ``device="cpu"`` calls the engine's CPU entry point directly; other placements ("auto", "cuda",
    "cuda:N") go through the engine's placement, into NumPy or (``output="device"``) a DeviceArray."""
    if f32 and not src.flags.aligned:
        raise InvalidArgumentError("float32 data must be aligned", argument="src")
    if output == "device":
        if out is not None:
            raise InvalidArgumentError('cannot be combined with output="device"', argument="out")
        return DeviceArray(_native.call(_native.get().RunToDevice, ref.handle, id(src), device), shape, dtype)
    res = np.empty(shape, dtype) if out is None else prepare_out(out, shape, dtype, (src,))
    if device != "cpu":
        _native.call(_native.get().RunOn, ref.handle, id(src), id(res), device)
        return res
    run = _native._raw_run
    if run is None or _native._forked_child:
        run = _native.raw_run()  # loads the extension, or raises ForkError
    try:
        run(ref.handle, id(src), id(res))
    except RuntimeError as e:
        raise from_native(e) from None
    return res


# ---------------------------------------------------------------------------------------------
# argument parsing shared by eager and traced calls

_INTERP = ("bilinear", "bicubic", "area", "nearest", "nearest-exact", "nearest-pil")
_INTERP_AA = ("bilinear", "bicubic")  # the kinds with an antialias variant
_COLOR = {"rgb2bgr": (3, (2, 1, 0)), "bgr2rgb": (3, (2, 1, 0)), "rgba2rgb": (4, (0, 1, 2)), "gray2rgb": (1, (0, 0, 0))}


def _check_flag(name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgumentError(f"must be a bool, got {type(v).__name__}", argument=name)
    return bool(v)


def _resize_t(t: Traced, size: Size, interpolation: str, antialias: bool) -> Traced:
    h, w = parse_size(size)
    if interpolation not in _INTERP:
        raise InvalidArgumentError(f"must be one of {', '.join(map(repr, _INTERP))}, got {interpolation!r}", argument="interpolation")
    aa = _check_flag("antialias", antialias)
    if aa and interpolation not in _INTERP_AA:
        raise InvalidArgumentError("applies to bilinear and bicubic interpolation only", argument="antialias")
    return t.resized(interpolation, aa, h, w, (h, w, 0, 0, 0.0))


def _pad_value(t: Traced, pad_value: Any) -> float:
    if not isinstance(pad_value, (int, float, np.integer, np.floating)) or isinstance(pad_value, bool):
        raise InvalidArgumentError(f"must be a number, got {type(pad_value).__name__}", argument="pad_value")
    v = float(pad_value)
    if not math.isfinite(v):
        raise InvalidArgumentError(f"must be finite, got {v}", argument="pad_value")
    if t.dtype == "u8" and (v != int(v) or not 0 <= v <= 255):
        raise InvalidArgumentError(f"must be an integer in [0, 255] for uint8 images, got {pad_value}", argument="pad_value")
    return v


def _letterbox_t(t: Traced, size: Size, pad_value: Any) -> Tuple[Traced, LetterboxInfo]:
    oh, ow = parse_size(size)
    pad = _pad_value(t, pad_value)
    info = letterbox_geometry(t.height, t.width, oh, ow)
    return t.resized("bilinear", False, info.height, info.width, (oh, ow, info.top, info.left, pad)), info


def _per_channel(name: str, v: Any, c: int) -> Tuple[float, ...]:
    try:
        arr = np.asarray(v, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"must be a number or a sequence of numbers, got {v!r}", argument=name) from None
    if arr.size == 1:
        arr = np.repeat(arr, c)
    if arr.size != c:
        raise InvalidArgumentError(f"needs 1 or {c} values (one per channel), got {arr.size}", argument=name)
    f32 = arr.astype(np.float32)
    if not np.all(np.isfinite(arr)) or not np.all(np.isfinite(f32)):
        raise InvalidArgumentError(f"values must be finite float32 numbers, got {arr.tolist()}", argument=name)
    if name == "std" and np.any(f32 == 0):
        raise InvalidArgumentError(f"values must be non-zero, got {arr.tolist()}", argument=name)
    return tuple(float(x) for x in arr)


_NORM_DTYPES = {"float32": "f32", "float16": "f16"}


def _normalize_t(t: Traced, mean: Any, std: Any, scale: Any, dtype: Any, layout: Any) -> Traced:
    c = t.channels
    m = _per_channel("mean", mean, c)
    s = _per_channel("std", std, c)
    sc = _per_channel("scale", scale, 1)[0]
    key = dtype if isinstance(dtype, str) else getattr(np.dtype(dtype) if _is_dtype(dtype) else None, "name", None)
    if key not in _NORM_DTYPES:
        raise InvalidArgumentError(f"must be 'float32' or 'float16', got {dtype!r}", argument="dtype")
    if layout not in ("CHW", "HWC"):
        raise InvalidArgumentError(f"must be 'CHW' or 'HWC', got {layout!r}", argument="layout")
    return t.normalized(m, s, sc, _NORM_DTYPES[key], layout)


def _is_dtype(d: Any) -> bool:
    try:
        np.dtype(d)
        return True
    except TypeError:
        return False


# ---------------------------------------------------------------------------------------------
# public ops


def resize(src: Any, size: Size, *, interpolation: str = "bilinear", antialias: bool = False, out: Optional[np.ndarray] = None) -> Any:
    """Resize to ``size`` (``(height, width)`` or an int for a square), keeping the dtype.

    bilinear uses half-pixel centres: uint8 matches ``cv2.resize(INTER_LINEAR)``, float32 matches
    PyTorch's ``interpolate(mode="bilinear", align_corners=False)``; ``antialias=True`` follows Pillow's
    filter widened by the downscale factor; nearest matches ``cv2.INTER_NEAREST``.
    bicubic: uint8 matches ``cv2.INTER_CUBIC``, float32 PyTorch's ``mode="bicubic"``, and with
    ``antialias=True`` Pillow's ``BICUBIC`` (PyTorch's ``antialias=True`` on float32). area matches
    ``cv2.INTER_AREA``; nearest-exact PyTorch's ``nearest-exact``; nearest-pil Pillow's ``NEAREST``.
    docs/API.md gives every rounding rule.
    """
    return run_eager(
        ("resize", size, interpolation, antialias), src, out, lambda t: (_resize_t(t, size, interpolation, antialias), None)
    )[0]


def flip(src: Any, *, horizontal: bool = True, vertical: bool = False, out: Optional[np.ndarray] = None) -> Any:
    """Mirror left-right (``horizontal``) and/or top-bottom (``vertical``)."""
    return run_eager(
        ("flip", horizontal, vertical),
        src,
        out,
        lambda t: (t.flip(_check_flag("horizontal", horizontal), _check_flag("vertical", vertical)), None),
    )[0]


def crop(src: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height x width`` window at ``(top, left)``: a zero-copy view of ``src``."""
    if isinstance(src, Traced):
        return src.crop(top, left, height, width)
    t = trace_array(src)
    check_window(top, left, height, width, t.height, t.width)
    return src[..., top : top + height, left : left + width, :]


def letterbox(src: Any, size: Size, *, pad_value: float = 114, out: Optional[np.ndarray] = None) -> Tuple[Any, LetterboxInfo]:
    """Resize keeping the aspect ratio to fit ``size``, centred on a canvas filled with ``pad_value``.

    Returns ``(image, LetterboxInfo)``; the info maps boxes back to the source image.
    """
    return run_eager(("letterbox", size, pad_value), src, out, lambda t: _letterbox_t(t, size, pad_value))


def cvt_color(src: Any, code: str, out: Optional[np.ndarray] = None) -> Any:
    """Convert channel order: ``"rgb2bgr"``, ``"bgr2rgb"``, ``"rgba2rgb"`` (drop alpha), ``"gray2rgb"``."""

    def build(t: Traced) -> Tuple[Traced, None]:
        if code not in _COLOR:
            raise InvalidArgumentError(f"must be one of {', '.join(_COLOR)}, got {code!r}", argument="code")
        need, cmap = _COLOR[code]
        if t.channels != need:
            raise ShapeError(f"{code} needs a {need}-channel image, got {t.channels} channels", argument="src")
        return t.mapped(cmap), None

    return run_eager(("cvt_color", code), src, out, build)[0]


def normalize(
    src: Any,
    *,
    mean: Any,
    std: Any,
    scale: float = 1 / 255,
    dtype: str = "float32",
    layout: str = "CHW",
    out: Optional[np.ndarray] = None,
) -> Any:
    """``(src * scale - mean) / std`` per channel, computed in float32, cast to ``dtype``, in ``layout``."""
    return run_eager(
        ("normalize", mean, std, scale, dtype, layout),
        src,
        out,
        lambda t: (_normalize_t(t, mean, std, scale, dtype, layout), None),
    )[0]
