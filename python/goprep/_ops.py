"""The eager ops. Each one builds a Traced image and runs it through the same engine path a fused
pipeline uses, so calling ops one by one and fusing them give identical results by construction."""

from __future__ import annotations

import math
import os
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native, _outpool, _profile, _validate
from ._device import DeviceArray
from ._errors import DTypeError, InvalidArgumentError, ShapeError, from_native
from ._inputs import as_array, is_tensor, out_array, to_output
from ._geometry import center_crop_geometry, parse_padding, shorter_side, ultralytics_letterbox
from ._trace import (
    AA_TORCH,
    LetterboxInfo,
    Traced,
    check_out_size,
    check_traced,
    check_window,
    parse_size,
    trace_array,
    typed_key,
)
from ._validate import base_array

Size = Union[int, Tuple[int, int]]

# ---------------------------------------------------------------------------------------------
# plans


class PlanRef:
    """Owns one engine plan handle; freed when the last user drops it (caches evict by dropping)."""

    __slots__ = ("handle", "pid", "big")

    def __init__(self, spec: str) -> None:
        # Set before anything can fail (a forked child's ForkError, a refused spec), so __del__ of a
        # half-built PlanRef has nothing to free and says nothing.
        self.handle: int = 0
        self.pid = os.getpid()
        self.big = False
        mod = _native.get()
        self.handle = _native.call(mod.NewPlan, spec)
        # A plan whose tables are big is used once and freed (the engine then returns its memory to
        # the OS): cached, it would keep up to a GiB resident for the life of the process.
        self.big = _native.call(mod.PlanBytes, self.handle) > _native.limit("big_plan_bytes")

    def __del__(self) -> None:
        try:
            if self.handle and self.pid == os.getpid() and _native.loaded():
                _native.get().FreePlan(self.handle)
        except Exception:  # interpreter shutdown (module globals already None): nothing to free into
            pass


_PLAN_CACHE_SIZE = 1024
# Keyed by the spec text: Traced images that compare equal can still differ (-0.0 and 0.0 as mean or
# pad value give results of different sign), and the spec is what the plan is built from.
_plans: "OrderedDict[str, PlanRef]" = OrderedDict()
_plans_lock = threading.Lock()


def plan_for(t: Traced) -> PlanRef:
    check_out_size(t)
    spec = t.spec()
    with _plans_lock:
        ref = _plans.get(spec)
        if ref is not None:
            _plans.move_to_end(spec)
            return ref
    try:
        ref = PlanRef(spec)
    except ShapeError as e:
        # The engine names the output's size "size" when the plan for it would be too large; the caller
        # may have set that size with another argument (pad's padding or multiple) or not at all (src).
        if e.code != "too_large" or e.argument != "size" or t.size_arg == "size":
            raise
        raise ShapeError(e.detail, argument=t.size_arg, code=e.code) from None
    if ref.big:
        return ref
    with _plans_lock:
        _plans[spec] = ref
        if len(_plans) > _PLAN_CACHE_SIZE:
            _plans.popitem(last=False)
    return ref


def new_result(shape: Tuple[int, ...], dtype: np.dtype, size_arg: str) -> np.ndarray:
    """A new result array (pooled when large). One NumPy cannot allocate is a request too large for
    this machine, not an engine failure: ShapeError (too_large) naming ``size_arg``, the argument
    that set its size, as check_out_size does for results beyond any machine (MAX_OUT_BYTES)."""
    try:
        return _outpool.empty(shape, dtype)
    except MemoryError:
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        raise ShapeError(
            f"the {shape} {np.dtype(dtype)} result would take {nbytes} bytes, more than can be allocated",
            argument=size_arg,
            code="too_large",
        ) from None


def prepare_out(out: Any, shape: Tuple[int, ...], dtype: np.dtype, sources: Sequence[np.ndarray]) -> np.ndarray:
    """Return ``out`` checked against the result, or a new array for it."""
    if out is None:
        return _outpool.empty(shape, dtype)
    out = base_array(out, "out")  # shape, dtype and flags as NumPy knows them, not as a subclass says
    if not isinstance(out, np.ndarray):
        raise InvalidArgumentError(f"must be a numpy.ndarray, got {type(out).__name__}", argument="out")
    if out.shape != shape:
        raise ShapeError(f"must have shape {shape}, got {out.shape}", argument="out")
    if out.dtype != dtype:
        raise DTypeError(f"must have dtype {dtype}, got {out.dtype}", argument="out")
    flags = out.flags
    if not flags.writeable:
        raise InvalidArgumentError("is read-only", argument="out", code="read_only")
    if not flags.c_contiguous or not flags.aligned:
        raise InvalidArgumentError("must be C-contiguous and aligned", argument="out")
    for s in sources:
        if np.may_share_memory(out, s):
            raise InvalidArgumentError("overlaps an input; results are written while inputs are read", argument="out", code="overlap")
    return out


