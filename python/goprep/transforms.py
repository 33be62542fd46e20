"""Converters from torchvision, Hugging Face and timm preprocessing to fused goprep pipelines.

``from_torchvision(t)``, ``from_hf(processor_or_config)`` and ``from_timm(data_config)`` return a
``Converted`` pipeline that computes what the original computes, in one pass where goprep can:

- the torchvision chain is read into goprep ops (resize with torchvision's sizing, center_crop with
  its rounding, pad, the dtype conversion and Normalize folded into one ``normalize``);
- the resampling follows the numerics the original uses for the input it gets: on PIL images (and
  NumPy arrays) Pillow's (always antialiased, bilinear/bicubic; ``nearest-pil``), on tensors
  torchvision's tensor kernels, which differ between ``torchvision.transforms`` (v1: the uint8 image
  is resized in float and rounded) and ``torchvision.transforms.v2`` (PyTorch's native uint8
  kernels, goprep's ``antialias="torch"`` / ``"torch-noaa"`` and ``nearest-torch``), with
  ``antialias=None`` meaning False on tensors as in torchvision; v1's antialiased bicubic on tensors
  runs as three steps (float32 resize, rounding, then the rest fused). Hugging Face's default
  (torchvision-backed) processors work on tensors, so their pipelines always use the tensor
  numerics; their ``*Pil`` processors the PIL ones.

Importing this module imports none of torch, torchvision, transformers or timm: transform objects are
read by their attributes, and a config dict needs no library at all.
"""

from __future__ import annotations

import math
import numbers
import os
import warnings
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from . import _ops, _validate
from ._errors import PipelineError
from ._geometry import center_crop_geometry
from ._inputs import is_pil, is_tensor
from ._pipeline import pipeline

__all__ = ["Converted", "from_torchvision", "from_hf", "from_timm"]

# One op of the geometric (uint8) stage: (traced image, "pil" | "tensor") -> traced image. An op may
# also have a ``host(flavor)`` method returning a NumPy function to run outside the engine for that
# flavor (or None): the chain is then split there (see Converted._pipe).
Op = Callable[[Any, str], Any]


@dataclass
class _Chain:
    """A converted chain: geometric ops, then at most one affine float stage
    ``(x * scale - mean) / std`` (None when the result stays uint8)."""

    ops: List[Op] = field(default_factory=list)
    scale: Optional[float] = None  # set by the float conversion (ToTensor, ToDtype, ...)
    # torchvision's conversions scale by the source's dtype (1/255 for uint8, 1 for float32, which
    # they leave as it is); Hugging Face's rescale multiplies whatever it gets by its factor
    scale_by_dtype: bool = False
    mean: Optional[List[float]] = None
    std: Optional[List[float]] = None
    to_tensor: bool = False  # the original returns a tensor
    notes: List[str] = field(default_factory=list)

    def geometric(self, name: str, op: Op) -> None:
        if self.scale is not None:
            raise PipelineError(
                f"{name} after the float conversion (ToTensor/ToDtype) cannot be fused: goprep resamples uint8 "
                f"data before converting it; move {name} before the conversion"
            )
        self.ops.append(op)

    def to_float(self, name: str, scale: float, by_dtype: bool = False) -> None:
        if self.scale is not None:
            raise PipelineError(f"{name}: the image is already float (a second conversion)")
        self.scale, self.scale_by_dtype = scale, by_dtype
        self.to_tensor = True

    def normalize(self, name: str, mean: List[float], std: List[float]) -> None:
        if self.scale is None:
            raise PipelineError(f"{name} needs a float image: put ToTensor/ToDtype(float32, scale=True) before it")
        m, s = list(mean), list(std)
        bad = _mismatch(m, s)
        if bad:
            raise PipelineError(f"{name}: {bad}")
        if self.mean is None or self.std is None:
            self.mean, self.std = m, s
            return
        lengths = {len(self.mean), len(self.std), len(m), len(s)} - {1}
        if len(lengths) > 1:
            raise PipelineError(
                f"{name}: {max(len(m), len(s))} channel values after a Normalize of {max(len(self.mean), len(self.std))} "
                "cannot broadcast (torchvision fails on the first call)"
            )
        # (x - M) / S then (. - m) / s  ==  (x - (M + m*S)) / (S*s)
        n = max(len(self.mean), len(self.std), len(m), len(s))
        M, S = _bcast(self.mean, n), _bcast(self.std, n)
        m, s = _bcast(m, n), _bcast(s, n)
        self.mean = [M[i] + m[i] * S[i] for i in range(n)]
        self.std = [S[i] * s[i] for i in range(n)]


def _mismatch(mean: List[float], std: List[float]) -> Optional[str]:
    """Why ``mean`` and ``std`` cannot broadcast (torchvision fails on the first call), or None."""
    if len(mean) != len(std) and 1 not in (len(mean), len(std)):
        return f"mean has {len(mean)} values and std {len(std)}; they cannot broadcast"
    return None


def _bcast(v: List[float], n: int) -> List[float]:
    return v * n if len(v) == 1 else v


