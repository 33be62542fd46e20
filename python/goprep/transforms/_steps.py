"""The geometric ops the converters share (each an ``Op``: ``(traced image, flavor) -> traced image``),
with the numerics their library uses for each input kind (``flavor``: "pil" for PIL images and NumPy
arrays, "tensor" for tensors).

The ops are small classes, not closures, so that a Converted pipeline pickles (into DataLoader workers
started with "spawn", say): it travels as its chain of ops and options."""

from __future__ import annotations

import numbers
import re
from types import SimpleNamespace
from typing import Any, Callable, Optional, Tuple

import numpy as np

from .. import _ops, _validate
from .._errors import PipelineError
from .._geometry import center_crop_geometry, parse_padding

_PIL_CODES = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
MODES = ("bilinear", "bicubic", "lanczos", "nearest", "nearest-exact")


def interp_name(mode: Any) -> str:
    """An InterpolationMode, PIL resample code or string, as a lowercase name."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        return _PIL_CODES.get(int(mode), str(mode))
    v = getattr(mode, "value", mode)
    if isinstance(v, int):
        return _PIL_CODES.get(v, str(v))
    return str(v).lower().replace("_", "-")


def interp_mode(argument: str, mode: Any) -> str:
    """``mode``'s name (see interp_name) if goprep resamples that way, else an InvalidArgumentError
    naming ``argument``."""
    return _validate.as_choice(argument, None if mode is None else interp_name(mode), MODES)


def _torchvision_lanczos() -> bool:
    """Whether torchvision resizes tensors with LANCZOS (v2's resize on CPU tensors, which torchvision
    runs from 0.27 on with PyTorch's mode="lanczos"); before that transformers' torchvision backend
    falls back to BICUBIC, with a warning, and torchvision's own v2 resize fails."""
    try:
        import torchvision
    except ImportError:  # no torchvision: no torchvision class to reproduce, only its config
        return True
    return tuple(int(p) for p in re.findall(r"\d+", torchvision.__version__)[:2]) >= (0, 27)


def lanczos_argument(ops: Any) -> Optional[str]:
    """The argument of the first LANCZOS Resize among ``ops`` (``"<name>.interpolation"``), or None."""
    return next((f"{op.name}.interpolation" for op in ops if isinstance(op, Resize) and op.mode == "lanczos"), None)


def refuse_device_lanczos(src: Any, argument: Optional[str]) -> None:
    """A PipelineError naming ``argument`` (a LANCZOS resize's; None: no lanczos, nothing to check) when
    ``src`` (an image or a list) holds a tensor outside the CPU: torchvision has no CUDA lanczos (v2
    raises) and transformers' torchvision backend falls back to BICUBIC there, while goprep's lanczos
    is the same on every device: a silent difference otherwise."""
    if argument is None:
        return
    items = src if isinstance(src, (list, tuple)) else [src]
    dev = next((x.device for x in items if getattr(getattr(x, "device", None), "type", "cpu") != "cpu"), None)
    if dev is not None:
        raise PipelineError(f"LANCZOS on a tensor on {dev}: torchvision resizes with lanczos on the CPU only "
                            "(transformers falls back to BICUBIC on other devices); pass CPU tensors", argument=argument)


def tv_size(h: int, w: int, size: Any, max_size: Any = None) -> Tuple[int, int]:
    """The size torchvision's resize gives an ``h x w`` image (goprep's resize rule)."""
    return _ops.resize_size(SimpleNamespace(height=h, width=w), size, max_size)  # type: ignore[arg-type]


def _norm_size(size: Any) -> Any:
    """A torchvision resize size with a 1-sequence as its int and a pair as a tuple of ints."""
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0])
    if isinstance(size, (list, tuple)):
        return (int(size[0]), int(size[1]))
    return size


