"""Timing: warm-up, calibration and interleaved repeats, all with ``time.perf_counter``.

Machines are noisy (turbo, other tenants, thermal state), and noise that lands on one
implementation's block of repeats turns into a bogus ratio. So repeats are interleaved: repeat r
times every implementation once, in an order rotated by r, and ratios compare medians of samples
taken side by side. Python's cyclic GC is paused while a sample runs (as ``timeit`` does), so a
collection, and the Go GC that goprep's binding triggers from it, does not land inside one sample.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


def run_calls(fn: Callable[[Any], Any], inputs: Sequence[Any], calls: int) -> float:
    """Seconds taken by ``calls`` calls of ``fn``, cycling through ``inputs``."""
    seq = [inputs[i % len(inputs)] for i in range(calls)]  # built before the clock starts
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for x in seq:
            fn(x)
        return time.perf_counter() - t0
    finally:
        if gc_was_enabled:
            gc.enable()


def calibrate(
    fn: Callable[[Any], Any], inputs: Sequence[Any], min_sample_s: float, max_calls: int
) -> tuple[int, float]:
    """(calls, seconds per call): how many calls make one sample last about ``min_sample_s`` (at least 1).

    Timer resolution and loop overhead are negligible against ``min_sample_s``; a sample of a
    single slow call (NumPy on a big batch) is fine too.
    """
    calls = len(inputs)
    elapsed = run_calls(fn, inputs, calls)
    while elapsed < min_sample_s / 10 and calls < max_calls:  # too short to extrapolate from
        calls = min(max_calls, calls * 10)
        elapsed = run_calls(fn, inputs, calls)
    per_call = max(elapsed / calls, 1e-9)
    return max(1, min(max_calls, math.ceil(min_sample_s / per_call))), per_call


@dataclass
class Entry:
    """One implementation inside an interleaved measurement."""

    key: str
    fn: Callable[[Any], Any]
    inputs: Sequence[Any]
    items_per_call: int  # images per call, to report time per image
    calls: int = 1
    repeats: int | None = None  # fewer repeats than the others (a very slow row); None: all of them
    # Process-wide thread counts this entry needs (library -> count), set by ``apply`` before each
    # of its samples; empty for entries that need none.
    thread_state: Mapping[str, int] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)  # seconds per item, one per repeat


def interleave(
    entries: Sequence[Entry],
    repeats: int,
    apply: Callable[[Mapping[str, int]], None] = lambda state: None,
    on_sample: Callable[[], None] = lambda: None,
) -> None:
    """Fill every entry's ``samples`` with ``repeats`` values, implementations interleaved.

    When an entry changes a thread count, the sample after the change starts with one untimed call,
    so that resizing a thread pool is not counted as the entry's time.
    """
    # Entries that share thread counts sit next to each other, so few samples pay for a change.
    entries = sorted(entries, key=lambda e: sorted(e.thread_state.items()))
    n = len(entries)
    current: dict[str, int] = {}
    for r in range(repeats):
        order = [entries[(r + i) % n] for i in range(n)]  # rotate: nobody is always first
        for e in order:
            if e.repeats is not None and r >= e.repeats:
                continue
            changed = any(current.get(lib) != count for lib, count in e.thread_state.items())
            if changed:
                apply(e.thread_state)
                current.update(e.thread_state)
                e.fn(e.inputs[0])
            dt = run_calls(e.fn, e.inputs, e.calls)
            e.samples.append(dt / (e.calls * e.items_per_call))
            on_sample()


def calibrated(key: str, fn: Callable[[Any], Any], inputs: Sequence[Any], settings: Any, items_per_call: int = 1,
               thread_state: Mapping[str, int] | None = None) -> Entry:
    """An Entry for ``fn`` whose samples last about ``settings.min_sample_s`` (calibrate; at most
    ``settings.max_calls`` calls). Run it with the thread counts ``thread_state`` already applied."""
    calls, _ = calibrate(fn, inputs, settings.min_sample_s, settings.max_calls)
    return Entry(key, fn, inputs, items_per_call, calls, thread_state=dict(thread_state or {}))


def measure(entries: Sequence[Entry], repeats: int,
            apply: Callable[[Mapping[str, int]], None] = lambda state: None) -> dict[str, Stats]:
    """Each entry's time per item (its key -> Stats), the entries interleaved ``repeats`` times."""
    interleave(entries, repeats, apply)
    return {e.key: Stats.of(e.samples) for e in entries}


@dataclass
class Stats:
    median: float
    min: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        return cls(statistics.median(values), min(values), max(values), len(values))

    def as_dict(self) -> dict[str, float | int]:
        return {"median": self.median, "min": self.min, "max": self.max, "n": self.n}


def percentile(values: Sequence[float], q: float) -> float:
    """q-th percentile (0..100), linear interpolation (NumPy's default)."""
    return float(np.percentile(np.asarray(values, np.float64), q))
