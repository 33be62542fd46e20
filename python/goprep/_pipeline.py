"""``@goprep.pipeline``: trace a function of goprep ops once per input signature, run it fused."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _device, _pickling, _profile
from ._errors import InvalidArgumentError, PipelineError, ShapeError
from ._inputs import as_array, is_tensor, out_array, to_output
from ._ops import PlanRef, plan_for, run_jobs, run_plan, run_small, small_call
from ._trace import Traced, trace_array, tracing, typed_key
from ._validate import base_array

_OUTPUTS = (None, "numpy", "torch", "device")
_CACHE_SIZE = 256  # traced signatures per pipeline: many shapes must not grow memory without limit
_perf_ns = time.perf_counter_ns  # the profiler's clock and record layout
_tls = _profile._tls
_SLOT = object()  # marks where the image goes in a traced function's result


class _Compiled:
    """One traced signature: its plan and how to build the function's result."""

    __slots__ = ("ref", "shape", "dtype", "template", "f32", "traced", "moved", "chw", "small")

    def __init__(self, traced: Traced, template: Any, src_bytes: int) -> None:
        self.traced = traced
        self.ref: PlanRef = plan_for(traced)
        self.shape = traced.shape
        self.dtype = traced.out_dtype
        self.template = template
        self.f32 = traced.dtype == "f32"
        self.chw = traced.chw
        self.moved = src_bytes + int(np.prod(self.shape)) * self.dtype.itemsize  # bytes a GPU call would copy
        self.small = small_call(src_bytes, self.shape, self.dtype)  # run_small may serve it on the CPU


def _split_result(res: Any) -> Tuple[Traced, Any]:
    """Find the one traced image in a function's result; return it and the result's shape around it."""
    if isinstance(res, Traced):
        return res, _SLOT
    if isinstance(res, tuple):
        found = [x for x in res if isinstance(x, Traced)]
        if len(found) == 1:
            return found[0], tuple(_SLOT if isinstance(x, Traced) else x for x in res)
    raise PipelineError(
        "a @goprep.pipeline function must return the processed image, or a tuple holding it once "
        f"(e.g. the result of goprep.letterbox); got {type(res).__name__}"
    )


