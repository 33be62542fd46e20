"""Converters from torchvision, Hugging Face and timm preprocessing to fused goprep pipelines.

``from_torchvision(t)``, ``from_hf(processor_or_config)`` and ``from_timm(data_config)`` return a
``Converted`` pipeline that computes what the original computes, in one pass:

- the torchvision chain is read into goprep ops (resize with torchvision's sizing, center_crop with
  its rounding, pad, the dtype conversion and Normalize folded into one ``normalize``);
- the resampling follows the numerics the original uses for the input it gets: on PIL images (and
  NumPy arrays) Pillow's (``antialias=True``, bilinear/bicubic; ``nearest-pil``), on tensors
  torchvision's tensor kernels (``antialias`` as the transform sets it; ``nearest`` /
  ``nearest-exact``). Hugging Face's default (torchvision-backed) processors work on tensors, so
  their pipelines always use the tensor numerics; their ``*Pil`` processors the PIL ones.

Importing this module imports none of torch, torchvision, transformers or timm: transform objects are
read by their attributes, and a config dict needs no library at all.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _ops
from ._errors import PipelineError
from ._inputs import is_tensor
from ._pipeline import pipeline

__all__ = ["Converted", "from_torchvision", "from_hf", "from_timm"]

# One op of the geometric (uint8) stage: (traced image, "pil" | "tensor") -> traced image.
Op = Callable[[Any, str], Any]


@dataclass
class _Chain:
    """A converted chain: geometric ops, then at most one affine float stage
    ``(x * scale - mean) / std`` (None when the result stays uint8)."""

    ops: List[Op] = field(default_factory=list)
    scale: Optional[float] = None  # set by the float conversion (ToTensor, ToDtype, ...)
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

    def to_float(self, name: str, scale: float) -> None:
        if self.scale is not None:
            raise PipelineError(f"{name}: the image is already float (a second conversion)")
        self.scale = scale
        self.to_tensor = True

    def normalize(self, name: str, mean: Sequence[float], std: Sequence[float]) -> None:
        if self.scale is None:
            raise PipelineError(f"{name} needs a float image: put ToTensor/ToDtype(float32, scale=True) before it")
        m, s = [float(v) for v in mean], [float(v) for v in std]
        if self.mean is None or self.std is None:
            self.mean, self.std = m, s
            return
        # (x - M) / S then (. - m) / s  ==  (x - (M + m*S)) / (S*s)
        n = max(len(self.mean), len(m))
        M, S = _bcast(self.mean, n), _bcast(self.std, n)
        m, s = _bcast(m, n), _bcast(s, n)
        self.mean = [M[i] + m[i] * S[i] for i in range(n)]
        self.std = [S[i] * s[i] for i in range(n)]


def _bcast(v: List[float], n: int) -> List[float]:
    return v * n if len(v) == 1 else v


class Converted:
    """A fused goprep pipeline converted from another library's preprocessing (see the module doc).

    Call it like a ``goprep.pipeline``: a PIL image, a NumPy ``(H, W, C)`` array, a CPU tensor
    ``(C, H, W)`` / ``(N, C, H, W)``, or a list of them; ``out=`` as for pipelines. ``notes`` lists
    what the conversion skipped (eval-mode no-ops)."""

    def __init__(self, chain: _Chain, source: str, flavor: Optional[str] = None, device: str = "auto") -> None:
        self._chain = chain
        self._source = source
        self._flavor = flavor  # fixed numerics ("pil"/"tensor"), or None: follow the input
        self._device = device
        self._pipes: Dict[str, Any] = {}
        self.notes = list(chain.notes)

    def __repr__(self) -> str:
        return f"<goprep.transforms.Converted from {self._source}>"

    def _pipe(self, flavor: str) -> Any:
        p = self._pipes.get(flavor)
        if p is None:
            c = self._chain

            def fn(img: Any) -> Any:
                for op in c.ops:
                    img = op(img, flavor)
                if c.scale is not None:
                    n = img.channels
                    mean = _bcast(c.mean, n) if c.mean is not None else [0.0] * n
                    std = _bcast(c.std, n) if c.std is not None else [1.0] * n
                    img = _ops.normalize(img, mean=mean, std=std, scale=c.scale)
                return img

            fn.__qualname__ = f"converted<{self._source}>"
            p = pipeline(fn, device=self._device, output="torch" if c.to_tensor else None)
            self._pipes[flavor] = p
        return p

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        flavor = self._flavor
        if flavor is None:
            first = src[0] if isinstance(src, (list, tuple)) and src else src
            flavor = "tensor" if is_tensor(first) else "pil"
        return self._pipe(flavor)(src, out=out)


# ---------------------------------------------------------------------------------------------
# ops shared by the converters

_PIL_CODES = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}


def _interp_name(mode: Any) -> str:
    """An InterpolationMode, PIL resample code or string, as a lowercase name."""
    if isinstance(mode, int) and not isinstance(mode, bool):
        return _PIL_CODES.get(int(mode), str(mode))
    v = getattr(mode, "value", mode)
    if isinstance(v, int):
        return _PIL_CODES.get(v, str(v))
    return str(v).lower()


def _resize_op(name: str, size: Any, interp: Any, antialias: Any, max_size: Any) -> Op:
    mode = _interp_name(interp)
    if mode not in ("bilinear", "bicubic", "nearest", "nearest-exact", "nearest_exact"):
        raise PipelineError(f"{name}: interpolation {mode!r} is not supported by goprep (bilinear, bicubic, nearest)")
    aa = True if antialias is None or antialias == "warn" else bool(antialias)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        size = int(size[0])
    elif isinstance(size, (list, tuple)):
        size = (int(size[0]), int(size[1]))

    def op(img: Any, flavor: str) -> Any:
        if mode.startswith("nearest"):
            kind = "nearest-pil" if flavor == "pil" else ("nearest-exact" if mode != "nearest" else "nearest")
            return _ops.resize(img, size, interpolation=kind, max_size=max_size)
        # Pillow always filters with the widened kernel; torchvision's tensor path when antialias is set,
        # with PyTorch's uint8 weight rounding ("torch"): Pillow's 22-bit weights left rare pixels 2
        # levels from torch's (bicubic CLIP / ConvNeXt; bilinear upscales, coffee 400x600 -> 700x1050).
        use_aa: Any = aa or flavor == "pil"
        if flavor == "tensor" and use_aa:
            use_aa = "torch"
        return _ops.resize(img, size, interpolation=mode, antialias=use_aa, max_size=max_size)

    return op


def _center_crop_op(size: Any) -> Op:
    size = _pair(size)
    return lambda img, flavor: _ops.center_crop(img, size)


def _floor_center_crop_op(h: int, w: int) -> Op:
    """Hugging Face's center crop: zero padding as torchvision, then the window at
    ``int((H - h) / 2.0)`` (truncated, not rounded)."""

    def op(img: Any, flavor: str) -> Any:
        H, W = img.height, img.width
        if h > H or w > W:
            pl, pt = ((w - W) // 2 if w > W else 0), ((h - H) // 2 if h > H else 0)
            pr, pb = ((w - W + 1) // 2 if w > W else 0), ((h - H + 1) // 2 if h > H else 0)
            img = _ops.pad(img, (pl, pt, pr, pb))
            H, W = img.height, img.width
            if (H, W) == (h, w):
                return img
        return _ops.crop(img, int((H - h) / 2.0), int((W - w) / 2.0), h, w)

    return op


def _pair(size: Any) -> Tuple[int, int]:
    if isinstance(size, (list, tuple)):
        return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    return int(size), int(size)


# ---------------------------------------------------------------------------------------------
# torchvision


def from_torchvision(t: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing what the torchvision transform ``t`` computes: a v1 or v2
    ``Compose`` (or ``nn.Sequential``) of, or a single, ``Resize``, ``CenterCrop``, ``Pad``,
    ``ToTensor``, ``PILToTensor``, ``ToImage``, ``ToDtype``, ``ConvertImageDtype``, ``Normalize``,
    ``Grayscale`` (on 1-channel images), ``RandomHorizontalFlip``/``RandomVerticalFlip`` with
    ``p`` 0 or 1, and timm's eval ``ResizeKeepRatio`` and ``MaybeToTensor``. Eval-mode no-ops are skipped and listed in ``.notes``; anything else raises
    ``goprep.PipelineError`` naming the transform."""
    chain = _Chain()
    _tv_walk(t, chain)
    for n in chain.notes:
        warnings.warn(f"goprep.transforms.from_torchvision: {n}", stacklevel=2)
    return Converted(chain, f"torchvision {type(t).__name__}", device=device)


