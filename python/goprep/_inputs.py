"""Input adaptation: every source the run path accepts, as what the engine reads.

NumPy arrays (a subclass as its base-class view), PIL images, CPU torch tensors and lists of them
become NumPy arrays; CUDA arrays (``__cuda_array_interface__``, DLPack kDLCUDA: torch CUDA tensors,
CuPy arrays, ``goprep.DeviceArray``) become ``DeviceSource``s. A new kind of input (encoded bytes,
once decoding lands) is one more branch of ``host_array``.

The engine reads NumPy-described memory (address, shape, strides). A PIL image becomes an HWC array
(``np.asarray``); a CPU ``torch.Tensor`` in torchvision's ``(C, H, W)`` / ``(N, C, H, W)`` convention
is read in place: its NumPy view, with the axes permuted to HWC, is the same memory with permuted
strides, which the engine reads as any other view (channels-last tensors included). Neither torch nor
PIL is imported here: an object is recognised only if its library is already in ``sys.modules`` (it
cannot be an instance otherwise), so plain NumPy users never load them.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import numpy as np

from ._device import DeviceArray, _DLManagedTensor, _kDLCUDA
from ._errors import DTypeError, InvalidArgumentError, ShapeError
from ._validate import base_array

_PIL_MODES = ("RGB", "RGBA", "L")


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_pil(x: Any) -> bool:
    m = sys.modules.get("PIL.Image")
    return m is not None and isinstance(x, m.Image)


def host_array(src: Any, accepts: str = "a numpy.ndarray", argument: str = "src") -> Tuple[np.ndarray, Optional[str]]:
    """A host source (anything but a plain ``numpy.ndarray``, which callers take as it is) as the
    plain NumPy array the engine reads, and what it came from: None (NumPy), ``"pil"`` or
    ``"torch"``. Anything else is refused, saying what the caller ``accepts``."""
    a, kind = as_array(src, argument)
    if type(a) is not np.ndarray:
        if not isinstance(a, np.ndarray):
            raise InvalidArgumentError(f"must be {accepts}, got {type(a).__name__}", argument=argument)
        a = base_array(a, argument)  # an ndarray subclass: its base-class view (never its attributes)
    return a, kind


def list_item(item: Any, i: int, stream: Optional[int]) -> Tuple[Any, np.ndarray, Optional[str]]:
    """Item ``i`` of a list source: (what the engine reads, a NumPy array or a DeviceSource; its host
    view for tracing; its kind as host_array says, None for device sources)."""
    ds = None if isinstance(item, np.ndarray) else device_source(item, stream)
    if ds is not None:
        src: Any = ds
        img, kind = ds.view, None
    else:
        img, kind = as_array(item)
        img = base_array(img, "src")
        src = img
    if not isinstance(img, np.ndarray) or img.ndim != 3:
        raise ShapeError(
            f"item {i} must be an (H, W, C) numpy.ndarray, got {getattr(img, 'shape', type(img).__name__)}",
            argument="src",
        )
    return src, img, kind


def as_array(src: Any, argument: str = "src") -> Tuple[Any, Optional[str]]:
    """A NumPy HWC view of ``src`` and what it came from: None (NumPy or unknown, left for the
    caller's checks), ``"pil"`` or ``"torch"``."""
    if isinstance(src, np.ndarray):
        return src, None
    if is_tensor(src):
        return tensor_as_hwc(src, argument), "torch"
    if is_pil(src):
        return pil_as_hwc(src, argument), "pil"
    return src, None


def pil_as_hwc(img: Any, argument: str = "src") -> np.ndarray:
    try:
        # Reads an image opened but not loaded yet (Image.open), as np.asarray would. After
        # Image.close() every Pillow raises ValueError("Operation on closed image") here; a bare
        # `img.im` did not do for either: Pillow >= 11 asserts there that the image is loaded (an
        # AssertionError on Image.open's images), and Pillow < 11 (Debian bookworm's 9.4) returns the
        # stand-in close() left, which raises only at its first attribute.
        img.load()
    except ValueError as e:
        raise InvalidArgumentError(f"the PIL image cannot be read ({e}): was it closed? Read it before "
                                   "Image.close(), or open it again", argument=argument) from None
    mode = img.mode
    if mode not in _PIL_MODES:
        raise DTypeError(
            f"PIL mode {mode!r} is not supported: goprep reads 8-bit 'RGB', 'RGBA' and 'L' images "
            f"(convert with img.convert('RGB'))",
            argument=argument,
        )
    # RGB is copied: Pillow stores it RGBX, and the fast uint8 kernels read packed 3-byte pixels (read
    # in place, from_torchvision(ImageNet eval) on a 512x512 RGB image took the general path and ran
    # 2.7x slower than with the copy, thread CPU time, 1 thread, same run).
    a = _pil_arrow_view(img) if mode != "RGB" else None
    if a is None:
        a = np.asarray(img)  # one copy (tobytes): RGB, older Pillow, or an image Pillow cannot export
    return a[..., None] if a.ndim == 2 else a


class _ArrowView:
    """The NumPy view of an image's own memory; as the array's base it keeps the Arrow export
    (whose release runs when its capsule is freed) and the image alive."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, interface: dict, keep: Tuple[Any, ...]) -> None:
        self.__array_interface__ = interface
        self._keep = keep


_capsule_pointer: Any = None  # (PyCapsule_GetPointer, the ArrowArray struct), made on first use
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


def _arrow_array(capsule: Any) -> Any:
    global _capsule_pointer
    if _capsule_pointer is None:
        import ctypes

        class ArrowArray(ctypes.Structure):  # the Arrow C data interface's struct ArrowArray
            pass

        ArrowArray._fields_ = [
            ("length", ctypes.c_int64),
            ("null_count", ctypes.c_int64),
            ("offset", ctypes.c_int64),
            ("n_buffers", ctypes.c_int64),
            ("n_children", ctypes.c_int64),
            ("buffers", ctypes.POINTER(ctypes.c_void_p)),
            ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
            ("dictionary", ctypes.c_void_p),
            ("release", ctypes.c_void_p),
            ("private_data", ctypes.c_void_p),
        ]
        _capsule_pointer = (capsule_pointer_fn(), ctypes.POINTER(ArrowArray), ctypes.cast)
    f, ptr, cast = _capsule_pointer
    return cast(f(capsule, b"arrow_array"), ptr).contents


def _pil_arrow_view(img: Any) -> Optional[np.ndarray]:
    """An (H, W, 4) / (H, W) view of an RGBA / L Pillow image's own pixels, read in place through
    Pillow's Arrow export (Pillow >= 11.2): the same layout np.asarray gives, without its copy (which
    is ~20% of a 512x512 pipeline call, cProfile). None where Pillow cannot export (older Pillow, an
    image in several memory blocks, other modes): the caller copies instead."""
    export = getattr(img, "__arrow_c_array__", None)
    if export is None:
        return None
    try:
        schema, capsule = export()
        arr = _arrow_array(capsule)
        w, h = img.size
        mode = img.mode
        if mode not in ("L", "RGBA"):
            return None
        if mode == "L":
            data, n, pixel = arr, arr.length, 1
        else:  # fixed_size_list<uint8>[4]: the bytes are the child array's
            if arr.n_children != 1:
                return None
            data, n, pixel = arr.children[0].contents, arr.length, 4
        if n != h * w or arr.offset != 0 or data.offset != 0 or data.n_buffers < 2 or data.length != n * pixel:
            return None
        addr = data.buffers[1]
    except (ValueError, TypeError, AttributeError, OSError):
        return None  # e.g. "image is not stored in a single block"
    if not addr:
        return None
    shape: Tuple[int, ...] = (h, w) if pixel == 1 else (h, w, 4)
    strides: Tuple[int, ...] = (w, 1) if pixel == 1 else (4 * w, 4, 1)
    face = {"shape": shape, "strides": strides, "typestr": "|u1", "data": (addr, True), "version": 3}
    return np.asarray(_ArrowView(face, (capsule, schema, img)))


def tensor_as_hwc(t: Any, argument: str = "src") -> np.ndarray:
    torch = _torch()
    if t.device.type != "cpu":
        raise InvalidArgumentError(
            f"is a {t.device.type} tensor; goprep reads CPU tensors (move it with .cpu(), or pass a NumPy array)",
            argument=argument,
        )
    if t.dtype not in (torch.uint8, torch.float32):
        raise DTypeError(f"tensor dtype must be torch.uint8 or torch.float32, got {t.dtype}", argument=argument)
    if t.ndim not in (3, 4):
        raise ShapeError(
            f"a tensor must be (C, H, W) or (N, C, H, W), got shape {tuple(t.shape)}", argument=argument
        )
    c = t.shape[-3]
    if c not in (1, 3, 4):
        raise ShapeError(
            f"a tensor must be (C, H, W) or (N, C, H, W) with C in 1, 3, 4 (torchvision's convention), got "
            f"shape {tuple(t.shape)}; for (H, W, C) data pass a NumPy array (tensor.numpy())",
            argument=argument,
        )
    try:
        a = t.detach().numpy()
    except (RuntimeError, TypeError) as e:  # sparse, quantized, conjugated, ...: no strided view
        raise InvalidArgumentError(f"tensor layout cannot be read in place ({e})", argument=argument) from None
    # transpose, not np.moveaxis: the same view, without moveaxis's axis normalisation (~5 us a call)
    return a.transpose(1, 2, 0) if a.ndim == 3 else a.transpose(0, 2, 3, 1)


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


# ---------------------------------------------------------------------------------------------
# encoded items: one image of an open decode batch (gomod/binding DecodeOpen), decoded by the engine


class EncodedItem:
    """Item ``index`` of the open decode batch ``batch`` (DecodeOpen's handle) as a job source, with
    the decode options the engine applies: ``scale`` (JPEG DCT scale 1, 2, 4, 8), ``mode`` (the
    channels the decoder writes: codec.Mode), ``orient`` (apply the EXIF orientation). ``nbytes``: the
    decoded image's size, what a call's memory traffic counts for it."""

    __slots__ = ("batch", "index", "scale", "mode", "orient", "nbytes")

    def __init__(self, batch: int, index: int, scale: int, mode: int, orient: bool, nbytes: int) -> None:
        self.batch, self.index, self.scale, self.mode, self.orient, self.nbytes = batch, index, scale, mode, orient, nbytes
