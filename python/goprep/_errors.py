"""goprep's exception hierarchy.

Every error carries a stable ``code`` (shared with the Go engine, which returns it as the prefix
``goprep[code]`` of its error text) and, when a single argument is at fault, that ``argument``'s name.
The codes have one source, the engine's list (engine.Codes in gomod/engine/errors.go, exported as
``binding.ErrorCodes()``); ``_BY_CODE`` maps each to its class, and tests/test_errors.py checks that
it covers exactly that list and that every code raised anywhere in goprep's Python is on it.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "GoprepError",
    "InvalidArgumentError",
    "ShapeError",
    "DTypeError",
    "PipelineError",
    "BackendError",
    "DeviceError",
    "ForkError",
    "DecodeError",
]


class GoprepError(Exception):
    """Base class of every error goprep raises."""

    default_code = "internal"

    def __init__(self, message: str, *, argument: Optional[str] = None, code: Optional[str] = None) -> None:
        self.code: str = code or self.default_code
        self.argument: Optional[str] = argument
        self.detail = message
        super().__init__(f"{argument}: {message}" if argument else message)


class InvalidArgumentError(GoprepError, ValueError):
    """An argument has a bad value (``invalid_argument``, ``read_only``, ``overlap``)."""

    default_code = "invalid_argument"


class ShapeError(InvalidArgumentError):
    """An array or size has a bad shape, or is too large (``bad_shape``, ``too_large``)."""

    default_code = "bad_shape"


class DTypeError(GoprepError, TypeError):
    """An array has an unsupported dtype or byte order (``bad_dtype``)."""

    default_code = "bad_dtype"


class PipelineError(GoprepError, ValueError):
    """A ``@goprep.pipeline`` function cannot be fused as written (``pipeline``)."""

    default_code = "pipeline"


class DecodeError(GoprepError, ValueError):
    """Encoded image data that cannot be decoded: empty, truncated, corrupt, an unsupported format
    (``decode``), or an image over ``goprep.set_max_image_pixels`` (``too_large``)."""

    default_code = "decode"


class BackendError(GoprepError, RuntimeError):
    """The engine failed unexpectedly (``internal``)."""

    default_code = "internal"


class DeviceError(BackendError):
    """The requested device cannot be used (``device_unavailable``)."""

    default_code = "device_unavailable"


class ForkError(BackendError):
    """goprep's Go runtime was started before this process was forked (``forked``)."""

    default_code = "forked"


# Tracebacks, reprs and pickles name these classes where users import them from, goprep.DTypeError,
# not goprep._errors.DTypeError (goprep/__init__.py exports each one, so pickle finds them there).
for _name in __all__:
    globals()[_name].__module__ = "goprep"
del _name

_BY_CODE = {
    "invalid_argument": InvalidArgumentError,
    "read_only": InvalidArgumentError,
    "overlap": InvalidArgumentError,
    "bad_shape": ShapeError,
    "too_large": ShapeError,
    "bad_dtype": DTypeError,
    "pipeline": PipelineError,
    "internal": BackendError,
    "device_unavailable": DeviceError,
    "forked": ForkError,
    "decode": DecodeError,
    "cancelled": BackendError,  # a call stopped by its cancel flag; the caller re-raises KeyboardInterrupt
}

_NATIVE = re.compile(r"^goprep\[(\w+)\] (?:([\w.\[\]]+): )?(.*)$", re.S)


def from_native(exc: BaseException) -> GoprepError:
    """Turn the RuntimeError gopy raised for a Go error into the matching typed exception."""
    m = _NATIVE.match(str(exc))
    if not m:
        return BackendError(f"unexpected engine error: {exc}")
    code, arg, msg = m.groups()
    return _BY_CODE.get(code, BackendError)(msg, argument=arg, code=code)
