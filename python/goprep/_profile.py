"""The profiler: where each goprep call's time went (``goprep.set_profiling``, ``goprep.stats``).

A call's total time (from entering the pipeline or eager op until its result is returned) splits into:

- ``engine_s``: from calling into the engine until the engine finished its work;
- ``gil_wait_s``: from the engine finishing until the calling thread held the GIL again. Measured: the
  engine reads CLOCK_MONOTONIC as it finishes and returns the reading (gomod/binding/profile.go), and
  ``time.perf_counter_ns``, the same clock on Linux, is read as soon as Python resumes;
- ``python_s``: the rest (argument checks, cache lookup, allocating the output, building the result).

``gpu_s`` is the part of ``engine_s`` spent in calls the GPU ran. ``gpu_copy_s`` and ``gpu_kernel_s`` are the
device time of those calls' copies (both directions) and kernels, measured by the engine in stream order
(CUDA events; the simulated GPU times its operations): they overlap ``engine_s`` (and each other, as the
pipeline's lanes overlap), so they are not further parts of ``total_s``; ``gpu_s`` minus both is host work
of GPU calls (staging, waiting) when positive, overlap when negative. Device-output calls report zeros. When profiling is off, a call pays
one module-attribute check; when on, four clock reads and a dozen counter updates (1.5-2 us a call
measured on a loaded 2-core machine; ``python -m goprep serve-bench`` measures and reports it).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._errors import from_native

ON: bool = os.environ.get("GOPREP_PROFILE", "").strip().lower() not in ("", "0", "false", "no", "off")

_clock = time.perf_counter_ns
_lock = threading.Lock()

# Histogram buckets (goprep.metrics): powers of two of nanoseconds, 32.8 us to 4.3 s, so a call's
# bucket is (total - 1).bit_length() through a table (bisect on the bounds cost 4x more per call).
_LOG2_LO, _LOG2_HI = 15, 32
BUCKETS_S: Tuple[float, ...] = tuple((1 << k) / 1e9 for k in range(_LOG2_LO, _LOG2_HI + 1))
_BUCKET_OF = [max(0, min(k - _LOG2_LO, len(BUCKETS_S))) for k in range(65)]  # bit length -> bucket
_SAMPLES = 1 << 13  # latency samples each thread keeps per name for the percentiles (its most recent)


class _Entry:
    __slots__ = ("calls", "total", "engine", "gil", "gpu", "gpu_copy", "gpu_kernel", "cpu_calls", "by_device", "buckets", "samples", "errors")

    def __init__(self) -> None:
        self.calls = 0
        self.total = 0
        self.engine = 0
        self.gil = 0
        self.gpu = 0
        self.gpu_copy = 0
        self.gpu_kernel = 0
        self.errors = 0
        self.cpu_calls = 0
        self.by_device: Dict[str, int] = {}  # backends other than the CPU
        self.buckets = [0] * (len(BUCKETS_S) + 1)
        self.samples: List[int] = []

    def devices(self) -> Dict[str, int]:
        """Calls per backend that ran them."""
        return {"cpu": self.cpu_calls, **self.by_device}

    def add(self, other: "_Entry") -> None:
        self.calls += other.calls
        self.total += other.total
        self.engine += other.engine
        self.gil += other.gil
        self.gpu += other.gpu
        self.gpu_copy += other.gpu_copy
        self.gpu_kernel += other.gpu_kernel
        self.errors += other.errors
        self.cpu_calls += other.cpu_calls
        for k, v in other.by_device.items():
            self.by_device[k] = self.by_device.get(k, 0) + v
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets)]


# Each thread records into its own entries, so a measured call takes no lock (a lock cost more than
# the rest of the bookkeeping together on a busy 2-core machine). stats() merges the threads.
class _State:
    __slots__ = ("entries", "engine", "gil", "ran", "thread", "gpu_copy", "gpu_kernel")

    def __init__(self) -> None:
        self.thread = weakref.ref(threading.current_thread())
        self.entries: Dict[str, _Entry] = {}
        self.engine = 0
        self.gil = 0
        self.ran = "cpu"
        self.gpu_copy = 0  # device ns of the last GPU call's copies and kernels (engine())
        self.gpu_kernel = 0


_states: List[_State] = []  # every thread's state (appended under _lock)
_tls = threading.local()
_lifetime: Dict[str, _Entry] = {}  # windows reset before the last reset: counters never go down
# The windows retired by the last reset; folded into _lifetime at the next one, when any call that was
# still recording into them has long finished.
_retired: List[Dict[str, _Entry]] = []
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
        for k, e in st.entries.items():
            d = _dead.get(k)
            if d is None:
                d = _dead[k] = _Entry()
            d.add(e)
            d.samples.extend(e.samples)
            del d.samples[:-_SAMPLES]
    _states[:] = live


def _state() -> _State:
    try:
        return _tls.s  # type: ignore[no-any-return]
    except AttributeError:
        st = _tls.s = _State()
        with _lock:
            _states.append(st)
        return st


def set_profiling(on: bool = True) -> None:
    """Turn the profiler on or off (also ``GOPREP_PROFILE=1`` at start-up). Off, a call pays one flag
    check; on, four clock reads and a dozen counter updates."""
    global ON
    ON = bool(on)


def profiling() -> bool:
    """Whether the profiler is on."""
    return ON


# An optional per-call hook (goprep.metrics.enable_tracing), called after each measured call as
# hook(name, start_ns, total_ns, engine_ns, gil_ns, ran).
hook: Optional[Callable[[str, int, int, int, int, str], None]] = None


def measure(name: str, fn: Callable[[Any, Any, Any, Any], Any], a: Any, b: Any, c: Any, d: Any) -> Any:
    """Run one call ``fn(a, b, c, d)`` of ``name`` and record its split. Written for speed (fixed arity,
    few attribute writes): this is the whole per-call cost of the profiler, with engine()."""
    try:
        st = _tls.s
    except AttributeError:
        st = _state()
    st.engine = -1  # engine() sets the split; -1 says it was not called
    t0 = _clock()
    try:
        res = fn(a, b, c, d)
    except BaseException:
        e = st.entries.get(name)
        if e is None:
            e = st.entries[name] = _Entry()
        e.errors += 1
        raise
    total = _clock() - t0
    e = st.entries.get(name)
    if e is None:
        e = st.entries[name] = _Entry()
    eng = st.engine
    if eng < 0:
        eng = gil = 0
        ran = "cpu"
    else:
        gil, ran = st.gil, st.ran
    e.calls += 1
    e.total += total
    e.engine += eng
    e.gil += gil
    if ran == "cpu":
        e.cpu_calls += 1
    else:
        e.gpu += eng
        e.gpu_copy += st.gpu_copy
        e.gpu_kernel += st.gpu_kernel
        e.by_device[ran] = e.by_device.get(ran, 0) + 1
    e.buckets[_BUCKET_OF[(total - 1).bit_length()]] += 1
    smp = e.samples
    smp.append(total)
    if len(smp) >= 2 * _SAMPLES:
        del smp[:_SAMPLES]
    if hook is not None:
        hook(name, t0, total, eng, gil, ran)
    return res


def engine(fn: Callable[..., Any], *args: Any) -> None:
    """Call a timed engine entry point (gomod/binding/profile.go) and note this call's engine time and
    GIL wait. The entry point returns the finish time in ns, or "<backend> <ns>", with " <copy ns> <kernel
    ns>" (the GPU's device time) when a GPU ran the call."""
    t0 = _clock()
    try:
        r = fn(*args)
    except RuntimeError as e:
        raise from_native(e) from None
    resumed = _clock()
    try:
        st = _tls.s
    except AttributeError:
        st = _state()
    if type(r) is str:
        ran, _, fin_s = r.partition(" ")
        if ran != "cpu":
            fin_s, cp, kn = fin_s.split(" ")
            st.gpu_copy, st.gpu_kernel = int(cp), int(kn)
        r = int(fin_s)
    else:
        ran = "cpu"
    # Clamp: both readings are CLOCK_MONOTONIC, but one taken on another core may differ by a few ns,
    # and a negative part would break "the parts add up".
    fin = t0 if r < t0 else resumed if r > resumed else r
    st.engine = fin - t0
    st.gil = resumed - fin
    st.ran = ran


