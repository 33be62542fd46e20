"""The eager ops and the argument parsing they share with traced calls. Each eager op is a one-op
pipeline (a Pipeline on the CPU whose function is the op's tracing step), so calling ops one by one
and fusing them give identical results by construction, through one run path."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _validate
from ._errors import InvalidArgumentError, PipelineError, ShapeError
from ._geometry import center_crop_geometry, parse_padding, shorter_side, ultralytics_letterbox
from ._decode import MODES, SCALES, decode_traced
from ._inputs import as_array
from ._pipeline import Pipeline
from ._trace import AA_TORCH, LetterboxInfo, Traced, check_traced, check_window, parse_size, trace_array
from ._yuv import YUVFrame, set_to_rgb

Size = Union[int, Tuple[int, int]]

# ---------------------------------------------------------------------------------------------
# argument parsing shared by eager and traced calls

_INTERP = ("bilinear", "bicubic", "lanczos", "area", "nearest", "nearest-exact", "nearest-pil", "nearest-torch")
_INTERP_AA = ("bilinear", "bicubic", "lanczos")  # the kinds with an antialias variant and PyTorch's uint8 kernels
_COLOR = {"rgb2bgr": (3, (2, 1, 0)), "bgr2rgb": (3, (2, 1, 0)), "rgba2rgb": (4, (0, 1, 2)), "gray2rgb": (1, (0, 0, 0))}


def _opt_int(name: str, v: Any) -> Optional[int]:
    return None if v is None else _validate.as_positive_int(name, v)


def resize_size(t: Traced, size: Any, max_size: Any) -> Tuple[int, int]:
    """The resize target: ``(h, w)`` exactly, or torchvision's shorter-side rule for an int (or a
    1-element sequence, or None with ``max_size``)."""
    ms = _opt_int("max_size", max_size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        size = size[0]
    if size is None or (isinstance(size, (int, np.integer)) and not isinstance(size, bool)):
        for name, v in (("size", size), ("max_size", ms)):
            if v is not None:  # as a (h, w) size is checked (bad_shape, too_large): huge ints overflow float math
                parse_size(v, argument=name)
        s = _opt_int("size", size)
        h, w = shorter_side(t.height, t.width, s, ms)
        return parse_size((h, w))
    if ms is not None:
        raise InvalidArgumentError("applies only when size is an int (the shorter side) or None", argument="max_size")
    return parse_size(size)


def _resize_t(t: Traced, size: Size, interpolation: str, antialias: Union[bool, str], max_size: Any = None) -> Traced:
    _validate.as_choice("interpolation", interpolation, _INTERP)
    # "torch" / "torch-noaa": PyTorch's uint8 kernels with / without antialias (torchvision's tensor
    # Resize); on float32 data PyTorch's kernels are goprep's float ones, so they are True / False there.
    aa: Union[bool, str]
    if isinstance(antialias, str) and antialias in AA_TORCH:
        aa = antialias
    elif isinstance(antialias, str):
        raise InvalidArgumentError(f"must be True, False, 'torch' or 'torch-noaa', got {antialias!r}", argument="antialias")
    else:
        aa = _validate.as_flag("antialias", antialias)
    if aa is not False and interpolation not in _INTERP_AA:
        raise InvalidArgumentError("applies to bilinear, bicubic and lanczos interpolation only", argument="antialias")
    if interpolation == "lanczos":  # Pillow's LANCZOS has only its antialiased form (False means the same)
        if aa == "torch-noaa":
            raise InvalidArgumentError("'torch-noaa' does not apply to lanczos: PyTorch's lanczos is antialiased only",
                                       argument="antialias")
        aa = "torch" if aa == "torch" else True
    if aa in AA_TORCH and t.dtype != "u8":
        aa = aa == "torch"
    h, w = resize_size(t, size, max_size)
    return t.resized(interpolation, aa, h, w)


def pad_values(t: Traced, pad_value: Any, argument: str = "pad_value") -> Tuple[float, ...]:
    """A pad value per current channel: one number for all, or one per channel."""
    return _validate.pad_values(argument, pad_value, t.dtype, t.channels)


def _letterbox_t(t: Traced, size: Size, pad_value: Any, scaleup: Any, auto: Any, stride: Any) -> Tuple[Traced, LetterboxInfo]:
    oh, ow = parse_size(size)
    pad = pad_values(t, pad_value)
    up, au = _validate.as_flag("scaleup", scaleup), _validate.as_flag("auto", auto)
    st = _opt_int("stride", stride)
    r, nh, nw, top, bottom, left, right = ultralytics_letterbox(t.height, t.width, oh, ow, up, au, st or 1)
    info = LetterboxInfo(r, top, left, nh, nw, t.height, t.width)
    return t.resized("bilinear", False, nh, nw).padded_by(top, bottom, left, right, pad, "size"), info


def _pad_t(t: Traced, padding: Any, size: Any, multiple: Any, value: Any, center: Any) -> Traced:
    given = [n for n, v in (("padding", padding), ("size", size), ("multiple", multiple)) if v is not None]
    if len(given) != 1:
        raise InvalidArgumentError("give exactly one of padding, size or multiple", argument=given[1] if given else "padding")
    c = _validate.as_flag("center", center)
    h, w = t.height, t.width
    if padding is not None:
        left, top, right, bottom = parse_padding(padding)
    else:
        if size is not None:
            th, tw = parse_size(size)
            if th < h or tw < w:
                raise ShapeError(f"{th}x{tw} is smaller than the {h}x{w} image", argument="size")
        else:
            mh, mw = parse_size(multiple, argument="multiple")
            th, tw = -(-h // mh) * mh, -(-w // mw) * mw
        dh, dw = th - h, tw - w
        top, left = (dh // 2, dw // 2) if c else (0, 0)
        bottom, right = dh - top, dw - left
    return t.padded_by(top, bottom, left, right, pad_values(t, value, "value"), given[0])


def _center_crop_t(t: Traced, size: Any) -> Traced:
    ch, cw = parse_size(size[0] if isinstance(size, (list, tuple)) and len(size) == 1 else size)
    (pl, pt, pr, pb), (top, left) = center_crop_geometry(t.height, t.width, ch, cw)
    if pl or pt or pr or pb:
        t = t.padded_by(pt, pb, pl, pr, (0.0,) * t.channels, "size")
    if (t.height, t.width) == (ch, cw):
        return t
    return t.crop(top, left, ch, cw)


_NORM_DTYPES = {"float32": "f32", "float16": "f16"}


def _flip_t(t: Traced, horizontal: Any, vertical: Any) -> Traced:
    return t.flip(_validate.as_flag("horizontal", horizontal), _validate.as_flag("vertical", vertical))


def _cvt_color_t(t: Traced, code: Any) -> Traced:
    _validate.as_choice("code", code, tuple(_COLOR))
    need, cmap = _COLOR[code]
    if t.channels != need:
        fix = {1: ": goprep.cvt_color(img, 'gray2rgb') makes a one-channel image RGB",
               4: ": goprep.cvt_color(img, 'rgba2rgb') drops the alpha channel"}.get(t.channels, "") if need == 3 else ""
        raise ShapeError(f"{code} needs a {need}-channel image, got {t.channels} channels{fix}", argument="src")
    return t.mapped(cmap)


# What an image of this many channels probably is, when mean/std do not fit it.
_CHANNEL_HINTS = {
    4: "the image has 4 channels (RGBA?): convert it to RGB first (goprep.cvt_color(img, 'rgba2rgb'), or "
       "PIL's img.convert('RGB')), or pass 4 values",
    1: "the image has 1 channel (grayscale): goprep.cvt_color(img, 'gray2rgb') makes it RGB, or pass 1 value",
}


def _normalize_t(t: Traced, mean: Any, std: Any, scale: Any, dtype: Any, layout: Any) -> Traced:
    c = t.channels
    try:
        m = _validate.per_channel("mean", mean, c)
        s = _validate.per_channel("std", std, c, nonzero=True)
    except InvalidArgumentError as e:
        hint = _CHANNEL_HINTS.get(c)
        if hint is None or "one per channel" not in e.detail:
            raise
        raise InvalidArgumentError(f"{e.detail}: {hint}", argument=e.argument, code=e.code) from None
    if scale is None:  # torchvision's ToDtype(scale=True): uint8 [0, 255] -> [0, 1]; float stays
        if t.dtype == "u8" and max(abs(v) for v in m) > 1.0:
            raise InvalidArgumentError(
                f"{tuple(m)} is on the 0-255 scale, but a uint8 image is first scaled to [0, 1] (scale=1/255, "
                "torchvision's ToDtype(scale=True)): give mean and std on the [0, 1] scale, or pass scale=1 to "
                "normalize 0-255 values (OpenCV's and mmcv's convention)", argument="mean")
        scale = 1 / 255 if t.dtype == "u8" else 1.0
    sc = _validate.as_float32("scale", scale)
    key = dtype if isinstance(dtype, str) else getattr(np.dtype(dtype) if _is_dtype(dtype) else None, "name", None)
    if key not in _NORM_DTYPES:
        raise InvalidArgumentError(f"must be 'float32' or 'float16', got {dtype!r}", argument="dtype")
    layout = _validate.as_choice("layout", layout, ("CHW", "HWC"))
    return t.normalized(m, s, sc, _NORM_DTYPES[key], layout)


def patch_rows(t: Any, patch_size: Any, merge_size: Any, temporal_patch_size: Any) -> Traced:
    """Inside a pipeline, after ``normalize(..., dtype="float32", layout="CHW")``: the result laid out as
    Qwen2-VL's image processor flattens it, ``(C, H, W)`` -> ``(gh * gw, C * T * P * P)`` with
    ``P = patch_size``, ``T = temporal_patch_size``, ``gh = H / P``, ``gw = W / P``: ``P x P`` patches
    ordered by ``merge_size x merge_size`` blocks, each patch's values repeated ``T`` times. The engine
    writes the rows directly (on the CPU: the GPU kernels have no patch layout)."""
    t = check_traced(t)
    p = _validate.as_positive_int("patch_size", patch_size)
    m = _validate.as_positive_int("merge_size", merge_size)
    k = _validate.as_positive_int("temporal_patch_size", temporal_patch_size)
    if t.norm is None or t.norm[3] != "f32" or t.norm[4] != "CHW" or t.patch is not None:
        raise PipelineError("the patch layout applies once, to a result normalised to float32 CHW (normalize with "
                            "dtype='float32', layout='CHW' first)", argument="patch")
    if t.height % (p * m) or t.width % (p * m):
        raise PipelineError(f"a {t.height}x{t.width} image is not a multiple of patch_size * merge_size = {p * m}",
                            argument="patch")
    return t.patched(p, m, k)


def _is_dtype(d: Any) -> bool:
    try:
        np.dtype(d)
        return True
    except Exception:  # TypeError, ValueError, ... for the many things that are not dtypes
        return False


# ---------------------------------------------------------------------------------------------
# public ops: each a one-op pipeline on the CPU (host sources only), whose memo serves repeated calls


_NO_KWARGS: Dict[str, Any] = {}  # an eager op's keyword arguments to its pipeline: none (never mutated)


def _eager(fn: Any, name: str) -> Pipeline:
    return Pipeline(fn, "cpu", None, name=name, host_only=True)


_RESIZE = _eager(_resize_t, "resize")
_FLIP = _eager(_flip_t, "flip")
_LETTERBOX = _eager(_letterbox_t, "letterbox")
_PAD = _eager(_pad_t, "pad")
_CENTER_CROP = _eager(_center_crop_t, "center_crop")
_CVT_COLOR = _eager(_cvt_color_t, "cvt_color")
_NORMALIZE = _eager(_normalize_t, "normalize")
# A crop of a YUV frame (goprep.yuv) is converted, not viewed: a one-op pipeline like the others.
_CROP = _eager(lambda t, top, left, height, width: t.crop(top, left, height, width), "crop")
_DECODE = _eager(lambda t, mode, reduce, orient: decode_traced(t, mode, reduce, orient), "decode")
# np.asarray(frame): a YUV frame as its RGB image (set into _yuv, which pipelines are built on)
_TO_RGB = _eager(lambda t: t, "yuv")
set_to_rgb(lambda frame: _TO_RGB._call(frame, (), _NO_KWARGS))




def resize(
    src: Any,
    size: Optional[Size],
    *,
    interpolation: str = "bilinear",
    antialias: Union[bool, str] = False,
    max_size: Optional[int] = None,
    out: Optional[np.ndarray] = None,
) -> Any:
    """Resize to ``size``, keeping the dtype. ``(height, width)`` is exact; an int sets the shorter
    side, the longer becoming ``int(size * long / short)`` (torchvision's rule), at most ``max_size``.

    bilinear uses half-pixel centres: uint8 matches ``cv2.resize(INTER_LINEAR)``, float32 matches
    PyTorch's ``interpolate(mode="bilinear", align_corners=False)``; ``antialias=True`` follows Pillow's
    filter widened by the downscale factor; nearest matches ``cv2.INTER_NEAREST``.
    bicubic: uint8 matches ``cv2.INTER_CUBIC``, float32 PyTorch's ``mode="bicubic"``, and with
    ``antialias=True`` Pillow's ``BICUBIC`` (PyTorch's ``antialias=True`` on float32). lanczos is
    Pillow's ``LANCZOS``, always antialiased (``antialias`` True or False alike; ``"torch"``: PyTorch's
    uint8 ``mode="lanczos"``).
    ``antialias="torch"``: the same filters with PyTorch's uint8 weight rounding, as torchvision's
    ``Resize`` on uint8 tensors computes (on float32 the same as ``True``); ``antialias="torch-noaa"``:
    PyTorch's uint8 kernel without antialias, torchvision's ``Resize(antialias=False)`` on uint8
    tensors (on float32 the same as ``False``). area matches ``cv2.INTER_AREA``; nearest-exact
    PyTorch's ``nearest-exact``; nearest-pil Pillow's ``NEAREST``; nearest-torch PyTorch's ``nearest``.
    docs/API.md gives every rounding rule.
    """
    if isinstance(src, Traced):
        return _resize_t(check_traced(src), size, interpolation, antialias, max_size)
    return _RESIZE._call(src, (size, interpolation, antialias, max_size), _NO_KWARGS, out)


def flip(src: Any, *, horizontal: bool = True, vertical: bool = False, out: Optional[np.ndarray] = None) -> Any:
    """Mirror left-right (``horizontal``) and/or top-bottom (``vertical``)."""
    if isinstance(src, Traced):
        return _flip_t(check_traced(src), horizontal, vertical)
    return _FLIP._call(src, (horizontal, vertical), _NO_KWARGS, out)


def crop(src: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height x width`` window at ``(top, left)``: a zero-copy view of ``src``."""
    if isinstance(src, Traced):
        return check_traced(src).crop(top, left, height, width)
    if type(src) is YUVFrame:
        return _CROP._call(src, (top, left, height, width), _NO_KWARGS)
    a, kind = as_array(src)
    t = trace_array(a)
    top, left, height, width = check_window(top, left, height, width, t.height, t.width)
    if kind == "torch":
        return src[..., top : top + height, left : left + width]  # the tensor's own (C, H, W) view
    if a.ndim == 2:  # a one-channel (H, W) image
        return a[top : top + height, left : left + width]
    return a[..., top : top + height, left : left + width, :]