_perf_ns = time.perf_counter_ns  # the profiler's clock
_EAGER_CACHE_SIZE = 512
_eager: Dict[Any, Tuple[PlanRef, Tuple[int, ...], np.dtype, bool, Any, bool, int, bool, str]] = {}


def run_eager(
    op: Tuple[Any, ...], src: Any, out: Any, build: Callable[[Traced], Tuple[Traced, Any]]
) -> Tuple[Any, Any]:
    """Run an eager op: ``build`` turns the traced source into the op's result (and an extra value,
    such as letterbox's info). Results of ``build`` are memoised per op arguments and source layout,
    so a repeated call skips tracing (about 20 us of Python) and only runs the plan. A torch tensor
    source gives a tensor result; a PIL image, a NumPy one."""
    if isinstance(src, Traced):
        return build(check_traced(src))
    # Profiling off costs this check and a None test on the way out; on, the call is timed inline
    # (as in Pipeline.__call__: a wrapper that calls back in measured 0.3-0.5 us more).
    if _profile.ON:
        try:
            st = _profile._tls.s
        except AttributeError:
            st = _profile.state()
        t0 = _perf_ns()
    else:
        st = None
    try:
        kind = None
        if type(src) is not np.ndarray:
            src, kind = as_array(src)
            src = base_array(src)
            if type(src) is not np.ndarray:
                trace_array(src)  # raises the error naming what src is
        key: Any = (typed_key(op), src.shape, src.strides, src.dtype)
        try:
            hit = _eager.get(key)
        except TypeError:  # an unhashable argument (a list of means, say): no memo
            key, hit = None, None
        if hit is None:
            r, extra = build(trace_array(src))
            hit = (
                plan_for(r), r.shape, r.out_dtype, r.dtype == "f32", extra, r.chw, _profile.name_id(op[0]),
                small_call(src.nbytes, r.shape, r.out_dtype), r.size_arg,
            )
            if key is not None and not hit[0].big:
                if len(_eager) >= _EAGER_CACHE_SIZE:
                    _eager.clear()
                _eager[key] = hit
        ref, shape, dtype, f32, extra, chw, pid, small, size_arg = hit  # pid: the op's profiler id, memoised with the plan
        if small and out is None and kind is None and (not f32 or src.flags.aligned):
            return run_small(ref, shape, dtype, src, st), extra
        if out is not None and type(out) is not np.ndarray and is_tensor(out):
            run_plan(ref, shape, dtype, f32, src, out_array(out, shape, chw), timed=st)
            return out, extra
        res = run_plan(ref, shape, dtype, f32, src, out, timed=st, size_arg=size_arg)
        return (to_output(res, kind, chw) if kind == "torch" else res), extra
    except BaseException:
        if st is not None:
            _profile.failed(st, op[0])
            st = None
        raise
    finally:
        if st is not None:  # commit the call's row (as Pipeline.__call__ does)
            i = st.i
            st.name[i] = pid
            st.t0[i] = t0
            st.t1[i] = _perf_ns()
            st.i = i + 1
            if i >= st.last:  # the buffer is full, or a hook is set
                _profile.commit(st)


def run_plan(
    ref: PlanRef,
    shape: Tuple[int, ...],
    dtype: np.dtype,
    f32: bool,
    src: Any,
    out: Any,
    device: str = "cpu",
    output: str = "numpy",
    stream: int = -1,
    timed: Any = None,
    size_arg: str = "src",
) -> Any:
    """Run a plan on one array (a NumPy array or a DeviceSource): every eager op and every pipeline
    call on one array ends here. The CPU entry point is taken directly for host data on
    ``device="cpu"``; everything else goes through ``run_jobs``. ``timed`` (a profiled call's
    recording state, else None) takes the engine entry points that also record their finish time.
    ``size_arg``: the argument that set the result's size (Traced.size_arg), named if it cannot be
    allocated."""
    if device == "cpu" and output == "numpy" and type(src) is np.ndarray and stream < 0:
        check_aligned(f32, src, "src")
        res = new_result(shape, dtype, size_arg) if out is None else prepare_out(out, shape, dtype, (src,))
        ret = res if out is None else out  # out= comes back as the object the caller passed
        if timed is not None:
            _run_raw_timed(ref.handle, src, res, timed)
            return ret
        if src.nbytes + res.nbytes >= _native.INTERRUPTIBLE_MIN_BYTES:
            _native.run_interruptible(_native.get().RunCancel, (ref.handle, id(src), id(res)), (ref, src, res))
            return ret
        _run_raw(ref.handle, src, res)
        return ret
    return run_jobs([(ref, f32, src)], shape, dtype, out, device, output, stream, timed, size_arg)