_NOOPS = ("Identity", "ToPureTensor", "SanitizeBoundingBoxes", "ClampBoundingBoxes", "ClampKeyPoints")


def _tv_walk(t: Any, chain: _Chain) -> None:
    name = type(t).__name__
    if name in ("Compose", "Sequential"):
        for sub in getattr(t, "transforms", None) or list(t):
            _tv_walk(sub, chain)
        return
    if name in _NOOPS:
        chain.notes.append(f"skipped {name} (no effect on an image)")
        return
    p = getattr(t, "p", None)
    if name in ("RandomHorizontalFlip", "RandomVerticalFlip", "RandomGrayscale", "RandomApply", "RandomErasing",
                "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
                "RandomEqualize", "RandomPhotometricDistort") and p == 0:
        chain.notes.append(f"skipped {name}(p=0) (never applied)")
        return
    if name in ("RandomHorizontalFlip", "RandomVerticalFlip") and p == 1:
        hor = name == "RandomHorizontalFlip"
        chain.geometric(name, lambda img, f: _ops.flip(img, horizontal=hor, vertical=not hor))
        return
    if name == "Resize":
        chain.geometric(name, _resize_op(name, t.size, t.interpolation, getattr(t, "antialias", True), t.max_size))
    elif name == "CenterCrop":
        chain.geometric(name, _center_crop_op(t.size))
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
        padding = t.padding
        chain.geometric(name, lambda img, f: _ops.pad(img, padding, value=fill))
    elif name == "Grayscale":
        n = int(t.num_output_channels)

        def gray(img: Any, flavor: str) -> Any:
            if img.channels != 1:
                raise PipelineError(
                    f"Grayscale on a {img.channels}-channel image is not expressible in goprep (no RGB -> gray op); "
                    "pass 1-channel images or convert beforehand"
                )
            return _ops.cvt_color(img, "gray2rgb") if n == 3 else img

        chain.geometric(name, gray)
    elif name in ("ToTensor", "MaybeToTensor"):  # MaybeToTensor: timm's ToTensor that passes tensors through
        chain.to_float(name, 1 / 255)
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
        chain.to_float(name, 1 / 255 if scale else 1.0)
    elif name == "Normalize":
        chain.normalize(name, _floats(t.mean), _floats(t.std))
    else:
        raise PipelineError(f"{name} is not supported by goprep.transforms.from_torchvision")


