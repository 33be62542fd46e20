"""YUV video frames as pipeline sources: ``goprep.yuv(frame, format=..., matrix=..., range=...)``.

A ``YUVFrame`` describes the planes of an NV12 / NV21 / I420 / YV12 / YUYV / UYVY frame (or a batch
of them) in place, with its colour matrix and range. Pipelines and eager ops accept it as they accept
a NumPy image: the engine reads it as an H x W RGB image, converting only the source rows and columns
the resize reads, in the same pass (gomod/engine/yuv.go); there is no RGB intermediate.

The engine reads one source pointer (the Y plane's first byte) and the other planes at byte offsets
from it (``InputSpec.yuv.planes``), so separate plane arrays need no copy; their offsets are part of
the plan, so planes that move between calls make new plans (a single-array frame never does).

A JPEG decoder's raw YCbCr output (4:2:0 or 4:2:2 planes, BT.601 full range) is the same kind of
input: three planes as I420 with ``preset="jpeg"``.

YUV frames are one input kind of the run path (_inputs.FrameItem). Inside a pipeline function,
``goprep.yuv`` applied first to the image argument reads the array the pipeline was called with as a
frame (``_traced``), as ``goprep.decode`` reads encoded data.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ._device import DeviceSource, device_source
from ._errors import DTypeError, InvalidArgumentError, PipelineError, ShapeError
from ._trace import Traced, View, check_traced
from ._validate import as_choice, device_sources

FORMATS = ("nv12", "nv21", "i420", "yv12", "yuyv", "uyvy")
MATRICES = ("bt601", "bt709", "bt2020")
RANGES = ("limited", "full")
PRESETS = {"opencv": ("bt601", "limited", True), "jpeg": ("bt601", "full", False)}
ORDERS = ("rgb", "bgr")


def _addr(a: np.ndarray, dev: Optional[Dict[int, int]] = None) -> int:
    """The address of a plane's first element: a host array's, or (``dev``: stand-ins by id) the
    device pointer of the CUDA array whose stand-in ``a`` is."""
    if dev is not None:
        return dev[id(a)]
    return int(a.__array_interface__["data"][0])


def _device_planes(frame: Any) -> Optional[List[Any]]:
    """The DeviceSources of a frame given as CUDA arrays (CAI or DLPack: CuPy, torch CUDA tensors,
    goprep.DeviceArray), one per array, or None for host arrays; a mix is refused."""
    arrays = list(frame) if isinstance(frame, (tuple, list)) else [frame]
    ds = []
    for a in arrays:
        try:
            ds.append(None if isinstance(a, np.ndarray) else device_source(a, None))
        except InvalidArgumentError as e:
            raise type(e)(str(e), argument="frame") from None
    if all(d is None for d in ds):
        return None
    if any(d is None for d in ds):
        raise InvalidArgumentError("planes must be all host (NumPy) or all CUDA arrays", argument="frame")
    device_sources(ds, "frame", "planes")
    return ds


_TO_RGB: List[Callable[[Any], np.ndarray]] = []  # the one-op pipeline reading a frame as RGB (_ops sets it)


def set_to_rgb(fn: Callable[[Any], np.ndarray]) -> None:
    """Set what ``np.asarray(frame)`` runs: _ops's one-op pipeline (set there, since pipelines are
    built on this module)."""
    _TO_RGB[:] = [fn]


class YUVFrame:
    """A YUV frame or batch of frames, read in place (see ``goprep.yuv``). ``height``/``width`` are
    the image's, ``n`` the batch size (0: one frame); ``base`` is the array the engine's pointer is
    taken from (the Y plane's), ``planes`` each plane's (byte offset from it, row stride)."""

    __slots__ = ("format", "matrix", "range", "opencv", "order", "n", "height", "width", "base", "planes",
                 "batch_stride", "keep", "key", "nbytes")

    dtype = np.dtype(np.uint8)  # what it reads as: a uint8 RGB image

    def __repr__(self) -> str:
        n = f"{self.n} x " if self.n else ""
        return (f"<goprep.YUVFrame {n}{self.height}x{self.width} {self.format} {self.matrix} {self.range}"
                f"{' (OpenCV arithmetic)' if self.opencv else ''} -> {self.order}>")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The frame as its RGB (or BGR) image, ``(H, W, 3)`` uint8 (``(N, H, W, 3)`` for a batch),
        converted by the engine: ``np.asarray(frame)``."""
        a = _TO_RGB[0](self)
        return a if dtype is None else a.astype(dtype, copy=False)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape of the RGB image it reads as."""
        img = (self.height, self.width, 3)
        return ((self.n,) + img) if self.n else img

    def traced(self) -> Traced:
        """The untouched symbolic image of this frame: an RGB (or BGR) image read through the planes."""
        fmt = "i420" if self.format == "yv12" else self.format
        spec = {"format": fmt, "matrix": self.matrix, "range": self.range, "opencv": self.opencv,
                "planes": [{"off": o, "stride": s} for o, s in self.planes]}
        h, w = self.height, self.width
        cmap = (0, 1, 2) if self.order == "rgb" else (2, 1, 0)
        return Traced("u8", self.n, h, w, 3, (self.batch_stride, 0, 0, 0), View.identity(h, w), cmap=cmap,
                      yuv=json.dumps(spec, separators=(",", ":")))


def _u8(a: Any, argument: str) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise InvalidArgumentError(f"must be a numpy.ndarray (or a tuple of plane arrays), got {type(a).__name__}",
                                   argument=argument)
    if a.dtype != np.uint8:
        raise DTypeError(f"YUV planes must be uint8, got {a.dtype}", argument=argument)
    return a.view(np.ndarray) if type(a) is not np.ndarray else a


def _rows(a: np.ndarray, batch: bool, row_bytes: int, argument: str) -> Tuple[int, int]:
    """(row stride, batch stride) of a plane whose rows are ``row_bytes`` contiguous bytes."""
    st = a.strides
    inner = st[(2 if batch else 1):]
    shape = a.shape[(2 if batch else 1):]
    # the bytes of a row must be contiguous: the innermost axes packed
    acc = 1
    for n, s in zip(reversed(shape), reversed(inner)):
        if n > 1 and s != acc:
            raise ShapeError(f"each row of a plane must be contiguous bytes (strides {st}); pass "
                             "np.ascontiguousarray(frame)", argument=argument)
        acc *= n
    rs = st[1 if batch else 0]
    if rs < row_bytes:
        raise ShapeError(f"rows {rs} bytes apart overlap rows of {row_bytes} bytes (strides {st})", argument=argument)
    return rs, (st[0] if batch else 0)


def yuv(
    frame: Any,
    format: str = "nv12",
    matrix: Optional[str] = None,
    range: Optional[str] = None,
    *,
    preset: Optional[str] = None,
    order: str = "rgb",
) -> YUVFrame:
    """A YUV video frame (or batch) as a goprep source, read in place; pipelines and eager ops accept it
    as they accept an ``(H, W, 3)`` image, which it reads as (RGB, or BGR with ``order="bgr"``), and
    ``np.asarray(frame)`` is that image. Inside a ``@goprep.pipeline`` function, applied first to the
    image argument, it reads the one array the pipeline is called with (the single-array forms below)
    as such a frame.

    ``frame``, by ``format``:

    - ``"nv12"`` / ``"nv21"``: an ``(H*3/2, W)`` uint8 array (the Y plane, then the interleaved U,V
      or V,U plane: PyAV's ``frame.to_ndarray(format="nv12")``), or a tuple ``(y, uv)`` of an
      ``(H, W)`` and an ``(H/2, W)`` or ``(H/2, W/2, 2)`` array;
    - ``"i420"`` / ``"yv12"``: an ``(H*3/2, W)`` C-contiguous array (Y, then U then V for i420, V
      then U for yv12, each ``H/2 x W/2``), or a tuple ``(y, u, v)``;
    - ``"yuyv"`` / ``"uyvy"``: an ``(H, W, 2)`` array (Y0 U Y1 V / U Y0 V Y1 per pixel pair).

    Host arrays (NumPy) or CUDA arrays (``__cuda_array_interface__`` / DLPack: CuPy, torch CUDA
    tensors, ``goprep.DeviceArray``), read in place; device planes given separately must be views
    into one allocation. Device frames run on their GPU.

    A leading batch axis makes a batch: ``(N, H*3/2, W)``, ``(N, H, W, 2)``, or planes with one.
    Width (and for 4:2:0 height) must be even, as OpenCV requires.

    Colour: ``matrix`` (``"bt601"``, ``"bt709"``, ``"bt2020"``) and ``range`` (``"limited"``: Y in
    16-235, chroma 16-240; ``"full"``) must be stated, or a ``preset``: ``"opencv"`` (BT.601 limited
    with OpenCV's fixed-point constants: byte-identical to ``cv2.cvtColor(..., COLOR_YUV2RGB_NV12``
    / ``_I420`` / ``_YUYV`` ...)) or ``"jpeg"`` (BT.601 full range, JFIF). Other matrices are within
    1 level of the exact formula. Chroma is replicated over its 2x2 / 2x1 block, as OpenCV does.

    The same stage would take a JPEG decoder's raw YCbCr planes (I420-like, ``preset="jpeg"``).
    """
    fmt, m, r, ocv, o = _colour(format, matrix, range, preset, order)
    f = YUVFrame()
    f.format, f.matrix, f.range, f.opencv, f.order = fmt, m, r, ocv, o
    if isinstance(frame, Traced):
        return _traced(f, frame)
    ds = _device_planes(frame)
    dev = None if ds is None else {id(d.view): d.ptr for d in ds}
    if isinstance(frame, (tuple, list)):
        _planes(f, [_u8(a if d is None else d.view, "frame") for a, d in zip(frame, ds or [None] * len(frame))], dev)
    else:
        _single(f, _u8(frame if ds is None else ds[0].view, "frame"))
    if ds is not None:  # read in place on the device: the Y plane's pointer, the others at offsets from it
        y = ds[0]
        stream = next((d.stream for d in ds if d.stream is not None), None)
        f.base = DeviceSource(y.ptr, y.device, stream, y.view, tuple(d.keep for d in ds))
        f.keep = (f.base,)
    f.key = ("yuv", f.format, f.matrix, f.range, f.opencv, f.order, f.n, f.height, f.width, tuple(f.planes),
             f.batch_stride)
    return f


def _traced(f: YUVFrame, t: Traced) -> Traced:
    """goprep.yuv inside a pipeline function: its image argument, the array the pipeline was called
    with (its layout in ``t.raw``), read as a frame of ``f``'s format and colour."""
    check_traced(t, "frame", raw=True)
    h, w, c = t.src_h, t.src_w, t.src_c
    start = Traced(t.dtype, t.n, h, w, c, t.strides, View.identity(h, w), cmap=tuple(range(c)))
    if t.raw is None or t != start:
        raise PipelineError("goprep.yuv must be the first op, applied to the function's image argument (one array "
                            "holding the frame's planes; separate plane arrays are read with goprep.yuv outside the "
                            "pipeline)", argument="frame")
    if t.dtype != "u8":
        raise DTypeError("YUV planes must be uint8, got float32", argument="frame")
    shape, strides = t.raw
    _single(f, np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape, strides, writeable=False))
    return f.traced()


