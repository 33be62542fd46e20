"""The engine runner: the only caller of the binding's run entries (gomod/binding: Run, RunTimed,
Execute). It checks what the engine reads (float32 alignment, device sources' GPU and stream), picks
the entry, and makes long CPU calls interruptible; callers hand it sources and an allocated result
(_outputs.py) and get back nothing, or a device array's handle.

Entries: ``Run`` for one host image on the CPU (the common small call), ``RunTimed`` for the same call
profiled, ``Execute`` for everything else, its arguments saying what the call is: several jobs, a
placement, device sources or a device output, encoded sources (``EncodedItem``: an item of an open
decode batch, decoded by the engine's CPU workers), a stream, a cancel flag (cancellable), a profile
row (profiled).
"""

from __future__ import annotations

import _thread
import math
import threading
import time
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _native, _profile
from ._errors import InvalidArgumentError, from_native
from ._validate import check_aligned, device_reads, device_sources

# Calls moving at least this many bytes (sources plus output) run where Ctrl-C can stop them: about
# 10 ms of work or more, so the helper thread (~0.1 ms) costs under 1%, and smaller calls end before a
# user could notice a late interrupt.
INTERRUPTIBLE_MIN_BYTES = 16 << 20

_perf_ns = time.perf_counter_ns  # the profiler's clock


class EncodedItem(NamedTuple):
    """Item ``index`` of the open decode batch ``batch`` (DecodeOpen's handle) as a job source. The
    decode options the engine applies are its signature's (``decode``: codec mode, JPEG scale, apply
    orientation), the decoded size its ``src_bytes``."""

    batch: int
    index: int


def open_batch(desc: np.ndarray, n: int, paths: str, max_pixels: int, name: str, is_list: bool) -> Tuple[int, np.ndarray, Tuple[str, ...]]:
    """DecodeOpen: read ``n`` encoded items (``desc``: int64 rows (address, size) of bytes, or (-1, k):
    the k-th of ``paths``, comma-separated hex) and probe their headers, refusing bombs above
    ``max_pixels`` (0: none) and bad data before any pixel is decoded. Returns the batch's handle
    (close_batch frees it), its header table, and the format names its format column indexes."""
    open_, _ = _native._raw_decode
    if open_ is None or _native._forked_child:
        _native.get()  # loads the extension, or raises ForkError
        open_, _ = _native._raw_decode
    hdr = np.zeros((n, _native._limits["header_columns"]), np.int64)
    try:
        h = open_(id(desc), n, paths, id(hdr), max_pixels, name, is_list)
    except RuntimeError as e:
        raise from_native(e) from None
    return int(h), hdr, _native._formats


def close_batch(handle: int) -> None:
    """DecodeClose: free an open batch (the file contents it read)."""
    _native._raw_decode[1](handle, False)  # gopy: False runs it on the calling thread


def _on_device(x: Any) -> bool:
    return type(x) is not np.ndarray and type(x) is not EncodedItem


def check_sources(sigs: Sequence[Any], srcs: Sequence[Any], device: str) -> Tuple[bool, str, int]:
    """Check a call's sources (all host: NumPy arrays and encoded items, or all DeviceSources on one
    GPU) against their signatures (_signature.Signature: ``f32``, a float32 source) and return whether
    they are on a device, the device the call runs on (a device source's GPU), and the stream they
    were produced on (-1: none). (Pipeline._run checks one host source inline, with the same
    check_aligned.)"""
    on_dev = _on_device(srcs[0])
    if any(_on_device(x) != on_dev for x in srcs):
        raise InvalidArgumentError("a list must be all host (NumPy) or all device arrays", argument="src")
    one = len(srcs) == 1
    for i, (c, x) in enumerate(zip(sigs, srcs)):
        if c.f32:
            check_aligned(True, x, "src" if one else f"src[{i}]")
    if not on_dev:
        return False, device, -1
    d, stream = device_sources(srcs)
    device_reads(device, d)
    return True, f"cuda:{d}", -1 if stream is None else int(stream)


def run_one(handle: int, src: np.ndarray, res: Optional[np.ndarray], timed: Any = None, shape: Tuple[int, ...] = (), dtype: Any = None) -> np.ndarray:
    """One host image on the CPU through Run (RunTimed when profiled: ``timed``, the call's recording
    state, whose row the engine fills; the finish time is noted as Python resumes) into ``res``, or
    with ``res`` None into a new ``np.empty(shape, dtype)``, which is returned. The fast path calls it
    straight from the memo (_signature.Signature.fast: a result below the pool's size, a call below
    the interruptible size, an aligned source): a 4x4x3 flip pipeline 5.8 -> 3.1 us per call (its
    engine call 1.4 us); run() for every other call of one host image on the CPU."""
    if res is None:
        res = np.empty(shape, dtype)
    if timed is None:
        run = _native._raw_run
        if run is None or _native._forked_child:
            run = _native.raw_entries()[0]  # loads the extension, or raises ForkError
        try:
            run(handle, id(src), id(res))
        except RuntimeError as e:
            raise from_native(e) from None
        return res
    run_timed = _native._raw_run_timed
    if run_timed is None or _native._forked_child:
        run_timed = _native.raw_entries()[1]
    i = timed.i
    try:
        run_timed(handle, id(src), id(res), timed.eaddr, i)
    except RuntimeError as e:
        raise from_native(e) from None
    timed.res[i] = _perf_ns()
    return res


