"""The input kinds of the run path: every source a call accepts, as what the engine reads.

Each kind gives ``adapt`` items of one shape (``ArrayItem`` and its subclasses, or _decode's
``Encoded``), each with

- ``key(ak, kk)``: the memo key of its layout with the call's extra arguments (typed keys ``ak``, ``kk``);
- ``trace(fn, args, kwargs, opts)``: the Signature of the function on it, traced from its starting
  point on a miss (an array's layout, a YUV frame's planes, an encoded image's header, twice for
  decode's reduce="auto");
- ``bind(sig)``: its engine reference for that signature (a NumPy array, a DeviceSource, a YUV
  frame's Y plane, an ``_run.EncodedItem``);
- ``kind`` (results delivered as "torch" tensors, or None: NumPy), ``on_dev``, ``dtype`` and ``mem``
  (the host arrays the call reads, which an ``out=`` must not overlap).

The kinds, in the order ``adapt`` recognises them: encoded data (bytes, paths, 1-D uint8 arrays:
_decode.py), YUV frames (``goprep.yuv``: _yuv.py), CUDA arrays (``__cuda_array_interface__``, DLPack
kDLCUDA: torch CUDA tensors, CuPy arrays, ``goprep.DeviceArray``) as ``DeviceSource``s, and host
arrays: NumPy (a subclass as its base-class view; ``(H, W)`` is a one-channel image), PIL images and
CPU torch tensors. A list (or tuple) of items of one kind is one batch. A new kind is one more
``ArrayItem`` subclass, or a class of the same shape, and one more branch of ``adapt``
(docs/DEVELOPING.md).

The engine reads NumPy-described memory (address, shape, strides). A PIL image becomes an HWC array
(``np.asarray``; "L" an (H, W) one); a CPU ``torch.Tensor`` in torchvision's ``(C, H, W)`` /
``(N, C, H, W)`` convention is read in place: its NumPy view, with the axes permuted to HWC, is the
same memory with permuted strides, which the engine reads as any other view (channels-last tensors
included). Neither torch nor PIL is imported here (_optional.is_tensor, is_pil).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _decode, _native, _yuv
from ._device import DeviceSource, capsule_pointer_fn, device_source
from ._errors import DTypeError, InvalidArgumentError, ShapeError
from ._signature import Signature, trace
from ._validate import base_array


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_pil(x: Any) -> bool:
    m = sys.modules.get("PIL.Image")
    return m is not None and isinstance(x, m.Image)


_ENCODED = (bytes, bytearray, memoryview, str, os.PathLike)


def is_encoded_item(x: Any) -> bool:
    """Whether ``x`` is one encoded image: bytes, bytearray, memoryview, a 1-D uint8 array, a path."""
    if type(x) is np.ndarray:
        return x.ndim == 1 and x.dtype == np.uint8
    return isinstance(x, _ENCODED)


def is_encoded(src: Any) -> bool:
    """Whether a source is encoded data: an item, or a list/tuple whose first item is one."""
    if isinstance(src, (list, tuple)):
        return bool(src) and is_encoded_item(src[0])
    return is_encoded_item(src)


def check_encoded(data: Any, name: str) -> None:
    """Raise, naming the item, unless ``data`` is an encoded item or a list or tuple of them."""
    many = isinstance(data, (list, tuple))
    for i, x in enumerate(data if many else [data]):
        if not is_encoded_item(x):
            _decode.item_bytes(x, f"{name}[{i}]" if many else name)  # raises


class ArrayItem:
    """An array source: a host array (``ref`` is ``src``; ``kind`` "pil", "torch" or None) or a CUDA
    array (``ref`` a DeviceSource, ``src`` its host stand-in, never read). ``key``: its layout, the
    NumPy fast path's key (_pipeline) without the call's arguments."""

    __slots__ = ("ref", "src", "key", "kind", "on_dev", "dtype", "mem")

    def __init__(self, ref: Any, src: Any, kind: Optional[str], on_dev: bool, mem: Tuple[Any, ...]) -> None:
        self.ref, self.src, self.kind, self.on_dev, self.mem = ref, src, kind, on_dev, mem
        self.key: Tuple[Any, ...] = (src.shape, src.strides, src.dtype)
        self.dtype = src.dtype

    def trace(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any], opts: Tuple[Any, ...]) -> Signature:
        """The signature of ``fn`` on this source; ``opts``: the pipeline's (device, target, plain,
        lenient) (Pipeline._opts)."""
        return trace(fn, self.src, args, kwargs, *opts)


class FrameItem(ArrayItem):
    """A YUV frame (``src``, a _yuv.YUVFrame): keyed by its planes' layout and colour, traced from its
    planes (YUVFrame.traced), run from its Y plane's pointer (``ref``: an array or a DeviceSource)."""

    __slots__ = ()

    def __init__(self, f: Any) -> None:  # pylint: disable=super-init-not-called
        on_dev = type(f.base) is DeviceSource
        self.ref, self.src, self.kind, self.on_dev, self.mem = f.base, f, None, on_dev, () if on_dev else f.keep
        self.key, self.dtype = f.key, f.dtype


