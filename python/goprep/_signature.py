"""Signatures: a traced function for one input layout and argument set, with its engine plan.

A ``Signature`` is what a call of a pipeline (or an eager op, a one-op pipeline) needs once the
function was traced: the plan, the result's shape and dtype, where the image goes in the function's
result, and what is decided once for it instead of per call: whether the fast path may serve it, and
whether device="auto" keeps it on the CPU (the engine's rule, with the engine's count of bytes moved).

Caches follow one policy (``Memo``): bounded, emptied when full. Engine plans are shared by spec
(``plan_for``); each pipeline memoises its signatures by input layout and arguments.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import weakref
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from . import _device, _native, _outpool
from ._errors import PipelineError, ShapeError
from ._run import INTERRUPTIBLE_MIN_BYTES
from ._trace import SLOT, Traced, check_out_size, trace_array, tracing

# Bounds of the caches by kind, read when an entry is added (goprep.testing.cache_limits sets them).
# "plan_bytes": the engine memory (tables and scratch, binding PlanBytes) of all live plans; past it
# every cache is emptied and the memory returned to the OS (very wide outputs make plans of tens of MB).
LIMITS: Dict[str, int] = {"plans": 1024, "signatures": 256, "plan_bytes": 256 << 20}
_memos: "weakref.WeakValueDictionary[int, Memo]" = weakref.WeakValueDictionary()  # by id: a dict is unhashable
traces = [0]  # functions traced by this process (goprep.testing.trace_count)
_traces_lock = threading.Lock()


class Memo(dict):  # type: ignore[type-arg]
    """A bounded memo, the one cache policy of the run path: when full, it is emptied before the next
    entry goes in (a process whose shapes outnumber the bound traces again, and memory stays bounded);
    lookups are plain ``dict.get``, the cheapest a call can pay."""

    __slots__ = ("kind", "lock", "__weakref__")

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.lock = threading.Lock()
        _memos[id(self)] = self

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            if len(self) >= LIMITS[self.kind]:
                self.clear()
            self[key] = value


def memos() -> "list[Memo]":
    """Every live memo (goprep.testing)."""
    return list(_memos.values())


# The engine memory of every live PlanRef (an RLock: a PlanRef's __del__ may run from a collection
# triggered while this thread holds it).
_live_bytes = [0]
_live_lock = threading.RLock()


def live_plan_bytes() -> int:
    """The engine memory (binding PlanBytes) of the plans alive in this process."""
    return _live_bytes[0]


class PlanRef:
    """Owns one engine plan handle; freed when the last user drops it (caches evict by dropping)."""

    __slots__ = ("handle", "pid", "big", "nbytes")

    def __init__(self, spec: str) -> None:
        # Set before anything can fail (a forked child's ForkError, a refused spec), so __del__ of a
        # half-built PlanRef has nothing to free and says nothing.
        self.handle: int = 0
        self.pid = os.getpid()
        self.big = False
        self.nbytes = 0
        mod = _native.get()
        self.handle = _native.call(mod.NewPlan, spec)
        nbytes = _native.call(mod.PlanBytes, self.handle)
        with _live_lock:
            _live_bytes[0] += nbytes
            self.nbytes = nbytes
        # A plan whose tables are big is used once and freed (the engine then returns its memory to
        # the OS): cached, it would keep up to a GiB resident for the life of the process.
        self.big = nbytes > _native.limit("big_plan_bytes")

    def __del__(self) -> None:
        try:
            with _live_lock:
                _live_bytes[0] -= self.nbytes
                self.nbytes = 0
            # Never into a finalizing interpreter: the process is ending and the OS takes the memory.
            if self.handle and self.pid == os.getpid() and _native.loaded() and not sys.is_finalizing():
                _native.get().FreePlan(self.handle)
        except Exception:  # interpreter shutdown (module globals already None): nothing to free into
            pass


def evict_all() -> None:
    """Empty every cache of the run path (the plans no caller holds are freed with them) and return
    the freed engine memory to the OS."""
    for m in memos():
        m.clear()
    if _native.loaded():
        _native.get().ReleaseMemory()


# Keyed by the spec text: Traced images that compare equal can still differ (-0.0 and 0.0 as mean or
# pad value give results of different sign), and the spec is what the plan is built from.
_plans = Memo("plans")


def plan_for(t: Traced) -> PlanRef:
    check_out_size(t)
    spec = t.spec()
    ref = _plans.get(spec)
    if ref is not None:
        return ref  # type: ignore[no-any-return]
    try:
        ref = PlanRef(spec)
    except ShapeError as e:
        # The engine names the output's size "size" when the plan for it would be too large; the caller
        # may have set that size with another argument (pad's padding or multiple) or not at all (src).
        if e.code != "too_large" or e.argument != "size" or t.size_arg == "size":
            raise
        raise ShapeError(e.detail, argument=t.size_arg, code=e.code) from None
    if not ref.big:
        if live_plan_bytes() > LIMITS["plan_bytes"]:  # the new plan included: bounded in bytes too
            evict_all()
        _plans.put(spec, ref)
    return ref


def auto_keeps_on_cpu(moved: int) -> bool:
    """device="auto"'s rule for host calls into host results, the engine's (wantGPU's first test):
    a call whose jobs move fewer than GPUAutoMinBytes between host and GPU (``moved``, summed over
    its jobs' engine counts: binding PlanMovedBytes) stays on the CPU, whatever GPUs there are."""
    return moved < _device.auto_min_bytes()


class Signature:
    """One traced signature of one pipeline: its plan (``ref``, ``handle``), the result's ``shape``,
    ``dtype`` and layout (``chw``), the function's result around the image (``template``), the
    argument that set the result's size (``size_arg``), and, decided once:

    - ``cpu``: the pipeline's device keeps host calls of it on the CPU: device="cpu", or "auto" into a
      host result when it moves fewer bytes than the engine's GPU threshold (``moved``, the engine's
      own count: binding PlanMovedBytes). Otherwise "auto" asks per call whether a GPU is usable.
    - ``fast``: a call of it from a NumPy source into a new NumPy result may take the fast path
      (_run.run_one): placed on the CPU, a result below the pool's size, a call below the
      interruptible size, and the pipeline's output NumPy.
    """

    __slots__ = ("ref", "handle", "shape", "dtype", "f32", "chw", "template", "size_arg", "moved", "cpu", "fast",
                 "decode", "src_bytes")

    def __init__(self, traced: Traced, template: Any, src_bytes: int, device: str, target: str, plain: bool,
                 gray: bool = False, decode: Optional[Tuple[int, int, bool]] = None) -> None:
        self.ref: PlanRef = plan_for(traced)
        self.handle = self.ref.handle
        self.shape: Tuple[int, ...] = traced.shape
        if gray and not traced.chw and self.shape[-1] == 1:  # a 2-D source gives a 2-D result, as cv2 does
            self.shape = self.shape[:-1]
        # an encoded source's decode options (codec mode, JPEG scale, apply orientation): _decode.py
        self.decode = decode
        self.src_bytes = src_bytes  # the source's size (an encoded one's decoded size)
        self.dtype: np.dtype = traced.out_dtype
        self.f32 = traced.dtype == "f32"
        self.chw = traced.chw
        self.template = template
        self.size_arg = traced.size_arg
        self.moved = 0
        if target != "numpy":
            self.cpu = False
        elif device == "cpu":
            self.cpu = True
        elif device == "auto":
            self.moved = int(_native.call(_native.get().PlanMovedBytes, self.handle))
            self.cpu = auto_keeps_on_cpu(self.moved)
        else:
            self.cpu = False
        out_bytes = math.prod(self.shape) * self.dtype.itemsize
        self.fast = (
            self.cpu and plain and out_bytes < _outpool.MIN_BYTES and src_bytes + out_bytes < INTERRUPTIBLE_MIN_BYTES
        )


def split_result(res: Any) -> Tuple[Traced, Any]:
    """Find the one traced image in a function's result; return it and the result's shape around it."""
    if isinstance(res, Traced):
        return res, SLOT
    if isinstance(res, tuple):
        found = [x for x in res if isinstance(x, Traced)]
        if len(found) == 1:
            return found[0], tuple(SLOT if isinstance(x, Traced) else x for x in res)
    raise PipelineError(
        "a @goprep.pipeline function must return the processed image, or a tuple holding it once "
        f"(e.g. the result of goprep.letterbox); got {type(res).__name__}"
    )


def trace_fn(fn: Callable[..., Any], start: Traced, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Traced, Any]:
    """Run ``fn`` on the symbolic image ``start``: the traced image it returns and the result's
    template around it (split_result). Counted in ``traces``."""
    with _traces_lock:  # a read-modify-write: exact on free-threaded builds too (goprep.testing.trace_count)
        traces[0] += 1
    with tracing():
        traced, template = split_result(fn(start, *args, **kwargs))
    if traced.pending is not None:  # returned as it came, unread
        raise ShapeError(traced.pending, argument="src")
    return traced, template


def trace(
    fn: Callable[..., Any], src: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], device: str, target: str, plain: bool,
    lenient: bool = False,
) -> Signature:
    """Trace ``fn`` on ``src`` with these arguments and build its Signature: ``src`` is a NumPy array
    (or a device array's stand-in), whose layout is traced, or a YUVFrame (_yuv.py). ``lenient``:
    an array no op reads (a YUV frame's raw array) may start the trace, for goprep.yuv to read."""
    start = trace_array(src, lenient=lenient) if isinstance(src, np.ndarray) else src.traced()
    traced, template = trace_fn(fn, start, args, kwargs)
    return Signature(traced, template, src.nbytes, device, target, plain, gray=start.raw is not None and len(start.raw[0]) == 2)
