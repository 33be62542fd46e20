"""How a ``Pipeline`` travels to another process (Ray, Dask, multiprocessing workers).

A pipeline pickles as its function and options only. Its plans, lock and cache stay behind; the
first call in the receiving process rebuilds them, so unpickling never loads the Go extension (a
process that only unpickled a pipeline can still fork). The function goes by reference when it is
importable (plain pickle), else by value with cloudpickle (lambdas, local functions, functions of a
script's ``__main__``); cloudpickle's output is read back by plain ``pickle.loads``.
"""

from __future__ import annotations

import importlib
import pickle
import sys
from typing import Any, Callable, Optional


def importable(module: Optional[str], qualname: Optional[str]) -> Any:
    """The object ``module.qualname`` names in this process now, or None."""
    if not module or not qualname or "<locals>" in qualname:
        return None
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj


def import_named(module: str, qualname: str) -> Any:
    """Unpickle a module-level ``@goprep.pipeline`` by name (the receiver imports its module)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def by_name(obj: Any) -> bool:
    """Whether ``obj`` can be pickled as a reference to its module-level name (not ``__main__``,
    which a Ray or Dask worker does not have)."""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return mod != "__main__" and importable(mod, qual) is obj


class FnRef:
    """A pipeline's function inside a pickle."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __reduce__(self) -> Any:
        fn = self.fn
        if by_name(fn):
            return (FnRef, (fn,))
        try:
            import cloudpickle
        except ImportError:
            name = getattr(fn, "__qualname__", repr(fn))
            raise pickle.PicklingError(
                f"cannot pickle the goprep pipeline of {name!r}: a lambda, local function or __main__ "
                "function needs cloudpickle (pip install cloudpickle); or define it at module level"
            ) from None
        return (_fn_from_bytes, (cloudpickle.dumps(fn),))


def _fn_from_bytes(data: bytes) -> FnRef:
    return FnRef(pickle.loads(data))
