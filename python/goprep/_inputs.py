"""PIL images and torch tensors in, torch tensors out.

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

from ._errors import DTypeError, InvalidArgumentError, ShapeError

_PIL_MODES = ("RGB", "RGBA", "L")
OUTPUTS = ("numpy", "torch")


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_pil(x: Any) -> bool:
    m = sys.modules.get("PIL.Image")
    return m is not None and isinstance(x, m.Image)


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
        f = ctypes.pythonapi.PyCapsule_GetPointer
        f.restype, f.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        _capsule_pointer = (f, ctypes.POINTER(ArrowArray), ctypes.cast)
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


def to_output(res: np.ndarray, kind: Optional[str], chw: bool) -> Any:
    """The result for the caller: NumPy, or (``kind="torch"``) a tensor sharing its memory in
    torchvision's layout: a CHW result as it is, an HWC one as a channels-last (C, H, W) view."""
    if kind != "torch":
        return res
    torch = _torch()
    if torch is None:
        import torch  # output="torch" asked for it
    t = torch.from_numpy(res)
    return t if chw else t.movedim(-1, -3)


def out_array(out: Any, shape: Tuple[int, ...], chw: bool) -> Any:
    """``out=`` as the NumPy array the engine writes: a CPU tensor (pinned or not) of the result's
    torchvision-layout shape, whose memory is the result's C-contiguous layout."""
    if not is_tensor(out):
        return out
    if out.device.type != "cpu":
        raise InvalidArgumentError(f"is a {out.device.type} tensor; out= takes CPU tensors", argument="out")
    try:
        a = out.detach().numpy()
    except (RuntimeError, TypeError) as e:
        raise InvalidArgumentError(f"tensor layout cannot be written in place ({e})", argument="out") from None
    if a.shape == shape:
        return a
    if not chw and a.ndim == len(shape) and a.ndim in (3, 4):
        v = np.moveaxis(a, -3, -1)  # a (C, H, W) tensor whose memory is HWC (channels-last)
        if v.shape == shape and v.flags.c_contiguous:
            return v
    want = shape if chw else shape[:-3] + (shape[-1],) + shape[-3:-1]
    raise ShapeError(
        f"must be a tensor of shape {want} whose memory is the result's layout "
        f"({'contiguous' if chw else 'channels-last'}), got shape {tuple(out.shape)} strides {out.stride()}",
        argument="out",
    )
