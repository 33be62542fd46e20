"""The profiler: where each goprep call's time went (``goprep.set_profiling``, ``goprep.stats``).

A call's total time (from entering the pipeline or eager op until its result is returned) splits into:

- ``engine_s``: from calling into the engine until the engine finished its work;
- ``gil_wait_s``: from the engine finishing until the calling thread held the GIL again. Measured: the
  engine reads CLOCK_MONOTONIC as it finishes and writes the reading into the call's record
  (gomod/binding/profile.go), and ``time.perf_counter_ns``, the same clock on Linux, is read as soon
  as Python resumes;
- ``python_s``: the rest (argument checks, cache lookup, allocating the output, building the result).

``gpu_s`` is the part of ``engine_s`` spent in calls the GPU ran. ``gpu_copy_s`` and ``gpu_kernel_s`` are the
device time of those calls' copies (both directions) and kernels, measured by the engine in stream order
(CUDA events; the simulated GPU times its operations) and written into the record's ``gpu_copy_ns`` and
``gpu_kernel_ns`` fields: they overlap ``engine_s`` (and each other, as the pipeline's lanes overlap), so
they are not further parts of ``total_s``; ``gpu_s`` minus both is host work of GPU calls (staging,
waiting) when positive, overlap when negative. Device-output calls report zeros.

How it stays cheap. Off, a call pays one module-attribute check. On, a call writes its raw fields
into a row of its thread's preallocated buffers: three ``perf_counter_ns`` readings (call start, GIL
re-acquired, call end) and the name id go into four Python lists (a list store is CPython's
specialised STORE_SUBSCR_LIST_INT, ~10 ns; the int64 array.array the earlier design stored into
converts each value through PyArg_Parse, ~50-110 ns), the engine's entry and finish times and backend
into an int64 row the engine writes in place (the buffer's address and the row index are the timed
entry point's last two arguments; nothing comes back through gopy). One comparison per call decides
whether the row needs more (a full buffer, or a tracing hook: ``set_hook`` moves every thread's
threshold). Nothing is summed per call: rows are aggregated with NumPy, a block at a time, when a
thread's buffer fills and when ``stats()`` (or a metrics scrape) asks; percentiles are computed in
``stats()``. benchmarks/profiler_cost.py measures the per-call cost (off and on interleaved, thread CPU
time) and its parts; the bench and ``serve-bench`` print the off and on figures side by side.
"""

from __future__ import annotations

import array
import os
import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np


ON: bool = os.environ.get("GOPREP_PROFILE", "").strip().lower() not in ("", "0", "false", "no", "off")

_clock = time.perf_counter_ns
_lock = threading.Lock()

# Histogram buckets (goprep.metrics): powers of two of nanoseconds, 32.8 us to 4.3 s, so a call's
# bucket is (total - 1).bit_length() through a table.
_LOG2_LO, _LOG2_HI = 15, 32
BUCKETS_S: Tuple[float, ...] = tuple((1 << k) / 1e9 for k in range(_LOG2_LO, _LOG2_HI + 1))
_BUCKET_OF = np.array([max(0, min(k - _LOG2_LO, len(BUCKETS_S))) for k in range(66)])  # bit length -> bucket
_SAMPLES = 1 << 13  # latency samples each thread keeps per name for the percentiles (its most recent)

