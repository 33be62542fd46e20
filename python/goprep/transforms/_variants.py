"""Plan variants: a training batch's per-item plans without tracing each item.

The items of a training batch differ in their source's size and in the crop box their draws chose;
tracing each one (Python) and building its plan (one NewPlan call each) cost about as much CPU as
decoding and resizing it (docs/perf/2026-12-06-train-batch.md). Items that agree on everything else
(the input kind and decode scale, the flips and interpolation drawn, whether the box equals the output
size, where tracing drops the resize) form a class; the first item of a class is traced as always and
its plan becomes the class's template when the engine confirms that the plan reads a contiguous
uint8 source through exactly the drawn box (binding CropTemplate). Every later item of the class is a
variant: the template's spec with its own source size and box, built in Go with the other items'
variants, in parallel, when the engine call first asks for their handles (binding PlanVariants), and
freed after the call. A variant's spec is the spec tracing would give that item (the binding's
tests compare the specs; tests/test_train_batch.py compares a batch's tensors with per-item calls',
which trace, bit for bit).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from .. import _native
from .._signature import Memo, Signature

# split(args) -> (box (top, left, h, w), the rest of the arguments (hashable), output (h, w)), or None
# for arguments a template cannot vary (the op reading the source is not a plain crop)
Split = Callable[[Tuple[Any, ...]], Optional[Tuple[Tuple[int, int, int, int], Any, Tuple[int, int]]]]

ENABLED = [True]  # False: every item traced (the benchmark's A/B switch, benchmarks/train_batch.py)
# each pipeline's templates by class, a Memo (bounded, emptied by goprep's cache evictions as every memo)
_templates: "weakref.WeakKeyDictionary[Any, Memo]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


class _Pending:
    """The variants of one call: their rows, built into plans on the first ``handle`` asked for (the
    engine call's job table) and freed when the call's signatures are dropped. ``big``: never put in
    a memo (Pipeline._signature)."""

    big = True

    def __init__(self) -> None:
        self.rows: List[Tuple[int, ...]] = []
        self.templates: List[Signature] = []  # their plans stay alive until the variants are built
        self.handles: Optional[np.ndarray] = None
        self.lock = threading.Lock()

    def handle(self, k: int) -> int:
        if self.handles is None:
            with self.lock:
                if self.handles is None:
                    rows = np.array(self.rows, np.int64).reshape(len(self.rows), -1)
                    hs = np.zeros(len(self.rows), np.int64)
                    _native.call(_native.get().PlanVariants, id(rows), len(rows), id(hs))
                    self.handles = hs
        return int(self.handles[k])

    def __del__(self) -> None:
        try:
            if self.handles is not None and _native.loaded():
                free = _native.get().FreePlan
                for h in self.handles:
                    free(int(h))
        except Exception:  # interpreter shutdown: the process is ending
            pass


class _VariantSig(Signature):
    """A variant's signature: its template's, with its own plan (built by its call's _Pending)."""

    __slots__ = ("_k",)

    @property  # type: ignore[override]
    def handle(self) -> int:  # noqa: D102
        return self.ref.handle(self._k)  # type: ignore[no-any-return]


_COPIED = tuple(n for n in Signature.__slots__ if n not in ("handle", "ref", "src_bytes"))


class Prepared:
    """An item whose signature is already known (a template just traced, or a variant): the run
    path's item (_inputs) with ``trace`` returning it. Its key is unhashable, so the pipeline's memo
    neither serves nor keeps it (Pipeline._signature traces such items every call)."""

    __slots__ = ("item", "sig", "key", "ref", "mem", "kind", "on_dev", "dtype")

    def __init__(self, item: Any, sig: Signature) -> None:
        self.item, self.sig, self.key = item, sig, ([],)
        self.ref, self.mem, self.kind, self.on_dev, self.dtype = item.ref, item.mem, item.kind, item.on_dev, item.dtype

    def trace(self, fn: Any, args: Any, kwargs: Any, opts: Any) -> Signature:
        return self.sig


class Batch:
    """One call's variants: ``prepare(item, h, w, args)`` (the item's source ``h x w`` as the plan
    reads it, decoded) gives the item to run, a Prepared one when its class has a template (or just
    got one), else the item as it came (traced by the pipeline)."""

    def __init__(self, pipe: Any, split: Split) -> None:
        self.pipe, self.split = pipe, split
        with _lock:
            t = _templates.get(pipe)
            if t is None:
                t = _templates[pipe] = Memo("signatures")
        self.templates = t
        self.pending = _Pending()

    def prepare(self, it: Any, h: int, w: int, args: Tuple[Any, ...]) -> Any:
        from .._decode import Encoded

        if h < 2 or w < 2 or it.on_dev:
            return it
        s = self.split(args)
        if s is None:
            return it
        box, rest, (oh, ow) = s
        if type(it) is Encoded:
            kind: Any = ("encoded", it.header.format, it.scale)
        else:
            a = it.src
            if type(a) is not np.ndarray or a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3 or not a.flags.c_contiguous:
                return it
            kind = ("array", it.kind)
        cls = (kind, rest, box[2] == oh, box[3] == ow)
        t = self.templates.get(cls, False)
        if t is None:  # this class cannot be varied: traced item by item
            return it
        if t is False:  # its first item: traced, and its plan the template if the engine confirms it
            sig = self.pipe._signature(it, args, {}, _key(args), ())
            ok = bool(_native.get().CropTemplate(sig.handle, h, w, *box))
            self.templates.put(cls, (sig, h, w) if ok else None)
            return Prepared(it, sig)
        tsig = t[0]
        v = _VariantSig.__new__(_VariantSig)
        for n in _COPIED:
            setattr(v, n, getattr(tsig, n))
        v.ref, v._k = self.pending, len(self.pending.rows)
        v.src_bytes = h * w * 3
        self.pending.rows.append((tsig.handle, h, w) + tuple(box))
        self.pending.templates.append(tsig)
        return Prepared(it, v)


def _key(args: Tuple[Any, ...]) -> Any:
    from .._trace import typed_key

    return typed_key(args)


def rrc_split(size_of: Callable[[Tuple[Any, ...]], Tuple[int, int]]) -> Split:
    """Split for arguments whose first is the drawn ``(top, left, h, w, ...)`` box of a crop read
    straight from the source (a converted chain's RandomResizedCrop parameters, or a Params)."""

    def split(args: Tuple[Any, ...]) -> Any:
        first = args[0]
        return tuple(first[:4]), (tuple(first[4:]),) + tuple(args[1:]), size_of(args)

    return split


def chain_split(ops: Sequence[Any]) -> Optional[Split]:
    """A converted chain's split: when its first op is a RandomResizedCrop (its parameters lead the
    chain's: ``args == ((box + (k,), ...),)``), the box and the rest; otherwise None (no variants)."""
    op = ops[0] if ops else None
    if op is None or not getattr(op, "crop_first", False):
        return None
    size = tuple(op.size)

    def split(args: Tuple[Any, ...]) -> Any:
        prm = args[0]
        return tuple(prm[0][:4]), (tuple(prm[0][4:]),) + tuple(prm[1:]), size

    return split