def _floats(v: Any) -> List[float]:
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (int, float)):
        return [float(v)]
    return [float(x) for x in v]


# ---------------------------------------------------------------------------------------------
# Hugging Face


def from_hf(processor_or_config: Any, *, device: str = "auto") -> Converted:
    """A goprep pipeline computing a Hugging Face image processor's ``pixel_values`` (for one image:
    ``(3, H, W)``; for a batch or list: ``(N, 3, H, W)``), from the processor or its
    ``preprocessor_config.json`` dict (which needs no transformers install). Covers the
    resize / center-crop / rescale / normalize processors: ViT, CLIP, ConvNeXt (``crop_pct``),
    DeiT, BEiT, SigLIP."""
    if isinstance(processor_or_config, dict):
        cfg = dict(processor_or_config)
        kind = str(cfg.get("image_processor_type", "dict"))
    else:
        obj = processor_or_config
        cfg = obj.to_dict() if hasattr(obj, "to_dict") else dict(vars(obj))
        kind = type(obj).__name__
    # transformers 5: the default processors run torchvision on tensors; the *Pil ones run Pillow.
    flavor = "pil" if kind.endswith("Pil") else "tensor"
    chain = _Chain()
    interp = cfg.get("resample", 2)
    if cfg.get("do_resize", True):
        size = cfg.get("size") or {}
        if isinstance(size, int):
            size = {"shortest_edge": size}
        if "ConvNext" in kind or "ConvNeXt" in kind or "crop_pct" in cfg and "shortest_edge" in size and not cfg.get("do_center_crop"):
            se = int(size["shortest_edge"])
            crop_pct = float(cfg.get("crop_pct") or 224 / 256)
            if se < 384:
                chain.geometric("resize", _resize_op("resize", int(se / crop_pct), interp, True, None))
                chain.geometric("center_crop", _floor_center_crop_op(se, se))
            else:
                chain.geometric("resize", _resize_op("resize", (se, se), interp, True, None))
        elif "height" in size and "width" in size:
            chain.geometric("resize", _resize_op("resize", (int(size["height"]), int(size["width"])), interp, True, None))
        elif "shortest_edge" in size and "longest_edge" not in size:
            chain.geometric("resize", _resize_op("resize", int(size["shortest_edge"]), interp, True, None))
        else:
            raise PipelineError(f"size {size} is not supported by goprep.transforms.from_hf")
    if cfg.get("do_center_crop", False):
        crop = cfg.get("crop_size") or {}
        if isinstance(crop, int):
            crop = {"height": crop, "width": crop}
        chain.geometric("center_crop", _floor_center_crop_op(int(crop["height"]), int(crop["width"])))
    if cfg.get("do_pad"):
        raise PipelineError("do_pad is not supported by goprep.transforms.from_hf")
    chain.to_float("rescale", float(cfg.get("rescale_factor", 1 / 255)) if cfg.get("do_rescale", True) else 1.0)
    if cfg.get("do_normalize", True):
        chain.normalize("normalize", _floats(cfg.get("image_mean", 0.5)), _floats(cfg.get("image_std", 0.5)))
    return Converted(chain, f"Hugging Face {kind}", flavor=flavor, device=device)


