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
    a = np.asarray(img)  # one copy: Pillow exposes no buffer of its own memory
    return a[..., None] if a.ndim == 2 else a


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
    return np.moveaxis(a, -3, -1)


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
