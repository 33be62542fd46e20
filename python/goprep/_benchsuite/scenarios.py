"""The three measurements: the throughput grid, the serving scenario and the call-overhead probe."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from . import images
from .task import NEAR_EXACT_TOL, Fn, Impl, Threads, finite_max_abs_diff
from .machine import LoadMonitor
from .timing import Entry, Stats, calibrate, interleave, percentile, run_calls


class Progress(Protocol):
    """The part of tqdm the scenarios use."""

    def update(self, n: float = 1) -> Any: ...

    def set_description_str(self, desc: str | None = None, refresh: bool = True) -> Any: ...


@dataclass
class Settings:
    repeats: int
    min_sample_s: float  # a timed sample lasts at least this long (more calls per sample)
    max_calls: int  # ... but never more calls than this
    serving_threads: tuple[int, ...] = (1, 2, 4, 8)
    serving_target_s: float = 0.5  # rough duration of one serving run at 1 thread
    serving_repeats: int = 3
    overhead_min_sample_s: float = 0.05
    # Timed seconds one row may spend on one configuration: rows slower than that (antialiased
    # 1920x1080 batches) get fewer repeats, at least 3, instead of stretching the run.
    row_budget_s: float = 12.0


# --------------------------------------------------------------------------------------------------
# Output checks


@dataclass
class Check:
    ok: bool
    max_abs_diff: float | None = None
    exact_fraction: float | None = None  # fraction of elements equal (to 1e-4) to the reference
    detail: str = ""


def check_output(out: Any, ref: np.ndarray, tolerance: float) -> Check:
    """Compare one implementation output with goprep's (shape, dtype, layout, values)."""
    if not isinstance(out, np.ndarray):
        return Check(False, detail=f"returned {type(out).__name__}, not a NumPy array")
    if out.shape != ref.shape or out.dtype != ref.dtype:
        return Check(False, detail=f"returned {out.shape} {out.dtype}, expected {ref.shape} {ref.dtype}")
    if not out.flags.c_contiguous:
        return Check(False, detail="output is not C-contiguous")
    diff = finite_max_abs_diff(out, ref)
    equal_tol = 0.0 if ref.dtype == np.uint8 else 1e-4
    exact = float(np.mean(np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= equal_tol))
    ok = diff <= tolerance
    return Check(ok, diff, exact, "" if ok else f"max |diff| {diff:.4g} > tolerance {tolerance:.4g}")


# --------------------------------------------------------------------------------------------------
# Throughput grid


@dataclass
class Row:
    impl: Impl
    status: str  # ok | check failed | error | no reference
    detail: str = ""
    check: Check | None = None
    calls: int = 0  # calls per timed sample
    stats: Stats | None = None  # seconds per image over the repeats
    samples: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.stats is not None