class Converted:
    """A fused goprep pipeline converted from another library's preprocessing (see the module doc).

    Call it like a ``goprep.pipeline``: a PIL image, a NumPy ``(H, W, C)`` array, a CPU tensor
    ``(C, H, W)`` / ``(N, C, H, W)``, or a list of them; ``out=`` as for pipelines. ``notes`` lists
    what the conversion skipped (eval-mode no-ops)."""

    def __init__(self, chain: _Chain, source: str, flavor: Optional[str] = None, device: str = "auto",
                 clip: bool = False) -> None:
        self._chain = chain
        self._source = source
        self._flavor = flavor  # fixed numerics ("pil"/"tensor"), or None: follow the input
        self._device = device
        self._clip = clip  # torchvision's VideoClassification layout (see _call_clip)
        self._convert_rgb = False  # Hugging Face's do_convert_rgb (see _to_rgb)
        self._hf_video = False  # Hugging Face's video layout (Vivit: see _call_hf_video)
        self._pipes: Dict[str, Any] = {}
        self.notes = list(chain.notes)

    def __repr__(self) -> str:
        return f"<goprep.transforms.Converted from {self._source}>"

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled as the converted chain and options; the compiled pipelines are rebuilt on the first
        call in the receiving process (as for ``goprep.pipeline``)."""
        state = dict(self.__dict__)
        state["_pipes"] = {}
        return state

    def _fused(self, ops: List[Op], flavor: str, last: bool, output: Optional[str], device: str, stage: str = "") -> Any:
        c = self._chain

        def fn(img: Any) -> Any:
            for op in ops:
                img = op(img, flavor)
            if last and c.scale is not None:
                n = img.channels
                mean = _bcast(c.mean, n) if c.mean is not None else [0.0] * n
                std = _bcast(c.std, n) if c.std is not None else [1.0] * n
                # scale always given: normalize's check for a 0-255 mean is for hand-written calls
                scale = (1 / 255 if img.dtype == "u8" else 1.0) if c.scale_by_dtype else c.scale
                img = _ops.normalize(img, mean=mean, std=std, scale=scale)
            return img

        fn.__qualname__ = f"converted<{self._source}>{stage}"
        return pipeline(fn, device=device, output=output)

    def _pipe(self, flavor: str) -> Any:
        p = self._pipes.get(flavor)
        if p is None:
            c = self._chain
            # Split the ops where one runs outside the engine for this flavor (v1's float resize).
            segments: List[List[Op]] = [[]]
            hosts: List[Callable[[np.ndarray], np.ndarray]] = []
            for op in c.ops:
                host = getattr(op, "host", None)
                h = host(flavor) if host is not None else None
                if h is None:
                    segments[-1].append(op)
                else:
                    hosts.append(h)
                    segments.append([])
            if not hosts:
                p = self._fused(segments[0], flavor, True, "torch" if c.to_tensor else None, self._device)
            else:
                p = _Staged(self, segments, hosts, flavor)
            self._pipes[flavor] = p
        return p

    def _call_clip(self, src: Any, out: Any) -> Any:
        """torchvision's ``VideoClassification``: a ``(T, C, H, W)`` or ``(B, T, C, H, W)`` tensor, its
        frames run as one batch, the result viewed as ``(C, T, h, w)`` / ``(B, C, T, h, w)`` (the
        preset's permute: a view, as there)."""
        if out is not None:
            raise PipelineError("is not supported by a VideoClassification preset (its result is a permuted view)",
                                argument="out")
        if not is_tensor(src) or src.ndim not in (4, 5):
            what = f"a {src.ndim}-D tensor" if is_tensor(src) else type(src).__name__
            raise PipelineError(f"VideoClassification takes a (T, C, H, W) or (B, T, C, H, W) video tensor, as "
                                f"torchvision's preset does; got {what}", argument="src")
        vid = src[None] if src.ndim == 4 else src
        n, t, c, h, w = vid.shape
        y = self._pipe("tensor")(vid.reshape(n * t, c, h, w))
        y = y.view(n, t, *y.shape[1:]).permute(0, 2, 1, 3, 4)
        return y[0] if src.ndim == 4 else y

    def _call_hf_video(self, src: Any, out: Any) -> Any:
        """Vivit's ``pixel_values`` layout: one image is a one-frame video ``(1, 1, C, H, W)``, a list of
        images one video ``(1, T, C, H, W)`` (its ``make_batched``); the frames run as one batch."""
        if out is not None:
            raise PipelineError("is not supported by a video processor's pipeline (its result is a view)", argument="out")
        if isinstance(src, (list, tuple)):
            if not src or not all(is_pil(x) or getattr(x, "ndim", 0) == 3 for x in src):
                raise PipelineError("a video processor takes an image or a list of frames (PIL images or 3-D "
                                    "arrays / tensors); a list of videos is not supported", argument="src")
            return self._pipe(self._flavor or "pil")(list(src))[None]
        if not (is_pil(src) or getattr(src, "ndim", 0) == 3):
            raise PipelineError("a video processor takes an image or a list of frames (PIL images or 3-D arrays / "
                                "tensors), as one video", argument="src")
        return self._pipe(self._flavor or "pil")(src)[None, None]

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if self._clip:
            return self._call_clip(src, out)
        if getattr(self, "_hf_video", False):
            return self._call_hf_video(src, out)
        if self._convert_rgb:
            how = self._flavor or "tensor"
            src = [_to_rgb(x, how) for x in src] if isinstance(src, (list, tuple)) else _to_rgb(src, how)
        flavor = self._flavor
        if flavor is None:
            first = src[0] if isinstance(src, (list, tuple)) and src else src
            flavor = "tensor" if is_tensor(first) else "pil"
        return self._pipe(flavor)(src, out=out)


def _is_png(x: Any) -> bool:
    """Whether ``x`` is an encoded PNG source (bytes, a 1-D uint8 array or a path) for goprep.decode."""
    from . import _inputs

    if not _inputs.is_encoded_item(x):
        return False
    if isinstance(x, (str, os.PathLike)):
        try:
            with open(x, "rb") as f:
                head = f.read(8)
        except OSError:
            return False  # goprep.decode reports it
    else:
        head = bytes(memoryview(x)[:8]) if not isinstance(x, np.ndarray) else x[:8].tobytes()
    return head == b"\x89PNG\r\n\x1a\n"


def _to_rgb(img: Any, backend: str = "pil") -> Any:
    """Hugging Face's ``do_convert_rgb``. A PIL image that is not RGB: transparency (an alpha band, or a
    palette's ``transparency``) composited onto white, then ``convert("RGB")``. A NumPy ``(H, W)`` /
    ``(H, W, 1)`` array or a tensor with 1 channel: the channel repeated; with 4 channels (uint8): the
    colour composited onto white by its alpha, as the class's backend does it (``backend``: ``"pil"``,
    transformers' NumPy ``convert_to_rgb``, rounded; ``"tensor"``, the torchvision backend's, in float32
    and truncated by ``to_dtype``). Anything else as it is."""
    if _is_png(img):
        # An encoded PNG whose mode is not RGB (alpha, palette, gray) is what Hugging Face composites onto
        # white after opening it with Pillow: the same here, through Pillow. JPEGs stay encoded: goprep
        # decodes them equal to Pillow's convert("RGB"), which is convert_to_rgb for them.
        import io

        from PIL import Image

        with Image.open(img if isinstance(img, (str, os.PathLike)) else io.BytesIO(bytes(img))) as im:
            if im.mode == "RGB":
                return img  # convert_to_rgb leaves RGB as it is: goprep decodes it, equal to Pillow
            im.load()
            return _to_rgb(im, backend)  # a new image: the composite
    if is_tensor(img):
        if img.ndim == 2:
            img = img[None]
        if img.ndim >= 3 and img.shape[-3] in (1, 4):
            a = _to_rgb(img.movedim(-3, -1).cpu().numpy(), backend)
            import torch

            return torch.from_numpy(np.ascontiguousarray(a)).movedim(-1, -3).to(img.device)
        return img
    if isinstance(img, np.ndarray):
        if img.ndim == 2:
            img = img[:, :, None]
        if img.ndim < 3 or img.shape[-1] not in (1, 4):
            return img
        if img.shape[-1] == 1:
            return np.repeat(img, 3, axis=-1)
        if img.dtype != np.uint8:
            raise PipelineError(f"do_convert_rgb on a 4-channel {img.dtype} image: goprep composites uint8 RGBA only",
                                argument="src")
        if backend == "pil":  # transformers.image_transforms.convert_to_rgb (float64, np.round)
            alpha = img[..., 3:4] / 255
            return np.round(alpha * img[..., :3] + (1 - alpha) * 255).astype(np.uint8)
        f = img.astype(np.float32) / np.float32(255)  # TorchvisionBackend.convert_to_rgb
        rgb = f[..., :3] * f[..., 3:] + (np.float32(1) - f[..., 3:])
        return (rgb * np.float32(255 + 1 - 1e-3)).astype(np.uint8)  # tvF.to_dtype(uint8, scale=True)
    if not (is_pil(img) and img.mode != "RGB"):
        return img
    from PIL import Image

    if "A" in img.getbands() or img.info.get("transparency") is not None:
        rgba = img.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    return img.convert("RGB")


class _Staged:
    """A converted chain that cannot run as one engine pass for its flavor: fused segments with NumPy
    steps between them (``hosts``), each segment's result taken as NumPy HWC. Used for
    ``torchvision.transforms`` (v1) ``Resize(bicubic, antialias=True)`` on tensors, which resizes in
    float and rounds once: no fused uint8 kernel is within 1 level of that (they clamp to [0, 255]
    between the passes; measured up to 14 levels apart)."""

    def __init__(self, conv: Converted, segments: List[List[Op]], hosts: List[Callable[[np.ndarray], np.ndarray]], flavor: str):
        self._conv = conv
        self._hosts = hosts
        self._flavor = flavor
        self._inner = [
            conv._fused(ops, flavor, False, "numpy", "cpu", f"[step {i + 1}]") for i, ops in enumerate(segments[:-1])
        ]
        self._last_ops = segments[-1]
        self._last: Dict[Optional[str], Any] = {}

    def _head(self, x: Any) -> np.ndarray:
        a = self._inner[0](x)
        for i, host in enumerate(self._hosts):
            a = host(a)
            if i + 1 < len(self._inner):
                a = self._inner[i + 1](a)
        return a

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        c = self._conv._chain
        if isinstance(src, (list, tuple)):
            first = src[0] if src else None
            mid: Any = [self._head(x) for x in src]  # images of different sizes: one by one
        else:
            first, mid = src, self._head(src)
        # what the fused pipeline's output=None gives: tensors for tensors, NumPy otherwise
        output = "torch" if c.to_tensor or is_tensor(first) else None
        p = self._last.get(output)
        if p is None:
            p = self._last[output] = self._conv._fused(
                self._last_ops, self._flavor, True, output, self._conv._device, f"[step {len(self._inner) + 1}]"
            )
        return p(mid, out=out)


# ---------------------------------------------------------------------------------------------
# ops shared by the converters

_PIL_CODES = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
_MODES = ("bilinear", "bicubic", "nearest", "nearest-exact")


def _interp_name(mode: Any) -> str:
    """An InterpolationMode, PIL resample code or string, as a lowercase name."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        return _PIL_CODES.get(int(mode), str(mode))
    v = getattr(mode, "value", mode)
    if isinstance(v, int):
        return _PIL_CODES.get(v, str(v))
    return str(v).lower().replace("_", "-")


def _norm_size(size: Any) -> Any:
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0])
    if isinstance(size, (list, tuple)):
        return (int(size[0]), int(size[1]))
    return size


class _Resize:
    """A resize with the numerics its library uses for each input kind (an Op, see ``Op``).

    ``api``: on tensors, ``"v2"`` is ``torchvision.transforms.v2`` (and Hugging Face's torchvision
    backend): PyTorch's native uint8 kernels; ``"v1"`` is ``torchvision.transforms`` (and timm, which
    builds on it): the uint8 image converted to float32, resized, clamped (bicubic), rounded half to
    even, cast back (``torchvision.transforms._functional_tensor.resize``). ``size`` is torchvision's
    (an int for the shorter side, ``(h, w)``, or None with ``max_size``) or a function
    ``(h, w) -> (h, w)``."""

    def __init__(self, name: str, size: Any, interp: Any, antialias: Any, max_size: Any, api: str) -> None:
        mode = _interp_name(interp)
        if mode not in _MODES:
            raise PipelineError(
                f"{name}: interpolation {mode!r} is not supported by goprep (bilinear, bicubic, nearest, nearest-exact)"
            )
        self.name, self.mode, self.api = name, mode, api
        self.size, self.max_size = _norm_size(size), max_size
        self.antialias = antialias
        # torchvision (v1 and v2): antialias=None is False for tensors (0.15-0.16's "warn" default
        # too); PIL images are antialiased whatever it says, as Pillow has no other resize.
        self.aa = antialias is not None and not (isinstance(antialias, str) and antialias == "warn") and bool(antialias)

    def target(self, h: int, w: int) -> Tuple[int, int]:
        if callable(self.size):
            return self.size(h, w)
        return _ops.resize_size(SimpleNamespace(height=h, width=w), self.size, self.max_size)  # type: ignore[arg-type]

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

    def host(self, flavor: str) -> Optional[Callable[[np.ndarray], np.ndarray]]:
        if flavor == "tensor" and self.api == "v1" and self.mode == "bicubic" and self.aa:
            return self._float_resize
        return None

    def _float_resize(self, a: np.ndarray) -> np.ndarray:
        """v1's tensor resize, outside the engine's fused pass: to float32, goprep's float32
        antialiased bicubic (PyTorch's ``interpolate(antialias=True)`` within 1e-5 of the range),
        clamp, round half to even, back to uint8."""
        h, w = a.shape[-3], a.shape[-2]
        oh, ow = self.target(h, w)
        if (oh, ow) == (h, w):
            return a
        if a.dtype != np.uint8:  # a float32 tensor stays float, unclamped, as in torchvision
            return _ops.resize(a, (oh, ow), interpolation="bicubic", antialias=True)
        f = _ops.resize(a.astype(np.float32), (oh, ow), interpolation="bicubic", antialias=True)
        np.clip(f, 0, 255, out=f)
        np.rint(f, out=f)
        return f.astype(np.uint8)


# The ops below are small classes, not closures, so that a Converted pipeline pickles (into
# DataLoader workers started with "spawn", say): it travels as its chain of ops and options.


class _CenterCrop:
    """torchvision's ``CenterCrop`` (zero padding where the crop is larger than the image, the window
    at ``int(round((H - h) / 2.0))``: goprep's ``center_crop``), or with a ``fill`` timm's
    ``CenterCropOrPad``, which pads the same way with that value (an Op)."""

    def __init__(self, size: Any, fill: Any = 0) -> None:
        self.h, self.w = _pair(size)
        self.fill = fill

    def __call__(self, img: Any, flavor: str) -> Any:
        if not (isinstance(self.fill, numbers.Number) and self.fill == 0):
            img = _pad_to_crop(img, self.h, self.w, self.fill)
        return _ops.center_crop(img, (self.h, self.w))


class _Flip:
    """``RandomHorizontalFlip(p=1)`` / ``RandomVerticalFlip(p=1)`` (an Op)."""

    def __init__(self, horizontal: bool) -> None:
        self.horizontal = horizontal

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.flip(img, horizontal=self.horizontal, vertical=not self.horizontal)


class _Pad:
    """torchvision's constant ``Pad`` (an Op)."""

    def __init__(self, padding: Any, fill: Any) -> None:
        self.padding, self.fill = padding, fill

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.pad(img, self.padding, value=self.fill)


class _Cvt:
    """A channel reorder, ``goprep.cvt_color(img, code)`` (an Op)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __call__(self, img: Any, flavor: str) -> Any:
        return _ops.cvt_color(img, self.code)


class _Gray:
    """torchvision's ``Grayscale(num_output_channels)`` on 1-channel images, the only ones goprep can
    express (it has no RGB -> gray op) (an Op)."""

    def __init__(self, n: int) -> None:
        self.n = n

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


class _FloorCenterCrop:
    """Hugging Face's center crop: zero padding as torchvision, then the window at
    ``int((H - h) / 2.0)`` (truncated, not rounded) (an Op)."""

    def __init__(self, h: int, w: int) -> None:
        self.h, self.w = h, w

    def __call__(self, img: Any, flavor: str) -> Any:
        h, w = self.h, self.w
        img = _pad_to_crop(img, h, w, 0)
        H, W = img.height, img.width
        if (H, W) == (h, w):
            return img
        return _ops.crop(img, int((H - h) / 2.0), int((W - w) / 2.0), h, w)


def _pair(size: Any) -> Tuple[int, int]:
    if isinstance(size, (list, tuple)):
        return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    return int(size), int(size)


# ---------------------------------------------------------------------------------------------
# argument checks: a bad config raises PipelineError naming the field (``.argument``), not a raw
# TypeError/KeyError from deep inside the conversion or the first call


def _pos_int(name: str, v: Any) -> int:
    if not _validate.is_int(v) or v <= 0:
        raise PipelineError(f"must be a positive int, got {v!r}", argument=name)
    return int(v)


def _pos_float(name: str, v: Any) -> float:
    if not isinstance(v, numbers.Real) or isinstance(v, bool) or not math.isfinite(float(v)) or float(v) <= 0:
        raise PipelineError(f"must be a finite positive number, got {v!r}", argument=name)
    return float(v)


def _floats(v: Any, name: str, nonzero: bool = False, channels: Optional[int] = None) -> List[float]:
    """One or more finite numbers (a number, a sequence, or a tensor/array of them); with
    ``channels``, 1 or that many."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    vals = [v] if isinstance(v, numbers.Real) else v
    ok = isinstance(vals, (list, tuple)) and len(vals) > 0
    ok = ok and all(isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x)) for x in vals)
    if not ok:
        raise PipelineError(f"must be a finite number or a non-empty sequence of them, got {v!r}", argument=name)
    out = [float(x) for x in vals]
    if nonzero and any(x == 0 for x in out):
        raise PipelineError(f"must not contain 0, got {v!r}", argument=name)
    if channels is not None and len(out) not in (1, channels):
        raise PipelineError(f"needs 1 or {channels} values (one per channel), got {len(out)}", argument=name)
    return out


