"""Encoded images, one input kind of the run path (_inputs.py): JPEG and PNG sources and the
``goprep.decode`` op's tracing step.

A pipeline called with encoded data (``bytes``, ``bytearray``, ``memoryview``, a 1-D uint8 array, a
``str`` / ``os.PathLike`` path, or a list of these) opens them as one batch (the binding's
``DecodeOpen``: files read and headers probed with the GIL released, bombs and bad data refused
before any pixel is decoded). Each image is an ``Encoded`` item: its memo key is its header (a stream
of same-sized photos traces once), its trace starts from a placeholder of the decoded size, and its
engine reference is an ``_run.EncodedItem``, which the engine's CPU workers decode into a buffer of
their own before running the image's plan (one Execute call for the whole batch, through _run).

Inside the function, ``goprep.decode(x, mode=..., reduce=..., apply_orientation=...)`` must be the
first op on the image argument; a function that never calls it decodes with the defaults (exact RGB),
so every pipeline accepts encoded images as they are.

``reduce="auto"`` lets the decoder skip detail the resize would throw away: the function is traced
at full size first to learn the resize's target, then JPEG's DCT scaling picks the largest factor in
(8, 4, 2, 1) that keeps the decoded image at least twice the target on each axis (Pillow's
``Image.draft`` with ``reducing_gap=2.0``), and the function is traced again on the reduced size: the
result equals Pillow's ``draft`` followed by the same ops.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _run, _validate
from ._errors import DecodeError, GoprepError, InvalidArgumentError, PipelineError, ShapeError
from ._run import EncodedItem
from ._signature import Signature, trace_fn
from ._trace import Traced, check_traced, trace_array

MODES = ("RGB", "BGR", "L", "RGBA")
_MODE_CODE = {"RGB": 0, "BGR": 0, "L": 1, "RGBA": 2}  # codec.Mode: the channels the decoder writes
_CHANNELS = {0: 3, 1: 1, 2: 4}
SCALES = (1, 2, 4, 8)

# Pillow's decompression-bomb error threshold (2 * Image.MAX_IMAGE_PIXELS, 178,956,970 pixels): an
# image above it is refused from its header, before anything is allocated.
DEFAULT_MAX_PIXELS = 2 * (1024 * 1024 * 1024 // 4 // 3)
_max_pixels = [DEFAULT_MAX_PIXELS]
# This thread's limit, over _max_pixels, for every encoded source it passes to a pipeline or decode
# (the reference server's --max-pixels, set around each request: goprep/_serve/preprocess.py). Per
# thread, so it reaches pipelines wrapped by others (goprep.transforms' Converted) without a keyword.
_thread_limit = threading.local()


class thread_max_pixels:
    """``with thread_max_pixels(n):`` this thread's encoded sources are refused above ``n`` pixels
    (None: no limit), whatever set_max_image_pixels says; restored on exit. Private (the server's)."""

    __slots__ = ("n", "prev")

    def __init__(self, n: Optional[int]) -> None:
        self.n = 0 if n is None else int(n)

    def __enter__(self) -> None:
        self.prev = getattr(_thread_limit, "n", None)
        _thread_limit.n = self.n

    def __exit__(self, *exc: Any) -> None:
        _thread_limit.n = self.prev


def set_max_image_pixels(n: Optional[int]) -> Optional[int]:
    """Refuse encoded images whose header claims more than ``n`` pixels (``DecodeError`` with code
    ``"too_large"``), checked before any memory is allocated for them. ``None`` removes the limit. The
    default, 178,956,970, is where Pillow raises ``DecompressionBombError``. Returns the previous
    limit."""
    old = _max_pixels[0]
    _max_pixels[0] = None if n is None else _validate.as_positive_int("n", n)
    return old if old else None


def get_max_image_pixels() -> Optional[int]:
    """The current limit of set_max_image_pixels (None: no limit)."""
    return _max_pixels[0] or None


@dataclass(frozen=True)
class Header:
    """What an encoded image's header says: ``format`` ("jpeg" or "png"), ``height`` x ``width`` as
    stored, ``components`` in the file, EXIF ``orientation`` (1-8), ``progressive`` (JPEG)."""

    format: str
    height: int
    width: int
    components: int
    orientation: int
    progressive: bool

    def decoded_size(self, mode: str = "RGB", scale: int = 1, apply_orientation: bool = False) -> Tuple[int, int, int]:
        """(height, width, channels) that decoding with these options gives (codec.OutSize)."""
        s = scale if self.format == "jpeg" else 1
        h, w = -(-self.height // s), -(-self.width // s)
        if apply_orientation and self.orientation >= 5:
            h, w = w, h
        return h, w, _CHANNELS[_MODE_CODE[mode]]


# -- reading encoded sources ------------------------------------------------------------------

def item_bytes(x: Any, arg: str) -> Tuple[Optional[np.ndarray], Optional[str]]:
    """An item as (a uint8 array over its bytes, None) or (None, its path)."""
    if isinstance(x, (str, os.PathLike)):
        try:
            p = os.fsdecode(x)
        except TypeError:
            raise InvalidArgumentError(f"is a path-like object whose path is not str or bytes: {x!r}", argument=arg) from None
        if "\x00" in p:
            raise InvalidArgumentError("a path cannot contain NUL characters", argument=arg)
        if not p:
            raise InvalidArgumentError("the path is empty", argument=arg)
        return None, p
    if isinstance(x, memoryview):
        if not x.c_contiguous:
            raise InvalidArgumentError("a memoryview must be C-contiguous", argument=arg)
        return np.frombuffer(x.cast("B") if x.format != "B" or x.ndim != 1 else x, np.uint8), None
    if isinstance(x, (bytes, bytearray)):
        return np.frombuffer(x, np.uint8), None
    if type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.uint8:
        return np.ascontiguousarray(x), None
    raise InvalidArgumentError(
        f"must be encoded image data (bytes, bytearray, memoryview, a 1-D uint8 array) or a path, got {type(x).__name__}",
        argument=arg,
    )


class _Batch:
    """An open decode batch (_run.open_batch): its handle, header table and format names, and the
    buffers Go reads (``bufs``, kept alive here)."""

    def __init__(self, items: Sequence[Any], is_list: bool, name: str, max_pixels: Optional[int] = None) -> None:
        n = len(items)
        desc = np.empty((n, 2), np.int64)
        paths: List[str] = []
        self.bufs: List[Optional[np.ndarray]] = []  # each item's bytes (None: a path, read by Go)
        for i, x in enumerate(items):
            arr, path = item_bytes(x, f"{name}[{i}]" if is_list else name)
            self.bufs.append(arr)
            if path is not None:
                desc[i] = (-1, len(paths))
                paths.append(path)
            else:
                assert arr is not None
                desc[i] = (arr.__array_interface__["data"][0] if arr.size else 0, arr.size)
        self.handle = 0
        try:
            self.handle, self.hdr, self.formats = _run.open_batch(
                desc, n, ",".join(os.fsencode(p).hex() for p in paths), _limit() if max_pixels is None else max_pixels,
                name, is_list)
        except DecodeError as e:
            if any(type(x) is np.ndarray for x in items):
                raise DecodeError(e.detail + "; a 1-D uint8 array is read as encoded image bytes (an image array is "
                                  "(H, W) or (H, W, C))", argument=e.argument, code=e.code) from None
            raise
        except GoprepError as e:
            # a list's item is named in the message ("src[3]: the image is ..."), not in .argument
            if e.code == "too_large" and (e.argument or e.detail).startswith(name):
                raise DecodeError(e.detail, argument=e.argument, code="too_large") from None
            raise

    def headers(self) -> List[Header]:
        f = self.formats
        return [Header(f[int(r[0])], int(r[1]), int(r[2]), int(r[3]), int(r[4]), bool(r[5])) for r in self.hdr]

    def close(self) -> None:
        if self.handle:
            _run.close_batch(self.handle)
            self.handle = 0


def _limit() -> int:
    """The bomb limit of this thread's next call (0: none): thread_max_pixels's, else the process's."""
    n = getattr(_thread_limit, "n", None)
    return (_max_pixels[0] or 0) if n is None else n


# -- tracing ----------------------------------------------------------------------------------

_ctx = threading.local()  # .state: the _TraceState of the encoded item this thread is tracing


class _TraceState:
    __slots__ = ("header", "src", "opts", "force_scale", "auto")

    def __init__(self, header: Header, src: Traced, force_scale: int) -> None:
        self.header = header
        self.src = src  # the function's image argument: decode must be applied to it
        self.opts: Optional[Tuple[int, int, bool]] = None  # (mode code, scale, apply_orientation)
        self.force_scale = force_scale  # reduce="auto"'s factor, known from the first trace
        self.auto = False


def _placeholder(h: int, w: int, c: int) -> Traced:
    """A Traced image of an (h, w, c) contiguous uint8 source: the decoder's output layout."""
    fake = np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), (h, w, c), (w * c, c, 1), writeable=False)
    return trace_array(fake)