def _key(src: np.ndarray, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """A call's memo key: the source's layout and the extra arguments. dtype objects compare byte
    order too, and are cheaper to hash than dtype.str is to build. TypeError: unhashable arguments."""
    return (src.shape, src.strides, src.dtype, typed_key(args) if args else (), typed_key(kwargs) if kwargs else ())


def _fill(template: Any, image: np.ndarray) -> Any:
    if template is _SLOT:
        return image
    return tuple(image if x is _SLOT else x for x in template)


class Pipeline:
    """A function of goprep ops compiled into fused engine passes (see ``goprep.pipeline``)."""

    def __init__(self, fn: Callable[..., Any], device: str, output: Optional[str] = None) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._device = device
        self._output = output
        # where the engine writes: host memory (NumPy, or a tensor over it) or a DeviceArray
        self._target = "device" if output == "device" else "numpy"
        self._cache: Dict[Any, _Compiled] = {}
        self._lock = threading.Lock()
        # device="cpu" (and "auto" once no GPU is found) takes the engine's direct CPU entry point,
        # skipping placement: that keeps the per-call overhead of small images at its CPU-only level.
        self._cpu = device == "cpu" and self._target == "numpy"
        self._auto_numpy = device == "auto" and self._target == "numpy"
        self._plain = output in (None, "numpy")  # NumPy results for NumPy sources (run_small's)
        self._name = getattr(fn, "__qualname__", None) or repr(fn)  # the profiler's key
        self._pid = _profile.name_id(self._name)  # its id in the profiler's rows (per process)

    def __repr__(self) -> str:
        return (
            f"<goprep.pipeline {getattr(self._fn, '__qualname__', self._fn)!r} device={self._device!r}"
            f" output={self._output!r}>"
        )

    # Pickling: the function and options travel, plans/lock/cache are rebuilt lazily (_pickling.py).
    def __reduce_ex__(self, protocol: Any) -> Any:
        if _pickling.by_name(self):  # a module-level @goprep.pipeline: by name, like a function
            return (_pickling.import_named, (self.__module__, self.__qualname__))
        return super().__reduce_ex__(protocol)

    def __getstate__(self) -> Dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_cache", "_lock", "__wrapped__", "_pid")}
        state["_fn"] = _pickling.FnRef(self._fn)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state, _fn=state["_fn"].fn, __wrapped__=state["_fn"].fn)
        self._cache = {}
        self._lock = threading.Lock()
        self._pid = _profile.name_id(self._name)

    def _on_cpu(self, moved: int = 0) -> bool:
        # Under "auto", calls below the engine's GPU threshold skip the placement call entirely (the
        # engine would choose the CPU for them anyway), so small requests pay no GPU-path overhead.
        return self._cpu or (self._auto_numpy and (moved < _device.auto_min_bytes() or _device.gpu_count() == 0))

    def _compile(self, src: np.ndarray, args: Tuple[Any, ...], kwargs: Dict[str, Any], key: Any) -> _Compiled:
        with tracing():
            traced, template = _split_result(self._fn(trace_array(src), *args, **kwargs))
        c = _Compiled(traced, template, src.nbytes)
        if key is not None and not c.ref.big:  # a big plan is used once and freed (PlanRef.big)
            with self._lock:
                if len(self._cache) >= _CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = c
        return c

    def _lookup(self, src: np.ndarray, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> _Compiled:
        key: Any = _key(src, args, kwargs)
        try:
            c = self._cache.get(key)
        except TypeError:  # unhashable extra arguments: trace every call
            key = None
            c = None
        if c is None:
            c = self._compile(src, args, kwargs, key)
        return c

    def __call__(self, src: Any, *args: Any, out: Optional[Any] = None, stream: Any = None, **kwargs: Any) -> Any:
        """Run on ``src``: a NumPy image or batch, a PIL image, a CPU torch tensor ((C, H, W) /
        (N, C, H, W)), a CUDA array (``__cuda_array_interface__`` or ``__dlpack__``: torch CUDA tensors
        as (C, H, W) / (N, C, H, W), CuPy arrays, ``goprep.DeviceArray``), or a list of these.
        ``stream=`` (an int handle, ``torch.cuda.Stream`` or ``cupy.cuda.Stream``) queues the work on
        that stream; with a device input and ``output="device"`` the call then returns without waiting."""
        # Profiling off costs this one check (and a None test on the way out): the body stays inline,
        # since a helper call measured +0.1 us on a 2.4 us call, and a profiled call is timed here,
        # not by calling back in (re-entering with keyword arguments measured ~0.5 us).
        if _profile.ON:
            try:
                st = _tls.s
            except AttributeError:
                st = _profile.state()
            t0 = _perf_ns()
        else:
            st = None
        try:
            # The common call first: a NumPy image of a traced signature that run_small serves (small,
            # on the CPU, a new NumPy result), straight from the memo; the rest below (run_small).
            if type(src) is np.ndarray and out is None and stream is None and self._plain:
                try:
                    c = self._cache.get(_key(src, args, kwargs))
                except TypeError:  # unhashable extra arguments: traced below
                    c = None
                if c is not None and c.small and (not c.f32 or src.flags.aligned) and (self._cpu or self._on_cpu(c.moved)):
                    return _fill(c.template, run_small(c.ref, c.shape, c.dtype, src, st))
            sh = _device.stream_handle(stream)
            kind = None
            if type(src) is not np.ndarray:
                if isinstance(src, (list, tuple)):
                    return self._run_list(list(src), args, kwargs, out, sh, st)
                ds = _device.device_source(src, sh if sh >= 0 else None)
                if ds is not None:
                    c = self._lookup(ds.view, args, kwargs)
                    res = run_plan(
                        c.ref, c.shape, c.dtype, c.f32, ds, out, self._device, self._target, sh, st, c.traced.size_arg
                    )
                    return _fill(c.template, res)
                src, kind = as_array(src)
                if type(src) is not np.ndarray:
                    if not isinstance(src, np.ndarray):
                        raise InvalidArgumentError(
                            f"must be a numpy.ndarray, a PIL image, a torch.Tensor, a CUDA array or a list of them, "
                            f"got {type(src).__name__}",
                            argument="src",
                        )
                    src = base_array(src)  # an ndarray subclass: its base-class view (never its attributes)
            c = self._lookup(src, args, kwargs)
            device = "cpu" if sh < 0 and self._on_cpu(c.moved) else self._device
            if out is not None and type(out) is not np.ndarray and is_tensor(out):
                run_plan(
                    c.ref, c.shape, c.dtype, c.f32, src, out_array(out, c.shape, c.chw), device, self._target, sh, st
                )
                return _fill(c.template, out)
            res = run_plan(c.ref, c.shape, c.dtype, c.f32, src, out, device, self._target, sh, st, c.traced.size_arg)
            if (self._output or kind) == "torch":
                res = to_output(res, "torch", c.chw)
            return _fill(c.template, res)
        except BaseException:
            if st is not None:
                _profile.failed(st, self._name)
                st = None
            raise
        finally:
            if st is not None:  # commit the call's row (as _ops.run_eager does)
                i = st.i
                st.name[i] = self._pid
                st.t0[i] = t0
                st.t1[i] = _perf_ns()
                st.i = i + 1
                if i >= st.last:  # the buffer is full, or a hook is set
                    _profile.commit(st)

    def _run_list(
        self,
        images: List[Any],
        args: Tuple[Any, ...],
        kwargs: Dict[str, Any],
        out: Optional[np.ndarray],
        sh: int = -1,
        timed: Any = None,
    ) -> Any:
        if not images:
            raise ShapeError("the list of images is empty", argument="src")
        compiled: List[_Compiled] = []
        kinds = set()
        srcs: List[Any] = []
        for i, item in enumerate(images):
            ds = None if isinstance(item, np.ndarray) else _device.device_source(item, sh if sh >= 0 else None)
            if ds is not None:
                srcs.append(ds)
                img = ds.view
            else:
                img, kind = as_array(item)
                kinds.add(kind)
                img = base_array(img, "src")
                srcs.append(img)  # kept alive until the call returns
            if not isinstance(img, np.ndarray) or img.ndim != 3:
                raise ShapeError(
                    f"item {i} must be an (H, W, C) numpy.ndarray, got "
                    f"{getattr(img, 'shape', type(img).__name__)}",
                    argument="src",
                )
            c = self._lookup(img, args, kwargs)
            if compiled and (c.shape != compiled[0].shape or c.dtype != compiled[0].dtype):
                raise ShapeError(
                    f"item {i} produces {c.shape} {c.dtype} but item 0 produces {compiled[0].shape} "
                    f"{compiled[0].dtype}; a list must produce one size (resize or letterbox to a fixed size)",
                    argument="src",
                )
            compiled.append(c)
        first = compiled[0]
        shape = (len(images),) + first.shape
        host = all(isinstance(x, np.ndarray) for x in srcs)
        device = "cpu" if host and sh < 0 and self._on_cpu(sum(c.moved for c in compiled)) else self._device
        given = out
        if out is not None and type(out) is not np.ndarray and is_tensor(out):
            out = out_array(out, shape, first.chw)
        res: Any = run_jobs(
            [(c.ref, c.f32, x) for c, x in zip(compiled, srcs)],
            shape,
            first.dtype,
            out,
            device,
            self._target,
            sh,
            timed,
            first.traced.size_arg,
        )
        if given is not None and is_tensor(given):
            res = given
        elif (self._output or (kinds.pop() if len(kinds) == 1 else None)) == "torch":
            res = to_output(res, "torch", first.chw)
        if first.template is _SLOT:
            return res
        # Per-image extras (e.g. each image's LetterboxInfo) come back as lists.
        return tuple(
            res if x is _SLOT else [c.template[k] for c in compiled] for k, x in enumerate(first.template)
        )


def pipeline(fn: Optional[Callable[..., Any]] = None, *, device: str = "auto", output: Optional[str] = None) -> Any:
    """Fuse a function of goprep ops into one pass in Go.

    Use as ``@goprep.pipeline`` or ``@goprep.pipeline(device=..., output=...)``. ``device`` is "auto" (the
    GPU when one is usable and the call is big enough to gain from it, else the CPU), "cpu", "cuda" or
    "cuda:N". ``output="device"`` keeps the result on the GPU as a ``goprep.DeviceArray`` (zero-copy into
    PyTorch/CuPy through DLPack or ``__cuda_array_interface__``); ``output="torch"`` returns a CPU
    ``torch.Tensor`` sharing the result's memory, ``output="numpy"`` a NumPy array; by default a
    tensor input gives a tensor and anything else a NumPy array. The first argument of the decorated
    function is the image: an ``(H, W, C)`` array, an ``(N, H, W, C)`` batch, a PIL image, a CPU
    tensor in torchvision's ``(C, H, W)`` / ``(N, C, H, W)`` convention, or a list of differently sized
    images (which produce one batch). Other arguments are passed through and are part
    of the cache key. ``out=`` receives the result in place. The function is traced once per input
    signature; calling it returns exactly what the same ops return when called one by one.
    """
    _device.check_device(device)
    # str first: `in` on a NumPy array of strings compares elementwise and raises on its truth value
    if (output is not None and not isinstance(output, str)) or output not in _OUTPUTS:
        raise InvalidArgumentError(f'must be None, "numpy", "torch" or "device", got {output!r}', argument="output")
    if output == "device" and device == "cpu":
        raise InvalidArgumentError('output="device" needs device="auto", "cuda" or "cuda:N"', argument="output")
    if fn is None:
        return lambda f: Pipeline(f, device, output)
    if not callable(fn):
        raise InvalidArgumentError(f"must be callable, got {type(fn).__name__}", argument="fn")
    return Pipeline(fn, device, output)