def letterbox(
    src: Any,
    size: Size,
    *,
    pad_value: Any = 114,
    scaleup: bool = True,
    auto: bool = False,
    stride: int = 32,
    out: Optional[np.ndarray] = None,
) -> Tuple[Any, LetterboxInfo]:
    """Resize keeping the aspect ratio to fit ``size``, centred on a canvas filled with ``pad_value``
    (a number or one per channel), with ultralytics ``LetterBox`` geometry: ``scaleup=False`` never
    enlarges, ``auto=True`` pads only to the next multiple of ``stride`` (a minimal rectangle).

    Returns ``(image, LetterboxInfo)``; the info maps boxes back to the source image.
    """
    if isinstance(src, Traced):
        return _letterbox_t(check_traced(src), size, pad_value, scaleup, auto, stride)
    return _LETTERBOX._call(src, (size, pad_value, scaleup, auto, stride), _NO_KWARGS, out)  # type: ignore[no-any-return]


def pad(
    src: Any,
    padding: Any = None,
    *,
    size: Optional[Size] = None,
    multiple: Optional[Size] = None,
    value: Any = 0,
    center: bool = True,
    out: Optional[np.ndarray] = None,
) -> Any:
    """Pad with a constant ``value`` (a number or one per channel). Give one of: ``padding`` as
    torchvision's ``Pad`` takes it (int, ``(left/right, top/bottom)`` or ``(left, top, right, bottom)``),
    ``size=(h, w)`` to pad up to, or ``multiple`` (int or pair) to pad each side up to a multiple of.
    With ``size``/``multiple`` the image is centred (``top = (H - h) // 2``), or at the top-left
    with ``center=False``."""
    if isinstance(src, Traced):
        return _pad_t(check_traced(src), padding, size, multiple, value, center)
    return _PAD._call(src, (padding, size, multiple, value, center), _NO_KWARGS, out)