def adapt(src: Any, stream: Optional[int], host_only: bool, accepts: str,
          max_pixels: Optional[int] = None, name: str = "src") -> Tuple[List[Any], bool, Any]:
    """``src`` as the run path's items: (items, whether ``src`` is one image rather than a list, what
    to close once the call has run: an open decode batch, or None). ``host_only`` (eager ops): no
    lists and no CUDA arrays. ``stream``: the call's stream (DLPack producers order their work on it).
    ``max_pixels``, ``name``: an encoded source's bomb limit and the argument errors name ("data":
    goprep.decode's, which takes encoded data only). A list of ``_decode.Encoded`` items (a batch
    opened by ``_decode.open_items``, any of its items in any order) runs as it is: the caller, who
    read their headers first (goprep.transforms' Hugging Face layouts), closes the batch."""
    if name == "data":  # goprep.decode: encoded data only
        check_encoded(src, name)
    t = type(src)
    if t is np.ndarray and (src.ndim != 1 or src.dtype != np.uint8):  # a NumPy image (1-D uint8: encoded)
        return [ArrayItem(src, src, None, False, (src,))], True, None
    if t is _yuv.YUVFrame:
        return [FrameItem(src)], True, None
    if is_pil(src):  # the common host kinds before the encoded and device tests
        a = pil_as_hwc(src)
        return [ArrayItem(a, a, "pil", False, (a,))], True, None
    many = t is list or t is tuple or isinstance(src, (list, tuple))
    if many and src and type(src[0]) is _decode.Encoded:  # opened by the caller (open_items), who closes them
        if any(type(x) is not _decode.Encoded for x in src):
            raise InvalidArgumentError("a list of opened encoded images holds other items", argument="src")
        return list(src), False, None
    if many and src and is_encoded_item(src[0]) or not many and is_encoded_item(src):
        items, batch = _decode.open_items(src, name, max_pixels)
        return items, not many, batch
    if many and not host_only:
        if not src:
            raise ShapeError("the list of images is empty", argument="src")
        return [list_item(x, i, stream) for i, x in enumerate(src)], False, None
    if not host_only and not (is_tensor(src) and not src.is_cuda):  # CPU tensors: host arrays below
        ds = device_source(src, stream)
        if ds is not None:
            return [ArrayItem(ds, ds.view, None, True, ())], True, None
    a, kind = host_array(src, accepts)
    return [ArrayItem(a, a, kind, False, (a,))], True, None


_PIL_MODES = ("RGB", "RGBA", "L")


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


def list_item(item: Any, i: int, stream: Optional[int]) -> ArrayItem:
    """Item ``i`` of a list source: a YUV frame, a CUDA array or a host image."""
    if type(item) is np.ndarray:
        it: Optional[ArrayItem] = ArrayItem(item, item, None, False, (item,))
    elif type(item) is _yuv.YUVFrame:
        return FrameItem(item)
    else:
        ds = None if is_pil(item) or isinstance(item, np.ndarray) else device_source(item, stream)
        if ds is not None:
            it = ArrayItem(ds, ds.view, None, True, ())
        else:
            img, kind = as_array(item)
            img = base_array(img, "src")
            it = ArrayItem(img, img, kind, False, (img,)) if isinstance(img, np.ndarray) else None
    if it is None or it.src.ndim not in (2, 3):
        raise ShapeError(
            f"item {i} must be an (H, W, C) or (H, W) numpy.ndarray, got {getattr(item, 'shape', type(item).__name__)}",
            argument="src",
        )
    return it


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
    # RGB is packed: Pillow stores it RGBX, and the fast uint8 kernels read packed 3-byte pixels (read
    # in place, from_torchvision(ImageNet eval) on a 512x512 RGB image took the general path and ran
    # 2.7x slower than with the copy, thread CPU time, 1 thread, same run). The engine packs the image's
    # own memory (binding PackRGBX), GIL released: np.asarray's packing (tobytes) cost ~2.5x that.
    a = _pil_arrow_view(img)
    if a is not None and mode == "RGB":
        a = _packed_rgb(a) if a.size <= _native.limit("pack_max_bytes") else None  # else Pillow packs
    if a is None:
        a = np.asarray(img)  # one copy (tobytes): older Pillow, or an image Pillow cannot export
    return a  # "L": (H, W), a one-channel image


def _packed_rgb(rgbx: np.ndarray) -> np.ndarray:
    """The (H, W, 3) packed copy of an (H, W, 4) contiguous RGBX view, made by the engine."""
    h, w = rgbx.shape[:2]
    out = np.empty((h, w, 3), np.uint8)
    _native.call(_native.get().PackRGBX, id(rgbx), id(out), h, w)
    return out


class _ArrowView:
    """The NumPy view of an image's own memory; as the array's base it keeps the Arrow export
    (whose release runs when its capsule is freed) and the image alive."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, interface: dict, keep: Tuple[Any, ...]) -> None:
        self.__array_interface__ = interface
        self._keep = keep


_capsule_pointer: Any = None  # (PyCapsule_GetPointer, the ArrowArray struct), made on first use


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
    """An (H, W, 4) / (H, W) view of an RGBA, RGB (stored RGBX: the fourth byte unused) or L Pillow
    image's own pixels, read in place through Pillow's Arrow export (Pillow >= 11.2): for RGBA and L
    the layout np.asarray gives, without its copy (which is ~20% of a 512x512 pipeline call, cProfile).
    None where Pillow cannot export (older Pillow, an image in several memory blocks, other modes): the
    caller copies instead."""
    export = getattr(img, "__arrow_c_array__", None)
    if export is None:
        return None
    try:
        schema, capsule = export()
        arr = _arrow_array(capsule)
        w, h = img.size
        mode = img.mode
        if mode not in ("L", "RGBA", "RGB"):
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


