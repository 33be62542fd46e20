"""goprep: fused, GIL-free image preprocessing for ML inference, with a Go engine.

Importing goprep loads nothing native: the Go extension is loaded on the first call that needs it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml and the engine read it

from ._errors import (
    BackendError,
    DeviceError,
    DTypeError,
    ForkError,
    GoprepError,
    InvalidArgumentError,
    PipelineError,
    ShapeError,
)
from ._device import DeviceArray, to_device
from ._ops import center_crop, crop, cvt_color, flip, letterbox, normalize, pad, resize
from ._pipeline import Pipeline, pipeline
from ._profile import profiling, set_profiling, stats
from ._trace import LetterboxInfo

__all__ = [
    "__version__",
    "resize",
    "flip",
    "crop",
    "letterbox",
    "pad",
    "center_crop",
    "cvt_color",
    "normalize",
    "pipeline",
    "Pipeline",
    "LetterboxInfo",
    "DeviceArray",
    "to_device",
    "set_num_threads",
    "get_num_threads",
    "info",
    "devices",
    "set_profiling",
    "profiling",
    "stats",
    "GoprepError",
    "InvalidArgumentError",
    "ShapeError",
    "DTypeError",
    "PipelineError",
    "BackendError",
    "DeviceError",
    "ForkError",
]


def set_num_threads(n: int) -> None:
    """Set how many threads the CPU engine splits one call across (default: all cores, or
    ``GOPREP_NUM_THREADS``)."""
    from . import _native

    from ._validate import as_int

    n = as_int("n", n)
    mod = _native.get()
    top = _native.limit("max_threads")
    if not 1 <= n <= top:  # checked here: a Python int beyond int64 cannot even reach the engine
        raise InvalidArgumentError(f"must be between 1 and {top}, got {n}", argument="n")
    _native.call(mod.SetNumThreads, n)


def get_num_threads() -> int:
    """The CPU engine's thread count."""
    from . import _native

    return int(_native.get().NumThreads())


def devices() -> List[Dict[str, Any]]:
    """The GPUs goprep can use, with their properties (name, memory total/free, utilisation, PCIe link,
    compute capability, driver); an empty list when none can be used, and ``info()["cuda_reason"]`` says
    why. The first call probes the driver (never ``import goprep``)."""
    from . import _device

    return _device.devices_report()[0]


def info() -> Dict[str, Any]:
    """Version, backend, threads, SIMD level and the row kernel of each CPU pass, the GPUs and why CUDA is or is not in use, and the GPU
    counters: calls, failures, CPU fallbacks, circuit-breaker trips and state, device pool usage."""
    from . import _device, _native

    mod = _native.get()
    devs, reason = _device.devices_report()
    return {
        "version": __version__,
        "engine_version": mod.Version(),
        "backend": "cuda" if devs else "cpu",
        "threads": int(mod.NumThreads()),
        "threads_env": os.environ.get("GOPREP_NUM_THREADS"),
        "simd": mod.SIMD(),
        "kernels": json.loads(mod.Kernels()),
        "cuda_built": bool(mod.CUDABuilt()),
        "cuda_available": bool(devs),
        "cuda_reason": reason,
        "devices": devs,
        "gpu": _device.gpu_stats(),
    }