def run(
    sigs: Sequence[Any],
    srcs: Sequence[Any],
    res: Optional[np.ndarray],
    shape: Tuple[int, ...],
    dtype: np.dtype,
    device: str,
    on_dev: bool = False,
    stream: int = -1,
    wait: int = -1,
    timed: Any = None,
    offsets: Optional[Sequence[int]] = None,
    stages: Optional[Sequence[np.ndarray]] = None,
) -> int:
    """Run the plans of signatures ``sigs`` (their ``handle``) on ``srcs`` (checked) into ``res``, the
    host result whose consecutive parts in ``shape`` are the jobs' outputs (or with ``offsets``, the
    parts at those byte offsets), or with ``res`` None into a new device array, whose handle is
    returned (0 otherwise). ``timed``: a profiled call's recording state. Sources are NumPy arrays,
    DeviceSources (``on_dev``) or EncodedItems (decoded on the CPU with their signature's options:
    ``device`` "cpu", a host result). One host NumPy image on the CPU goes through Run (run_one); a
    CPU call from and into host memory of INTERRUPTIBLE_MIN_BYTES or more (an EncodedItem counts its
    decoded size, its signature's ``src_bytes``) through a cancellable Execute; the rest through
    Execute. ``stages``: per job its stage program (a staged job: _converted.Staged's one call per
    batch; the column StagesColumn), counted by its result's bytes (``res``)."""
    n = len(sigs)
    if res is not None and device == "cpu" and stream < 0 and not on_dev:
        x = srcs[0]
        if type(x) is EncodedItem:
            nbytes = sum(c.src_bytes for c in sigs) + res.nbytes
        else:
            nbytes = x.nbytes + res.nbytes if n == 1 else sum(x.nbytes for x in srcs) + res.nbytes
        if nbytes >= INTERRUPTIBLE_MIN_BYTES:
            desc = _descriptor(sigs, srcs, on_dev, shape, dtype, offsets, stages)
            _run_cancellable(desc, n, res, (desc, srcs, res, stages), timed)
            return 0
        if n == 1 and type(x) is not EncodedItem and stages is None:
            run_one(sigs[0].handle, x, res, timed)
            return 0
    execute = _native._raw_execute
    if execute is None or _native._forked_child:
        execute = _native.raw_entries()[2]
    desc = _descriptor(sigs, srcs, on_dev, shape, dtype, offsets, stages)
    out = 0 if res is None else id(res)
    try:
        if timed is None:
            return int(execute(id(desc), n, out, device, on_dev, stream, wait, 0, 0, 0))
        if res is not None:
            i = timed.i
            execute(id(desc), n, out, device, on_dev, stream, wait, 0, timed.eaddr, i)
            timed.res[i] = _perf_ns()
            return 0
        return _device_output_timed(timed, execute, id(desc), n, device, on_dev, stream, wait)
    except RuntimeError as e:
        raise from_native(e) from None


def _out_offsets(n: int, shape: Tuple[int, ...], dtype: np.dtype, offsets: Optional[Sequence[int]]) -> Sequence[int]:
    """Each job's output byte offset: ``offsets`` as given (a ragged call's separate results in one
    buffer), else consecutive parts of ``shape`` (one image's, or a batch's items)."""
    if offsets is not None:
        return offsets
    # math.prod, not np.prod: 0.1 us against 2.5 us on a shape tuple, on every call that builds a table
    step = math.prod(shape[1:] if n > 1 else shape) * np.dtype(dtype).itemsize
    return range(0, n * step, step)


def _descriptor(sigs: Sequence[Any], srcs: Sequence[Any], on_dev: bool, shape: Tuple[int, ...], dtype: np.dtype,
                offsets: Optional[Sequence[int]] = None, stages: Optional[Sequence[np.ndarray]] = None) -> np.ndarray:
    """Execute's job table (gomod/binding: JobColumns wide): per job its plan handle, its source (an
    array object's address (id) or a device address; 0 for an EncodedItem, whose batch handle, item
    index and its signature's decode options (JPEG scale, codec mode, orientation flag) fill the next
    columns) and its output's byte offset; with ``stages``, each job's stage program (an int64 array's
    address, in the column StagesColumn names)."""
    n = len(sigs)
    desc = np.zeros((n, _native._limits["job_columns"]), np.int64)  # read when the extension loaded
    for i, (c, x, off) in enumerate(zip(sigs, srcs, _out_offsets(n, shape, dtype, offsets))):
        if type(x) is EncodedItem:
            mode, scale, orient = c.decode
            desc[i, :8] = (c.handle, 0, off, x.batch, x.index, scale, mode, int(orient))
        else:
            desc[i, :3] = (c.handle, x.ptr if on_dev else id(x), off)
    if stages is not None:
        desc[:, _native._limits["stages_column"]] = [id(p) for p in stages]
    return desc


