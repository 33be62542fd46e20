"""GPU placement on the Python side: device strings, device arrays, and what the engine reports.

A ``DeviceArray`` is a pipeline output kept in GPU memory. It exposes ``__cuda_array_interface__`` (CuPy,
Numba, PyTorch's ``torch.as_tensor``) and ``__dlpack__``/``__dlpack_device__`` (``torch.from_dlpack``,
``cupy.from_dlpack``), so frameworks take it without a copy. Its memory goes back to goprep's bounded
device pool when the array and every framework view of it are gone.
"""

from __future__ import annotations

import ctypes
import json
import re
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _native
from ._errors import InvalidArgumentError

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:(0|[1-9][0-9]*))$")
_MAX_HANDLE = (1 << 63) - 1  # stream handles cross into the engine as int64 (binding Execute, Upload, ...)

_gpu_count: Optional[int] = None  # cached: probing the driver happens once
_auto_min: Optional[int] = None


def check_device(device: Any) -> str:
    if not isinstance(device, str) or not _DEVICE_RE.match(device):
        raise InvalidArgumentError(f'must be "auto", "cpu", "cuda" or "cuda:N", got {device!r}', argument="device")
    return device


def gpu_count() -> int:
    """Usable GPUs (the first call probes the driver, lazily, never at import)."""
    global _gpu_count
    n = _gpu_count
    if n is None:
        n = _gpu_count = int(_native.get().GPUCount())
    return n


def auto_min_bytes() -> int:
    """device="auto" sends a call to the GPU only when it moves at least this many bytes."""
    global _auto_min
    n = _auto_min
    if n is None:
        n = _auto_min = int(_native.get().GPUAutoMinBytes())
    return n


def forget_gpus() -> None:
    global _gpu_count
    _gpu_count = None


def devices_report() -> Tuple[List[Dict[str, Any]], str]:
    rep = json.loads(_native.call(_native.get().Devices))
    return rep["devices"], rep["reason"]


def gpu_stats() -> Dict[str, Any]:
    return dict(json.loads(_native.call(_native.get().GPUStats)))


# ---------------------------------------------------------------------------------------------
# DLPack (https://dmlc.github.io/dlpack/latest/c_api.html), version-0 capsules: what every consumer
# accepts.

_kDLCUDA = 2
_DL_CODES = {"u": 1, "i": 0, "f": 2}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

# Live exports: managed-tensor address -> (struct, shape array, owner). The consumer's deleter call
# (or the capsule's destructor, if nobody consumed it) drops the entry, and with it the reference that
# keeps the device memory alive.
_exports: Dict[int, Tuple[Any, Any, Any]] = {}
_exports_lock = threading.Lock()


def _release(addr: int) -> None:
    with _exports_lock:
        _exports.pop(addr, None)


@_DELETER
def _dl_deleter(mt: Any) -> None:
    _release(ctypes.cast(mt, ctypes.c_void_p).value or 0)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Private prototypes: ctypes.pythonapi's shared function objects can have their argtypes changed by any
# other library in the process.
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(cap: int) -> None:
    # A consumer renames the capsule "used_dltensor" and owns the tensor from then on; a capsule still
    # named "dltensor" was never consumed, so its tensor is released here.
    if _PyCapsule_IsValid(cap, b"dltensor"):
        _release(_PyCapsule_GetPointer(cap, b"dltensor"))


