"""Test-only switches of the GPU path. Not for production use.

``simulate_gpu()`` swaps in a simulated GPU (host memory; the real CUDA kernels of kernels/*.cu
compiled as C++ for the CPU, in extensions built with ``-tags cpukernel``, which setup.py does when a
C++ compiler is found), so the GPU path, its CPU fallback and the circuit breaker can be exercised on machines without a
GPU. ``inject_gpu_fault()`` makes the next GPU calls fail the way a real device can.
"""

from __future__ import annotations

from . import _device, _native

__all__ = [
    "simulate_gpu",
    "simulated_gpu_available",
    "simulated_trace",
    "inject_gpu_fault",
    "reset_gpu",
    "set_cpu_cost",
]


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
