"""The symbolic image that goprep ops build a plan from.

Every goprep op, eager or inside ``@goprep.pipeline``, works on a ``Traced`` image: a description of
how the current image is read from the caller's source array. Ops only update that description
(crops and flips compose into views, colour conversions into a channel map), so any accepted chain
reduces to the engine's one canonical spec: source view -> resize -> canvas -> output view -> frame ->
channel map -> normalize (crops, flips and pads after the resize compose per axis, see _geometry.py).
The engine then runs it as a single pass.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native, _validate
from ._errors import DTypeError, InvalidArgumentError, PipelineError, ShapeError
from ._validate import base_array
from ._geometry import Axis, emit

MAX_OUT_BYTES = 1 << 46

# How many @goprep.pipeline functions this thread is tracing: a Traced image is valid only inside one.
_tracing = threading.local()


@contextlib.contextmanager
def tracing() -> Iterator[None]:
    """Mark this thread as tracing a pipeline function for the duration of the block."""
    _tracing.depth = getattr(_tracing, "depth", 0) + 1
    try:
        yield
    finally:
        _tracing.depth -= 1


def check_traced(t: "Traced", argument: str = "src", raw: bool = False) -> "Traced":
    """``t`` if this thread is tracing; a Traced image that escaped its pipeline function is an error
    (eager ops would otherwise return another Traced instead of an array). Unless ``raw`` (goprep.yuv,
    which reads any array's layout), a source no op can read raises its pending error."""
    if not getattr(_tracing, "depth", 0):
        raise PipelineError(
            "got a traced image outside the @goprep.pipeline function that made it; it is a placeholder, "
            "not an array (return it from the function instead of storing it)",
            argument=argument,
        )
    if t.pending is not None and not raw:  # a source only goprep.yuv reads (trace_array's lenient start)
        raise ShapeError(t.pending, argument="src")
    return t


SLOT = object()  # marks where the image goes in a traced function's result (_signature.split_result)

AA_TORCH = ("torch", "torch-noaa")  # antialias values for PyTorch's uint8 kernels, with and without antialias


@dataclass(frozen=True)
class View:
    """Logical (y, x) reads parent (y0 + sy*y, x0 + sx*x)."""

    y0: int
    x0: int
    sy: int
    sx: int
    h: int
    w: int

    @staticmethod
    def identity(h: int, w: int) -> "View":
        return View(0, 0, 1, 1, h, w)

    def then(self, child: "View") -> "View":
        """The view of ``child`` (given in this view's logical coordinates) in the parent's."""
        return View(
            self.y0 + self.sy * child.y0,
            self.x0 + self.sx * child.x0,
            self.sy * child.sy,
            self.sx * child.sx,
            child.h,
            child.w,
        )


BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


@dataclass(frozen=True)
class LetterboxInfo:
    """Where letterbox put the content: the source image, ``src_height`` x ``src_width``, was resized by
    ``scale`` to ``height`` x ``width`` and placed at ``top``, ``left``. Map points back with
    ``(x - left) / scale``, ``(y - top) / scale`` (``unmap_boxes`` does it for boxes)."""

    scale: float
    top: int
    left: int
    height: int
    width: int
    src_height: int = 0  # 0: unknown (an info built by hand with the five fields), then no clipping
    src_width: int = 0

    def unmap_boxes(self, boxes: Any, *, format: str = "xyxy", clip: bool = True) -> np.ndarray:
        """Map boxes from the letterboxed image back to the source image, as ultralytics'
        ``scale_boxes`` does: a single box ``(4+,)`` or ``(K, 4+)`` boxes, whose columns after the
        first four (scores, classes: YOLO's ``(K, 6)`` detections) are kept as they are.
        ``format``: ``"xyxy"`` (corners), ``"xywh"`` (top-left corner and size) or ``"cxcywh"`` (centre
        and size, YOLO's raw output); the result is in the same format. ``clip`` (default True)
        clips the boxes to the source image, as ``scale_boxes`` does; a clipped box keeps its format.
        Returns a new float64 array."""
        fmt = _validate.as_choice("format", format, BOX_FORMATS)
        if not isinstance(clip, (bool, np.bool_)):
            raise InvalidArgumentError(f"must be True or False, got {clip!r}", argument="clip")
        try:
            b = np.array(boxes, dtype=np.float64, copy=True)
        except (TypeError, ValueError, OverflowError) as e:  # a non-number, a ragged list, an int beyond float64
            raise InvalidArgumentError(f"must be a (K, 4+) array of numbers ({e})", argument="boxes") from None
        single = b.ndim == 1
        if single:
            b = b[None]
        if b.ndim != 2 or b.shape[1] < 4:
            raise ShapeError(f"must have shape (4+,) or (K, 4+) (x, y, x, y or {fmt} first), got {np.shape(boxes)}",
                             argument="boxes")
        xy = b[:, :4]  # a view: the extra columns are left as they are
        if fmt == "xywh":  # to corners
            xy[:, 2:] += xy[:, :2]
        elif fmt == "cxcywh":
            half = xy[:, 2:] / 2
            xy[:, 2:] = xy[:, :2] + half
            xy[:, :2] -= half
        xy[:, [0, 2]] = (xy[:, [0, 2]] - self.left) / self.scale
        xy[:, [1, 3]] = (xy[:, [1, 3]] - self.top) / self.scale
        if clip and self.src_height > 0 and self.src_width > 0:
            xy[:, [0, 2]] = np.clip(xy[:, [0, 2]], 0, self.src_width)
            xy[:, [1, 3]] = np.clip(xy[:, [1, 3]], 0, self.src_height)
        if fmt == "xywh":  # back to the caller's format
            xy[:, 2:] -= xy[:, :2]
        elif fmt == "cxcywh":
            size = xy[:, 2:] - xy[:, :2]
            xy[:, :2] += size / 2
            xy[:, 2:] = size
        return b[0] if single else b


@dataclass(frozen=True)
class Traced:
    """A symbolic image: what the engine must compute, relative to one source array."""

    dtype: str  # "u8" | "f32" of the source
    n: int  # 0 for a single image
    src_h: int
    src_w: int
    src_c: int
    strides: Tuple[int, int, int, int]
    pre: View
    resize: Optional[Tuple[str, Union[bool, str], int, int]] = None  # kind, antialias (True, False, "torch" or "torch-noaa"), h, w
    # After a resize or pad: how each axis shows the resized content (see _geometry.Axis).
    rows: Optional[Axis] = None
    cols: Optional[Axis] = None
    pad: Optional[Tuple[float, ...]] = None  # the padding's value per current channel
    cmap: Tuple[int, ...] = ()
    norm: Optional[Tuple[Tuple[float, ...], Tuple[float, ...], float, str, str]] = None
    # The normalised CHW float32 result laid out as patch rows (patch_size, merge_size, temporal_patch_size):
    # Qwen2-VL's pixel_values (the engine's norm.patch; _ops.patch_rows).
    patch: Optional[Tuple[int, int, int]] = None
    # The caller's argument that set the current height and width, which the too-large checks name:
    # "src" until an op grows the image (resize, letterbox, center_crop: "size"; pad: "padding", "size"
    # or "multiple"). Not part of the plan, so not compared either.
    size_arg: str = field(default="src", compare=False)
    yuv: Optional[str] = None  # a YUV source's planes and colour: the engine's in.yuv as JSON (_yuv.py)
    # The resize runs premultiplied by alpha, as Pillow resizes "RGBA": a uint8 4-channel source with
    # its channels as they are, resized by Pillow's arithmetic (antialias=True) to another size.
    premul: bool = False
    # The source array's own (shape, strides) on a function's untouched start (trace_array), which
    # goprep.yuv reads a frame's planes from; and, where that array is no image (a YUYV frame's
    # (H, W, 2), a batch of NV12 frames), the error any other op raises on it.
    raw: Optional[Tuple[Tuple[int, ...], Tuple[int, ...]]] = field(default=None, compare=False)
    pending: Optional[str] = field(default=None, compare=False)

    # -- what the image looks like now -------------------------------------------------------
    @property
    def height(self) -> int:
        return self.rows.n if self.rows is not None else self.pre.h

    @property
    def width(self) -> int:
        return self.cols.n if self.cols is not None else self.pre.w

    @property
    def channels(self) -> int:
        return len(self.cmap)

    @property
    def padded(self) -> bool:
        """Whether some output pixel shows padding."""
        return self.rows is not None and self.cols is not None and (self.rows.padded or self.cols.padded)

    @property
    def out_dtype(self) -> np.dtype:
        if self.norm is not None:
            return np.dtype(np.float16 if self.norm[3] == "f16" else np.float32)
        return np.dtype(np.uint8 if self.dtype == "u8" else np.float32)

    @property
    def shape(self) -> Tuple[int, ...]:
        if self.patch is not None:  # (gh * gw, C * T * P * P)
            p, _, t = self.patch
            img: Tuple[int, ...] = ((self.height // p) * (self.width // p), self.channels * t * p * p)
        elif self.norm is not None and self.norm[4] == "CHW":
            img = (self.channels, self.height, self.width)
        else:
            img = (self.height, self.width, self.channels)
        return ((self.n,) + img) if self.n else img

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def chw(self) -> bool:
        """Whether the result is laid out (C, H, W)."""
        return self.norm is not None and self.norm[4] == "CHW"

    # -- guards: a traced image is not an array ------------------------------------------------
    def __array__(self, *a: Any, **k: Any) -> Any:
        raise PipelineError(
            "only goprep ops can be applied to the image inside a @goprep.pipeline function; "
            "NumPy operations cannot be fused"
        )

    def __array_ufunc__(self, *a: Any, **k: Any) -> Any:
        return self.__array__()

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes a Traced lacks, e.g. NumPy methods called on the traced image.
        if name.startswith("__"):
            raise AttributeError(name)
        raise PipelineError(
            f"'.{name}' is not available on the image inside a @goprep.pipeline function: only goprep ops "
            "can be fused"
        )

    def __getitem__(self, item: Any) -> Any:
        raise PipelineError("indexing a traced image is not supported inside @goprep.pipeline; use goprep.crop")

    def __len__(self) -> int:
        raise PipelineError("len() of a traced image is not available inside @goprep.pipeline; use .shape")

    def __bool__(self) -> bool:  # an object is true; without this, defining __len__ would make bool() raise
        return True

    def _not_after_norm(self, op: str) -> None:
        if self.norm is not None:
            raise PipelineError(f"{op} cannot follow normalize: normalize must be the last op of a pipeline")

    # -- ops ----------------------------------------------------------------------------------
    def with_view(self, child: View) -> "Traced":
        if self.rows is None or self.cols is None:
            return replace(self, pre=self.pre.then(child))
        return replace(
            self, rows=self.rows.view(child.y0, child.sy, child.h), cols=self.cols.view(child.x0, child.sx, child.w)
        )

    def crop(self, top: int, left: int, height: int, width: int) -> "Traced":
        self._not_after_norm("crop")
        top, left, height, width = check_window(top, left, height, width, self.height, self.width)
        return self.with_view(View(top, left, 1, 1, height, width))

    def flip(self, horizontal: bool, vertical: bool) -> "Traced":
        self._not_after_norm("flip")
        h, w = self.height, self.width
        return self.with_view(
            View(h - 1 if vertical else 0, w - 1 if horizontal else 0, -1 if vertical else 1, -1 if horizontal else 1, h, w)
        )

    def resized(self, kind: str, antialias: Union[bool, str], h: int, w: int) -> "Traced":
        self._not_after_norm("resize")
        if self.resize is not None:
            raise PipelineError("a pipeline can contain only one resize or letterbox")
        t = self
        if t.rows is not None and t.cols is not None:
            if t.padded:
                raise PipelineError("resize cannot follow padding (pad, center_crop beyond the image); pad after resizing")
            # A pad that later crops removed entirely is only a view: fold it into the source view.
            r, c = t.rows, t.cols
            t = replace(t, pre=t.pre.then(View(r.a, c.a, r.s, c.s, r.n, c.n)), rows=None, cols=None, pad=None)
        premul = (t.dtype == "u8" and t.yuv is None and antialias is True and kind in ("bilinear", "bicubic", "lanczos")
                  and t.src_c == 4 and t.cmap == (0, 1, 2, 3) and (h, w) != (t.pre.h, t.pre.w))
        return replace(t, resize=(kind, antialias, h, w), rows=Axis.identity(h), cols=Axis.identity(w), size_arg="size",
                       premul=premul)

    def padded_by(self, top: int, bottom: int, left: int, right: int, value: Tuple[float, ...], argument: str) -> "Traced":
        """Place the image at (top, left) on a canvas grown by the given margins, filled with ``value``
        (one number per current channel); ``argument`` is the caller's argument that set the margins."""
        self._not_after_norm("pad")
        if top == bottom == left == right == 0:
            return self
        t = self
        if t.rows is None or t.cols is None:
            t = replace(t, rows=Axis.identity(t.pre.h), cols=Axis.identity(t.pre.w))
        if t.padded and t.pad != value:
            raise PipelineError(
                f"pad_value {list(value)} differs from the padding already in the image ({list(t.pad or ())}); "
                "one pipeline fills all its padding with one value"
            )
        return replace(
            t, rows=t.rows.pad(top, bottom), cols=t.cols.pad(left, right), pad=value, size_arg=argument  # type: ignore[union-attr]
        )

    def mapped(self, cmap: Sequence[int]) -> "Traced":
        self._not_after_norm("cvt_color")
        pad = None if self.pad is None else tuple(self.pad[i] for i in cmap)
        return replace(self, cmap=tuple(self.cmap[i] for i in cmap), pad=pad)

    def normalized(self, mean: Tuple[float, ...], std: Tuple[float, ...], scale: float, dtype: str, layout: str) -> "Traced":
        self._not_after_norm("normalize")
        return replace(self, norm=(mean, std, scale, dtype, layout))

    def patched(self, size: int, merge: int, temporal: int) -> "Traced":
        """The normalised result as patch rows (see ``_ops.patch_rows``, which validates)."""
        return replace(self, patch=(size, merge, temporal))

    # -- the engine's spec --------------------------------------------------------------------
    def spec(self) -> str:
        if self.resize is None:
            kind, aa, rh, rw = "none", False, self.pre.h, self.pre.w
        else:
            kind, aa, rh, rw = self.resize
        rows = self.rows if self.rows is not None else Axis.identity(rh)
        cols = self.cols if self.cols is not None else Axis.identity(rw)
        canvas, post, frame = emit(rows, cols, rh, rw)
        canvas["pad"] = [float(v) for v in self.pad] if self.pad is not None else [0.0]  # type: ignore[assignment]
        norm = None
        if self.norm is not None:
            mean, std, scale, dt, layout = self.norm
            norm = {"mean": list(mean), "std": list(std), "scale": scale, "dtype": dt, "layout": layout}
            if self.patch is not None:
                norm["patch"] = dict(zip(("size", "merge", "temporal"), self.patch))
        d = {
            "in": {"dtype": self.dtype, "n": self.n, "h": self.src_h, "w": self.src_w, "c": self.src_c, "strides": list(self.strides)},
            "pre": dataclasses.asdict(self.pre),
            "resize": {"kind": kind, "antialias": aa is True or aa == "torch", "h": rh, "w": rw,
                       **({"torch_u8": True} if aa in AA_TORCH else {}), **({"premultiply": True} if self.premul else {})},
            "canvas": canvas,
            "post": post,
            "cmap": list(self.cmap),
            "norm": norm,
        }
        if frame is not None:
            d["frame"] = frame
        if self.yuv is not None:
            d["in"]["yuv"] = json.loads(self.yuv)  # type: ignore[index]
        return json.dumps(d, separators=(",", ":"))


def _no_arithmetic(name: str) -> Any:
    def op(self: Traced, *a: Any) -> Any:
        raise PipelineError(
            f"arithmetic ({name}) on a traced image cannot be fused inside @goprep.pipeline; "
            "use goprep.normalize for scaling and offsets"
        )

    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift"):
    for _form in ("__{}__", "__r{}__"):
        setattr(Traced, _form.format(_name), _no_arithmetic(_form.format(_name)))
for _name in ("__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(Traced, _name, _no_arithmetic(_name))


def typed_key(v: Any) -> Any:
    """A cache key for an argument value that also tells types apart, at every depth: ``True`` and ``1``
    or ``(4, 4)`` and ``(4.0, 4)`` compare equal but must not share a cache entry, since only one of
    each pair passes validation; nor may ``-0.0`` and ``0.0``, which give results of different sign."""
    t = type(v)
    if t is str or t is int or t is bool:  # the common cases first: this runs on every eager call
        return (t, v)
    if t is float or isinstance(v, np.floating):
        return (t, v, math.copysign(1.0, v)) if v == 0 else (t, v)
    if t is tuple or t is list:
        return (t, tuple(map(typed_key, v)))
    if t is dict:
        return (dict, tuple((k, typed_key(x)) for k, x in v.items()))
    return (t, v)


def check_window(top: Any, left: Any, height: Any, width: Any, h: int, w: int) -> Tuple[int, int, int, int]:
    return _validate.check_window(top, left, height, width, h, w)


_DTYPES = {"|u1": "u8", "<f4": "f32", "=f4": "f32"}


def trace_array(a: Any, argument: str = "src", lenient: bool = False) -> Traced:
    """Validate a NumPy image or batch and describe it as an untouched Traced image: ``(H, W, C)``,
    ``(N, H, W, C)``, or ``(H, W)``, a one-channel image (as OpenCV takes it). Shape and strides are
    read from the base ndarray (see base_array), never from attributes a subclass can override.
    ``lenient`` (a pipeline's start): a uint8 array whose channel count is no image's is described
    all the same, with the error left ``pending`` for the first op, since ``goprep.yuv`` may read it
    as a frame."""
    a = base_array(a, argument)
    if not isinstance(a, np.ndarray):
        raise InvalidArgumentError(f"must be a numpy.ndarray, got {type(a).__name__}", argument=argument)
    dt = a.dtype
    code = _DTYPES.get(dt.str)
    if code is None:
        if dt.kind in "uf" and dt.itemsize in (1, 4) and dt.byteorder not in "=|<":
            raise DTypeError(f"must be in native byte order, got {dt.str!r}", argument=argument)
        raise DTypeError(f"dtype must be uint8 or float32, got {dt}", argument=argument)
    if a.ndim == 2:
        n, (h, w), c = 0, a.shape, 1
        sn, (sh, sw), sc = 0, a.strides, 0
    elif a.ndim == 3:
        n, (h, w, c) = 0, a.shape
        sn, (sh, sw, sc) = 0, a.strides
    elif a.ndim == 4:
        n, h, w, c = a.shape
        sn, sh, sw, sc = a.strides
        if n == 0:
            raise ShapeError("batch must hold at least one image, got N=0", argument=argument)
    else:
        raise ShapeError(f"must be (H, W), (H, W, C) or (N, H, W, C), got {a.ndim} dimensions {a.shape}",
                         argument=argument)
    if h == 0 or w == 0:
        raise ShapeError(f"image size {h}x{w} has a zero dimension", argument=argument)
    pending = None
    if c not in (1, 3, 4):
        lead = a.shape[-3]
        hint = (f"; {a.shape} looks like CHW: goprep takes HWC NumPy arrays (a.transpose(1, 2, 0), or "
                "a.transpose(0, 2, 3, 1) for a batch), or pass a torch tensor, which is read as (C, H, W)"
                if lead in (1, 3, 4) else "")
        pending = f"channels must be 1, 3 or 4, got {c}{hint}"
        if not (lenient and code == "u8"):
            raise ShapeError(pending, argument=argument)
    _validate.check_aligned(code == "f32", a, argument)
    return Traced(code, n, h, w, c, (sn, sh, sw, sc), View.identity(h, w), cmap=tuple(range(c)),
                  raw=(a.shape, a.strides), pending=pending)


def parse_size(size: Any, argument: str = "size") -> Tuple[int, int]:
    return _validate.parse_size(size, _native.limit("max_dim"), argument)


def check_out_size(t: Traced) -> None:
    """The result's size, checked before a plan is built, naming the argument that set it (a pad's
    ``padding`` too: padding is not limited where it is parsed)."""
    max_dim = _native.limit("max_dim")
    if t.height > max_dim or t.width > max_dim:
        raise ShapeError(
            f"the {t.height}x{t.width} result exceeds the limit of {max_dim} per dimension",
            argument=t.size_arg,
            code="too_large",
        )
    nbytes = math.prod(t.shape) * t.out_dtype.itemsize
    if nbytes > MAX_OUT_BYTES:
        raise ShapeError(f"the result would take {nbytes} bytes", argument=t.size_arg, code="too_large")