@dataclass
class ConfigResult:
    size: images.Size
    batch: int
    rows: list[Row]
    wall_s: float = 0.0
    load: dict[str, float | None] = field(default_factory=dict)  # CPU use during the timed repeats

    def row(self, key: str) -> Row | None:
        return next((r for r in self.rows if r.impl.key == key), None)

    def ratio(self, key: str, baseline: str, *, best: bool = False) -> float | None:
        """time(key) / time(baseline): how many times faster the baseline is. Medians, or with
        ``best`` the fastest repeat of each (noise only ever slows a sample down)."""
        a, b = self.row(key), self.row(baseline)
        if a is None or b is None or not a.ok or not b.ok:
            return None
        assert a.stats is not None and b.stats is not None
        if best:
            return a.stats.min / b.stats.min
        return a.stats.median / b.stats.median


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def run_config(
    size: images.Size,
    batch: int,
    impls: Sequence[Impl],
    refs: dict[str, Fn] | Exception,
    threads: Threads,
    settings: Settings,
    progress: Progress,
) -> ConfigResult:
    """Check then time every implementation on one (input size, batch size) configuration.

    The first call of each implementation is its output check (and its first warm-up call);
    calibration runs more warm-up calls; only rows whose check passed are timed.
    """
    t_start = time.perf_counter()
    progress.set_description_str(f"{size.label} batch {batch}")
    inputs = images.workload(size, batch)

    ref_outputs: dict[str, list[np.ndarray] | str] = {}
    for kind in dict.fromkeys(impl.reference for impl in impls):
        if isinstance(refs, Exception):
            ref_outputs[kind] = f"goprep unavailable: {_short_error(refs)}"
            continue
        try:
            ref_outputs[kind] = [np.asarray(refs[kind](x)) for x in inputs]
        except Exception as exc:  # noqa: BLE001 - a broken reference is reported, not fatal
            ref_outputs[kind] = f"goprep reference failed: {_short_error(exc)}"

    rows: list[Row] = []
    entries: list[tuple[Row, Entry]] = []
    for impl in impls:
        progress.update(1)
        ref = ref_outputs[impl.reference]
        if isinstance(ref, str):
            rows.append(Row(impl, "no reference", ref))
            progress.update(settings.repeats)
            continue
        try:
            threads.apply(impl.thread_state)
            worst: Check | None = None
            for x, r in zip(inputs, ref):
                c = check_output(impl.fn(x), r, impl.tolerance)
                if worst is None or not c.ok or (c.max_abs_diff or 0) > (worst.max_abs_diff or 0):
                    worst = c
                if not c.ok:
                    break
            assert worst is not None
            if not worst.ok:
                rows.append(Row(impl, "check failed", worst.detail, worst))
                progress.update(settings.repeats)
                continue
            calls, per_call = calibrate(impl.fn, inputs, settings.min_sample_s, settings.max_calls)
            # A row whose samples would take more than its budget gets fewer repeats (at least 3).
            sample_s = calls * per_call
            row_repeats = max(min(3, settings.repeats), min(settings.repeats, int(settings.row_budget_s / sample_s)))
        except Exception as exc:  # noqa: BLE001
            rows.append(Row(impl, "error", _short_error(exc)))
            progress.update(settings.repeats)
            continue
        row = Row(impl, "ok", check=worst, calls=calls)
        progress.update(settings.repeats - row_repeats)  # the repeats it will not do
        rows.append(row)
        entries.append(
            (
                row,
                Entry(
                    impl.key,
                    impl.fn,
                    inputs,
                    items_per_call=batch,
                    calls=calls,
                    repeats=row_repeats if row_repeats < settings.repeats else None,
                    thread_state=impl.thread_state,
                ),
            )
        )

    monitor = LoadMonitor()
    try:
        interleave([e for _, e in entries], settings.repeats, threads.apply, lambda: progress.update(1))
    except Exception as exc:  # noqa: BLE001 - a crash mid-run invalidates this configuration only
        for row, _ in entries:
            row.status, row.detail = "error", f"while timing: {_short_error(exc)}"
        return ConfigResult(size, batch, rows, time.perf_counter() - t_start, monitor.stop())
    load = monitor.stop()
    for row, e in entries:
        row.samples = e.samples
        row.stats = Stats.of(e.samples)
    return ConfigResult(size, batch, rows, time.perf_counter() - t_start, load)


# --------------------------------------------------------------------------------------------------
# Serving: N Python threads, each handling single 512x512 requests, as a web server's workers do.


@dataclass
class ServingPoint:
    impl: str
    threads: int
    requests: int
    throughput: Stats  # requests/s over the repeats
    p50_s: float  # latency percentiles over every request of every repeat
    p99_s: float
    # Mean CPU cores this process used while serving: about 1.0 whatever the thread count means the
    # calls were serialised (the GIL held, or a lock); other_cores is CPU taken by other processes.
    own_cores: float | None = None
    other_cores: float | None = None
    latencies_s: list[float] = field(default_factory=list)


