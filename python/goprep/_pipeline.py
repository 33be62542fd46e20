"""``@goprep.pipeline``: trace a function of goprep ops once per input signature, run it fused."""

from __future__ import annotations

import functools
import math
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _device, _inputs, _outputs, _pickling, _profile, _run
from ._errors import DTypeError, InvalidArgumentError, ShapeError
from ._outputs import SLOT, fill
from ._signature import Memo, Signature, auto_keeps_on_cpu, trace
from ._trace import typed_key
from ._validate import check_aligned

_OUTPUTS = (None, "numpy", "torch", "device")
_perf_ns = time.perf_counter_ns  # the profiler's clock and record layout
_tls = _profile._tls
_ACCEPTS = ("a numpy.ndarray, a PIL image, a torch.Tensor, a CUDA array, a goprep.yuv frame, encoded image bytes "
            "or a path, or a list of them")
_NO_KEY = object()  # _lookup: the caller has not built the memo key


class Pipeline:
    """A function of goprep ops compiled into fused engine passes (see ``goprep.pipeline``). Every call
    of goprep runs through one: an eager op is a one-op pipeline (_ops.py)."""

    def __init__(
        self, fn: Callable[..., Any], device: str, output: Optional[str] = None, *, name: Optional[str] = None,
        host_only: bool = False,
    ) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._device = device
        self._output = output
        # where the engine writes: host memory (NumPy, or a tensor over it) or a DeviceArray
        self._target = "device" if output == "device" else "numpy"
        self._cache = Memo("signatures")
        self._cpu = device == "cpu" and self._target == "numpy"
        self._auto_numpy = device == "auto" and self._target == "numpy"
        self._plain = output in (None, "numpy")  # NumPy results for NumPy sources (the fast path's)
        # host_only: NumPy, PIL and CPU tensors only (the eager ops: no lists, no CUDA arrays)
        self._host_only = host_only
        self._accepts = "a numpy.ndarray" if host_only else _ACCEPTS
        self._name = name or getattr(fn, "__qualname__", None) or repr(fn)  # the profiler's key
        self._pid = _profile.name_id(self._name)  # its id in the profiler's rows (per process)

    @property
    def _opts(self) -> Tuple[Any, ...]:
        """What tracing needs of the pipeline (_signature.trace): device, target, plain, and whether a
        source no op reads may start the trace (a frame for goprep.yuv: not in eager ops)."""
        return (self._device, self._target, self._plain, not self._host_only)

    @property
    def _lock(self) -> Any:
        """The lock guarding this pipeline's memo (its Memo's)."""
        return self._cache.lock

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
        state = {k: v for k, v in self.__dict__.items() if k not in ("_cache", "__wrapped__", "_pid")}
        state["_fn"] = _pickling.FnRef(self._fn)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state.setdefault("_host_only", False)
        state.setdefault("_accepts", _ACCEPTS)
        self.__dict__.update(state, _fn=state["_fn"].fn, __wrapped__=state["_fn"].fn)
        self._cache = Memo("signatures")
        self._pid = _profile.name_id(self._name)

    def _lookup(self, src: np.ndarray, args: Tuple[Any, ...], kwargs: Dict[str, Any], key: Any = _NO_KEY) -> Signature:
        """The signature of a call: memoised by the source's layout and the extra arguments (dtype
        objects compare byte order too, and are cheaper to hash than dtype.str is to build), traced on
        a miss. Unhashable extra arguments are traced every call."""
        if key is _NO_KEY:
            key = (src.shape, src.strides, src.dtype, typed_key(args) if args else (), typed_key(kwargs) if kwargs else ())
        try:
            c = self._cache.get(key)
        except TypeError:
            key, c = None, None
        if c is None:
            c = trace(self._fn, src, args, kwargs, *self._opts)
            if key is not None and not c.ref.big:  # a big plan is used once and freed (PlanRef.big)
                self._cache.put(key, c)
        return c  # type: ignore[no-any-return]

    def _host_device(self, cpu: bool) -> str:
        """Where a host call runs: the CPU when its signatures place it there (``cpu``: Signature.cpu,
        or for a list auto_keeps_on_cpu of its total), or under "auto" into a host result when no GPU
        is usable; else the pipeline's device."""
        return "cpu" if cpu or (self._auto_numpy and _device.gpu_count() == 0) else self._device

    def __call__(self, src: Any, *args: Any, out: Optional[Any] = None, stream: Any = None, **kwargs: Any) -> Any:
        """Run on ``src``: a NumPy image or batch, a PIL image, a CPU torch tensor ((C, H, W) /
        (N, C, H, W)), a CUDA array (``__cuda_array_interface__`` or ``__dlpack__``: torch CUDA tensors
        as (C, H, W) / (N, C, H, W), CuPy arrays, ``goprep.DeviceArray``), or a list of these.
        ``stream=`` (an int handle, ``torch.cuda.Stream`` or ``cupy.cuda.Stream``) queues the work on
        that stream; with a device input and ``output="device"`` the call then returns without waiting."""
        return self._call(src, args, kwargs, out, stream)

    def _call(self, src: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], out: Any = None, stream: Any = None,
              each: Optional[Callable[[int, Any], Tuple[Any, Tuple[Any, ...]]]] = None, ragged: Any = False) -> Any:
        """``self(src, *args, out=out, stream=stream, **kwargs)``: the one call path of goprep. Eager
        ops call it directly (``kwargs`` empty), which spares them building the keyword dict. ``each``
        (a training chain's draws, transforms/_random.py): ``each(i, item)`` gives item ``i`` as it
        runs and its own extra arguments instead of ``args``, called in item order (see _tail).
        ``ragged``: _concat's (a list, results of different sizes: _ragged), or _at's ``(res, offsets)``."""
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
            if type(src) is np.ndarray and each is None:
                # The common call first: a NumPy image of a signature the fast path serves, straight
                # from the memo (Signature.fast; float32 sources aligned).
                key: Any = (src.shape, src.strides, src.dtype, typed_key(args) if args else (), typed_key(kwargs) if kwargs else ())
                try:
                    c = self._cache.get(key)
                except TypeError:  # unhashable extra arguments: traced below
                    key, c = None, None
                if c is not None and c.fast and out is None and stream is None and (not c.f32 or src.flags.aligned):
                    return fill(c.template, _run.run_one(c.handle, src, None, st, c.shape, c.dtype))
                sh = -1 if stream is None else _device.stream_handle(stream)
                if c is None:
                    if src.ndim == 1 and src.dtype == np.uint8:  # encoded bytes (any other 1-D array fails tracing)
                        return self._call_other(src, args, kwargs, out, stream, st)
                    c = self._lookup(src, args, kwargs, key)
                device = ("cpu" if c.cpu else self._host_device(False)) if sh < 0 else self._device
                res = self._run([c], [src], c.shape, out, device, sh, st, (src,))
                return res if c.template is SLOT else fill(c.template, res)
            return self._call_other(src, args, kwargs, out, stream, st, ragged=ragged, each=each)
        except BaseException:
            if st is not None:
                _profile.failed(st, self._name)
                st = None
            raise
        finally:
            if st is not None:  # commit the call's row
                i = st.i
                st.name[i] = self._pid
                st.t0[i] = t0
                st.t1[i] = _perf_ns()
                st.i = i + 1
                if i >= st.last:  # the buffer is full, or a hook is set
                    _profile.commit(st)

    def _call_other(self, src: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], out: Any, stream: Any, st: Any,
                    max_pixels: Optional[int] = None, name: str = "src", ragged: Any = False, each: Any = None) -> Any:
        """A call whose source is not a plain NumPy image: adapted into the items of its input kind
        (_inputs.adapt), run as one call (_tail), and any decode batch it opened closed.
        ``max_pixels``, ``name``: eager decode's (_ops.decode); ``ragged``: True for decode's separate
        results, "concat" for _concat's; ``each``: _call's."""
        sh = -1 if stream is None else _device.stream_handle(stream)
        items, one, batch = _inputs.adapt(src, sh if sh >= 0 else None, self._host_only, self._accepts, max_pixels, name)
        try:
            return self._tail(items, one, args, kwargs, out, sh, st, ragged, each)
        finally:
            if batch is not None:
                batch.close()

    def _signature(self, item: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], ak: Any, kk: Any) -> Signature:
        """An item's signature (an _inputs kind): memoised by its key, traced by it on a miss."""
        key = item.key + (ak, kk)
        try:
            c = self._cache.get(key)
        except TypeError:  # unhashable extra arguments: traced every call
            key, c = None, None
        if c is None:
            c = item.trace(self._fn, args, kwargs, self._opts)
            if key is not None and not c.ref.big:  # a big plan is used once and freed (PlanRef.big)
                self._cache.put(key, c)
        return c  # type: ignore[no-any-return]

    def _tail(self, items: List[Any], one: bool, args: Tuple[Any, ...], kwargs: Dict[str, Any], out: Any, sh: int,
              st: Any, ragged: Any = False, each: Any = None) -> Any:
        """Run the function on ``items`` (one source, or a list's): one signature each (all giving
        one size and dtype, unless ``ragged``: separate results (_ragged, on the CPU)), placed once,
        run in one engine call, the function's result rebuilt around the image. With ``each``, item
        ``i`` becomes ``each(i, item)``'s item with its own arguments (its own plan), before item
        ``i + 1`` is asked for."""
        ak = typed_key(args) if args else ()
        kk = typed_key(kwargs) if kwargs else ()
        x0 = items[0]
        sigs: List[Signature] = []
        for i, it in enumerate(items):
            if each is not None:
                it, args = each(i, it)
                ak = typed_key(args)
                items[i] = it
            if it.dtype != x0.dtype:  # a silent trap: normalize's default scale follows each dtype
                raise DTypeError(
                    f"item {i} is {it.dtype} but item 0 is {x0.dtype}; the images of a list must share one "
                    "dtype (uint8 is scaled by 1/255, float32 is not): convert them first", argument="src")
            c = self._signature(it, args, kwargs, ak, kk)
            if sigs and not ragged and (c.shape != sigs[0].shape or c.dtype != sigs[0].dtype):
                raise ShapeError(
                    f"item {i} produces {c.shape} {c.dtype} but item 0 produces {sigs[0].shape} "
                    f"{sigs[0].dtype}; a list must produce one size (resize or letterbox to a fixed size)",
                    argument="src",
                )
            sigs.append(c)
        first, x0 = sigs[0], items[0]
        mem = () if x0.on_dev else x0.mem if one else tuple(m for it in items for m in it.mem)
        refs = [it.ref for it in items]
        if ragged and first.decode is None:  # host images of different results: one CPU call
            if x0.on_dev:
                raise InvalidArgumentError("a call that concatenates its images' results takes host images only "
                                           "(NumPy, PIL or CPU tensors), not device arrays", argument="src")
            _run.check_sources(sigs, refs, "cpu")  # float32 alignment
            return self._ragged(sigs, refs, st, ragged)
        if first.decode is not None:  # encoded sources: decoded on the CPU (no nvJPEG yet)
            return self._decoded(sigs, refs, one, out, sh, st, ragged, mem)
        kind = x0.kind
        if not one and any(it.kind != kind for it in items):
            kind = None
        if sh >= 0 or x0.on_dev:
            device = self._device
        elif one:
            device = "cpu" if first.cpu else self._host_device(False)
        else:  # auto's rule on the list's total
            device = self._host_device(self._cpu or (self._auto_numpy and auto_keeps_on_cpu(sum(c.moved for c in sigs))))
        shape = first.shape if one else (len(items),) + first.shape
        res = self._run(sigs, refs, shape, out, device, sh, st, mem, kind, host=not x0.on_dev)
        return self._result(sigs, one, res)

    @staticmethod
    def _result(sigs: List[Signature], one: bool, res: Any) -> Any:
        """The function's result around the engine's: its template filled, per-image extras (e.g. each
        image's LetterboxInfo) of a list as lists."""
        first = sigs[0]
        if first.template is SLOT:
            return res
        if one:
            return fill(first.template, res)
        return tuple(res if x is SLOT else [c.template[k] for c in sigs] for k, x in enumerate(first.template))

    def _decoded(self, sigs: List[Signature], refs: List[Any], one: bool, out: Any, sh: int, st: Any, ragged: Any,
                 mem: Tuple[Any, ...]) -> Any:
        """A call of encoded items: decoded and run on the CPU into a host result (separate results when
        ``ragged``), uploaded after for output="device"."""
        to_gpu = self._target == "device"
        if to_gpu and out is not None:
            raise InvalidArgumentError('cannot be combined with output="device"', argument="out")
        if sh >= 0 and not to_gpu:
            raise InvalidArgumentError('encoded images are decoded on the CPU: stream= applies to output="device" only',
                                       argument="stream")
        if ragged:
            return self._ragged(sigs, refs, st, ragged)
        first = sigs[0]
        shape = first.shape if one else (len(sigs),) + first.shape
        res = self._run(sigs, refs, shape, out, "cpu", -1, st, mem, None, target="numpy")
        if to_gpu:  # the host result uploaded: the same DeviceArray a device pipeline returns
            res = _device.to_device(res, self._device if self._device.startswith("cuda") else "cuda", sh if sh >= 0 else None)
        return self._result(sigs, one, res)

    @staticmethod
    def _ragged(sigs: List[Signature], refs: List[Any], st: Any, ragged: Any) -> Any:
        """Results of different sizes from one CPU engine call (one job a result, its output at its own
        byte offset of one host buffer, the job table's output column): a list of views of 64-byte
        aligned parts (eager decode's lists), or with ``ragged`` "concat" one NumPy array of the results
        concatenated along their first axis, which they may differ in (Qwen2-VL's patch rows of images
        of different sizes: ``_concat``), or with ``ragged`` a pair ``(res, offsets)`` each result at its
        byte offset of ``res`` (``_at``)."""
        first = sigs[0]
        sizes = [math.prod(c.shape) * c.dtype.itemsize for c in sigs]
        concat = ragged == "concat"
        if isinstance(ragged, tuple):  # _at's: each result at its byte offset of the caller's array
            res, at = ragged
            for i, (c, o, n) in enumerate(zip(sigs, at, sizes)):
                if c.dtype != res.dtype or o < 0 or o % c.dtype.itemsize or o + n > res.nbytes:
                    raise ShapeError(f"item {i} produces {c.shape} {c.dtype}, which does not fit at byte {o} of the "
                                     f"{res.dtype} result of {res.nbytes} bytes", argument="out")
            _run.run(sigs, refs, res, res.shape, res.dtype, "cpu", timed=st, offsets=list(at))
            return res
        offs = [0]
        if concat:
            for i, c in enumerate(sigs):
                if len(c.shape) < 1 or c.shape[1:] != first.shape[1:] or c.dtype != first.dtype:
                    raise ShapeError(f"item {i} produces {c.shape} {c.dtype} but item 0 produces {first.shape} "
                                     f"{first.dtype}; results concatenated along their first axis must share the "
                                     "others and the dtype", argument="src")
            for n in sizes[:-1]:
                offs.append(offs[-1] + n)
            res = _outputs.new_result((sum(c.shape[0] for c in sigs),) + first.shape[1:], first.dtype, first.size_arg)
            _run.run(sigs, refs, res, res.shape, res.dtype, "cpu", timed=st, offsets=offs)
            return res
        for n in sizes[:-1]:
            offs.append(offs[-1] + -(-n // 64) * 64)
        buf = _outputs.new_result((offs[-1] + sizes[-1],), np.dtype(np.uint8), first.size_arg)
        _run.run(sigs, refs, buf, buf.shape, buf.dtype, "cpu", timed=st, offsets=offs)
        return [buf[o:o + n].view(c.dtype).reshape(c.shape) for c, o, n in zip(sigs, offs, sizes)]

    def _concat(self, src: List[Any]) -> np.ndarray:
        """The function on each image of the list ``src`` (host images, or JPEG/PNG bytes and paths, or
        the opened items of a decode batch: decoded in the call), each its own plan and result size, in
        one GIL-free CPU engine call, the results concatenated along their first axis into one NumPy
        array (Hugging Face's Qwen2-VL ``PatchBatch``: each image's patch rows at its row offset)."""
        return self._call(list(src), (), {}, ragged="concat")  # type: ignore[no-any-return]

    def _at(self, src: List[Any], res: np.ndarray, offsets: Sequence[int], each: Callable[[int, Any], Any]) -> None:
        """The function on each host image of ``src`` with its own arguments (``each``, as _call's), each
        its own plan, in one GIL-free CPU engine call, result ``i`` written at byte ``offsets[i]`` of the
        C-contiguous NumPy array ``res`` (LLaVA's tiles at their places in the stacked pixel_values,
        padding tiles skipped: transforms/_hf_anyres.py)."""
        if not res.flags.c_contiguous or not res.flags.writeable:
            raise InvalidArgumentError("must be a writable C-contiguous NumPy array", argument="out")
        if len(offsets) != len(src):
            raise InvalidArgumentError(f"{len(offsets)} offsets for {len(src)} images", argument="offsets")
        self._call(list(src), (), {}, each=each, ragged=(res, tuple(offsets)))

    def _run(
        self, sigs: List[Signature], srcs: List[Any], shape: Tuple[int, ...], out: Any, device: str, sh: int, st: Any,
        mem: Tuple[Any, ...], kind: Optional[str] = None, host: bool = True, target: Optional[str] = None,
    ) -> Any:
        """Run signatures ``sigs`` on engine references ``srcs`` into one result of ``shape`` (one
        image's, or a list's batch), and return it for the caller (_outputs): a DeviceArray, or a host
        result (new, or ``out=`` as the caller passed it), as a tensor when the pipeline's output or
        the sources' ``kind`` says torch. ``mem``: the host memory the sources occupy (out= must not
        overlap it). For device sources (not ``host``) ``out=`` is a NumPy array and the result stays
        NumPy. ``target``: where the engine writes, when not the pipeline's own."""
        first = sigs[0]
        given = out
        if out is not None and host and type(out) is not np.ndarray:
            out = _outputs.out_view(out, shape, first.chw)
        x = srcs[0]
        if first.decode is not None:  # encoded items: host sources, uint8
            on_dev, wait = False, -1
        elif len(srcs) == 1 and type(x) is np.ndarray:  # one host image: the common general call
            if first.f32 and not x.flags.aligned:
                check_aligned(True, x, "src")
            on_dev, wait = False, -1
        else:
            on_dev, device, wait = _run.check_sources(sigs, srcs, device)
        if (target or self._target) == "device":
            if out is not None:
                raise InvalidArgumentError('cannot be combined with output="device"', argument="out")
            h = _run.run(sigs, srcs, None, shape, first.dtype, device, on_dev, sh, wait, st)
            return _outputs.device_result(h, shape, first.dtype)
        res = _outputs.host_result(out, shape, first.dtype, first.size_arg, () if on_dev else mem)
        _run.run(sigs, srcs, res, shape, first.dtype, device, on_dev, sh, wait, st)
        if not host:
            return res if given is None else given
        if (self._output or kind) != "torch":
            return res if given is None else given  # out= comes back as the object passed (a tensor too)
        return _outputs.deliver(res, given, True, first.chw)


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