# A record (one call) is a row in its thread's buffers: Python's four fields in four preallocated
# lists (name id, call start, GIL re-acquired after the engine call, call end), the engine's in a row
# of an int64 buffer whose layout and stride the engine defines (binding ProfileLayout). Lists, not
# the int64 buffer, for Python's fields: a list store is CPython's specialised STORE_SUBSCR_LIST_INT
# (~7 ns here) where an array.array store converts through PyArg_Parse (~48 ns), and a block of rows
# converts to NumPy in ~20 ns a value when it is aggregated (bench of the per-call cost below).
ROWS = 4096  # rows per thread buffer, aggregated when full; layout() takes the engine's figure
class _Entry:
    """Aggregated counters of one name (ns)."""

    __slots__ = ("calls", "total", "engine", "gil", "gpu", "cpu_calls", "by_device", "buckets", "samples", "errors",
                 "extra")

    def __init__(self) -> None:
        self.calls = 0
        self.total = 0
        self.engine = 0
        self.gil = 0
        self.gpu = 0
        self.errors = 0
        self.cpu_calls = 0
        self.by_device: Dict[str, int] = {}  # backends other than the CPU
        self.buckets = [0] * (len(BUCKETS_S) + 1)
        self.samples = np.zeros(0, np.int64)  # the most recent totals (at most _SAMPLES)
        self.extra: Dict[str, int] = {}  # sums of the engine's other "<x>_ns" fields

    def devices(self) -> Dict[str, int]:
        """Calls per backend that ran them."""
        return {"cpu": self.cpu_calls, **self.by_device}

    def add(self, other: "_Entry", samples: bool = False) -> None:
        self.calls += other.calls
        self.total += other.total
        self.engine += other.engine
        self.gil += other.gil
        self.gpu += other.gpu
        self.errors += other.errors
        self.cpu_calls += other.cpu_calls
        for k, v in other.by_device.items():
            self.by_device[k] = self.by_device.get(k, 0) + v
        for k, v in other.extra.items():
            self.extra[k] = self.extra.get(k, 0) + v
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets)]
        if samples:
            self.samples = np.concatenate((self.samples, other.samples))[-_SAMPLES:]


_names: List[str] = []  # name id -> name
_ids: Dict[str, int] = {}  # name -> id (grows under _lock)


def _new_id(name: str) -> int:
    with _lock:
        i = _ids.get(name)
        if i is None:
            i = _ids[name] = len(_names)
            _names.append(name)
    return i


_layout: Optional[Tuple[Dict[str, int], List[str], int]] = None


def layout() -> Tuple[Dict[str, int], List[str], int]:
    """The engine's record fields (name -> column in its row), backend names and row stride in int64s
    (binding ProfileLayout; loads the extension)."""
    global _layout
    if _layout is None:
        from . import _native

        global ROWS
        fields, devs, stride, rows = str(_native.get().ProfileLayout()).split(";")
        cols = {f: k for k, f in enumerate(fields.split(","))}
        if not {"start", "finish", "device"} <= set(cols) or len(cols) > int(stride):
            raise RuntimeError(f"the engine's profile record {fields!r} does not fit its {stride}-int64 row")
        ROWS = int(rows)  # the engine refuses a row past it (binding profileRows): one source
        _layout = (cols, devs.split(","), int(stride))
    return _layout


# Each thread records into its own buffers, so a measured call takes no lock (a lock cost more than
# the rest of the bookkeeping together on a busy 2-core machine). Rows [0, i) are complete; rows
# [done, i) are not aggregated yet. Only the owner writes rows and i; aggregation (by the owner when
# the buffer is full, by stats() from any thread) holds the state's lock.
class _State:
    __slots__ = ("thread", "ebuf", "erows", "eaddr", "name", "t0", "res", "t1", "i", "done", "last", "lock", "agg")

    def __init__(self) -> None:
        stride = layout()[2]
        self.thread = weakref.ref(threading.current_thread())
        self.ebuf = array.array("q", bytes(8 * stride * ROWS))  # never resized: the engine writes into it
        self.erows = np.frombuffer(self.ebuf, np.int64).reshape(ROWS, stride)
        self.eaddr = self.ebuf.buffer_info()[0]  # passed with the row index to the timed entry points
        self.name = [0] * ROWS  # Python's fields, one list each (column)
        self.t0 = [0] * ROWS
        self.res = [0] * ROWS
        self.t1 = [0] * ROWS
        self.i = 0
        self.done = 0
        # The callers call commit() after committing row i when i >= last: at the buffer's last row,
        # or after every row while a hook is set (one comparison instead of two per call).
        self.last = ROWS - 1 if hook is None else -1
        self.lock = threading.Lock()
        self.agg: Dict[str, _Entry] = {}

    def aggregate(self) -> None:
        """Fold rows [done, i) into agg (the caller holds self.lock)."""
        lo, hi = self.done, self.i
        if hi > lo:
            def col(c: List[int]) -> np.ndarray:
                return np.fromiter(c[lo:hi], np.int64, hi - lo)  # the fastest list -> array (~20 ns a value)

            names = self.name[lo:hi]
            # One name in the block (the usual case): list.count compares the cached small ints by
            # identity, ~4x cheaper than converting the column.
            nid: Any = names[0] if names.count(names[0]) == len(names) else col(self.name)
            _fold(self.agg, nid, col(self.t0), col(self.res), col(self.t1), self.erows[lo:hi])
        self.done = hi

    def flush(self) -> None:
        """The owner's buffer is full: aggregate it and start again at row 0."""
        with self.lock:
            try:
                self.aggregate()
            finally:  # the buffer restarts even if aggregating failed (e.g. interrupted)
                self.i = self.done = 0