def engine_untimed(fn: Callable[..., Any], *args: Any) -> Any:
    """An engine call with no finish timestamp (device outputs): all of it counts as engine time, and
    the call counts as "cuda" (its result is on the GPU even when the CPU computed it after a GPU
    failure; goprep_cpu_fallbacks_total counts those)."""
    t0 = _clock()
    try:
        r = fn(*args)
    except RuntimeError as e:
        raise from_native(e) from None
    st = _state()
    st.engine = _clock() - t0
    st.gil = 0
    st.ran = "cuda"
    st.gpu_copy = st.gpu_kernel = 0  # not timed: the call does not wait for the device
    return r


def _percentile(sorted_ns: List[int], q: float) -> float:
    if not sorted_ns:
        return 0.0
    k = min(len(sorted_ns) - 1, max(0, int(round(q * (len(sorted_ns) - 1)))))
    return sorted_ns[k] / 1e3


def _report(e: _Entry, samples: Optional[List[int]]) -> Dict[str, Any]:
    r: Dict[str, Any] = {
        "calls": e.calls,
        "total_s": e.total / 1e9,
        "engine_s": e.engine / 1e9,
        "gil_wait_s": e.gil / 1e9,
        "python_s": (e.total - e.engine - e.gil) / 1e9,
        "gpu_s": e.gpu / 1e9,
        "gpu_copy_s": e.gpu_copy / 1e9,
        "gpu_kernel_s": e.gpu_kernel / 1e9,
        "devices": e.devices(),
        "errors": e.errors,
    }
    if samples is not None:
        s = sorted(samples[-_SAMPLES:])
        r["p50_us"] = _percentile(s, 0.50)
        r["p99_us"] = _percentile(s, 0.99)
        r["p999_us"] = _percentile(s, 0.999)
    return r