def _device_output_timed(st: Any, execute: Any, desc: int, n: int, device: str, on_dev: bool, stream: int, wait: int) -> int:
    """A profiled call into a device output: the engine fills no row (its output never reaches the
    host), so all of the call counts as engine time, and as "cuda" (its result is on the GPU even when
    the CPU computed it after a GPU failure; goprep_cpu_fallbacks_total counts those)."""
    t0 = _perf_ns()
    h = int(execute(desc, n, 0, device, on_dev, stream, wait, 0, 0, 0))
    whole_call_row(st, t0, "cuda")
    return h


def whole_call_row(st: Any, t0: int, device: str) -> None:
    """Fill a profiled call's engine row when the engine fills none: all of the call since ``t0``
    counts as engine time on ``device`` (a device output's call)."""
    i = st.i
    st.res[i] = t = _perf_ns()
    cols, devs, _ = _profile.layout()
    r = st.erows[i]
    r[:] = 0
    r[cols["start"]] = t0
    r[cols["finish"]] = t
    r[cols["device"]] = devs.index(device)


def _run_cancellable(desc: np.ndarray, n: int, res: np.ndarray, keep: Tuple[Any, ...], timed: Any = None) -> None:
    """Execute a host CPU call with a cancel flag, so that Ctrl-C stops it. ``keep`` holds the objects
    whose addresses the call reads (arrays, descriptor): the helper thread keeps them alive for as long
    as Go may touch their memory, whatever happens to the caller. ``timed``: a profiled call's
    recording state, whose row the engine fills.

    The signal handler of Python runs only in the main thread and only between bytecodes, so while the
    main thread sits in a long Go call a SIGINT waits for the call to end (2.57 s on a 48 x 1080p
    batch). Here the call runs on a helper thread while the main thread waits in short, interruptible
    waits; on KeyboardInterrupt (or any exception) it sets the flag, which the engine checks between
    images and bands of rows, waits for the call to stop (milliseconds) and re-raises. Off the main
    thread no signal can arrive, so the call runs directly.

    The interrupt can come at any bytecode from the helper's start on, when the helper may or may not
    have entered Go yet (a KeyboardInterrupt raised there once escaped before the flag was set, leaving
    the call running on). So the helper and the interrupted caller settle who goes first with one
    atomic ``dict.setdefault`` on a shared key: a helper that has not entered Go never will, and one
    that has is waited for. A cancelled call never returns normally: the engine says "cancelled"
    whenever the flag cut its work short, and the caller re-raises the interrupt.

    Only C-level primitives sit where the interrupt can land: ``_thread.start_new_thread`` and a raw
    lock the helper releases as it ends. A Python-level ``__enter__`` (threading.Event's Condition,
    Thread.start's own Event) can take its lock and then raise the interrupt before the ``with`` owns
    it (bpo-29988): the lock leaks and the helper's ``done.set()`` and the caller's next wait both
    block forever (reproduced: a hang within 1000 interrupted calls). Thread.join is no better: in
    CPython 3.11, interrupted, it can mark a still-running thread as finished (bpo-45274), after which
    the caller would free memory Go still writes (reproduced as a SIGSEGV).
    """
    execute = _native.raw_entries()[2]
    stop = np.zeros(1, np.int32)
    buf, row = (timed.eaddr, timed.i) if timed is not None else (0, 0)
    args = (id(desc), n, id(res), "cpu", False, -1, -1, id(stop), buf, row)
    if threading.current_thread() is not threading.main_thread():
        try:
            execute(*args)
        except RuntimeError as e:
            raise from_native(e) from None
        if timed is not None:
            timed.res[row] = _perf_ns()
        return
    # box["phase"]: set once, by whoever comes first: "running" (the helper enters Go) or "cancelled"
    # (it never will); box["done"]: the helper has ended, set before it releases `finished`.
    box: Dict[str, Any] = {}
    finished = _thread.allocate_lock()
    finished.acquire()

    def work(held: Tuple[Any, ...] = (keep, stop)) -> None:  # held: alive until the thread ends
        try:
            if box.setdefault("phase", "running") == "running":
                execute(*args)
        except BaseException as e:  # handed to the caller's thread
            box["e"] = e
        finally:
            box["done"] = True
            finished.release()

    try:
        _thread.start_new_thread(work, ())
        while "done" not in box:
            finished.acquire(timeout=0.05)
    except BaseException:
        # Settle, then wait for a call that entered Go: the caller's memory must outlive it, so a second
        # Ctrl-C does not cut this short (every step is idempotent, so an interrupted one is redone).
        while True:
            try:
                stop[0] = 1
                if box.setdefault("phase", "cancelled") != "running" or "done" in box:
                    break
                finished.acquire(timeout=0.05)
            except BaseException:
                pass
        raise
    if timed is not None:
        timed.res[row] = _perf_ns()
    e = box.get("e")
    if e is not None:
        if isinstance(e, RuntimeError):
            raise from_native(e) from None
        raise e