def _fold(agg: Dict[str, _Entry], nid: Any, t0: np.ndarray, resumed: np.ndarray, t1: np.ndarray,
          erows: np.ndarray) -> None:
    """Aggregate complete rows (their name ids, or one id for all) into per-name entries, vectorised:
    a block of 4096 rows costs about 0.5 ms, 0.12 us a call (0.08 of it converting the lists)."""
    c = erows.T  # the engine's column views
    total = t1 - t0
    # A row whose engine fields predate the call is left over from an earlier call in that row: this
    # call made no timed engine call (it counts as CPU with no engine time).
    cols, devs, _ = layout()
    te = c[cols["start"]]
    ok = (te >= t0) & (resumed >= te)
    if ok.any():
        # Clamp: both readings are CLOCK_MONOTONIC, but one taken on another core may differ by a
        # few ns, and a negative part would break "the parts add up".
        fin = np.minimum(np.maximum(c[cols["finish"]], te), resumed)
        eng, gil, dev = fin - te, resumed - fin, c[cols["device"]]
        extra = {f[:-3]: c[k] for f, k in cols.items() if f.endswith("_ns")}
        if not ok.all():
            eng, gil, dev = eng * ok, gil * ok, dev * ok
            extra = {f: v * ok for f, v in extra.items()}
    else:
        eng = gil = dev = np.zeros(len(t0), np.int64)
        extra = {}
    buckets = _BUCKET_OF[np.frexp((total - 1).astype(np.float64))[1]]
    if isinstance(nid, int):
        ids = [nid]
    else:
        ids = [int(nid[0])] if nid.min() == nid.max() else np.unique(nid).tolist()
    for u in ids:
        m = None if len(ids) == 1 else nid == u
        name = _names[u]
        e = agg.get(name)
        if e is None:
            e = agg[name] = _Entry()
        pick = (lambda v: v) if m is None else (lambda v: v[m])  # noqa: E731
        tm, em, dm = pick(total), pick(eng), pick(dev)
        e.calls += len(tm)
        e.total += int(tm.sum())
        e.engine += int(em.sum())
        e.gil += int(pick(gil).sum())
        counts = np.bincount(dm, minlength=len(devs)).tolist()
        e.cpu_calls += counts[0]
        if len(counts) > 1 and any(counts[1:]):
            e.gpu += int(em[dm != 0].sum())
            for k, n in enumerate(counts[1:], 1):
                if n:
                    d = devs[k] if k < len(devs) else f"backend{k}"
                    e.by_device[d] = e.by_device.get(d, 0) + n
        for f, v in extra.items():
            e.extra[f] = e.extra.get(f, 0) + int(pick(v).sum())
        e.buckets = [a + b for a, b in zip(e.buckets, np.bincount(pick(buckets), minlength=len(e.buckets)).tolist())]
        e.samples = np.concatenate((e.samples, tm))[-_SAMPLES:]


_states: List[_State] = []  # every thread's state (appended under _lock)
_tls = threading.local()
_lifetime: Dict[str, _Entry] = {}  # windows before the last reset: counters never go down
_dead: Dict[str, _Entry] = {}  # this window's entries of threads that have ended (their states dropped)


def _reap() -> None:
    """Fold the entries of ended threads into _dead and drop their states (under _lock), so a server
    that starts a thread per request does not keep a state per thread forever."""
    live = []
    for st in _states:
        t = st.thread()
        if t is not None and t.is_alive():
            live.append(st)
            continue
        with st.lock:
            st.aggregate()
            for k, e in st.agg.items():
                _dead.setdefault(k, _Entry()).add(e, samples=True)
    _states[:] = live


def state() -> _State:
    """The calling thread's recording state (created on its first profiled call; loads the extension)."""
    try:
        return _tls.s  # type: ignore[no-any-return]
    except AttributeError:
        st = _tls.s = _State()
        with _lock:
            st.last = _last()
            _states.append(st)
        return st