def small_call(src_bytes: int, shape: Tuple[int, ...], dtype: np.dtype) -> bool:
    """Whether a call of this signature (fixed by it: sizes, not addresses) may take run_small, the
    path run_plan takes for it on the CPU: a result below the pool's size (so ``np.empty``) and a
    call below the interruptible size (so the plain entry point)."""
    out_bytes = math.prod(shape) * dtype.itemsize
    return out_bytes < _outpool.MIN_BYTES and src_bytes + out_bytes < _native.INTERRUPTIBLE_MIN_BYTES


def run_small(ref: PlanRef, shape: Tuple[int, ...], dtype: np.dtype, src: np.ndarray, timed: Any = None) -> np.ndarray:
    """run_plan for a ``small_call`` signature on the CPU, a NumPy source (aligned where it must be)
    and a new NumPy result: what run_plan does then, without its tests (``timed`` as there). Pipeline
    calls and eager ops of small images take it from their memo: a 4x4x3 flip pipeline 5.8 -> 3.1 us
    per call (its engine call 1.4 us; timeit, best of 7, shared 2-core machine). Profiled calls take
    it too, so the profiler's cost stays what it adds, not the general path's."""
    res = np.empty(shape, dtype)
    if timed is None:
        _run_raw(ref.handle, src, res)
    else:
        _run_raw_timed(ref.handle, src, res, timed)
    return res


def _run_raw_timed(handle: int, src: np.ndarray, res: np.ndarray, timed: Any) -> None:
    """_run_raw for a profiled call: the engine entry point that records the call's engine time in
    row ``timed.i`` of its buffer; the finish time as Python resumes (see _profile.engine)."""
    run_timed = _native._raw_run_timed
    if run_timed is None or _native._forked_child:
        run_timed = _native.raw_timed()  # loads the extension, or raises ForkError
    i = timed.i
    try:
        run_timed(handle, id(src), id(res), timed.eaddr, i)
    except RuntimeError as e:
        raise from_native(e) from None
    timed.res[i] = _perf_ns()


def _run_raw(handle: int, src: np.ndarray, res: np.ndarray) -> None:
    """The engine's plain CPU entry point (binding Run), its errors as goprep's."""
    run = _native._raw_run
    if run is None or _native._forked_child:
        run = _native.raw_run()  # loads the extension, or raises ForkError
    try:
        run(handle, id(src), id(res))
    except RuntimeError as e:
        raise from_native(e) from None


def check_aligned(f32: bool, src: Any, argument: str) -> None:
    """The one float32-alignment check: the engine reads float32 sources as whole floats."""
    if not f32:
        return
    if isinstance(src, np.ndarray):
        ok = src.flags.aligned
    else:  # a DeviceSource
        ok = src.ptr % 4 == 0 and all(s % 4 == 0 for s in src.view.strides)
    if not ok:
        raise InvalidArgumentError("float32 data must be aligned", argument=argument)