def center_crop(src: Any, size: Size, *, out: Optional[np.ndarray] = None) -> Any:
    """The centred ``size`` window with torchvision's rounding: the crop starts at
    ``int(round((H - h) / 2.0))``; where it is larger than the image, the image is first padded with
    zeros (``(h - H) // 2`` before, the rest after), as torchvision does."""
    if isinstance(src, Traced):
        return _center_crop_t(check_traced(src), size)
    return _CENTER_CROP._call(src, (size,), _NO_KWARGS, out)


def cvt_color(src: Any, code: str, out: Optional[np.ndarray] = None) -> Any:
    """Convert channel order: ``"rgb2bgr"``, ``"bgr2rgb"``, ``"rgba2rgb"`` (drop alpha), ``"gray2rgb"``."""
    if isinstance(src, Traced):
        return _cvt_color_t(check_traced(src), code)
    return _CVT_COLOR._call(src, (code,), _NO_KWARGS, out)


def normalize(
    src: Any,
    *,
    mean: Any,
    std: Any,
    scale: Optional[float] = None,
    dtype: str = "float32",
    layout: str = "CHW",
    out: Optional[np.ndarray] = None,
) -> Any:
    """``(src * scale - mean) / std`` per channel, computed in float32, cast to ``dtype``, in ``layout``.

    ``scale`` defaults to the source dtype's: 1/255 for uint8, 1 for float32 (torchvision's
    ``ToDtype(scale=True)``)."""
    if isinstance(src, Traced):
        return _normalize_t(check_traced(src), mean, std, scale, dtype, layout)
    return _NORMALIZE._call(src, (mean, std, scale, dtype, layout), _NO_KWARGS, out)