class Resize:
    """A resize with the numerics its library uses for each input kind (an Op, see ``Op``).

    ``api``: on tensors, ``"v2"`` is ``torchvision.transforms.v2`` (and Hugging Face's torchvision
    backend): PyTorch's native uint8 kernels; ``"v1"`` is ``torchvision.transforms`` (and timm, which
    builds on it): the uint8 image converted to float32, resized, clamped (bicubic), rounded half to
    even, cast back (``torchvision.transforms._functional_tensor.resize``). ``size`` is torchvision's
    (an int for the shorter side, ``(h, w)``, or None with ``max_size``) or a function
    ``(h, w) -> (h, w)``. LANCZOS is Pillow's on PIL images and PyTorch's uint8 lanczos on v2's uint8
    tensors (``_lanczos``); ``hf``: transformers' torchvision backend, whose LANCZOS is BICUBIC where
    torchvision has no tensor lanczos."""

    def __init__(self, name: str, size: Any, interp: Any, antialias: Any, max_size: Any, api: str,
                 hf: bool = False) -> None:
        self.name, self.mode, self.api = name, interp_mode(f"{name}.interpolation", interp), api
        self.hf = hf
        self.size, self.max_size = _norm_size(size), max_size
        self.antialias = antialias
        # torchvision (v1 and v2): antialias=None is False for tensors (0.15-0.16's "warn" default
        # too); PIL images are antialiased whatever it says, as Pillow has no other resize.
        self.aa = antialias is not None and not (isinstance(antialias, str) and antialias == "warn") and bool(antialias)

    def out_size(self, h: int, w: int, prm: Any = None) -> Tuple[int, int]:
        return self.target(h, w)

    def target(self, h: int, w: int) -> Tuple[int, int]:
        if callable(self.size):
            return self.size(h, w)
        return tv_size(h, w, self.size, self.max_size)

    def __call__(self, img: Any, flavor: str) -> Any:
        h, w = img.height, img.width
        oh, ow = self.target(h, w)
        if (oh, ow) == (h, w):
            return img  # torchvision (both APIs, every input) and Pillow return the image as it is
        if flavor == "pil":
            if (img.channels == 2 or img.channels == 4 and tuple(img.cmap) != (0, 1, 2, 3)) and img.dtype == "u8" \
                    and not self.mode.startswith("nearest"):
                # Pillow resizes "RGBA" and "LA" premultiplied by alpha ("RGBa"/"La", then back); goprep does so
                # for a 4-channel image read as it is (the engine's premultiplied resize), not for 2 channels
                # or channels reordered before the resize
                raise PipelineError(
                    f"{self.name}: a {img.channels}-channel uint8 image gets Pillow's numerics here, and Pillow "
                    "resizes RGBA / LA premultiplied by alpha, which goprep reproduces only for RGBA as read; convert "
                    "it to RGB (or gray) first, e.g. img.convert('RGB') or goprep.cvt_color(img, 'rgba2rgb'), or pass a tensor")
            if self.mode.startswith("nearest"):
                kind, aa = "nearest-pil", False  # torchvision maps NEAREST and NEAREST_EXACT to Pillow's NEAREST
            else:
                kind, aa = self.mode, True
        else:
            kind, aa = self._tensor_kernel(img.dtype)
        return _ops.resize(img, (oh, ow), interpolation=kind, antialias=aa)

    def _tensor_kernel(self, dtype: str) -> Tuple[str, Any]:
        mode = self.mode
        if mode == "lanczos":
            return self._lanczos(dtype)
        if mode == "nearest":  # PyTorch's float32 index rule, for uint8 and float tensors alike
            return "nearest-torch", False
        if mode == "nearest-exact":
            return "nearest-exact", False
        if dtype != "u8":  # float32 tensors: both APIs run PyTorch's float kernels, which goprep's follow
            return mode, self.aa
        if self.api == "v2":
            # PyTorch's uint8 kernels, with and without antialias: equal bit for bit
            return mode, "torch" if self.aa else "torch-noaa"
        if self.aa:
            # v1 bilinear: the float path's result is within 1 level of any uint8 kernel whose weights
            # are non-negative (the rounding between the passes moves a value by at most 0.5); v1
            # bicubic goes through ``host``.
            return mode, "torch"
        # v1 without antialias computes PyTorch's float kernel and rounds once; goprep's uint8 bicubic
        # is the same formula in float32, rounded once, and OpenCV's INTER_LINEAR is within 1 level of
        # the float bilinear (non-negative weights; measured up to 1 level on ~12% of values).
        return mode, False

    def _lanczos(self, dtype: str) -> Tuple[str, Any]:
        """LANCZOS on a tensor of ``dtype``: v2's uint8 resize (PyTorch's uint8 lanczos, goprep's
        ``antialias="torch"``, equal bit for bit), else a PipelineError naming the argument that
        torchvision fails on or that goprep cannot reproduce exactly."""
        if self.api == "v1":
            raise PipelineError(
                "LANCZOS on a tensor: torchvision.transforms (v1) resizes tensors without antialias, which "
                "PyTorch's lanczos refuses ('Lanczos mode requires antialias=True'); PIL images convert (Pillow's "
                "LANCZOS), or use torchvision.transforms.v2", argument=f"{self.name}.interpolation")
        if not self.aa:
            raise PipelineError(
                f"{self.antialias!r} with LANCZOS on a tensor: torchvision raises 'InterpolationMode.LANCZOS "
                "requires antialias=True' (PIL images convert: Pillow's LANCZOS)", argument=f"{self.name}.antialias")
        if not _torchvision_lanczos():
            if self.hf:  # transformers' torchvision backend: BICUBIC instead, as the class does
                return "bicubic", "torch" if dtype == "u8" else True
            raise PipelineError("LANCZOS on a tensor: this torchvision (before 0.27) has no tensor lanczos",
                                argument=f"{self.name}.interpolation")
        if dtype != "u8":
            # PyTorch's float32 lanczos computes its weights in float32: goprep's (within 1e-5 of the
            # float64 evaluation) are up to 3.3e-5 from it on photos in [0, 1], and it gives every row of
            # a 1-column output the first row's value
            raise PipelineError(
                "LANCZOS on a float tensor: goprep's float32 lanczos is up to 3.3e-5 from PyTorch's float32 kernel "
                "(measured on photos in [0, 1]), over the 1e-5 goprep holds converters to; pass uint8 tensors "
                "or PIL images", argument=f"{self.name}.interpolation")
        return "lanczos", "torch"

    def host(self, flavor: str) -> Optional[Callable[[np.ndarray], np.ndarray]]:
        if flavor == "tensor" and getattr(self, "exact_torch", False):
            # set by a later colour op, which would stretch any rounding difference (see _random_color)
            from ._random_color import TorchResize

            return TorchResize(self)
        if flavor == "tensor" and self.api == "v1" and self.mode == "bicubic" and self.aa:
            return self._float_resize
        return None

    def _float_resize(self, a: np.ndarray) -> np.ndarray:
        """v1's tensor resize, outside the engine's fused pass: to float32, goprep's float32
        antialiased bicubic (PyTorch's ``interpolate(antialias=True)`` within 1e-5 of the range),
        clamp, round half to even, back to uint8."""
        f = self.float32(a)
        if a.dtype != np.uint8:  # a float32 tensor stays float, unclamped, as in torchvision
            return f
        np.clip(f, 0, 255, out=f)
        np.rint(f, out=f)
        return f.astype(np.uint8)

    def float32(self, a: np.ndarray) -> np.ndarray:
        """A NumPy ``(..., H, W, C)`` image as float32 (a copy), resized unrounded by the kernels
        PyTorch runs on float tensors (goprep's float32 ones)."""
        h, w = a.shape[-3], a.shape[-2]
        oh, ow = self.target(h, w)
        f = a.astype(np.float32)
        if (oh, ow) == (h, w):
            return f
        kind, aa = self._tensor_kernel("f32")
        return _ops.resize(f, (oh, ow), interpolation=kind, antialias=aa)


