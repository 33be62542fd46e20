"""Encoded images in: ``goprep.decode`` and the pipeline path of JPEG/PNG sources.

A pipeline called with encoded data (``bytes``, ``bytearray``, ``memoryview``, a 1-D uint8 array, a
``str`` / ``os.PathLike`` path, or a list of these) runs it in two engine calls (gomod/binding
decode.go): ``DecodeOpen`` reads files and headers (GIL released) and refuses bombs and bad data
before any pixel is decoded; Python then traces the function once per header (the memo keys on the
decoded size, so a stream of same-sized photos traces once); ``_run.run`` then hands the items
(``_inputs.EncodedItem``) to ``Execute``, whose CPU workers decode every image into a buffer kept per
worker and run its plan into the result, the images spread over the workers.

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

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native, _outputs, _run
from ._errors import DecodeError, GoprepError, InvalidArgumentError, PipelineError, ShapeError
from ._inputs import EncodedItem
from ._outputs import SLOT, fill
from ._signature import Signature, _traces_lock, split_result, traces
from ._trace import Traced, check_traced, tracing, trace_array, typed_key

MODES = ("RGB", "BGR", "L", "RGBA")
_MODE_CODE = {"RGB": 0, "BGR": 0, "L": 1, "RGBA": 2}  # codec.Mode: the channels the decoder writes
_CHANNELS = {0: 3, 1: 1, 2: 4}
SCALES = (1, 2, 4, 8)
_FORMATS: List[str] = []  # the header table's format codes by name (the binding's Formats, its one source)

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
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
        raise InvalidArgumentError(f"must be a positive int or None, got {n!r}", argument="n")
    old = _max_pixels[0]
    _max_pixels[0] = None if n is None else int(n)
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


# -- recognising encoded sources ----------------------------------------------------------------

_BYTES = (bytes, bytearray, memoryview)


def _is_item(x: Any) -> bool:
    if isinstance(x, (str, os.PathLike) + _BYTES):
        return True
    return type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.uint8


def is_encoded(src: Any) -> bool:
    """Whether a pipeline source is encoded data: an item, or a list/tuple whose first item is one."""
    if isinstance(src, (list, tuple)):
        return bool(src) and _is_item(src[0])
    return _is_item(src)


def _buffer(x: Any, arg: str) -> Tuple[Optional[np.ndarray], Optional[str]]:
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
    """An open DecodeOpen batch: its handle, headers and the buffers Go reads (kept alive here)."""

    def __init__(self, items: Sequence[Any], is_list: bool, name: str, max_pixels: Optional[int] = None) -> None:
        mod = _native.get()
        n = len(items)
        desc = np.empty((n, 2), np.int64)
        paths: List[str] = []
        self.keep: List[Any] = []
        for i, x in enumerate(items):
            arr, path = _buffer(x, f"{name}[{i}]" if is_list else name)
            if path is not None:
                desc[i] = (-1, len(paths))
                paths.append(path)
            else:
                assert arr is not None
                self.keep.append(arr)
                desc[i] = (arr.__array_interface__["data"][0] if arr.size else 0, arr.size)
        self.hdr = np.zeros((n, int(mod.HeaderColumns())), np.int64)
        self.mod = mod
        self.handle = 0
        arrays = any(type(x) is np.ndarray for x in items)
        hint = ("; a 1-D uint8 array is read as encoded image bytes (an image array is (H, W, C))" if arrays else "")
        self.handle = _call(mod.DecodeOpen, id(desc), n, ",".join(os.fsencode(p).hex() for p in paths), id(self.hdr),
                            _limit() if max_pixels is None else max_pixels, name, is_list, name=name, hint=hint)

    def headers(self) -> List[Header]:
        if not _FORMATS:
            _FORMATS.extend(self.mod.Formats().split(","))
        return [Header(_FORMATS[int(r[0])], int(r[1]), int(r[2]), int(r[3]), int(r[4]), bool(r[5])) for r in self.hdr]

    def close(self) -> None:
        if self.handle:
            self.mod.DecodeClose(self.handle)
            self.handle = 0


def _limit() -> int:
    """The bomb limit of this thread's next call (0: none): thread_max_pixels's, else the process's."""
    n = getattr(_thread_limit, "n", None)
    return (_max_pixels[0] or 0) if n is None else n


def _call(fn: Any, *args: Any, name: str = "data", hint: str = "") -> Any:
    """A decode entry: every error about the data (a bomb's too_large too) is a DecodeError; ``hint``
    is added to a decode error's message."""
    with _decode_errors(name, hint):
        return _native.call(fn, *args)


@contextlib.contextmanager
def _decode_errors(name: str, hint: str = "") -> Any:
    """_call's rule for the errors of a decode entry, or of a run of encoded items (_run.run)."""
    try:
        yield
    except DecodeError as e:
        if hint:
            raise DecodeError(e.detail + hint, argument=e.argument, code=e.code) from None
        raise
    except GoprepError as e:
        # a list's item is named in the message ("src[3]: the image is ..."), not in .argument
        if e.code == "too_large" and (e.argument or e.detail).startswith(name):
            raise DecodeError(e.detail, argument=e.argument, code="too_large") from None
        raise


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