@dataclass
class ServingResult:
    points: list[ServingPoint]
    errors: dict[str, str]
    note: str
    load: dict[str, float | None] = field(default_factory=dict)

    def point(self, impl: str, threads: int) -> ServingPoint | None:
        return next((p for p in self.points if p.impl == impl and p.threads == threads), None)

    def scaling(self, impl: str, threads: int, *, best: bool = False) -> float | None:
        """Throughput at ``threads`` over throughput at 1 thread (medians, or best repeats)."""
        a, b = self.point(impl, threads), self.point(impl, 1)
        if a is None or b is None:
            return None
        if best:
            return a.throughput.max / b.throughput.max
        return a.throughput.median / b.throughput.median


def _mean_of(loads: Sequence[dict[str, float | None]], key: str) -> float | None:
    values = [v for v in (d.get(key) for d in loads) if v is not None]
    return sum(values) / len(values) if values else None


def serve(fn: Fn, requests: Sequence[np.ndarray], workers: int, total: int) -> tuple[float, list[float]]:
    """``workers`` threads pull request numbers from a shared counter until ``total`` are served.

    Returns (wall seconds from the common start, per-request latencies). ``next()`` on an
    ``itertools.count`` is atomic under the GIL, and so is ``list.append``.
    """
    counter = itertools.count()
    latencies: list[float] = []
    errors: list[BaseException] = []
    start = threading.Barrier(workers + 1)
    clock = time.perf_counter

    def worker() -> None:
        start.wait()
        try:
            while (i := next(counter)) < total:
                x = requests[i % len(requests)]
                t0 = clock()
                fn(x)
                latencies.append(clock() - t0)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in pool:
        t.start()
    start.wait()
    t0 = clock()
    for t in pool:
        t.join()
    wall = clock() - t0
    if errors:
        raise errors[0]
    return wall, latencies


def run_serving(
    fns: dict[str, Fn] | Exception,
    refs: dict[str, Fn] | Exception,
    threads: Threads,
    settings: Settings,
    progress: Progress,
) -> ServingResult:
    """Throughput and latency of single-request preprocessing from 1..8 Python threads.

    goprep is set to 1 thread and OpenCV to 1 thread, so every bit of parallelism comes from the
    Python threads: what scales is what runs with the GIL released.
    """
    note = (
        "512x512 requests; goprep.set_num_threads(1), cv2.setNumThreads(1): parallelism comes only "
        f"from the Python threads; {threads.all} usable cores"
    )
    progress.set_description_str("serving")
    size = images.SIZES["512"]
    requests = images.photos(size)
    errors: dict[str, str] = {}
    steps = len(settings.serving_threads) * settings.serving_repeats
    if isinstance(fns, Exception):
        progress.update(2 * (1 + steps))
        return ServingResult([], {"all": _short_error(fns)}, note)

    def one_thread_each() -> None:
        threads.goprep(1)
        threads.cv2(1)

    usable: dict[str, tuple[Fn, int]] = {}
    for name, fn in fns.items():
        progress.update(1)
        try:
            one_thread_each()
            if isinstance(refs, Exception):
                raise RuntimeError(f"no goprep reference: {_short_error(refs)}")
            for x in requests:  # output check before any timing
                c = check_output(fn(x), refs["task"](x), NEAR_EXACT_TOL)
                one_thread_each()
                if not c.ok:
                    raise RuntimeError(f"output check failed: {c.detail}")
            per_call = run_calls(fn, requests, 3 * len(requests)) / (3 * len(requests))  # also warms up
            total = int(min(20000, max(200, settings.serving_target_s / max(per_call, 1e-7))))
            serve(fn, requests, max(settings.serving_threads), 4 * max(settings.serving_threads))  # warm
            usable[name] = (fn, total)
        except Exception as exc:  # noqa: BLE001
            errors[name] = _short_error(exc)
            progress.update(steps)

    walls: dict[tuple[str, int], list[float]] = {}
    lats: dict[tuple[str, int], list[float]] = {}
    loads: dict[tuple[str, int], list[dict[str, float | None]]] = {}
    names = list(usable)
    monitor = LoadMonitor()
    for rep in range(settings.serving_repeats):
        for k in settings.serving_threads:
            for j in range(len(names)):
                name = names[(rep + j) % len(names)]  # interleaved, rotated
                if name in errors:
                    continue
                fn, total = usable[name]
                one_thread_each()
                run_monitor = LoadMonitor()
                try:
                    wall, lat = serve(fn, requests, k, total)
                except Exception as exc:  # noqa: BLE001
                    errors[name] = _short_error(exc)
                    continue
                loads.setdefault((name, k), []).append(run_monitor.stop())
                walls.setdefault((name, k), []).append(total / wall)
                lats.setdefault((name, k), []).extend(lat)
                progress.update(1)

    points = []
    for (name, k), tput in walls.items():
        if name in errors:
            continue
        lat = lats[(name, k)]
        points.append(
            ServingPoint(
                name,
                k,
                usable[name][1],
                Stats.of(tput),
                percentile(lat, 50),
                percentile(lat, 99),
                _mean_of(loads[(name, k)], "own_cores"),
                _mean_of(loads[(name, k)], "other_cores"),
                lat,
            )
        )
    points.sort(key=lambda p: (p.impl, p.threads))
    return ServingResult(points, errors, note, monitor.stop())


