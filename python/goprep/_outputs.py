"""Outputs: allocating the array the engine writes, and handing the result to the caller.

Allocation: a new result (pooled when large, _outpool.py), or ``out=`` (a NumPy array or a CPU torch
tensor) checked against the result. Adaptation: NumPy as it is, a torch tensor sharing its memory in
torchvision's layout, ``out=`` as the object the caller passed, a device result as a DeviceArray, and
the traced function's result shape around the image (a tuple such as letterbox's).
"""

from __future__ import annotations

import math
import sys
from typing import Any, Sequence, Tuple

import numpy as np

from . import _outpool
from ._device import DeviceArray
from ._errors import DTypeError, InvalidArgumentError, ShapeError
from ._inputs import is_tensor
from ._trace import SLOT
from ._validate import base_array


_empty = _outpool.empty  # the allocator of new results (goprep.testing.refuse_allocations swaps it)


def new_result(shape: Tuple[int, ...], dtype: np.dtype, size_arg: str) -> np.ndarray:
    """A new result array (pooled when large). One NumPy cannot allocate is a request too large for
    this machine, not an engine failure: ShapeError (too_large) naming ``size_arg``, the argument
    that set its size, as check_out_size does for results beyond any machine (MAX_OUT_BYTES)."""
    try:
        return _empty(shape, dtype)
    except MemoryError:
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        raise ShapeError(
            f"the {shape} {np.dtype(dtype)} result would take {nbytes} bytes, more than can be allocated",
            argument=size_arg,
            code="too_large",
        ) from None


def out_view(out: Any, shape: Tuple[int, ...], chw: bool) -> Any:
    """``out=`` as what the engine would write: a CPU tensor's memory (tensor_out), anything else as
    it is (host_result checks it)."""
    if type(out) is not np.ndarray and is_tensor(out):
        return tensor_out(out, shape, chw)
    return out


def host_result(out: Any, shape: Tuple[int, ...], dtype: np.dtype, size_arg: str, sources: Sequence[Any]) -> np.ndarray:
    """The host array the engine writes: a new one (``out`` None), or ``out`` (out_view's array)
    checked against the result's shape and dtype and against overlapping ``sources`` (host arrays)."""
    if out is None:
        return new_result(shape, dtype, size_arg)
    if type(out) is not np.ndarray:
        out = base_array(out, "out")  # shape, dtype and flags as NumPy knows them, not as a subclass says
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
    for s in sources:  # host sources only
        if np.may_share_memory(out, s):
            raise InvalidArgumentError("overlaps an input; results are written while inputs are read", argument="out", code="overlap")
    return out


def tensor_out(out: Any, shape: Tuple[int, ...], chw: bool) -> np.ndarray:
    """``out=`` as the NumPy array the engine writes: a CPU tensor (pinned or not) of the result's
    torchvision-layout shape, whose memory is the result's C-contiguous layout."""
    if out.device.type != "cpu":
        raise InvalidArgumentError(f"is a {out.device.type} tensor; out= takes CPU tensors", argument="out")
    try:
        a = out.detach().numpy()
    except (RuntimeError, TypeError) as e:
        raise InvalidArgumentError(f"tensor layout cannot be written in place ({e})", argument="out") from None
    if a.shape == shape:
        return a  # type: ignore[no-any-return]
    if not chw and a.ndim == len(shape) and a.ndim in (3, 4):
        v = np.moveaxis(a, -3, -1)  # a (C, H, W) tensor whose memory is HWC (channels-last)
        if v.shape == shape and v.flags.c_contiguous:
            return v  # type: ignore[no-any-return]
    want = shape if chw else shape[:-3] + (shape[-1],) + shape[-3:-1]
    raise ShapeError(
        f"must be a tensor of shape {want} whose memory is the result's layout "
        f"({'contiguous' if chw else 'channels-last'}), got shape {tuple(out.shape)} strides {out.stride()}",
        argument="out",
    )


def deliver(res: np.ndarray, out: Any, torch: bool, chw: bool) -> Any:
    """A host result for the caller: ``out=`` as the object passed (a tensor as it is), else ``res``;
    with ``torch``, as a tensor sharing its memory. (Pipeline._run inlines the case without torch.)"""
    if out is not None:
        if type(out) is not np.ndarray and is_tensor(out):
            return out
        res = out
    return to_torch(res, chw) if torch else res


def to_torch(res: np.ndarray, chw: bool) -> Any:
    """A tensor sharing the result's memory in torchvision's layout: a CHW result as it is, an HWC one
    as a channels-last (C, H, W) view."""
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # output="torch" asked for it
    t = torch.from_numpy(res)
    return t if chw else t.movedim(-1, -3)


def device_result(handle: int, shape: Tuple[int, ...], dtype: np.dtype) -> DeviceArray:
    """A device output's handle as the caller's DeviceArray."""
    return DeviceArray(handle, shape, dtype)


def fill(template: Any, image: Any) -> Any:
    """The traced function's result with ``image`` where it returned the traced image."""
    if template is SLOT:
        return image
    return tuple(image if x is SLOT else x for x in template)