def run_jobs(
    jobs: Sequence[Tuple[PlanRef, bool, Any]],
    shape: Tuple[int, ...],
    dtype: np.dtype,
    out: Any,
    device: str,
    output: str,
    stream: int = -1,
    timed: Any = None,
    size_arg: str = "src",
) -> Any:
    """The one run path of the engine (binding Execute): jobs are (plan, float32 source?, source)
    with sources all NumPy arrays or all DeviceSources; their outputs are consecutive in ``shape``
    (one image's output, or a batch), into NumPy (``out=`` or new) or a new DeviceArray. ``size_arg``
    as in run_plan."""
    srcs = [j[2] for j in jobs]
    on_dev = not isinstance(srcs[0], np.ndarray)
    if any(isinstance(x, np.ndarray) == on_dev for x in srcs):
        raise InvalidArgumentError("a list must be all host (NumPy) or all device arrays", argument="src")
    for i, (_, f32, x) in enumerate(jobs):
        check_aligned(f32, x, "src" if len(jobs) == 1 else f"src[{i}]")
    wait = -1
    if on_dev:
        devs = {x.device for x in srcs}
        if len(devs) != 1:
            raise InvalidArgumentError(f"inputs live on several GPUs {sorted(devs)}", argument="src")
        (d,) = devs
        if device == "cpu":
            raise InvalidArgumentError('device="cpu" cannot read a CUDA array: use "auto" or "cuda"', argument="device")
        if device not in ("auto", "cuda") and device != f"cuda:{d}":
            raise InvalidArgumentError(f"the input lives on cuda:{d}, not {device}", argument="device")
        device = f"cuda:{d}"
        streams = {x.stream for x in srcs if x.stream is not None}
        if len(streams) > 1:
            raise InvalidArgumentError("inputs were produced on different streams", argument="src")
        if streams:
            wait = int(streams.pop())
    n = len(jobs)
    step = int(np.prod(shape[1:] if n > 1 else shape)) * np.dtype(dtype).itemsize
    desc = np.empty((n, 3), np.int64)
    for i, (ref, _, x) in enumerate(jobs):
        desc[i] = (ref.handle, x.ptr if on_dev else id(x), i * step)
    mod = _native.get()
    if output == "device":
        if out is not None:
            raise InvalidArgumentError('cannot be combined with output="device"', argument="out")
        if timed is not None:
            h = _profile.engine_untimed(timed, mod.Execute, id(desc), n, 0, device, on_dev, stream, wait)
        else:
            h = _native.call(mod.Execute, id(desc), n, 0, device, on_dev, stream, wait)
        return DeviceArray(h, shape, dtype)
    res = new_result(shape, dtype, size_arg) if out is None else prepare_out(out, shape, dtype, [] if on_dev else srcs)
    ret = res if out is None else out  # out= comes back as the object the caller passed
    if timed is not None:
        _profile.engine(timed, _native._raw_execute_timed, id(desc), n, id(res), device, on_dev, stream, wait)
    elif device == "cpu" and not on_dev and stream < 0 and sum(x.nbytes for x in srcs) + res.nbytes >= _native.INTERRUPTIBLE_MIN_BYTES:
        # Long CPU calls run with a cancel flag so that Ctrl-C stops them (_native.run_interruptible).
        _native.run_interruptible(mod.RunManyCancel, (id(desc), n, id(res)), (desc, srcs, jobs, res))
    else:
        _native.call(mod.Execute, id(desc), n, id(res), device, on_dev, stream, wait)
    return ret


# ---------------------------------------------------------------------------------------------
# argument parsing shared by eager and traced calls

_INTERP = ("bilinear", "bicubic", "area", "nearest", "nearest-exact", "nearest-pil", "nearest-torch")
_INTERP_AA = ("bilinear", "bicubic")  # the kinds with an antialias variant and PyTorch's uint8 kernels
_COLOR = {"rgb2bgr": (3, (2, 1, 0)), "bgr2rgb": (3, (2, 1, 0)), "rgba2rgb": (4, (0, 1, 2)), "gray2rgb": (1, (0, 0, 0))}


