"""Test-only switches of the GPU path and hooks into the run path. Not for production use.

``simulate_gpu()`` swaps in a simulated GPU (host memory; the real CUDA kernels of kernels/*.cu
compiled as C++ for the CPU, in extensions built with ``-tags cpukernel``, which setup.py does when a
C++ compiler is found), so the GPU path, its CPU fallback and the circuit breaker can be exercised on machines without a
GPU. ``inject_gpu_fault()`` makes the next GPU calls fail the way a real device can.

The run path's hooks let tests observe and steer it without patching goprep's internals: the caches'
sizes and bounds (``cache_sizes``, ``cache_limits``, ``clear_caches``), how many functions were
traced (``trace_count``), which calls took the general path (``count_general_path``), results that cannot
be allocated (``refuse_allocations``), and long calls held inside the engine until interrupted
(``hold_calls``, ``wait_held``, ``held_in_flight``, ``interrupt_each``), how many pixels encoded sources were
decoded (``decoded_pixels``), and the colour steps' path in converted training chains
(``colour_path``: Go or NumPy kernels, one engine call of staged jobs or one call per segment;
``count_colour_calls``: the Go colour batch calls).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import _device, _native, _outputs, _run, _signature

__all__ = [
    "simulate_gpu",
    "simulated_gpu_available",
    "simulated_trace",
    "inject_gpu_fault",
    "reset_gpu",
    "set_cpu_cost",
    "INTERRUPTIBLE_MIN_BYTES",
    "cache_sizes",
    "cache_limits",
    "clear_caches",
    "interrupt_each",
    "trace_count",
    "count_general_path",
    "refuse_allocations",
    "hold_calls",
    "wait_held",
    "held_in_flight",
    "decoded_pixels",
    "colour_path",
    "count_colour_calls",
]

INTERRUPTIBLE_MIN_BYTES = _run.INTERRUPTIBLE_MIN_BYTES  # CPU calls moving this many bytes are cancellable


def simulated_gpu_available() -> bool:
    """Whether this extension has the CPU-compiled kernels that ``simulate_gpu`` needs."""
    return bool(_native.get().SimulatedGPUAvailable())


def simulate_gpu(on: bool = True) -> None:
    """Replace the real GPUs (if any) with one simulated GPU, or restore them. Raises
    ``goprep.DeviceUnavailableError`` in an extension built without the CPU-compiled kernels."""
    _native.call(_native.get().TestingSimulateGPU, bool(on))
    _device.forget_gpus()


def inject_gpu_fault(kind: str, count: int = 1) -> None:
    """Make the next ``count`` GPU calls fail: ``"oom"`` (device allocation), ``"launch"`` (kernel), or
    ``"lost"`` (a sticky error such as an illegal address, after which the simulated device is gone)."""
    _native.call(_native.get().TestingInjectGPUFault, kind, int(count))


def reset_gpu(breaker_cooldown: float = 30.0) -> None:
    """Zero the GPU counters, close the circuit breaker and set its cool-down in seconds."""
    _native.get().TestingResetGPU(int(breaker_cooldown * 1000))


def set_cpu_cost(ns_per_byte: float) -> float:
    """Pin the placement cost model's CPU figure (nanoseconds per byte read plus written, per core;
    measured once per process otherwise) and return the figure it replaced; 0 keeps the current one.
    Tests of ``device="auto"`` decisions pin it, since the measured figure describes the test machine."""
    import math

    if not isinstance(ns_per_byte, (int, float)) or isinstance(ns_per_byte, bool):
        raise TypeError(f"ns_per_byte must be a number, got {type(ns_per_byte).__name__}")
    if not math.isfinite(ns_per_byte) or ns_per_byte < 0:
        raise ValueError(f"ns_per_byte must be a finite number >= 0, got {ns_per_byte!r}")
    return float(_native.get().TestingSetCPUCost(float(ns_per_byte)))


def simulated_trace() -> dict:
    """What the simulated GPU saw of stream ordering since it was switched in: ``syncs`` (host waits),
    ``waits`` ([waiter, on] stream pairs) and ``freed_on`` (the stream of each stream-ordered free).
    Caller streams appear as their handles, goprep's own streams as -1."""
    import json

    return dict(json.loads(_native.call(_native.get().TestingSimTrace)))


# ---------------------------------------------------------------------------------------------
# the run path


def cache_sizes() -> Dict[str, Any]:
    """Entries held by the run path's caches: ``plans`` (engine plans, shared by spec) and
    ``signatures`` (each pipeline's memo, eager ops' included, as a list of sizes)."""
    memos = _signature.memos()
    return {
        "plans": sum(len(m) for m in memos if m.kind == "plans"),
        "signatures": [len(m) for m in memos if m.kind == "signatures"],
    }


def clear_caches() -> None:
    """Empty every cache of the run path (plans no pipeline holds are then freed, and their memory
    returned to the OS). Unreachable pipelines are collected first: a converter and the pipelines it
    caches refer to each other (their traced functions close over it), so only the cycle collector
    frees them, and "no pipeline holds" should not depend on when it last ran."""
    gc.collect()
    _signature.evict_all()


def live_plan_bytes() -> int:
    """The engine memory of the plans alive in this process (what the ``plan_bytes`` bound counts)."""
    return _signature.live_plan_bytes()