class DeviceArray:
    """A pipeline result in GPU memory (``@goprep.pipeline(output="device")``).

    Hand it to a framework without a copy: ``torch.from_dlpack(a)``, ``cupy.from_dlpack(a)``,
    ``cupy.asarray(a)`` (``__cuda_array_interface__``). ``a.get()`` copies it into a NumPy array.
    The memory returns to goprep's device pool when the array and all framework views are gone.
    """

    __slots__ = ("_handle", "shape", "dtype", "device", "ptr", "nbytes", "__weakref__")

    def __init__(self, handle: int, shape: Tuple[int, ...], dtype: np.dtype) -> None:
        mod = _native.get()
        self._handle = handle
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = int(_native.call(mod.DeviceArrayDevice, handle))
        self.ptr = int(_native.call(mod.DeviceArrayPtr, handle))
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"<goprep.DeviceArray shape={self.shape} dtype={self.dtype} device=cuda:{self.device}>"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _check(self) -> None:
        if self._handle == 0:
            raise InvalidArgumentError("this DeviceArray was freed", argument="array")

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        self._check()
        # v3 "stream": the stream the data was produced on when the producing call was queued on a
        # caller's stream (stream=) without a host wait; consumers order their work after it. None
        # when the producing call synchronised: ready on any stream. (0 is not allowed there: the
        # legacy default stream is 1.)
        ready = int(_native.call(_native.get().DeviceArrayReadyStream, self._handle))
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": (ready or 1) if ready else None,
        }

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_kDLCUDA, self.device)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        """Export as a DLPack capsule (version 0 layout). ``stream`` is the consumer's stream (DLPack's
        rules: None or 1 the legacy default stream, 2 the per-thread default, -1 no synchronisation):
        it is made to wait for the producing work by an event (no host wait), and the memory is
        freed in order on it from then on."""
        self._check()
        if stream is not None and (
            not isinstance(stream, int) or isinstance(stream, bool) or stream < -1 or stream == 0 or stream > _MAX_HANDLE
        ):
            raise BufferError(f"stream must be None, -1 or a CUDA stream handle in [1, 2**63), got {stream!r}")
        consumer = 1 if stream is None else (0 if stream == -1 else stream)
        _native.call(_native.get().DeviceArrayExport, self._handle, consumer)
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"goprep DeviceArray lives on {self.__dlpack_device__()}, cannot export to {dl_device}")
        if copy:
            raise BufferError("goprep DeviceArray exports without copying only (copy=True unsupported)")
        shape = (ctypes.c_int64 * self.ndim)(*self.shape)
        mt = _DLManagedTensor()
        mt.dl_tensor.data = self.ptr
        mt.dl_tensor.device = _DLDevice(_kDLCUDA, self.device)
        mt.dl_tensor.ndim = self.ndim
        mt.dl_tensor.dtype = _DLDataType(_DL_CODES[self.dtype.kind], self.dtype.itemsize * 8, 1)
        mt.dl_tensor.shape = shape
        mt.dl_tensor.strides = None  # compact row-major
        mt.dl_tensor.byte_offset = 0
        mt.deleter = _dl_deleter
        addr = ctypes.addressof(mt)
        with _exports_lock:
            _exports[addr] = (mt, shape, self)
        return _PyCapsule_New(addr, b"dltensor", _capsule_destructor)

    def get(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Copy to host memory (a new array, or ``out`` of the same shape and dtype)."""
        self._check()
        res = np.empty(self.shape, self.dtype) if out is None else out
        if res.shape != self.shape or res.dtype != self.dtype or not res.flags.c_contiguous or not res.flags.writeable:
            raise InvalidArgumentError(f"must be a writable C-contiguous {self.shape} {self.dtype} array", argument="out")
        _native.call(_native.get().DeviceArrayToHost, self._handle, id(res), res.nbytes)
        return res

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.get()
        return a if dtype is None else a.astype(dtype)

    def free(self) -> None:
        """Free the memory now, in order on the last stream that used it (a DLPack consumer's stream,
        else the producing stream): queued work that reads it still completes first."""
        h, self._handle = self._handle, 0
        if h and _native.loaded() and not _native._forked_child:
            _native.get().FreeDeviceArray(h)

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:  # interpreter shutdown: the pool goes with the process
            pass


def stream_handle(stream: Any) -> int:
    """A stream= argument as a CUDA stream handle: an int, a torch.cuda.Stream or a cupy Stream."""
    if stream is None:
        return -1
    if isinstance(stream, bool):
        raise InvalidArgumentError(f"must be a CUDA stream (int handle, torch.cuda.Stream, cupy Stream), got {stream!r}", argument="stream")
    if isinstance(stream, (int, np.integer)):
        h = int(stream)
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        h = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        h = int(stream.ptr)
    else:
        raise InvalidArgumentError(f"must be a CUDA stream (int handle, torch.cuda.Stream, cupy Stream), got {type(stream).__name__}", argument="stream")
    if h < 0:
        raise InvalidArgumentError(f"stream handle must be >= 0, got {h}", argument="stream")
    if h > _MAX_HANDLE:  # the engine takes handles as int64: gopy's conversion would raise OverflowError
        raise InvalidArgumentError(f"stream handle must be < 2**63, got {h}", argument="stream")
    return h


def to_device(array: Any, device: str = "cuda", stream: Any = None) -> DeviceArray:
    """Upload a NumPy array to the GPU as a ``goprep.DeviceArray`` (C-contiguous copy). With
    ``stream=`` the copy is queued on that stream (the array is ready there); otherwise it has
    completed on return."""
    check_device(device)
    if not device.startswith("cuda"):
        raise InvalidArgumentError(f'must be "cuda" or "cuda:N", got {device!r}', argument="device")
    a = np.ascontiguousarray(array)
    if a.dtype.kind not in "uif" or a.dtype.byteorder not in "=|<":
        raise InvalidArgumentError(f"dtype must be a native integer or float type, got {a.dtype}", argument="array")
    h = _native.call(_native.get().Upload, id(a), a.nbytes, device, stream_handle(stream))
    return DeviceArray(h, a.shape, a.dtype)


_get_pointer: Any = None


def capsule_pointer_fn() -> Any:
    """PyCapsule_GetPointer(capsule object, name) through a private prototype: the shared
    ``ctypes.pythonapi.PyCapsule_GetPointer`` can have its argtypes changed by any other library in the
    process, so goprep never sets them there."""
    global _get_pointer
    if _get_pointer is None:
        import ctypes

        _get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
            ("PyCapsule_GetPointer", ctypes.pythonapi)
        )
    return _get_pointer


# ---------------------------------------------------------------------------------------------
# device-resident inputs: __cuda_array_interface__ (v2/v3) and __dlpack__ (kDLCUDA)

_TYPESTR = {"|u1": np.dtype(np.uint8), "<f4": np.dtype(np.float32), "=f4": np.dtype(np.float32)}


class DeviceSource:
    """A device array given as input: its data pointer, device, the stream it was produced on (or
    None), and a host stand-in with its shape, strides and dtype for tracing (never read)."""

    __slots__ = ("ptr", "device", "stream", "view", "keep")

    def __init__(self, ptr: int, device: int, stream: Optional[int], view: np.ndarray, keep: Any) -> None:
        self.ptr, self.device, self.stream, self.view, self.keep = ptr, device, stream, view, keep


def _stand_in(shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: np.dtype, chw: bool) -> np.ndarray:
    if chw and len(shape) in (3, 4):  # torchvision's (C, H, W) / (N, C, H, W): read through the strides
        k = len(shape)
        order = (0, 2, 3, 1) if k == 4 else (1, 2, 0)
        shape = tuple(shape[i] for i in order)
        strides = tuple(strides[i] for i in order)
    # A zero-filled one-element buffer viewed with the array's shape and strides: the tracer reads only
    # shape, strides and dtype; the engine reads the device pointer.
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape=shape, strides=strides, writeable=False)


def _is_torch(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "torch"


def device_source(obj: Any, stream: Optional[int]) -> Optional[DeviceSource]:
    """The device source for a CUDA array (CAI or DLPack kDLCUDA), or None for anything else."""
    if isinstance(obj, np.ndarray):
        return None
    if _is_torch(obj):
        # A torch tensor is a device source only on CUDA; CPU (and meta, ...) tensors are read as host
        # arrays by _inputs, and asking them for __dlpack_device__ can raise.
        if not getattr(obj, "is_cuda", False):
            return None
        cai = obj.__cuda_array_interface__
    else:
        cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dt = _TYPESTR.get(cai["typestr"])
        if dt is None:
            raise InvalidArgumentError(f"dtype must be uint8 or float32, got {cai['typestr']!r}", argument="src")
        shape = tuple(int(v) for v in cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            st, acc = [], dt.itemsize
            for n in reversed(shape):
                st.append(acc)
                acc *= max(n, 1)
            strides = tuple(reversed(st))
        ptr = int(cai["data"][0])
        _check_pointer(ptr, shape)
        dev = _device_of(ptr, obj)
        return DeviceSource(ptr, dev, cai.get("stream"), _stand_in(shape, tuple(strides), dt, _is_torch(obj)), obj)
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__"):
        kind, dev = obj.__dlpack_device__()
        if int(kind) != _kDLCUDA:
            return None
        cap = obj.__dlpack__(stream=stream if stream is not None else 1)
        # Read in place while holding the capsule (not consumed: its producer frees it as usual).
        mt = _DLManagedTensor.from_address(capsule_pointer_fn()(cap, b"dltensor"))
        t = mt.dl_tensor
        codes = {(1, 8): np.dtype(np.uint8), (2, 32): np.dtype(np.float32)}
        dt = codes.get((t.dtype.code, t.dtype.bits))
        if dt is None or t.dtype.lanes != 1:
            raise InvalidArgumentError("dtype must be uint8 or float32", argument="src")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.strides:
            strides = tuple(t.strides[i] * dt.itemsize for i in range(t.ndim))
        else:
            st, acc = [], dt.itemsize
            for n in reversed(shape):
                st.append(acc)
                acc *= max(n, 1)
            strides = tuple(reversed(st))
        ptr = int(t.data or 0) + int(t.byte_offset)
        _check_pointer(int(t.data or 0), shape)
        # The producer has ordered our stream after its work (__dlpack__(stream=)): nothing to wait on.
        return DeviceSource(ptr, int(dev), None, _stand_in(shape, strides, dt, _is_torch(obj)), (obj, cap))
    return None


def _check_pointer(ptr: int, shape: Tuple[int, ...]) -> None:
    """A device array with elements must have a data pointer: a null one (which the engine would hand
    to the device as it is) is refused here. Whether the claimed extent lies inside one allocation is
    checked by the device itself before any copy or launch."""
    if ptr == 0 and all(n > 0 for n in shape):
        raise InvalidArgumentError(f"the device array's data pointer is null (shape {shape})", argument="src")


def _device_of(ptr: int, obj: Any) -> int:
    if isinstance(obj, DeviceArray):
        return obj.device
    dev = getattr(obj, "device", None)
    idx = getattr(dev, "index", None)  # torch.device
    if isinstance(idx, int):
        return idx
    idx = getattr(dev, "id", None)  # cupy.cuda.Device
    if isinstance(idx, int):
        return idx
    return int(getattr(obj, "__dlpack_device__", lambda: (_kDLCUDA, 0))()[1])