def _int_or_hw(name: str, v: Any) -> Tuple[int, int]:
    """An int (a square) or an ``(h, w)`` pair of positive ints."""
    if _validate.is_int(v):
        n = _pos_int(name, v)
        return n, n
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return _pos_int(name, v[0]), _pos_int(name, v[1])
    raise PipelineError(f"must be a positive int or a (height, width) pair, got {v!r}", argument=name)


# ---------------------------------------------------------------------------------------------
# torchvision


def from_torchvision(t: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing what the torchvision transform ``t`` computes: a v1 or v2
    ``Compose`` (or ``nn.Sequential``) of, or a single, ``Resize``, ``CenterCrop``, ``Pad``,
    ``ToTensor``, ``PILToTensor``, ``ToImage``, ``ToDtype``, ``ConvertImageDtype``, ``Normalize``,
    ``Grayscale`` (on 1-channel images), ``RandomHorizontalFlip``/``RandomVerticalFlip`` with
    ``p`` 0 or 1, and timm's eval ``ResizeKeepRatio`` and ``MaybeToTensor``. An empty ``Compose`` is
    the identity (a copy). Eval-mode no-ops are skipped and listed in ``.notes``; anything else raises
    ``goprep.PipelineError`` naming the transform, at conversion, or at the first call where it
    depends on the input (``Grayscale`` on a multi-channel image).

    The model weights' presets convert too: ``from_torchvision(ResNet50_Weights.DEFAULT.transforms())``
    or the weights entry itself (``from_torchvision(ResNet50_Weights.DEFAULT)``), for
    ``ImageClassification``, ``SemanticSegmentation``, ``ObjectDetection`` and
    ``VideoClassification`` (whose clip layout is kept: ``(T, C, H, W)`` or ``(B, T, C, H, W)`` tensors
    in, ``(C, T, h, w)`` / ``(B, C, T, h, w)`` out, the frames run as one batch)."""
    if _is_weights(t):
        t = t.transforms()
    chain = _Chain()
    _tv_walk(t, chain)
    for n in chain.notes:
        warnings.warn(f"goprep.transforms.from_torchvision: {n}", stacklevel=2)
    clip = type(t).__name__ == "VideoClassification" and _is_preset(t)
    return Converted(chain, f"torchvision {type(t).__name__}", device=device, clip=clip)


def _is_weights(t: Any) -> bool:
    """A torchvision ``WeightsEnum`` entry (``ResNet50_Weights.IMAGENET1K_V2``), found by its shape:
    this module imports no torchvision."""
    return callable(getattr(t, "transforms", None)) and isinstance(getattr(t, "meta", None), dict) and hasattr(t, "url")


def _is_preset(t: Any) -> bool:
    """One of torchvision's weights presets (``torchvision.transforms._presets``)."""
    return str(getattr(type(t), "__module__", "")).startswith("torchvision.transforms._presets")


def _tv_preset(t: Any, chain: _Chain) -> None:
    """A weights preset's ``forward``, step for step: ``F.resize`` (v1, on tensors too), ``F.center_crop``,
    ``pil_to_tensor`` + ``convert_image_dtype(float)`` (1/255 on uint8, float input kept), ``F.normalize``."""
    name = type(t).__name__
    if name == "ObjectDetection":  # the image scaled to [0, 1], nothing else
        chain.to_float(name, 1 / 255, by_dtype=True)
        return
    if name == "OpticalFlow":
        raise PipelineError("OpticalFlow takes an image pair and returns a pair; goprep.transforms.from_torchvision "
                            "converts single-image transforms (use one ObjectDetection-like pipeline per image)")
    if name not in ("ImageClassification", "SemanticSegmentation", "VideoClassification"):
        raise PipelineError(f"the torchvision preset {name} is not supported by goprep.transforms.from_torchvision")
    # VideoClassification hard-codes antialias=False (torchvision keeps its trained models' numbers)
    antialias = False if name == "VideoClassification" else t.antialias
    if t.resize_size is not None:  # SemanticSegmentation(resize_size=None) does not resize
        chain.geometric(name, _Resize(name, t.resize_size, t.interpolation, antialias, None, "v1"))
    if name != "SemanticSegmentation":
        chain.geometric(name, _CenterCrop(t.crop_size))
    chain.to_float(name, 1 / 255, by_dtype=True)
    chain.normalize(name, _floats(t.mean, f"{name}.mean"), _floats(t.std, f"{name}.std", nonzero=True))


_NOOPS = ("Identity", "ToPureTensor", "SanitizeBoundingBoxes", "ClampBoundingBoxes", "ClampKeyPoints")


def _tv_api(t: Any) -> str:
    """Which torchvision API a transform's resize follows on tensors: ``"v2"`` for
    ``torchvision.transforms.v2`` classes (and subclasses), ``"v1"`` for ``torchvision.transforms``
    ones and timm's (which call ``torchvision.transforms.functional``)."""
    for cls in type(t).__mro__:
        mod = getattr(cls, "__module__", None) or ""
        if mod == "torchvision.transforms.v2" or mod.startswith("torchvision.transforms.v2."):
            return "v2"
        if mod.startswith("torchvision.transforms") or mod.startswith("timm."):
            return "v1"
    return "v2"


def _tv_walk(t: Any, chain: _Chain) -> None:
    name = type(t).__name__
    if name in ("Compose", "Sequential"):
        # torchvision's Compose([]) (and an empty nn.Sequential) returns its input: an identity.
        subs = t.transforms if hasattr(t, "transforms") else list(t)
        for sub in subs:
            _tv_walk(sub, chain)
        return
    if name in _NOOPS:
        chain.notes.append(f"skipped {name} (no effect on an image)")
        return
    if _is_preset(t):
        _tv_preset(t, chain)
        return
    p = getattr(t, "p", None)
    if name in ("RandomHorizontalFlip", "RandomVerticalFlip", "RandomGrayscale", "RandomApply", "RandomErasing",
                "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
                "RandomEqualize", "RandomPhotometricDistort") and p == 0:
        chain.notes.append(f"skipped {name}(p=0) (never applied)")
        return
    if name in ("RandomHorizontalFlip", "RandomVerticalFlip") and p == 1:
        chain.geometric(name, _Flip(name == "RandomHorizontalFlip"))
        return
    if name == "Resize":
        op = _Resize(name, t.size, t.interpolation, getattr(t, "antialias", True), t.max_size, _tv_api(t))
        chain.geometric(name, op)
    elif name == "CenterCrop":
        chain.geometric(name, _CenterCrop(t.size))
    elif name == "CenterCropOrPad":  # timm's (crop_mode="border")
        if getattr(t, "padding_mode", "constant") != "constant":
            raise PipelineError(f"CenterCropOrPad(padding_mode={t.padding_mode!r}) is not supported by goprep (constant only)")
        chain.geometric(name, _CenterCrop(t.size, t.fill))
    elif name == "ResizeKeepRatio":  # timm's
        if getattr(t, "random_scale_prob", 0) or getattr(t, "random_aspect_prob", 0):
            raise PipelineError("ResizeKeepRatio with random scaling is a training transform")
        chain.geometric(name, _keep_ratio_op(_pair(t.size), t.interpolation, float(t.longest)))
    elif name == "Pad":
        if t.padding_mode != "constant":
            raise PipelineError(f"Pad(padding_mode={t.padding_mode!r}) is not supported by goprep (constant only)")
        fill = t.fill
        if isinstance(fill, dict):  # v2: a fill per input type
            fill = next((v for k, v in fill.items() if getattr(k, "__name__", "") in ("Image", "Tensor")), 0)
            fill = 0 if fill is None else fill
        chain.geometric(name, _Pad(t.padding, fill))
    elif name == "Grayscale":
        chain.geometric(name, _Gray(int(t.num_output_channels)))
    elif name in ("ToTensor", "MaybeToTensor"):  # MaybeToTensor: timm's ToTensor that passes tensors through
        chain.to_float(name, 1 / 255, by_dtype=True)
    elif name in ("PILToTensor", "ToImage"):
        chain.to_tensor = True
    elif name in ("ToDtype", "ConvertImageDtype"):
        dtype = t.dtype
        if isinstance(dtype, dict):
            dtype = next((v for k, v in dtype.items() if getattr(k, "__name__", "") in ("Image", "Tensor")), None)
        dname = str(dtype)
        scale = True if name == "ConvertImageDtype" else bool(getattr(t, "scale", False))
        if dname == "torch.uint8":
            chain.notes.append(f"skipped {name}(torch.uint8) (the image is uint8 already)")
            return
        if dname != "torch.float32":
            raise PipelineError(f"{name}({dname}) is not supported by goprep (float32 only)")
        chain.to_float(name, 1 / 255 if scale else 1.0, by_dtype=scale)
    elif name == "Normalize":
        chain.normalize(name, _floats(t.mean, f"{name}.mean"), _floats(t.std, f"{name}.std", nonzero=True))
    else:
        raise PipelineError(f"{name} is not supported by goprep.transforms.from_torchvision")


# ---------------------------------------------------------------------------------------------
# Hugging Face

_HF_SIZE_KEYS = ("height", "width", "shortest_edge", "longest_edge", "max_height", "max_width")


# Processor types (of those goprep covers) whose int ``size`` is a square: transformers'
# ``default_to_square = True``, its base class's default. CLIP, SigLIP and ConvNeXt set it False (the
# shorter side), and goprep reads any other type's int that way too.
_HF_SQUARE = ("ViT", "DeiT", "Beit")


def _hf_size(v: Any, square: bool) -> Dict[str, int]:
    """A processor's ``size`` as a dict of positive ints: an int is ``shortest_edge`` (or a square
    for ``square`` kinds), a pair ``(height, width)``; None entries (unset keys of a SizeDict) are
    dropped."""
    if _validate.is_int(v):
        n = _pos_int("size", v)
        return {"height": n, "width": n} if square else {"shortest_edge": n}
    if isinstance(v, (list, tuple)) and len(v) == 2:
        return {"height": _pos_int("size", v[0]), "width": _pos_int("size", v[1])}
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if x is None:
                continue
            if k not in _HF_SIZE_KEYS:
                raise PipelineError(f"key {k!r} is not supported by goprep (one of {', '.join(_HF_SIZE_KEYS)})", argument="size")
            out[str(k)] = _pos_int(f"size[{k!r}]", x)
        return out
    raise PipelineError(f"must be an int, a (height, width) pair or a dict such as {{'shortest_edge': 224}}, got {v!r}",
                        argument="size")


# What from_hf reads: the generic resize / center-crop / rescale / normalize path.
_HF_READ = frozenset({"do_resize", "size", "resample", "do_center_crop", "crop_size", "do_rescale", "rescale_factor",
                      "do_normalize", "image_mean", "image_std", "default_to_square", "do_convert_rgb"})
# Keys read for one class only, with that class's meaning (by _hf_base_name).
_HF_CLASS_KEYS = {
    "ConvNext": frozenset({"crop_pct"}),  # shorter side se / crop_pct, then a crop (below 384)
    "PoolFormer": frozenset({"crop_pct"}),  # the shorter side (or a square's side) / crop_pct
    "MobileViT": frozenset({"do_flip_channel_order"}),  # RGB -> BGR after the rescale; never normalises
    "EfficientNet": frozenset({"rescale_offset", "include_top"}),  # x * f - 1; a second division by std
    "PPLCNet": frozenset({"resize_short", "size_divisor"}),  # round(side * s / short), ceil to a multiple
    "GLPN": frozenset({"size_divisor"}),  # each side floored to a multiple (size unused)
    "TextNet": frozenset({"size_divisor"}),  # the shortest_edge size, each side ceiled to a multiple
    "Vivit": frozenset({"offset"}),  # rescale(offset=True): x * f - 1
    "SuperPoint": frozenset({"do_grayscale"}),  # refused when on (goprep has no RGB -> gray op)
}
# Keys a class's own pixel code never reads (its _preprocess takes them and drops them): overridden
# with these values before the conversion, so that a value set there changes nothing, as in the class.
_HF_CLASS_IGNORES: Dict[str, Dict[str, Any]] = {
    "GLPN": {"do_center_crop": False, "do_pad": None, "size": None},
    "TextNet": {"do_pad": None},
    "SuperPoint": {"do_normalize": False, "do_center_crop": False, "do_pad": None},
    "DepthPro": {"do_center_crop": False, "do_pad": None},
    "PPLCNet": {"do_pad": None},
}
# Keys that never change pixel_values (metadata, and output-format options goprep has its own of).
_HF_INERT = frozenset({"image_processor_type", "feature_extractor_type", "processor_class", "_processor_class",
                       "auto_map", "return_tensors", "data_format", "input_data_format", "device", "disable_grouping",
                       "model_input_names"})
# The methods through which a processor class computes pixel_values. A class that defines one of them
# itself (below transformers' backends) has code of its own, which goprep reproduces only for the
# classes listed in _HF_VERIFIED: those whose own code was read (transformers 5.24) to run the generic
# resize / crop / rescale-and-normalize steps for the keys above (anything else they do is behind a key
# that is refused), and that the zoo sweep (tests/test_zoo.py) finds equal with their class defaults.
# (DepthPro, say, is equal with its defaults only because they upscale: it resizes without antialias.)
_HF_PIXEL_METHODS = frozenset({"_preprocess", "preprocess", "resize", "center_crop", "rescale", "normalize",
                               "rescale_and_normalize", "convert_to_rgb", "pad", "process_image",
                               "_preprocess_image_like_inputs", "_prepare_image_like_inputs",
                               "_prepare_images_structure", "_standardize_kwargs", "_further_process_kwargs"})
_HF_VERIFIED = frozenset({"ConvNext", "Beit", "DINOv3ViT", "Gemma3", "Llava", "MobileNetV2", "Segformer", "SegGpt",
                          "PPLCNet", "GLPN", "TextNet", "Vivit", "SuperPoint", "DepthPro",
                          "Levit", "PoolFormer", "MobileViT", "EfficientNet"})
_HF_BACKENDS = ("TorchvisionBackend", "PilBackend", "BaseImageProcessor", "ImageProcessingMixin")


def _hf_class(kind: str) -> Any:
    """The transformers class a config dict names, when transformers is installed (never imported
    here otherwise: a config dict needs no library), else None."""
    import importlib.util
    import sys

    if "transformers" not in sys.modules and importlib.util.find_spec("transformers") is None:
        return None
    import transformers

    try:
        return getattr(transformers, kind, None)
    except Exception:  # transformers' lazy module raises for a class whose backend is missing
        return None


def _hf_own_code(cls: Any) -> List[str]:
    """The pixel-path methods that ``cls`` (or a class between it and transformers' backends) defines."""
    own = set()
    for c in cls.__mro__:
        if c.__name__ in _HF_BACKENDS or c is object:
            break
        own |= _HF_PIXEL_METHODS & set(vars(c))
    return sorted(own)


def _hf_base_name(kind: str) -> str:
    """``ConvNextImageProcessorPil`` -> ``ConvNext``."""
    for suffix in ("Pil", "Fast"):
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
    for suffix in ("ImageProcessor", "FeatureExtractor"):
        if kind.endswith(suffix):
            kind = kind[: -len(suffix)]
    return kind


def _hf_active(v: Any) -> bool:
    """Whether a config value turns something on (None, False and empty values do not)."""
    if v is None or v is False:
        return False
    if isinstance(v, (list, tuple, dict, str)) and not v:
        return False
    return True


def from_hf(processor_or_config: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing a Hugging Face image processor's ``pixel_values`` (for one image:
    ``(3, H, W)``; for a batch or list: ``(N, 3, H, W)``), from the processor or its
    ``preprocessor_config.json`` dict (which needs no transformers install). Covers the
    resize / center-crop / rescale / normalize processors: ViT, CLIP, ConvNeXt (``crop_pct``),
    DeiT, BEiT, SigLIP and the others the zoo sweep finds equal.

    Never silently different: every key of the config is read (a processor object's attributes, with
    its class defaults; a dict naming a class is completed with that class's defaults when transformers
    is installed), and a key that turns on something goprep does not reproduce, or a class with
    pixel code of its own that goprep does not reproduce, raises ``goprep.PipelineError`` naming the
    class, the key and its value. Pillow or tensor numerics follow the backend the class runs
    (transformers' ``PilBackend`` or ``TorchvisionBackend``). A config it cannot read raises
    ``goprep.PipelineError`` naming the field (``.argument``)."""
    obj = processor_or_config
    cls: Any = None
    if isinstance(obj, Mapping):
        cfg = dict(obj)
        kind = str(cfg.get("image_processor_type") or cfg.get("feature_extractor_type") or "dict")
        cls = _hf_class(kind) if kind != "dict" else None
        if cls is not None and callable(getattr(cls, "from_dict", None)):
            try:  # the class's defaults for every key the dict leaves out
                full = cls.from_dict(cfg).to_dict()
            except Exception:  # a config the class itself rejects: read as given, checked below
                full = None
            if isinstance(full, Mapping):
                cfg = {**dict(full), **{k: v for k, v in cfg.items() if k not in full}}
    elif callable(getattr(obj, "to_dict", None)) or hasattr(obj, "__dict__"):
        cfg = obj.to_dict() if callable(getattr(obj, "to_dict", None)) else dict(vars(obj))
        if not isinstance(cfg, Mapping):
            raise PipelineError(f"to_dict() returned {type(cfg).__name__}, not a dict", argument="processor_or_config")
        cfg = dict(cfg)
        cls = type(obj)
        kind = cls.__name__
    else:
        raise PipelineError(
            f"must be a Hugging Face image processor or its config dict, got {type(obj).__name__}",
            argument="processor_or_config",
        )
    if cls is not None:
        # to_dict() leaves out the keys whose value is None (GLPN's do_normalize, say): the class's
        # attributes then decide, and None there means off (as ``if do_normalize:`` reads it)
        src = cls if isinstance(obj, Mapping) else obj
        for k in _HF_READ | _HF_CLASS_KEYS.get(_hf_base_name(kind), frozenset()):
            if k not in cfg:
                cfg[k] = getattr(src, k, None)
    if cls is not None and isinstance(cls, type):
        own = _hf_own_code(cls)
        if own and _hf_base_name(kind) not in _HF_VERIFIED:
            raise PipelineError(
                f"{kind} computes pixel_values with code of its own ({', '.join(own)}), which goprep does not "
                "reproduce: refused rather than converted to something different", argument="processor_or_config")
        names = {c.__name__ for c in cls.__mro__}
        # transformers' backends, or the NumPy + Pillow code of a class on neither (Vivit, VideoLlava)
        flavor = "pil" if "PilBackend" in names else "tensor" if "TorchvisionBackend" in names else "pil"
    else:
        flavor = None
    try:
        return _hf_convert(cfg, kind, flavor, device)
    except PipelineError as e:  # every refusal names the class
        if kind in str(e):
            raise
        raise PipelineError(f"{e.detail} ({kind})", argument=e.argument, code=e.code) from None


def _hf_convert(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> Converted:
    """from_hf's conversion of a complete config (``kind``: the class name, for messages)."""
    base = _hf_base_name(kind)
    reads = _HF_READ | _HF_CLASS_KEYS.get(base, frozenset())
    cfg = {**cfg, **_HF_CLASS_IGNORES.get(base, {})}
    for k, v in cfg.items():
        if k not in reads and k not in _HF_INERT and _hf_active(v):
            raise PipelineError(f"{v!r} ({kind}) is not reproduced by goprep.transforms.from_hf: refused rather "
                                f"than ignored", argument=k)
    if flavor is None:  # no class to ask (a dict without transformers): transformers 5's naming
        flavor = "pil" if kind.endswith("Pil") or base in _HF_NUMPY_CLASSES else "tensor"
    if base == "SuperPoint" and cfg.get("do_grayscale"):
        raise PipelineError(f"True ({kind} converts to gray with tvF.rgb_to_grayscale; goprep has no RGB -> gray op)",
                            argument="do_grayscale")
    if base == "Vivit" and cfg.get("offset") and not cfg.get("do_rescale", True):
        raise PipelineError(f"True without do_rescale ({kind} raises 'For offset, do_rescale must also be set to True')",
                            argument="offset")
    chain = _Chain()
    interp = cfg.get("resample")
    interp = 2 if interp is None else interp  # HF resizes bilinearly when resample is unset
    if _interp_name(interp) not in _MODES:
        raise PipelineError(f"{_interp_name(interp)!r} is not supported by goprep (bilinear, bicubic, nearest)",
                            argument="resample")

    def resize(size: Any) -> Any:  # the torchvision backend's tvF.resize (v2, antialias=True)
        if base == "DepthPro":  # rescale and normalize first, then tvF.resize(antialias=False) of the floats
            return _FloatResize(_Resize("resize", size, interp, False, None, "v2"))
        return _Resize("resize", size, interp, True, None, "v2")

    convnext = base in ("ConvNext", "ConvNeXt")

    if cfg.get("do_resize", True) and base == "PPLCNet" and cfg.get("resize_short") is not None:
        div = cfg.get("size_divisor")
        chain.geometric("resize", resize(_ShortDivisorSize(_pos_int("resize_short", cfg["resize_short"]),
                                                           None if div is None else _pos_int("size_divisor", div))))
    elif cfg.get("do_resize", True) and base == "GLPN":
        chain.geometric("resize", resize(_DivisorSize(_pos_int("size_divisor", cfg.get("size_divisor")), floor=True)))
    elif cfg.get("do_resize", True):
        raw = cfg.get("size")
        square = cfg.get("default_to_square")
        square = kind.startswith(_HF_SQUARE) if square is None else bool(square)
        if raw is None:
            raise PipelineError(f"None ({kind} resizes but sets no size; goprep reproduces sizing by 'height' and "
                                "'width' or by 'shortest_edge')", argument="size")
        size = _hf_size(raw, square)
        pool_pct = cfg.get("crop_pct") if base == "PoolFormer" else None
        if base == "Levit" and "shortest_edge" in size:  # LeViT's resize: the shorter side to 256/224 of it
            chain.geometric("resize", resize(int((256 / 224) * size["shortest_edge"])))
        elif pool_pct is not None:  # PoolFormer's resize (an int is a shorter side, a pair exact)
            pct = _pos_float("crop_pct", pool_pct)
            if "shortest_edge" in size:
                target: Any = int(size["shortest_edge"] / pct)
            elif "height" in size and "width" in size:
                h, w = size["height"], size["width"]
                target = int(h / pct) if h == w else (int(h / pct), int(w / pct))
            else:
                raise PipelineError(f"{raw!r} (PoolFormer's resize needs shortest_edge or height and width)",
                                    argument="size")
            if (min(target) if isinstance(target, tuple) else target) < 1:
                raise PipelineError(f"{pct} resizes to {target}", argument="crop_pct")
            chain.geometric("resize", resize(target))
        elif convnext:
            if "shortest_edge" not in size:  # HF: "Size dictionary must contain 'shortest_edge' key"
                raise PipelineError(f"ConvNeXt's resize needs 'shortest_edge', got {raw!r}", argument="size")
            se = size["shortest_edge"]
            pct = cfg.get("crop_pct")
            crop_pct = 224 / 256 if pct is None else _pos_float("crop_pct", pct)
            if se < 384:
                if int(se / crop_pct) < 1:
                    raise PipelineError(f"{crop_pct} resizes the shorter side to {int(se / crop_pct)}", argument="crop_pct")
                chain.geometric("resize", resize(int(se / crop_pct)))
                chain.geometric("center_crop", _FloorCenterCrop(se, se))
            else:
                chain.geometric("resize", resize((se, se)))
        elif "height" in size and "width" in size:
            chain.geometric("resize", resize((size["height"], size["width"])))
        elif base == "TextNet":  # the shorter side, then each side rounded up to a multiple of size_divisor
            if "shortest_edge" not in size:  # HF: "Size must contain 'shortest_edge' key"
                raise PipelineError(f"TextNet's resize needs 'shortest_edge', got {raw!r}", argument="size")
            div = _pos_int("size_divisor", cfg.get("size_divisor"))
            chain.geometric("resize", resize(_DivisorSize(div, floor=False, shortest_edge=size["shortest_edge"])))
        elif "shortest_edge" in size and "longest_edge" not in size:
            chain.geometric("resize", resize(size["shortest_edge"]))
        else:
            raise PipelineError(f"{raw!r} is not supported by goprep.transforms.from_hf "
                                "(height and width, or shortest_edge alone)", argument="size")
    if cfg.get("do_center_crop", False):
        crop = cfg.get("crop_size")
        if isinstance(crop, Mapping):
            if crop.get("height") is None or crop.get("width") is None:
                raise PipelineError(f"must hold 'height' and 'width', got {crop!r}", argument="crop_size")
            ch, cw = _pos_int("crop_size['height']", crop["height"]), _pos_int("crop_size['width']", crop["width"])
        else:
            ch, cw = _int_or_hw("crop_size", crop)
        chain.geometric("center_crop", _FloorCenterCrop(ch, cw))
    if base == "MobileViT" and cfg.get("do_flip_channel_order"):
        chain.geometric("flip_channel_order", _Cvt("rgb2bgr"))  # a channel permutation: before the rescale
    if base == "PPLCNet":  # RGB -> BGR after the normalisation: here, with mean and std reversed below
        chain.geometric("RGB -> BGR", _Cvt("rgb2bgr"))
    do_rescale = cfg.get("do_rescale", True)
    if do_rescale:
        rf = cfg.get("rescale_factor")
        chain.to_float("rescale", 1 / 255 if rf is None else _pos_float("rescale_factor", rf))
    else:
        chain.to_float("rescale", 1.0)
    if base == "EfficientNet" and do_rescale and cfg.get("rescale_offset"):
        chain.normalize("rescale_offset", [1.0], [1.0])  # EfficientNet's rescale(offset=True): x * f - 1
    if base == "Vivit" and do_rescale and cfg.get("offset"):
        chain.normalize("offset", [1.0], [1.0])  # Vivit's rescale(offset=True): x * f - 1
    std: Optional[List[float]] = None
    if cfg.get("do_normalize", True) and base != "MobileViT":  # MobileViT's code never normalises
        mean = _floats(cfg.get("image_mean", 0.5), "image_mean", channels=3)  # pixel_values are RGB
        std = _floats(cfg.get("image_std", 0.5), "image_std", nonzero=True, channels=3)
        if base == "PPLCNet":  # the channels were reversed before the normalisation (above)
            mean, std = mean[::-1], std[::-1]
        chain.normalize("normalize", mean, std)
    if base == "EfficientNet" and cfg.get("include_top"):  # normalize(image, 0, image_std) once more
        top = std if std is not None else _floats(cfg.get("image_std", 0.5), "image_std", nonzero=True, channels=3)
        chain.normalize("include_top", [0.0], top)
    conv = Converted(chain, f"Hugging Face {kind}", flavor=flavor, device=device)
    conv._convert_rgb = bool(cfg.get("do_convert_rgb"))
    conv._hf_video = base == "Vivit"
    return conv


# Classes on neither of transformers' backends: NumPy and Pillow code (Pillow's resize).
_HF_NUMPY_CLASSES = frozenset({"Vivit", "VideoLlava", "Emu3"})


class _ShortDivisorSize:
    """PPLCNet's sizing, ``(h, w) -> (h, w)``: each side ``round(side * short / min(h, w))``, then
    rounded up to a multiple of ``divisor`` (when given)."""

    def __init__(self, short: int, divisor: Optional[int]) -> None:
        self.short, self.divisor = short, divisor

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        scale = self.short / min(h, w)
        oh, ow = round(h * scale), round(w * scale)
        if self.divisor is not None:
            oh, ow = (math.ceil(v / self.divisor) * self.divisor for v in (oh, ow))
        return oh, ow


class _DivisorSize:
    """``size_divisor`` sizing, ``(h, w) -> (h, w)``: GLPN's (each side floored to a multiple, the
    image's own size otherwise kept) or TextNet's (the shorter side to ``shortest_edge`` as
    torchvision's int size, then each side rounded up to a multiple)."""

    def __init__(self, divisor: int, floor: bool, shortest_edge: Optional[int] = None) -> None:
        self.divisor, self.floor, self.shortest_edge = divisor, floor, shortest_edge

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        d = self.divisor
        if self.shortest_edge is not None:
            h, w = _ops.resize_size(SimpleNamespace(height=h, width=w), self.shortest_edge, None)  # type: ignore[arg-type]
        if self.floor:
            if h < d or w < d:
                raise PipelineError(f"a {h}x{w} image has a side below size_divisor {d}: GLPN resizes it to 0 pixels")
            return h // d * d, w // d * d
        return -(-h // d) * d, -(-w // d) * d


class _FloatResize:
    """A resize of the rescaled and normalised floats (DepthPro: ``tvF.resize(antialias=False)`` after
    ``rescale_and_normalize``), an Op that always runs outside the engine (``host``): the uint8 image
    as float32, resized unrounded with PyTorch's float kernels (goprep's float32 resize). Interpolation
    without antialias is a weighted sum whose weights add up to 1, so it commutes with the affine
    normalisation that follows in the last fused step (to float32 rounding)."""

    def __init__(self, inner: _Resize) -> None:
        self.inner = inner

    def __call__(self, img: Any, flavor: str) -> Any:  # only through host (see Converted._pipe)
        raise PipelineError("internal: _FloatResize runs through host()")

    def host(self, flavor: str) -> Callable[[np.ndarray], np.ndarray]:
        return self._float_resize

    def _float_resize(self, a: np.ndarray) -> np.ndarray:
        h, w = a.shape[-3], a.shape[-2]
        oh, ow = self.inner.target(h, w)
        f = a.astype(np.float32)
        if (oh, ow) == (h, w):
            return f
        kind, aa = self.inner._tensor_kernel("f32")
        return _ops.resize(f, (oh, ow), interpolation=kind, antialias=aa)


# ---------------------------------------------------------------------------------------------
# timm


def from_timm(data_config: Mapping[str, Any], *, device: str = "auto") -> Converted:
    """A goprep pipeline computing ``timm.data.create_transform(**data_config, is_training=False)``
    from timm's ``resolve_data_config`` dict (``input_size``, ``interpolation``, ``crop_pct``,
    ``crop_mode``, ``mean``, ``std``); timm is not needed. timm's resize is
    ``torchvision.transforms`` (v1), so tensors get v1's numerics. A value it cannot read raises
    ``goprep.PipelineError`` naming the key (``.argument``)."""
    if not isinstance(data_config, Mapping):
        raise PipelineError(f"must be a dict (timm's resolve_data_config), got {type(data_config).__name__}",
                            argument="data_config")
    input_size = data_config.get("input_size", (3, 224, 224))
    if _validate.is_int(input_size):
        img = (_pos_int("input_size", input_size),) * 2
    elif isinstance(input_size, (list, tuple)) and len(input_size) in (2, 3):
        vals = tuple(_pos_int("input_size", v) for v in input_size)
        img = (vals[-2], vals[-1])
    else:
        raise PipelineError(f"must be an int, (height, width) or (channels, height, width), got {input_size!r}",
                            argument="input_size")
    pct = data_config.get("crop_pct")
    # timm: ``crop_pct or 0.875`` (None and 0 take the default; NaN fails in its math.floor)
    crop_pct = 0.875 if pct is None or (isinstance(pct, numbers.Real) and pct == 0) else _pos_float("crop_pct", pct)
    crop_mode = data_config.get("crop_mode") or "center"
    if crop_mode not in ("center", "squash", "border"):
        raise PipelineError(f"{crop_mode!r} is not supported by goprep.transforms.from_timm (center, squash, border)",
                            argument="crop_mode")
    interp = data_config.get("interpolation", "bilinear")
    if interp == "random":
        raise PipelineError("'random' is a training setting; from_timm converts eval transforms", argument="interpolation")
    if _interp_name(interp) not in _MODES:
        raise PipelineError(f"{interp!r} is not supported by goprep (bilinear, bicubic, nearest)", argument="interpolation")
    scale = tuple(math.floor(x / crop_pct) for x in img)
    if min(scale) < 1:
        raise PipelineError(f"{crop_pct} resizes {img} to {scale}", argument="crop_pct")
    channels = vals[0] if isinstance(input_size, (list, tuple)) and len(input_size) == 3 else 3
    mean = _floats(data_config.get("mean", (0.485, 0.456, 0.406)), "mean", channels=channels)
    std = _floats(data_config.get("std", (0.229, 0.224, 0.225)), "std", nonzero=True, channels=channels)
    chain = _Chain()
    if crop_mode == "squash":
        chain.geometric("Resize", _Resize("Resize", scale, interp, True, None, "v1"))
        chain.geometric("CenterCrop", _CenterCrop(img))
    elif crop_mode == "border":
        # the longer side fits 1/crop_pct of the target, then padded (with the mean colour, as timm
        # rounds it) and cropped to the target: nothing of the image is lost at crop_pct 1
        chain.geometric("ResizeKeepRatio", _keep_ratio_op(scale, interp, 1.0))
        chain.geometric("CenterCropOrPad", _CenterCrop(img, [round(255 * v) for v in mean]))
    else:
        if scale[0] == scale[1]:
            chain.geometric("Resize", _Resize("Resize", scale[0], interp, True, None, "v1"))
        else:
            chain.geometric("ResizeKeepRatio", _keep_ratio_op(scale, interp))
        chain.geometric("CenterCrop", _CenterCrop(img))
    chain.to_float("MaybeToTensor", 1 / 255)
    chain.normalize("Normalize", mean, std)
    return Converted(chain, "timm eval transform", device=device)


class _KeepRatioSize:
    """timm's ``ResizeKeepRatio(size, longest)`` sizing, ``(h, w) -> (h, w)``: the ratio blends the
    per-axis ratios (``max * longest + min * (1 - longest)``; 0 covers ``target``), sides
    ``round(side / ratio)``."""

    def __init__(self, target: Tuple[int, int], longest: float) -> None:
        self.target, self.longest = target, longest

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        rh, rw = h / self.target[0], w / self.target[1]
        ratio = max(rh, rw) * self.longest + min(rh, rw) * (1.0 - self.longest)
        return (max(1, round(h / ratio)), max(1, round(w / ratio)))


def _keep_ratio_op(target: Tuple[int, int], interp: Any, longest: float = 0.0) -> _Resize:
    """timm's ``ResizeKeepRatio``: ``_KeepRatioSize``, then torchvision's v1 ``F.resize`` (antialias=True)."""
    return _Resize("ResizeKeepRatio", _KeepRatioSize(target, longest), interp, True, None, "v1")