def _colour(format: Any, matrix: Any, range: Any, preset: Any, order: Any) -> Tuple[str, str, str, bool, str]:
    """goprep.yuv's options, validated: (format, matrix, range, OpenCV arithmetic, order)."""
    fmt = as_choice("format", format, FORMATS, fold_case=True)
    if preset is not None:
        p = as_choice("preset", preset, tuple(PRESETS), fold_case=True)
        m, r, ocv = PRESETS[p]
        if (matrix is not None and as_choice("matrix", matrix, MATRICES, fold_case=True) != m) or (
                range is not None and as_choice("range", range, RANGES, fold_case=True) != r):
            raise InvalidArgumentError(f"preset {p!r} is {m} {r} range; leave matrix and range unset with it",
                                       argument="preset")
    else:
        if matrix is None or range is None:
            raise InvalidArgumentError(
                f"the colour matrix and range must be stated: matrix= one of {', '.join(map(repr, MATRICES))}, "
                f"range= one of {', '.join(map(repr, RANGES))}, or preset='opencv' / 'jpeg'",
                argument="matrix" if matrix is None else "range")
        m, r, ocv = as_choice("matrix", matrix, MATRICES, fold_case=True), as_choice("range", range, RANGES, fold_case=True), False
    return fmt, m, r, ocv, as_choice("order", order, ORDERS, fold_case=True)


