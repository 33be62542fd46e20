"""Argument validation shared by every goprep op: the one place that turns a user's value into what the
engine gets, or raises the goprep error naming the argument.

The engine (gomod/engine/spec.go) checks everything that decides which memory a plan touches; the
numeric values checked here (pad values, mean, std, scale) cannot make a plan unsafe, so they are
checked once, here, where their Python types are still known. Helpers never let a raw ``TypeError``,
``OverflowError`` or NumPy warning escape: fixed-width NumPy integers are turned into Python ints
before any arithmetic (``np.int8(100) + np.int8(100)`` wraps), and floats are checked as the float32
the engine computes with.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Sequence, Tuple

import numpy as np

from ._errors import InvalidArgumentError, ShapeError

_F32_MAX = float(np.finfo(np.float32).max)


def base_array(a: Any, argument: str = "src") -> Any:
    """``a`` as a plain ``numpy.ndarray`` sharing its memory (zero-copy), or ``a`` unchanged when it is
    not an array (the caller reports the type).

    The engine reads memory by the shape and strides Python reports, so they must come from NumPy's
    own array struct: a subclass can override ``shape``/``strides``/``dtype``/``flags`` (or ``view``)
    with properties that lie, which made Go read and write outside the buffer. ``np.ndarray.view``
    called unbound builds a base-class view from the C-level fields, whatever the subclass defines.
    Masked arrays are refused: the engine would silently ignore their mask.
    """
    if type(a) is np.ndarray:
        return a
    if not isinstance(a, np.ndarray):
        return a
    ma = sys.modules.get("numpy.ma")  # a masked array exists only once numpy.ma was imported
    if ma is not None and isinstance(a, ma.MaskedArray):
        raise InvalidArgumentError(
            "masked arrays are not supported (the mask would be ignored); pass a.filled(value) or a.data",
            argument=argument,
        )
    return np.ndarray.view(a, np.ndarray)


def check_aligned(f32: bool, src: Any, argument: str = "src") -> None:
    """The one float32-alignment check (tracing and every run): the engine reads float32 sources as
    whole floats. ``src``: a NumPy array, or a device source (its ``ptr`` and its stand-in ``view``)."""
    if not f32:
        return
    if isinstance(src, np.ndarray):
        ok = src.flags.aligned
    else:  # a DeviceSource
        ok = src.ptr % 4 == 0 and all(s % 4 == 0 for s in src.view.strides)
    if not ok:
        raise InvalidArgumentError("float32 data must be aligned", argument=argument)


def is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def as_int(name: str, v: Any) -> int:
    """A Python int from an int or NumPy integer (never a bool)."""
    if not is_int(v):
        raise InvalidArgumentError(f"must be an int, got {type(v).__name__}", argument=name)
    return int(v)


def as_flag(name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgumentError(f"must be a bool, got {type(v).__name__}", argument=name)
    return bool(v)


def as_choice(name: str, v: Any, options: Sequence[str], fold_case: bool = False) -> str:
    """``v`` if it is one of the strings ``options`` (any other type, hashable or not, is an error);
    with ``fold_case`` compared (and returned) lower-cased, for names users write either way
    ("NV12", "BT709")."""
    if isinstance(v, str) and fold_case:
        v = v.lower()
    if not isinstance(v, str) or v not in options:
        raise InvalidArgumentError(f"must be one of {', '.join(repr(o) for o in options)}, got {v!r}", argument=name)
    return v


def decode_options(mode: Any, reduce: Any, orient: Any, modes: Sequence[str], scales: Sequence[int]) -> Tuple[str, Any, bool]:
    """``goprep.decode``'s options: (mode, one of ``modes``; reduce, as_reduce's; apply_orientation)."""
    return as_choice("mode", mode, modes), as_reduce(reduce, scales), as_flag("apply_orientation", orient)


def as_reduce(v: Any, scales: Sequence[int]) -> Any:
    """``goprep.decode``'s ``reduce``: None (1: exact), "auto", or one of the JPEG DCT ``scales``."""
    if v is None:
        return 1
    if isinstance(v, str) and v == "auto":
        return "auto"
    if is_int(v) and int(v) in scales:
        return int(v)
    raise InvalidArgumentError(
        f"must be None, 'auto', {', '.join(str(s) for s in scales[:-1])} or {scales[-1]}, got {v!r}", argument="reduce")