def decode_traced(t: Traced, mode: str, reduce: Union[int, str], orient: bool) -> Traced:
    """``goprep.decode`` on the image argument of a function traced for an encoded source."""
    check_traced(t, "data")
    st: Optional[_TraceState] = getattr(_ctx, "state", None)
    if st is None:
        raise PipelineError(
            "goprep.decode takes encoded image data (bytes, a path, ...), but this pipeline was called with "
            "an image array; call it with the encoded bytes, or drop goprep.decode", argument="data")
    if t is not st.src:
        raise PipelineError("goprep.decode must be the first op, applied to the function's image argument", argument="data")
    if st.opts is not None:
        raise PipelineError("goprep.decode is applied twice to the same image", argument="data")
    hdr = st.header
    if reduce == "auto":
        st.auto = True
        scale = st.force_scale
    else:
        scale = int(reduce)
    if hdr.format != "jpeg":
        scale = 1  # DCT scaling is JPEG's; other formats decode at full size
    st.opts = (_MODE_CODE[mode], scale, orient)
    h, w, c = hdr.decoded_size(mode, scale, orient)
    out = _placeholder(h, w, c)
    return out.mapped((2, 1, 0)) if mode == "BGR" else out


def draft_scale(h: int, w: int, rh: int, rw: int) -> int:
    """Pillow's draft rule with reducing_gap 2: the largest of 8, 4, 2 that keeps an ``h x w`` region
    at least twice the ``rh x rw`` resize target on each axis once DCT-scaled, else 1."""
    scale = min(w // (2 * rw), h // (2 * rh))
    for a in (8, 4, 2):
        if scale >= a:
            return a
    return 1


def _auto_scale(hdr: Header, traced: Traced, full: Tuple[int, int]) -> int:
    """reduce="auto"'s factor: Pillow's draft rule with reducing_gap 2 against the resize's target,
    when the resize reads the whole decoded image (``full``: its size at scale 1; a crop before the
    resize keeps full size, since its coordinates are the full image's)."""
    if hdr.format != "jpeg" or traced.resize is None:
        return 1
    pre = traced.pre
    if (pre.h, pre.w) != full:
        return 1
    _, _, rh, rw = traced.resize
    return draft_scale(pre.h, pre.w, rh, rw)


class Encoded:
    """One encoded image of an open batch as the run path takes it (the encoded input kind): its memo
    key is its header's, tracing starts from a placeholder of the size it decodes to (twice for
    reduce="auto"), and its engine reference is an ``EncodedItem``, decoded with its signature's
    options (``Signature.decode``). ``mem``: its bytes (none for a path), which an out= must not
    overlap."""

    __slots__ = ("header", "key", "ref", "mem", "scale")
    kind = None  # results are NumPy arrays
    on_dev = False
    dtype = np.dtype(np.uint8)

    def __init__(self, header: Header, batch: "_Batch", index: int) -> None:
        self.header = header
        self.key = ("decode", header.format, header.height, header.width, header.orientation)
        self.ref = EncodedItem(batch.handle, index)
        b = batch.bufs[index]
        self.mem = () if b is None else (b,)
        self.scale = 1  # the caller's DCT scale (at_scale), for a function that does not call decode

    def at_scale(self, scale: int) -> "Encoded":
        """This JPEG decoded DCT-scaled to ``ceil(size / scale)`` (Pillow's ``draft``) for a function
        that does not call goprep.decode: the function sees the reduced image (a training batch's
        reduce="auto": transforms/_random.py)."""
        e = Encoded.__new__(Encoded)
        e.header, e.ref, e.mem, e.scale = self.header, self.ref, self.mem, scale
        e.key = self.key + (scale,)
        return e

    def trace(self, fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], opts: Any) -> Signature:
        """The signature of ``fn`` for this header, its ``decode`` the options the function chose. The
        decode runs on the CPU, so the signature is placed there whatever the pipeline's device
        (a device output is uploaded after: _pipeline)."""
        hdr = self.header
        traced, template, st = _trace_one(fn, hdr, args, kwargs, 1, self.scale)
        if st.auto and self.scale == 1:
            h1, w1, _ = hdr.decoded_size("RGB", 1, st.opts[2])
            a = _auto_scale(hdr, traced, (h1, w1))
            if a > 1:
                traced, template, st = _trace_one(fn, hdr, args, kwargs, a)
        mode, scale, orient = st.opts
        h, w, c = hdr.decoded_size(_MODE_NAME[mode], scale, orient)
        return Signature(traced, template, h * w * c, "cpu", "numpy", True, decode=st.opts)