def _merged(dicts: List[Dict[str, _Entry]], samples: bool) -> Dict[str, Tuple[_Entry, List[int]]]:
    out: Dict[str, Tuple[_Entry, List[int]]] = {}
    for d in dicts:
        for k, e in list(d.items()):
            m = out.get(k)
            if m is None:
                m = out[k] = (_Entry(), [])
            m[0].add(e)
            if samples:
                m[1].extend(e.samples)
    return out


def stats(reset: bool = False) -> Dict[str, Dict[str, Any]]:
    """Per pipeline (the decorated function's qualified name) and eager op (its name), since the last
    reset: ``calls``, ``total_s`` = ``engine_s`` + ``gil_wait_s`` + ``python_s``, ``gpu_s`` (engine time
    of calls the GPU ran) with ``gpu_copy_s`` and ``gpu_kernel_s`` (their copies' and kernels' device time,
    overlapping ``engine_s``), ``devices`` (calls per backend that ran), ``errors`` (calls that raised, not
    counted in the times), and ``p50_us``/``p99_us``/``p999_us`` of the total (over each thread's most
    recent 8192 calls)."""
    global _dead
    with _lock:
        _reap()
        window = [_dead] + [st.entries for st in _states]
        if reset:
            for old in _retired:
                for k, v in _merged([old], False).items():
                    _lifetime.setdefault(k, _Entry()).add(v[0])
            _retired[:] = window
            _dead = {}
            for st in _states:
                st.entries = {}
    return {k: _report(e, smp) for k, (e, smp) in _merged(window, True).items()}


def lifetime() -> Dict[str, _Entry]:
    """Counters since the process started, never reset (goprep.metrics)."""
    with _lock:
        _reap()
        dicts = [_lifetime, _dead] + list(_retired) + [st.entries for st in _states]
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
              "time of each pipeline and eager op went: engine, GIL wait, Python, GPU, percentiles.")
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