def _even(f: YUVFrame, h: int, w: int) -> None:
    four20 = f.format not in ("yuyv", "uyvy")
    if w % 2 or (four20 and h % 2):
        what = "width and height" if four20 else "width"
        raise ShapeError(f"{f.format} needs an even {what} (chroma covers 2x2 or 2x1 pixels), got {h}x{w}",
                         argument="frame")
    if h == 0 or w == 0:
        raise ShapeError(f"frame size {h}x{w} has a zero dimension", argument="frame")


def _single(f: YUVFrame, a: np.ndarray) -> None:
    """One array holding every plane."""
    packed = f.format in ("yuyv", "uyvy")
    want = 3 if packed else 2
    if a.ndim not in (want, want + 1):
        form = "(H, W, 2)" if packed else "(H*3/2, W)"
        raise ShapeError(f"a {f.format} frame must be {form} or a batch (N, ...) of them, got shape {a.shape}",
                         argument="frame")
    batch = a.ndim == want + 1
    if batch and a.shape[0] == 0:
        raise ShapeError("batch must hold at least one frame, got N=0", argument="frame")
    f.n = a.shape[0] if batch else 0
    img = a.shape[1:] if batch else a.shape
    if packed:
        h, w, two = img
        if two != 2:
            raise ShapeError(f"a {f.format} frame must be (H, W, 2), got shape {a.shape}", argument="frame")
        _even(f, h, w)
        rs, bs = _rows(a, batch, 2 * w, "frame")
        f.planes = [(0, rs)]
    else:
        rows, w = img
        if rows % 3:
            raise ShapeError(f"a {f.format} frame must be (H*3/2, W): {rows} rows is not a multiple of 3 "
                             f"(shape {a.shape})", argument="frame")
        h = rows * 2 // 3
        _even(f, h, w)
        rs, bs = _rows(a, batch, w, "frame")
        if f.format in ("nv12", "nv21"):
            f.planes = [(0, rs), (h * rs, rs)]
        else:
            if rs != w:  # chroma rows are W/2 bytes apart only in a contiguous buffer
                raise ShapeError(f"an (H*3/2, W) {f.format} frame must be C-contiguous (rows {rs} bytes apart, W is "
                                 f"{w}); pass np.ascontiguousarray(frame) or its three planes", argument="frame")
            q = (h // 2) * (w // 2)
            u, v = h * w, h * w + q
            if f.format == "yv12":
                u, v = v, u
            f.planes = [(0, w), (u, w // 2), (v, w // 2)]
    f.height, f.width, f.batch_stride = h, w, bs
    f.base, f.keep, f.nbytes = a, (a,), a.nbytes


def _planes(f: YUVFrame, ps: List[np.ndarray], dev: Optional[Dict[int, int]] = None) -> None:
    """Separate plane arrays: (y, uv) or (y, u, v), each maybe batched (``dev``: CUDA arrays' stand-ins,
    their device pointers by id)."""
    if f.format in ("yuyv", "uyvy"):
        raise InvalidArgumentError(f"a {f.format} frame is one (H, W, 2) array, not planes", argument="frame")
    want = 2 if f.format in ("nv12", "nv21") else 3
    if len(ps) != want:
        raise ShapeError(f"{f.format} takes {want} planes, got {len(ps)}", argument="frame")
    y = ps[0]
    if y.ndim not in (2, 3):
        raise ShapeError(f"the Y plane must be (H, W) or (N, H, W), got shape {y.shape}", argument="frame")
    batch = y.ndim == 3
    if batch and y.shape[0] == 0:
        raise ShapeError("batch must hold at least one frame, got N=0", argument="frame")
    f.n = y.shape[0] if batch else 0
    h, w = y.shape[-2:]
    _even(f, h, w)
    ry, bs = _rows(y, batch, w, "frame")
    planes = [(0, ry)]
    base = _addr(y, dev)
    for i, c in enumerate(ps[1:], 1):
        cw = w if want == 2 else w // 2
        img = c.shape[1:] if batch else c.shape
        ok = img in ((h // 2, w), (h // 2, w // 2, 2)) if want == 2 else img == (h // 2, w // 2)
        if not ok or (batch and c.shape[0] != f.n):
            form = f"({h // 2}, {w}) or ({h // 2}, {w // 2}, 2)" if want == 2 else f"({h // 2}, {w // 2})"
            raise ShapeError(f"plane {i} must be {form}{' per frame' if batch else ''} for a {h}x{w} {f.format} frame, "
                             f"got shape {c.shape}", argument="frame")
        rc, bc = _rows(c, batch, cw, "frame")
        if batch and f.n > 1 and bc != bs:
            raise ShapeError(f"plane {i}'s batch stride {bc} differs from the Y plane's {bs}", argument="frame")
        planes.append((_addr(c, dev) - base, rc))
    if f.format == "yv12":
        planes[1], planes[2] = planes[2], planes[1]
    f.planes = planes
    f.height, f.width, f.batch_stride = h, w, bs
    f.base, f.keep, f.nbytes = y, tuple(ps), sum(p.nbytes for p in ps)