_MODE_NAME = {0: "RGB", 1: "L", 2: "RGBA"}  # codec.Mode -> a mode of that channel count


def _trace_one(fn: Any, hdr: Header, args: Tuple[Any, ...], kwargs: Dict[str, Any], force_scale: int,
               preset: int = 1) -> Tuple[Traced, Any, _TraceState]:
    """``fn`` traced on ``hdr``'s image: from its stored size, or with ``preset`` > 1 (Encoded.at_scale)
    from its DCT-scaled size, which a function calling goprep.decode cannot take."""
    h, w = (hdr.height, hdr.width) if preset == 1 else hdr.decoded_size("RGB", preset)[:2]
    src = _placeholder(h, w, 3)
    st = _TraceState(hdr, src, force_scale)
    prev = getattr(_ctx, "state", None)
    _ctx.state = st
    try:
        traced, template = trace_fn(fn, src, args, kwargs)
    finally:
        _ctx.state = prev
    if st.opts is None:  # the function never called decode: the defaults (exact RGB), or the preset scale
        st.opts = (0, preset, False)
    elif preset != 1:
        raise PipelineError("goprep.decode in a function whose images the caller decodes DCT-scaled (reduce= of a "
                            "training batch): leave the decode to the caller", argument="data")
    return traced, template, st


def open_items(src: Any, name: str = "src", max_pixels: Optional[int] = None) -> Tuple[List[Encoded], "_Batch"]:
    """Encoded ``src`` (an item, or a list or tuple of them) opened as one batch: its items, and the
    batch, which the caller closes (``close()``) once the call has run. ``max_pixels``: this call's
    bomb limit instead of set_max_image_pixels's (the server's own); ``name``: the argument errors
    name ("src" in pipelines, "data" in goprep.decode)."""
    is_list = isinstance(src, (list, tuple))
    items = list(src) if is_list else [src]
    if not items:
        raise ShapeError("the list of images is empty", argument=name)
    b = _Batch(items, is_list, name, max_pixels)
    return [Encoded(h, b, i) for i, h in enumerate(b.headers())], b
