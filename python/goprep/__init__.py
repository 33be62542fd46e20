"""goprep: fused, GIL-free image preprocessing for ML inference, with a Go engine.

Importing goprep loads nothing native: the Go extension is loaded on the first call that needs it.
The public submodules (``goprep.transforms``, ``metrics``, ``ray``, ``dask``, ``testing``) are imported
on first attribute access (PEP 562), so ``import goprep`` loads no torch, Ray, Dask or Prometheus.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List

def _in_subinterpreter() -> bool:
    """Whether this code runs in a sub-interpreter (CPython's ``_interpreters``, 3.13+, or
    ``_xxsubinterpreters``, 3.10-3.12); False where neither can say."""
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            mod = __import__(name)
            cur, main = mod.get_current(), mod.get_main()
        except Exception:
            continue
        cur, main = (cur[0] if isinstance(cur, tuple) else cur), (main[0] if isinstance(main, tuple) else main)
        return bool(cur != main)
    return False


if _in_subinterpreter():
    # The extension (gopy's single-phase init) and the Go runtime are process-wide, and a plan freed
    # while a sub-interpreter shuts down hung the process's exit (CPython 3.11): refused plainly.
    raise ImportError("goprep cannot be imported in a sub-interpreter: its native extension and Go runtime are "
                      "process-wide; import goprep in the main interpreter (mod_wsgi: "
                      "WSGIApplicationGroup %{GLOBAL})")

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml and the engine read it

from . import _errors
from ._errors import (
    BackendError,
    DecodeError,
    DeviceError,
    DTypeError,
    ForkError,
    GoprepError,
    InvalidArgumentError,
    PipelineError,
    ShapeError,
)
from ._decode import get_max_image_pixels, set_max_image_pixels
from ._device import DeviceArray, to_device
from ._ops import center_crop, crop, cvt_color, decode, flip, letterbox, normalize, pad, resize
from ._pipeline import Pipeline, pipeline
from ._profile import profiling, set_profiling, stats
from ._trace import LetterboxInfo
from ._yuv import YUVFrame, yuv

if TYPE_CHECKING:  # type checkers see the lazily imported submodules as attributes
    from . import dask, metrics, ray, testing, transforms

# The public submodules, imported on first access by __getattr__ below. Not in __all__: a star import
# would import them all.
_SUBMODULES = ("dask", "data", "metrics", "ray", "testing", "transforms", "triton")

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
    "decode",
    "set_max_image_pixels",
    "get_max_image_pixels",
    "pipeline",
    "Pipeline",
    "LetterboxInfo",
    "yuv",
    "YUVFrame",
    "DeviceArray",
    "to_device",
    "set_num_threads",
    "get_num_threads",
    "info",
    "devices",
    "set_profiling",
    "profiling",
    "stats",
] + _errors.__all__  # the error classes, listed once in _errors


def __getattr__(name: str) -> Any:
    """``goprep.<submodule>`` after a plain ``import goprep``: the submodule is imported on first use
    (importing it binds it on this package, so later accesses do not come here)."""
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_SUBMODULES))


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
        "codecs": json.loads(mod.Codecs()),
        "cuda_built": bool(mod.CUDABuilt()),
        "cuda_available": bool(devs),
        "cuda_reason": reason,
        "devices": devs,
        "gpu": _device.gpu_stats(),
    }
