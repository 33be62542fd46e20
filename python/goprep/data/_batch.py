"""One batch: the transform called once on the batch's encoded images with the batch's generator,
corrupt files raised by path or skipped and counted, the result as torch tensors or NumPy arrays.
Shared by the threaded ``Loader`` and the DataLoader ``Dataset``, so both give the same batches."""

from __future__ import annotations

import inspect
import re
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._errors import DecodeError, InvalidArgumentError
from ._order import batch_seed, make_generator
from ._source import Samples

ON_ERROR = ("raise", "skip")
OUTPUTS = ("torch", "numpy")
GENERATORS = ("numpy", "torch")
_ITEM = re.compile(r"^\w+\[(\d+)\]$")  # how goprep names a list's item: src[3], data[3]


def takes_generator(fn: Any) -> bool:
    """Whether ``fn`` has a ``generator`` parameter that can be passed by keyword."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    p = sig.parameters.get("generator")
    return p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)


def check_choice(name: str, v: Any, choices: Sequence[str]) -> str:
    if v not in choices:
        raise InvalidArgumentError(f"must be one of {', '.join(map(repr, choices))}, got {v!r}", argument=name)
    return v


def corrupt_error(name: str, e: DecodeError) -> DecodeError:
    """``e`` (a batch's decode error) restated naming the file (its path, or ``item i (N bytes)``) unless
    it already does; ``.path`` holds that name."""
    err = DecodeError(e.detail if name in e.detail else f"{name}: {e.detail}", code=e.code)
    err.path = name  # type: ignore[attr-defined]
    return err


class BatchRunner:
    """Runs batches of ``samples`` through ``transform``: ``transform(items, generator=g)`` when it
    takes a ``generator`` (``g`` a fresh generator seeded by ``batch_seed``), else ``transform(items)``
    (its draws are then its own: see docs/TRAINING.md). Thread-safe: the skip count is under a lock."""

    def __init__(self, samples: Samples, transform: Any, *, output: str = "torch", generator: str = "numpy",
                 on_error: str = "raise", pin_memory: Optional[bool] = None) -> None:
        if not callable(transform):
            raise InvalidArgumentError(f"must be callable (a goprep pipeline, a converted transform or a function "
                                       f"of a list of images), got {type(transform).__name__}", argument="transform")
        self.samples, self.transform = samples, transform
        self.output = check_choice("output", output, OUTPUTS)
        self.generator = check_choice("generator", generator, GENERATORS)
        self.on_error = check_choice("on_error", on_error, ON_ERROR)
        self.with_generator = takes_generator(transform)
        if pin_memory not in (None, True, False):
            raise InvalidArgumentError(f"must be None (when CUDA is available), True or False, got {pin_memory!r}",
                                       argument="pin_memory")
        if pin_memory and output != "torch":
            raise InvalidArgumentError("pins torch tensors: it needs output='torch'", argument="pin_memory")
        if output == "torch":
            try:
                import torch  # noqa: F401
            except ImportError:
                raise InvalidArgumentError("'torch' needs PyTorch, which is not installed: use output='numpy'",
                                           argument="output") from None
        if pin_memory is None:
            pin_memory = output == "torch" and _cuda_available()
        self.pin_memory = bool(pin_memory)
        self._lock = threading.Lock()
        self._skipped: List[str] = []

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled without its lock (DataLoader worker processes get a copy; their counts are their own)."""
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def skipped(self) -> int:
        with self._lock:
            return len(self._skipped)

    @property
    def skipped_files(self) -> List[str]:
        with self._lock:
            return list(self._skipped)

    def _call(self, items: List[Any], seed: int) -> Any:
        if self.with_generator:
            return self.transform(items, generator=make_generator(self.generator, seed))
        return self.transform(items)

    def _bad(self, e: DecodeError, items: List[Any], seed: int) -> List[int]:
        """The positions in ``items`` of the images that ``e`` (the batch call's error) is about: the
        item goprep named (``src[k]``), else each item tried alone (the failure path only)."""
        k = getattr(e, "index", None)  # set by the transforms' one-call batches
        if not isinstance(k, int):
            m = _ITEM.match(e.argument or "")
            k = int(m.group(1)) if m else None
        if k is not None and 0 <= k < len(items):
            return [k]
        bad = []
        for k, x in enumerate(items):
            try:
                self._call([x], seed)
            except DecodeError:
                bad.append(k)
        return bad

    def run(self, seed: int, epoch: int, indices: Sequence[int]) -> Optional[Tuple[Any, Any]]:
        """The batch of samples ``indices`` (in order) for ``epoch``: ``(images, labels)``, or None when
        every image of it was corrupt and skipped. A corrupt image raises ``DecodeError`` naming its
        path, or with ``on_error="skip"`` is counted and left out (the rest run again, with the same
        generator seed: the result depends only on which files are corrupt)."""
        idx = [int(i) for i in indices]
        s = batch_seed(seed, epoch, idx)
        keep = list(idx)
        while True:
            items = [self.samples.items[i] for i in keep]
            try:
                x = self._call(items, s)
                break
            except DecodeError as e:
                bad = self._bad(e, items, s)
                if not bad:
                    raise
                if self.on_error == "raise":
                    raise corrupt_error(self.samples.name(keep[bad[0]]), e) from e
                with self._lock:
                    self._skipped.extend(self.samples.name(keep[k]) for k in bad)
                keep = [i for k, i in enumerate(keep) if k not in bad]
                if not keep:
                    return None
        labels = np.array([self.samples.labels[i] for i in keep], dtype=np.int64)
        return self.convert(x, labels)

    def convert(self, x: Any, labels: np.ndarray) -> Tuple[Any, Any]:
        """The batch as ``output`` asks: torch tensors (pinned with ``pin_memory``) or NumPy arrays."""
        if self.output == "numpy":
            return (x.numpy() if _is_torch(x) else np.asarray(x)), labels
        import torch

        xt = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(x))
        yt = torch.from_numpy(labels)
        if self.pin_memory:
            xt, yt = xt.pin_memory(), yt.pin_memory()
        return xt, yt


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "numpy")


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


class Reads:
    """What ``Loader`` and ``Dataset`` both report, from their ``samples`` and ``_runner``."""

    samples: Samples
    _runner: BatchRunner

    @property
    def classes(self) -> Optional[List[str]]:
        """An ImageFolder's class names (label ``k`` is ``classes[k]``), else None."""
        return self.samples.classes

    @property
    def skipped(self) -> int:
        """How many corrupt images ``on_error="skip"`` has left out so far, over every epoch (in this
        process: each DataLoader worker process counts its own)."""
        return self._runner.skipped

    @property
    def skipped_files(self) -> List[str]:
        """The skipped images' paths (``item i (N bytes)`` for bytes), in the order they were found."""
        return self._runner.skipped_files