@contextlib.contextmanager
def cache_limits(plans: Optional[int] = None, signatures: Optional[int] = None,
                 plan_bytes: Optional[int] = None) -> Iterator[None]:
    """Bound the plan cache and each pipeline's signature memo (one policy: a full cache is emptied
    before the next entry) to these sizes, and the live plans' engine memory to ``plan_bytes`` (past it
    every cache is emptied), while the block runs; the bounds are restored after it."""
    saved = dict(_signature.LIMITS)
    try:
        if plans is not None:
            _signature.LIMITS["plans"] = int(plans)
        if signatures is not None:
            _signature.LIMITS["signatures"] = int(signatures)
        if plan_bytes is not None:
            _signature.LIMITS["plan_bytes"] = int(plan_bytes)
        yield
    finally:
        _signature.LIMITS.update(saved)


def trace_count() -> int:
    """How many times this process traced a function (a pipeline's, or an eager op's one-op
    pipeline): a call served from a memo adds none."""
    return _signature.traces[0]


@contextlib.contextmanager
def count_general_path() -> Iterator[Callable[[], int]]:
    """Count the calls that take the general path of the run path (every call but those the fast path
    serves: a memoised small signature on the CPU, a NumPy source, a new NumPy result) while the block
    runs; yields a function returning the count so far."""
    calls = [0]
    real = _run.run

    def counted(*args: Any, **kwargs: Any) -> int:
        calls[0] += 1
        return real(*args, **kwargs)

    _run.run = counted
    try:
        yield lambda: calls[0]
    finally:
        _run.run = real


@contextlib.contextmanager
def refuse_allocations() -> Iterator[None]:
    """Make every new result's allocation fail with MemoryError, as NumPy's does on a machine without
    the memory, while the block runs."""

    def refuse(shape: Any, dtype: Any) -> Any:
        raise MemoryError(f"Unable to allocate {shape} (goprep.testing.refuse_allocations)")

    saved = _outputs._empty
    _outputs._empty = refuse
    try:
        yield
    finally:
        _outputs._empty = saved


def hold_calls(n: int = 1, interrupt: bool = False) -> None:
    """Make the next ``n`` cancellable calls (CPU calls moving ``INTERRUPTIBLE_MIN_BYTES`` or more,
    which Ctrl-C stops) wait inside the engine until they are cancelled (at most 60 s), so a test can
    interrupt a call that is provably still running. With ``interrupt``, each held call sends SIGINT to
    this process itself as soon as it waits: the earliest Ctrl-C that can reach a running call. 0
    disarms."""
    _native.get().TestingHoldCalls(int(n), bool(interrupt))


def wait_held(timeout: float = 30.0) -> bool:
    """Wait until a call armed by ``hold_calls`` is waiting inside the engine; False on timeout."""
    return bool(_native.get().TestingWaitHeld(int(timeout * 1000)))


def held_in_flight() -> int:
    """How many calls held by ``hold_calls`` have not yet returned from the engine: 0 once every
    interrupted call has really stopped."""
    return int(_native.get().TestingHeldInFlight())


def interrupt_each(call: Callable[[], Any], n: int) -> None:
    """Run ``call`` ``n`` times, each time held inside the engine and interrupted from there
    (``hold_calls(1, interrupt=True)``): every run must raise KeyboardInterrupt, never return
    normally, and must have left the engine by then (``held_in_flight() == 0``); AssertionError
    naming the run otherwise. The SIGINT lands wherever the caller then is (Thread.start included),
    which is what a user's Ctrl-C does. Run it in a child process: it interrupts its own process."""
    for k in range(n):
        hold_calls(1, interrupt=True)
        try:
            call()
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError(f"call {k} returned normally after its interrupt")
        if held_in_flight() != 0:
            raise AssertionError(f"call {k} was still in the engine after KeyboardInterrupt")


def decoded_pixels() -> int:
    """The running count of pixels this process's pipelines asked the JPEG/PNG decoders for: a crop's
    window when a plan reads only part of an image (crop-aware decode), else the whole decoded image
    (DCT-scaled by ``reduce``)."""
    return int(_native.get().TestingDecodedPixels())


# ---------------------------------------------------------------------------------------------
# the colour steps of converted training chains (ColorJitter, RandomGrayscale)


@contextlib.contextmanager
def colour_path(go: bool = True, one_call: bool = True) -> Iterator[None]:
    """Steer the colour steps while the block runs: ``go`` False runs them with the NumPy kernels
    instead of Go's (binding ColorBatch); ``one_call`` False runs a staged batch as one engine call per
    segment and one Go call per colour step instead of one engine call of staged jobs (the A/B of
    tests and benchmarks: equal bit for bit). The previous switches are restored after it."""
    from .transforms import _random_color, _staged_call

    saved = _random_color.GO[0], _staged_call.ONE_CALL[0]
    _random_color.GO[0], _staged_call.ONE_CALL[0] = bool(go), bool(one_call)
    try:
        yield
    finally:
        _random_color.GO[0], _staged_call.ONE_CALL[0] = saved


@contextlib.contextmanager
def count_colour_calls() -> Iterator[List[Tuple[str, str]]]:
    """Record the Go colour batch calls (binding ColorBatch: the colour steps between segments, and
    goprep.transforms' colour ops) while the block runs; yields the list, growing with each call, of
    their batches' (dtype name, numerics). The one call of staged jobs makes none."""
    from .transforms import _random_color

    seen: List[Tuple[str, str]] = []
    real = _random_color.run_steps_go

    def counted(a: Any, programs: Any, numerics: str = "pil") -> Any:
        seen.append((a.dtype.name, numerics))
        return real(a, programs, numerics)

    _random_color.run_steps_go = counted
    try:
        yield seen
    finally:
        _random_color.run_steps_go = real