def _check_flag(name: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgumentError(f"must be a bool, got {type(v).__name__}", argument=name)
    return bool(v)


def _opt_int(name: str, v: Any) -> Optional[int]:
    if v is None:
        return None
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise InvalidArgumentError(f"must be an int, got {type(v).__name__}", argument=name)
    if v <= 0:
        raise InvalidArgumentError(f"must be positive, got {v}", argument=name)
    return int(v)


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
        raise InvalidArgumentError("applies to bilinear and bicubic interpolation only", argument="antialias")
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
    up, au = _check_flag("scaleup", scaleup), _check_flag("auto", auto)
    st = _opt_int("stride", stride)
    r, nh, nw, top, bottom, left, right = ultralytics_letterbox(t.height, t.width, oh, ow, up, au, st or 1)
    info = LetterboxInfo(r, top, left, nh, nw, t.height, t.width)
    return t.resized("bilinear", False, nh, nw).padded_by(top, bottom, left, right, pad, "size"), info


def _pad_t(t: Traced, padding: Any, size: Any, multiple: Any, value: Any, center: Any) -> Traced:
    given = [n for n, v in (("padding", padding), ("size", size), ("multiple", multiple)) if v is not None]
    if len(given) != 1:
        raise InvalidArgumentError("give exactly one of padding, size or multiple", argument=given[1] if given else "padding")
    c = _check_flag("center", center)
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


def _normalize_t(t: Traced, mean: Any, std: Any, scale: Any, dtype: Any, layout: Any) -> Traced:
    c = t.channels
    m = _validate.per_channel("mean", mean, c)
    s = _validate.per_channel("std", std, c, nonzero=True)
    if scale is None:  # torchvision's ToDtype(scale=True): uint8 [0, 255] -> [0, 1]; float stays
        scale = 1 / 255 if t.dtype == "u8" else 1.0
    sc = _validate.as_float32("scale", scale)
    key = dtype if isinstance(dtype, str) else getattr(np.dtype(dtype) if _is_dtype(dtype) else None, "name", None)
    if key not in _NORM_DTYPES:
        raise InvalidArgumentError(f"must be 'float32' or 'float16', got {dtype!r}", argument="dtype")
    layout = _validate.as_choice("layout", layout, ("CHW", "HWC"))
    return t.normalized(m, s, sc, _NORM_DTYPES[key], layout)


def _is_dtype(d: Any) -> bool:
    try:
        np.dtype(d)
        return True
    except Exception:  # TypeError, ValueError, ... for the many things that are not dtypes
        return False


# ---------------------------------------------------------------------------------------------
# public ops


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
    ``antialias=True`` Pillow's ``BICUBIC`` (PyTorch's ``antialias=True`` on float32).
    ``antialias="torch"``: the same filters with PyTorch's uint8 weight rounding, as torchvision's
    ``Resize`` on uint8 tensors computes (on float32 the same as ``True``); ``antialias="torch-noaa"``:
    PyTorch's uint8 kernel without antialias, torchvision's ``Resize(antialias=False)`` on uint8
    tensors (on float32 the same as ``False``). area matches ``cv2.INTER_AREA``; nearest-exact
    PyTorch's ``nearest-exact``; nearest-pil Pillow's ``NEAREST``; nearest-torch PyTorch's ``nearest``.
    docs/API.md gives every rounding rule.
    """
    return run_eager(
        ("resize", size, interpolation, antialias, max_size),
        src,
        out,
        lambda t: (_resize_t(t, size, interpolation, antialias, max_size), None),
    )[0]


def flip(src: Any, *, horizontal: bool = True, vertical: bool = False, out: Optional[np.ndarray] = None) -> Any:
    """Mirror left-right (``horizontal``) and/or top-bottom (``vertical``)."""
    return run_eager(
        ("flip", horizontal, vertical),
        src,
        out,
        lambda t: (t.flip(_validate.as_flag("horizontal", horizontal), _validate.as_flag("vertical", vertical)), None),
    )[0]


def crop(src: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height x width`` window at ``(top, left)``: a zero-copy view of ``src``."""
    if isinstance(src, Traced):
        return check_traced(src).crop(top, left, height, width)
    a, kind = as_array(src)
    t = trace_array(a)
    top, left, height, width = check_window(top, left, height, width, t.height, t.width)
    if kind == "torch":
        return src[..., top : top + height, left : left + width]  # the tensor's own (C, H, W) view
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
    return run_eager(
        ("letterbox", size, pad_value, scaleup, auto, stride),
        src,
        out,
        lambda t: _letterbox_t(t, size, pad_value, scaleup, auto, stride),
    )


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
    return run_eager(
        ("pad", padding, size, multiple, value, center),
        src,
        out,
        lambda t: (_pad_t(t, padding, size, multiple, value, center), None),
    )[0]


def center_crop(src: Any, size: Size, *, out: Optional[np.ndarray] = None) -> Any:
    """The centred ``size`` window with torchvision's rounding: the crop starts at
    ``int(round((H - h) / 2.0))``; where it is larger than the image, the image is first padded with
    zeros (``(h - H) // 2`` before, the rest after), as torchvision does."""
    return run_eager(("center_crop", size), src, out, lambda t: (_center_crop_t(t, size), None))[0]


def cvt_color(src: Any, code: str, out: Optional[np.ndarray] = None) -> Any:
    """Convert channel order: ``"rgb2bgr"``, ``"bgr2rgb"``, ``"rgba2rgb"`` (drop alpha), ``"gray2rgb"``."""

    def build(t: Traced) -> Tuple[Traced, None]:
        _validate.as_choice("code", code, tuple(_COLOR))
        need, cmap = _COLOR[code]
        if t.channels != need:
            raise ShapeError(f"{code} needs a {need}-channel image, got {t.channels} channels", argument="src")
        return t.mapped(cmap), None

    return run_eager(("cvt_color", code), src, out, build)[0]


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
    return run_eager(
        ("normalize", mean, std, scale, dtype, layout),
        src,
        out,
        lambda t: (_normalize_t(t, mean, std, scale, dtype, layout), None),
    )[0]