def set_profiling(on: bool = True) -> None:
    """Turn the profiler on or off (also ``GOPREP_PROFILE=1`` at start-up). Off, a call pays one flag
    check; on, it writes its timestamps into its thread's record buffers."""
    global ON
    ON = bool(on)


def profiling() -> bool:
    """Whether the profiler is on."""
    return ON


# An optional per-call hook (goprep.metrics.enable_tracing; set it with set_hook), called after each
# measured call as hook(name, start_ns, total_ns, engine_ns, gil_ns, ran).
hook: Optional[Callable[[str, int, int, int, int, str], None]] = None


def _last() -> int:
    return ROWS - 1 if hook is None else -1


def set_hook(fn: Optional[Callable[[str, int, int, int, int, str], None]]) -> None:
    """Install (or with None remove) the per-call hook. Every thread's state learns it through its
    ``last`` row, so the callers test one comparison per call, not the hook too."""
    global hook
    with _lock:
        hook = fn
        for st in _states:
            st.last = _last()


def name_id(name: str) -> int:
    """The row id of ``name`` (Pipeline caches its own, the eager memo its op's)."""
    i = _ids.get(name)
    return _new_id(name) if i is None else i


def commit(st: _State) -> None:
    """After row ``st.i - 1`` was committed at or past ``st.last``: call the hook, aggregate a full
    buffer. The caller (Pipeline.__call__, every call's) times a call and commit its row inline
    (``st.name[i], st.t0[i], st.t1[i] = ...; st.i = i + 1; if i >= st.last: commit(st)``), since
    every helper call measured 0.1-0.2 us."""
    try:
        if hook is not None:
            _call_hook(st, st.i - 1)
    finally:  # a raising hook must not leave a full buffer: the next call would pass row ROWS
        if st.i >= ROWS:
            st.flush()


def failed(st: _State, name: str) -> None:
    """Count a call that raised (not timed)."""
    with st.lock:
        e = st.agg.get(name)
        if e is None:
            e = st.agg[name] = _Entry()
        e.errors += 1


def _call_hook(st: _State, i: int) -> None:
    row = st.erows[i].tolist()
    t0, resumed = st.t0[i], st.res[i]
    total = st.t1[i] - t0
    eng = gil = 0
    ran = "cpu"
    cols, devs, _ = layout()
    te = row[cols["start"]]
    if t0 <= te <= resumed:
        fin = min(max(row[cols["finish"]], te), resumed)
        eng, gil = fin - te, resumed - fin
        k = row[cols["device"]]
        ran = devs[k] if 0 <= k < len(devs) else f"backend{k}"
    h = hook
    if h is not None:
        h(_names[st.name[i]], t0, total, eng, gil, ran)


def _percentile(sorted_ns: np.ndarray, q: float) -> float:
    if not len(sorted_ns):
        return 0.0
    k = min(len(sorted_ns) - 1, max(0, int(round(q * (len(sorted_ns) - 1)))))
    return int(sorted_ns[k]) / 1e3


def _report(e: _Entry, samples: Optional[np.ndarray]) -> Dict[str, Any]:
    r: Dict[str, Any] = {
        "calls": e.calls,
        "total_s": e.total / 1e9,
        "engine_s": e.engine / 1e9,
        "gil_wait_s": e.gil / 1e9,
        "python_s": (e.total - e.engine - e.gil) / 1e9,
        "gpu_s": e.gpu / 1e9,
        "devices": e.devices(),
        "errors": e.errors,
    }
    for k, v in sorted(e.extra.items()):  # the engine's further fields (e.g. a GPU split)
        r[f"{k}_s"] = v / 1e9
    if samples is not None:
        s = np.sort(samples)
        r["p50_us"] = _percentile(s, 0.50)
        r["p99_us"] = _percentile(s, 0.99)
        r["p999_us"] = _percentile(s, 0.999)
    return r


def _merged(dicts: List[Dict[str, _Entry]], samples: bool) -> Dict[str, Tuple[_Entry, List[np.ndarray]]]:
    out: Dict[str, Tuple[_Entry, List[np.ndarray]]] = {}
    for d in dicts:
        for k, e in list(d.items()):
            m = out.get(k)
            if m is None:
                m = out[k] = (_Entry(), [])
            m[0].add(e)
            if samples:
                m[1].append(e.samples)
    return out