def device_sources(sources: Sequence[Any], argument: str = "src", what: str = "inputs") -> Tuple[int, Any]:
    """The one GPU and the one producing stream (None: none) of device sources (_inputs.DeviceSource:
    ``device``, ``stream``): ``what`` on several GPUs, or produced on several streams, is an error."""
    devs = {x.device for x in sources}
    if len(devs) != 1:
        raise InvalidArgumentError(f"{what} live on several GPUs {sorted(devs)}", argument=argument)
    streams = {x.stream for x in sources if x.stream is not None}
    if len(streams) > 1:
        raise InvalidArgumentError(f"{what} were produced on different streams", argument=argument)
    return devs.pop(), (streams.pop() if streams else None)


def device_reads(device: str, gpu: int) -> None:
    """Whether a call placed on ``device`` can read device sources living on GPU ``gpu``: the CPU cannot
    read GPU memory, and "cuda:N" must name their GPU. (The engine's placement, gomod/engine/gpu
    place.go, keeps the CPU rule too, as the last line of defence.)"""
    if device == "cpu":
        raise InvalidArgumentError('device="cpu" cannot read a CUDA array: use "auto" or "cuda"', argument="device")
    if device not in ("auto", "cuda") and device != f"cuda:{gpu}":
        raise InvalidArgumentError(f"the input lives on cuda:{gpu}, not {device}", argument="device")


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def as_float32(name: str, v: Any, what: str = "must be") -> float:
    """A finite number that stays finite as float32, returned as a Python float."""
    if not is_number(v):
        raise InvalidArgumentError(f"{what} a number, got {type(v).__name__} {v!r}", argument=name)
    try:
        f = float(v)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f) or abs(f) > _F32_MAX:
        raise InvalidArgumentError(f"{what} a finite float32 number, got {v!r}", argument=name)
    return f


def _numbers(name: str, v: Any, channels: int) -> list:
    """The values of a number or a sequence/array of 1 or ``channels`` numbers, repeated to ``channels``.
    Strings, None, bools and nested sequences are errors, not silently converted."""
    if is_number(v):
        vals = [v]
    elif isinstance(v, np.ndarray) and v.ndim <= 1 and v.dtype.kind in "iuf":
        vals = list(v.reshape(-1))
    elif isinstance(v, (list, tuple)) and all(is_number(x) for x in v):
        vals = list(v)
    else:
        raise InvalidArgumentError(
            f"must be a number or a sequence of 1 or {channels} numbers (one per channel), got {v!r}", argument=name
        )
    if len(vals) == 1:
        vals = vals * channels
    if len(vals) != channels:
        raise InvalidArgumentError(f"needs 1 or {channels} values (one per channel), got {len(vals)}", argument=name)
    return vals


def per_channel(name: str, v: Any, channels: int, nonzero: bool = False) -> Tuple[float, ...]:
    """One float32-finite value per channel from a number or a sequence/array of 1 or ``channels``
    numbers (see _numbers)."""
    vals = _numbers(name, v, channels)
    out = tuple(as_float32(name, x, "values must be") for x in vals)
    if nonzero and any(np.float32(x) == 0 for x in out):
        raise InvalidArgumentError(f"values must be non-zero (as float32), got {list(out)}", argument=name)
    return out


def pad_value(name: str, v: Any, dtype: str) -> float:
    """A fill value for an image of ``dtype`` ("u8": an integer in [0, 255]; "f32": float32-finite)."""
    if dtype == "u8":
        if not is_number(v):
            raise InvalidArgumentError(f"must be a number, got {type(v).__name__} {v!r}", argument=name)
        if is_int(v):
            ok = 0 <= int(v) <= 255
        else:
            f = float(v)
            ok = math.isfinite(f) and f.is_integer() and 0 <= f <= 255
        if not ok:
            raise InvalidArgumentError(f"must be an integer in [0, 255] for uint8 images, got {v!r}", argument=name)
        return float(int(v))
    return as_float32(name, v)