# ---------------------------------------------------------------------------------------------
# timm


def from_timm(data_config: Dict[str, Any], *, device: str = "auto") -> Converted:
    """A goprep pipeline computing ``timm.data.create_transform(**data_config, is_training=False)``
    from timm's ``resolve_data_config`` dict (``input_size``, ``interpolation``, ``crop_pct``,
    ``crop_mode``, ``mean``, ``std``); timm is not needed."""
    input_size = data_config.get("input_size", (3, 224, 224))
    img = tuple(int(v) for v in input_size[-2:]) if isinstance(input_size, (list, tuple)) else (int(input_size),) * 2
    crop_pct = float(data_config.get("crop_pct") or 0.875)
    crop_mode = data_config.get("crop_mode") or "center"
    interp = data_config.get("interpolation", "bilinear")
    if interp == "random":
        raise PipelineError("interpolation 'random' is a training setting; from_timm converts eval transforms")
    scale = tuple(math.floor(x / crop_pct) for x in img)
    chain = _Chain()
    if crop_mode == "squash":
        chain.geometric("Resize", _resize_op("Resize", scale, interp, True, None))
        chain.geometric("CenterCrop", _center_crop_op(img))
    elif crop_mode == "center":
        if scale[0] == scale[1]:
            chain.geometric("Resize", _resize_op("Resize", scale[0], interp, True, None))
        else:
            chain.geometric("ResizeKeepRatio", _keep_ratio_op(scale, interp))
        chain.geometric("CenterCrop", _center_crop_op(img))
    else:
        raise PipelineError(f"crop_mode {crop_mode!r} is not supported by goprep.transforms.from_timm")
    chain.to_float("MaybeToTensor", 1 / 255)
    chain.normalize("Normalize", _floats(data_config.get("mean", (0.485, 0.456, 0.406))), _floats(data_config.get("std", (0.229, 0.224, 0.225))))
    return Converted(chain, "timm eval transform", device=device)


def _keep_ratio_op(target: Tuple[int, int], interp: Any, longest: float = 0.0) -> Op:
    """timm's ``ResizeKeepRatio(size, longest)``: the ratio blends the per-axis ratios
    (``max * longest + min * (1 - longest)``; 0 covers ``target``), sides ``round(side / ratio)``."""

    def op(img: Any, flavor: str) -> Any:
        h, w = img.height, img.width
        rh, rw = h / target[0], w / target[1]
        ratio = max(rh, rw) * longest + min(rh, rw) * (1.0 - longest)
        size = (max(1, round(h / ratio)), max(1, round(w / ratio)))
        return _resize_op("ResizeKeepRatio", size, interp, True, None)(img, flavor)

    return op