def _window() -> List[Dict[str, _Entry]]:
    """This window's entries, every thread's rows aggregated (under _lock)."""
    _reap()
    for st in _states:
        with st.lock:
            st.aggregate()
    return [_dead] + [st.agg for st in _states]


def stats(reset: bool = False) -> Dict[str, Dict[str, Any]]:
    """Per pipeline (the decorated function's qualified name) and eager op (its name), since the last
    reset: ``calls``, ``total_s`` = ``engine_s`` + ``gil_wait_s`` + ``python_s``, ``gpu_s`` (engine time
    of calls the GPU ran) with ``gpu_copy_s`` and ``gpu_kernel_s`` (their copies' and kernels' device time,
    overlapping ``engine_s``), ``devices`` (calls per backend that ran), ``errors`` (calls that raised, not
    counted in the times), and ``p50_us``/``p99_us``/``p999_us`` of the total (over each thread's most
    recent 8192 calls)."""
    global _dead
    with _lock:
        window = _window()
        if reset:
            # Exact: a thread's rows and entries change only under its lock, and a call still in
            # flight has not committed its row, so it lands in the next window.
            for st in _states:
                with st.lock:
                    st.aggregate()
                    d, st.agg = st.agg, {}
                for k, e in d.items():
                    _lifetime.setdefault(k, _Entry()).add(e)
            for k, e in _dead.items():
                _lifetime.setdefault(k, _Entry()).add(e)
            _dead = {}
    return {k: _report(e, np.concatenate(smp)) for k, (e, smp) in _merged(window, True).items()}


def lifetime() -> Dict[str, _Entry]:
    """Counters since the process started, never reset (goprep.metrics)."""
    with _lock:
        dicts = [_lifetime] + _window()
    return {k: v[0] for k, v in _merged(dicts, False).items()}


def format_table(st: Dict[str, Dict[str, Any]]) -> str:
    """The stats as a text table (``python -m goprep profile``)."""
    head = ("name", "calls", "total ms", "engine %", "GIL wait %", "python %", "gpu %", "p50 us", "p99 us", "p99.9 us")
    rows = [head]
    for name, r in sorted(st.items(), key=lambda kv: -kv[1]["total_s"]):
        tot = r["total_s"] or 1e-30
        rows.append(
            (
                name,
                str(r["calls"]),
                f"{r['total_s'] * 1e3:.1f}",
                f"{100 * r['engine_s'] / tot:.1f}",
                f"{100 * r['gil_wait_s'] / tot:.1f}",
                f"{100 * r['python_s'] / tot:.1f}",
                f"{100 * r['gpu_s'] / tot:.1f}",
                f"{r.get('p50_us', 0):.1f}",
                f"{r.get('p99_us', 0):.1f}",
                f"{r.get('p999_us', 0):.1f}",
            )
        )
    if len(rows) == 1:
        return "goprep profile: no goprep calls recorded"
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [" | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    """``python -m goprep profile SCRIPT [args]``: run SCRIPT with profiling on, print the table."""
    import runpy
    import sys

    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m goprep profile [--json PATH] SCRIPT [args...]\n\n"
              "Runs SCRIPT (like `python SCRIPT args`) with goprep's profiler on, then prints where the\n"
              "time of each pipeline and eager op went: engine, GIL wait, Python, GPU, percentiles.\n\n"
              "options:\n"
              "  --json PATH  also write the statistics (goprep.stats()) to PATH as JSON")
        return 0 if argv else 2
    json_path = None
    if argv[0] == "--json":
        if len(argv) < 3:
            print("goprep profile: --json needs a PATH and a SCRIPT", file=sys.stderr)
            return 2
        json_path, argv = argv[1], argv[2:]
    script = argv[0]
    if not os.path.isfile(script):
        print(f"goprep profile: no such script: {script}", file=sys.stderr)
        return 2
    set_profiling(True)
    old_argv = sys.argv
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = old_argv
        st = stats()
        print(format_table(st), file=sys.stderr)
        if json_path:
            import json

            with open(json_path, "w") as f:
                json.dump(st, f, indent=2)
    return code