class CenterCrop:
    """torchvision's ``CenterCrop`` (zero padding where the crop is larger than the image, the window
    at ``int(round((H - h) / 2.0))``: goprep's ``center_crop``), or with a ``fill`` timm's
    ``CenterCropOrPad``, which pads the same way with that value, or with ``floor`` Hugging Face's,
    which pads as torchvision and puts the window at ``int((H - h) / 2.0)`` (truncated, not rounded)
    (an Op)."""

    def __init__(self, size: Any, fill: Any = 0, floor: bool = False) -> None:
        self.h, self.w = pair(size)
        self.fill, self.floor = fill, floor

    def out_size(self, h: int, w: int, prm: Any = None) -> Tuple[int, int]:
        return self.h, self.w

    def __call__(self, img: Any, flavor: str) -> Any:
        h, w = self.h, self.w
        if self.floor or not (isinstance(self.fill, numbers.Number) and self.fill == 0):
            img = _pad_to_crop(img, h, w, self.fill)
        if not self.floor:
            return _ops.center_crop(img, (h, w))
        H, W = img.height, img.width
        if (H, W) == (h, w):
            return img
        return _ops.crop(img, int((H - h) / 2.0), int((W - w) / 2.0), h, w)


class Pad:
    """torchvision's constant ``Pad`` (an Op)."""

    def __init__(self, padding: Any, fill: Any) -> None:
        self.padding, self.fill = padding, fill

    def out_size(self, h: int, w: int, prm: Any = None) -> Tuple[int, int]:
        left, top, right, bottom = parse_padding(self.padding)
        return h + top + bottom, w + left + right

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.pad(img, self.padding, value=self.fill)


class Cvt:
    """A channel reorder, ``goprep.cvt_color(img, code)`` (an Op)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def out_size(self, h: int, w: int, prm: Any = None) -> Tuple[int, int]:
        return h, w

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.cvt_color(img, self.code)


class Gray:
    """torchvision's ``Grayscale(num_output_channels)`` on 1-channel images, the only ones goprep can
    express (it has no RGB -> gray op) (an Op)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def out_size(self, h: int, w: int, prm: Any = None) -> Tuple[int, int]:
        return h, w

    def out_channels(self, c: int) -> int:
        return self.n

    def __call__(self, img: Any, flavor: str) -> Any:
        if img.channels != 1:
            raise PipelineError(
                f"Grayscale on a {img.channels}-channel image is not expressible in goprep (no RGB -> gray op); "
                "pass 1-channel images or convert beforehand"
            )
        return _ops.cvt_color(img, "gray2rgb") if self.n == 3 else img


def _pad_to_crop(img: Any, h: int, w: int, fill: Any) -> Any:
    """torchvision's (and timm's) padding before a center crop larger than the image
    (center_crop_geometry's), with ``fill``."""
    padding, _ = center_crop_geometry(img.height, img.width, h, w)
    return _ops.pad(img, padding, value=fill) if any(padding) else img


def pair(size: Any) -> Tuple[int, int]:
    """A torchvision crop size (an int, or a sequence of 1 or 2) as ``(h, w)``."""
    if isinstance(size, (list, tuple)):
        return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    return int(size), int(size)