def decode(
    data: Any, *, mode: str = "RGB", reduce: Union[None, int, str] = None, apply_orientation: bool = False,
) -> Any:
    """Decode JPEG or PNG data into an ``(H, W, C)`` uint8 image (``(H, W, 1)`` for mode "L"); ``data``
    is ``bytes``, ``bytearray``, ``memoryview``, a 1-D uint8 array of encoded bytes, a ``str`` or
    ``os.PathLike`` path (read by Go with the GIL released), or a list of these (decoded in parallel,
    returned as a list of arrays). Inside a ``@goprep.pipeline`` function, apply it first to the
    image argument: the pipeline then takes encoded data and fuses the decode with the ops that follow.

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
    opts = _validate.decode_options(mode, reduce, apply_orientation, MODES, SCALES)
    if isinstance(data, Traced):
        return decode_traced(data, *opts)
    return _decode_call(data, opts, None)


def decode_rgb(items: Sequence[Any], max_pixels: int) -> List[np.ndarray]:
    """Decode a list of encoded images to RGB arrays in one call under a bomb limit of ``max_pixels``
    (the reference server's, whatever set_max_image_pixels says)."""
    return _decode_call(list(items), ("RGB", 1, False), max_pixels)  # type: ignore[no-any-return]


def _decode_call(data: Any, opts: Tuple[Any, ...], max_pixels: Optional[int]) -> Any:
    """Eager decode: one image, or a list of them (separate results), through the decode pipeline."""
    ragged = isinstance(data, (list, tuple))
    return _DECODE._call_other(data, opts, _NO_KWARGS, None, None, None, max_pixels, "data", ragged)