# --------------------------------------------------------------------------------------------------
# Per-call overhead on a tiny image


@dataclass
class OverheadResult:
    per_call_us: dict[str, Stats]  # microseconds per call
    errors: dict[str, str]
    note: str
    load: dict[str, float | None] = field(default_factory=dict)


PROFILED = ", profiler on"  # suffix of the overhead rows measured with goprep's profiler on


def run_overhead(
    fns: dict[str, Callable[[np.ndarray], Any]] | Exception,
    threads: Threads,
    settings: Settings,
    progress: Progress,
) -> OverheadResult:
    """Microseconds per call of the decorator + binding on a 4x4x3 uint8 image (flip only), next to
    a plain cv2.flip call: with so little work, the time is the fixed cost of a call."""
    progress.set_description_str("call overhead")
    tiny = np.ascontiguousarray(images.photos(images.SIZES["256"])[0][:4, :4])  # 4x4x3 uint8
    note = "4x4x3 uint8 -> horizontal flip; goprep rows at the thread count named"
    if isinstance(fns, Exception):
        progress.update(4 * (1 + settings.repeats))
        return OverheadResult({}, {"all": _short_error(fns)}, note)

    expected = tiny[:, ::-1]
    variants: list[tuple[str, Callable[[np.ndarray], Any], dict[str, int]]] = []
    for name, fn in fns.items():
        if name.startswith("goprep"):
            variants.append((f"{name}, {threads.all} threads", fn, {"goprep": threads.all, "profiler": 0}))
            if name.startswith("goprep.pipeline"):
                variants.append((f"{name}, 1 thread", fn, {"goprep": 1, "profiler": 0}))
            # The same call with goprep's profiler on, interleaved with the off rows: the profiler's
            # per-call cost is the difference (report.overhead_lines prints it).
            variants.append((f"{name}, 1 thread{PROFILED}", fn, {"goprep": 1, "profiler": 1}))
            if not name.startswith("goprep.pipeline"):
                variants.append((f"{name}, 1 thread", fn, {"goprep": 1, "profiler": 0}))
        else:
            variants.append((name, fn, {}))

    errors: dict[str, str] = {}
    entries: list[Entry] = []
    for name, fn, state in variants:
        progress.update(1)
        try:
            threads.apply(state)
            out = np.asarray(fn(tiny))
            if not np.array_equal(out, expected):
                raise RuntimeError("output differs from a horizontal flip")
            calls, _ = calibrate(fn, [tiny], settings.overhead_min_sample_s, 10_000_000)
            entries.append(Entry(name, fn, [tiny], 1, calls=calls, thread_state=state))
        except Exception as exc:  # noqa: BLE001
            errors[name] = _short_error(exc)
            progress.update(settings.repeats)
    monitor = LoadMonitor()
    try:
        interleave(entries, settings.repeats, threads.apply, lambda: progress.update(1))
    finally:
        threads.apply({"profiler": 0})
    load = monitor.stop()
    return OverheadResult({e.key: Stats.of([s * 1e6 for s in e.samples]) for e in entries}, errors, note, load)