def parse_size(size: Any, max_dim: int, argument: str = "size") -> Tuple[int, int]:
    """``(height, width)`` from an int or a pair of ints, each in [1, max_dim]."""
    if is_int(size):
        h = w = int(size)
    elif isinstance(size, (tuple, list)) and len(size) == 2 and all(is_int(v) for v in size):
        h, w = int(size[0]), int(size[1])
    else:
        raise InvalidArgumentError(f"must be an int or a (height, width) pair of ints, got {size!r}", argument=argument)
    if h <= 0 or w <= 0:
        raise ShapeError(f"must be positive, got {h}x{w}", argument=argument)
    if h > max_dim or w > max_dim:
        raise ShapeError(f"{h}x{w} exceeds the limit of {max_dim} per dimension", argument=argument, code="too_large")
    return h, w


def check_window(top: Any, left: Any, height: Any, width: Any, h: int, w: int) -> Tuple[int, int, int, int]:
    """The crop window as Python ints, checked to lie inside an ``h x w`` image."""
    top, left = as_int("top", top), as_int("left", left)
    height, width = as_int("height", height), as_int("width", width)
    if top < 0 or left < 0:
        raise ShapeError(f"crop origin ({top}, {left}) is negative", argument="top" if top < 0 else "left")
    if height <= 0 or width <= 0:
        raise ShapeError(f"crop size {height}x{width} must be positive", argument="height" if height <= 0 else "width")
    if top + height > h or left + width > w:
        raise ShapeError(
            f"crop window {height}x{width} at ({top}, {left}) leaves the {h}x{w} image",
            argument="height" if top + height > h else "width",
        )
    return top, left, height, width


def pad_values(name: str, v: Any, dtype: str, channels: int) -> Tuple[float, ...]:
    """One fill value per channel (a number for all, or a sequence/array of 1 or ``channels``), each
    checked as ``pad_value`` checks one."""
    vals = _numbers(name, v, channels)
    return tuple(pad_value(name, x, dtype) for x in vals)


# Rules first needed by goprep.transforms' config readers (torchvision, timm and Hugging Face settings).


def as_positive_int(name: str, v: Any) -> int:
    """A positive Python int from an int or NumPy integer (never a bool)."""
    if not is_int(v) or int(v) <= 0:
        raise InvalidArgumentError(f"must be a positive int, got {v!r}", argument=name)
    return int(v)


def as_seconds(name: str, v: Any) -> float:
    """A duration: a positive, finite int or float (never a bool), as a Python float."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")
    if not ok:
        raise InvalidArgumentError(f"must be a positive number of seconds, got {v!r}", argument=name)
    return float(v)


def as_positive_float32(name: str, v: Any) -> float:
    """A number that is positive and finite as float32 (see ``as_float32``), as a Python float."""
    f = as_float32(name, v)
    if np.float32(f) <= 0:
        raise InvalidArgumentError(f"must be positive (as float32), got {v!r}", argument=name)
    return f


def float32_values(name: str, v: Any, nonzero: bool = False, channels: int | None = None) -> list[float]:
    """``per_channel``'s rule, the values kept as many as given (a single one is not repeated: the caller
    broadcasts it): a number, or a non-empty sequence or 1-D array or tensor (anything with ``tolist``)
    of float32-finite numbers; with ``channels``, 1 or that many."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    seq = isinstance(v, (list, tuple))
    if not (is_number(v) or seq and v and all(is_number(x) for x in v)):
        raise InvalidArgumentError(f"must be a number or a non-empty sequence of numbers, got {v!r}", argument=name)
    n = len(v) if seq else 1
    return list(per_channel(name, v, channels or n, nonzero)[:n])