def check_mode(mode: Any) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidArgumentError(f"must be one of {', '.join(repr(m) for m in MODES)}, got {mode!r}", argument="mode")
    return mode


def check_reduce(reduce: Any) -> Union[int, str]:
    if reduce is None:
        return 1
    if isinstance(reduce, str) and reduce == "auto":
        return "auto"
    if isinstance(reduce, (int, np.integer)) and not isinstance(reduce, bool) and int(reduce) in SCALES:
        return int(reduce)
    raise InvalidArgumentError(f"must be None, 'auto', 1, 2, 4 or 8, got {reduce!r}", argument="reduce")


def check_orientation(v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgumentError(f"must be True or False, got {v!r}", argument="apply_orientation")
    return bool(v)


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
    scale = min(pre.w // (2 * rw), pre.h // (2 * rh))
    for a in (8, 4, 2):
        if scale >= a:
            return a
    return 1


def _trace_one(pipe: Any, hdr: Header, args: Tuple[Any, ...], kwargs: Dict[str, Any], force_scale: int) -> Tuple[Traced, Any, _TraceState]:
    with _traces_lock:
        traces[0] += 1
    src = _placeholder(hdr.height, hdr.width, 3)
    st = _TraceState(hdr, src, force_scale)
    prev = getattr(_ctx, "state", None)
    _ctx.state = st
    try:
        with tracing():
            traced, template = split_result(pipe._fn(src, *args, **kwargs))
    finally:
        _ctx.state = prev
    if st.opts is None:  # the function never called decode: the defaults (exact RGB)
        st.opts = (0, 1, False)
    return traced, template, st


def signature(pipe: Any, hdr: Header, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Any, Tuple[int, int, bool]]:
    """The Signature of pipeline ``pipe`` for an encoded image of header ``hdr`` and the decode
    options (mode code, scale, apply_orientation), memoised in the pipeline's memo."""
    try:
        key: Any = ("decode", hdr.format, hdr.height, hdr.width, hdr.orientation,
                    typed_key(args) if args else (), typed_key(kwargs) if kwargs else ())
        hit = pipe._cache.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    traced, template, st = _trace_one(pipe, hdr, args, kwargs, 1)
    if st.auto:
        h1, w1, _ = hdr.decoded_size("RGB", 1, st.opts[2])
        a = _auto_scale(hdr, traced, (h1, w1))
        if a > 1:
            traced, template, st = _trace_one(pipe, hdr, args, kwargs, a)
    h, w, c = hdr.decoded_size("RGB" if st.opts[0] == 0 else ("L" if st.opts[0] == 1 else "RGBA"), st.opts[1], st.opts[2])
    sig = Signature(traced, template, h * w * c, "cpu", "numpy", True)
    hit = (sig, st.opts)
    if key is not None and not sig.ref.big:
        pipe._cache.put(key, hit)
    return hit


# -- running ------------------------------------------------------------------------------------

def run(pipe: Any, src: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], out: Any, sh: int, timed: Any,
        ragged: bool = False, max_pixels: Optional[int] = None, name: str = "src") -> Any:
    """Run pipeline ``pipe`` on encoded ``src`` (an item or a list): one result, or for a list one
    batch (``ragged``: a list of separate results, for eager decode of differently sized images).
    ``max_pixels``: this call's bomb limit instead of set_max_image_pixels's (the server's own);
    ``name``: the argument errors name ("src" in pipelines, "data" in goprep.decode)."""
    is_list = isinstance(src, (list, tuple))
    items = list(src) if is_list else [src]
    if not items:
        raise ShapeError("the list of images is empty", argument=name)
    to_gpu = pipe._target == "device"  # decoded and preprocessed on the CPU, then uploaded (no nvJPEG yet)
    if to_gpu and out is not None:
        raise InvalidArgumentError('cannot be combined with output="device"', argument="out")
    if sh >= 0 and not to_gpu:
        raise InvalidArgumentError("encoded images are decoded on the CPU: stream= applies to output=\"device\" only",
                                   argument="stream")
    b = _Batch(items, is_list, name, max_pixels)
    try:
        sigs = []
        opts = []
        hdrs = b.headers()
        for i, hdr in enumerate(hdrs):
            sig, o = signature(pipe, hdr, args, kwargs)
            if sigs and not ragged and (sig.shape != sigs[0].shape or sig.dtype != sigs[0].dtype):
                raise ShapeError(
                    f"item {i} produces {sig.shape} {sig.dtype} but item 0 produces {sigs[0].shape} "
                    f"{sigs[0].dtype}; a list must produce one size (resize or letterbox to a fixed size)",
                    argument=name,
                )
            sigs.append(sig)
            opts.append(o)
        n = len(sigs)
        first = sigs[0]
        srcs = []
        for i, (hdr, (mode, scale, orient)) in enumerate(zip(hdrs, opts)):
            dh, dw, _ = hdr.decoded_size("RGB", scale, orient)
            srcs.append(EncodedItem(b.handle, i, scale, mode, orient, dh * dw * _CHANNELS[mode]))
        given = out
        if ragged:  # one allocation, each result a view of its part (at offsets rounded up to 64 bytes)
            sizes = [int(np.prod(s.shape)) * s.dtype.itemsize for s in sigs]
            offsets = [0]
            for z in sizes[:-1]:
                offsets.append(offsets[-1] + (z + 63) // 64 * 64)
            flat = _outputs.new_result((offsets[-1] + sizes[-1],), np.dtype(np.uint8), first.size_arg)
            results = [flat[o:o + z].view(s.dtype).reshape(s.shape) for s, o, z in zip(sigs, offsets, sizes)]
            with _decode_errors(name):
                _run.run(sigs, srcs, flat, flat.shape, flat.dtype, "cpu", False, -1, -1, timed, offsets)
        else:
            shape = ((n,) + first.shape) if is_list else first.shape
            if out is not None and type(out) is not np.ndarray:
                out = _outputs.out_view(out, shape, first.chw)
            res = _outputs.host_result(out, shape, first.dtype, first.size_arg, b.keep)
            with _decode_errors(name):
                _run.run(sigs, srcs, res, shape, first.dtype, "cpu", False, -1, -1, timed)
    finally:
        b.close()
    if ragged:
        return results
    if to_gpu:  # the host result uploaded: the same DeviceArray a device pipeline returns
        from . import _device

        res = _device.to_device(res, pipe._device if pipe._device.startswith("cuda") else "cuda", sh if sh >= 0 else None)
    if first.template is SLOT:
        result = res
    elif not is_list:
        result = fill(first.template, res)
    else:
        result = tuple(res if x is SLOT else [s.template[k] for s in sigs] for k, x in enumerate(first.template))
    if pipe._output == "torch" and first.template is SLOT:
        return _outputs.deliver(res, given, True, first.chw)
    return result if given is None or first.template is not SLOT else given


# -- the op -------------------------------------------------------------------------------------

def _decode_fn(t: Traced, mode: str, reduce: Union[int, str], orient: bool) -> Traced:
    return decode_traced(t, mode, reduce, orient)


_EAGER: List[Any] = []


def _eager() -> Any:
    """The one-op pipeline of eager decode (built on first use: _pipeline imports this module)."""
    if not _EAGER:
        from ._pipeline import Pipeline

        _EAGER.append(Pipeline(_decode_fn, "cpu", None, name="decode"))
    return _EAGER[0]


def decode_rgb(items: Sequence[Any], max_pixels: int) -> List[np.ndarray]:
    """Decode a list of encoded images to RGB arrays in one call under a bomb limit of ``max_pixels``
    (the reference server's, whatever set_max_image_pixels says)."""
    return run(_eager(), list(items), ("RGB", 1, False), {}, None, -1, None, ragged=True, max_pixels=max_pixels, name="data")  # type: ignore[no-any-return]


def decode(
    data: Any, *, mode: str = "RGB", reduce: Union[None, int, str] = None, apply_orientation: bool = False,
) -> Any:
    """Decode JPEG or PNG data into an ``(H, W, C)`` uint8 image; ``data`` is ``bytes``,
    ``bytearray``, ``memoryview``, a 1-D uint8 array of encoded bytes, a ``str`` or ``os.PathLike``
    path (read by Go with the GIL released), or a list of these (decoded in parallel, returned as a
    list of arrays). Inside a ``@goprep.pipeline`` function, apply it first to the image argument:
    the pipeline then takes encoded data and fuses the decode with the ops that follow.

    ``mode``: "RGB" (default), "BGR", "L" (grayscale) or "RGBA", each equal byte for byte to Pillow's
    ``Image.open(f).convert(mode)`` ("BGR": RGB reversed, equal to ``cv2.imdecode``'s colour
    output). ``reduce``: None (exact, the default), 2, 4 or 8 (JPEG's DCT-scaled decode at 1/reduce,
    equal to Pillow's ``Image.draft``), or "auto" inside a pipeline (the largest factor that keeps the
    image at least twice the resize's target; outside one, "auto" decodes at full size).
    ``apply_orientation``: rotate by the EXIF orientation (default False, like Pillow's ``open`` and
    ``torchvision.io.decode_jpeg``).

    Bad, truncated or empty data and unknown formats raise ``goprep.DecodeError``; an image over
    ``goprep.set_max_image_pixels`` raises it with code "too_large" before any allocation.
    """
    mode = check_mode(mode)
    red = check_reduce(reduce)
    orient = check_orientation(apply_orientation)
    if isinstance(data, Traced):
        return decode_traced(data, mode, red, orient)
    pipe = _eager()
    if isinstance(data, (list, tuple)):
        for i, x in enumerate(data):
            if not _is_item(x):
                _buffer(x, f"data[{i}]")  # raises, naming the item
        return run(pipe, data, (mode, red, orient), {}, None, -1, None, ragged=True, name="data")
    if not _is_item(data):
        _buffer(data, "data")  # raises
    return run(pipe, data, (mode, red, orient), {}, None, -1, None, name="data")
