"""A staged training batch as ONE engine call (issue 36: "one GIL-free call per batch").

``Staged.run_batch`` ran a chain with colour steps (ColorJitter, RandomGrayscale) as one engine call
per segment and one Go call per colour step, with the intermediate batches in NumPy. ``OneCall`` gives
each item a staged job instead (gomod/engine/staged_job.go): its first segment's plan (decode's crop,
resize, flip), then per colour cut the item's colour program, run in Go on the worker's scratch image
with the same kernels ColorBatch runs (so the results are equal bit for bit), and the next segment's
plan, the last one into the item's slot of the result. ``OneCall`` is ``run_drawn``'s pipe: it takes
the items and their draws as ``Pipeline._call`` does (``each``), traces every segment's plan from its
known input (the segment before's output: a placeholder image), and makes the one call through
``_run.run`` with each job's stage program (binding staged.go).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _inputs, _outputs, _run
from .._errors import DTypeError, ShapeError
from .._trace import typed_key
from ._random_color import _codes, engine_params, go_dtype


def program(stages: Sequence[Tuple[int, str, Sequence[Tuple[str, float]]]]) -> np.ndarray:
    """A job's stage program (binding staged.go) from its stages: (next plan's handle, numerics name,
    colour program)."""
    ops, nums = _codes("ops"), _codes("numerics")
    words: List[int] = [0, len(stages)]
    for handle, numerics, steps in stages:
        words += [handle, nums[numerics], len(steps)]
        for name, f in steps:
            words += [ops[name], struct.unpack("<q", struct.pack("<d", float(f)))[0]]
    words[0] = len(words)
    return np.array(words, np.int64)


ONE_CALL = [True]  # False: staged batches run as one call per segment and step (the tests' and bench's A/B switch)


class OneCall:
    """``run_drawn``'s pipe for one call of a ``Staged`` chain's batch (its first item
    ``first_item``): ``_call`` runs the items and their draws as one engine call of staged jobs and
    returns the last segment's batch (a tensor when its pipeline's output is torch); plan variants
    use the first segment's templates (run_drawn's ``templates``). ``drawn``: the call's per-item
    draws, filled by ``run_drawn``'s ``draw`` in item order (or before the call)."""

    def __init__(self, staged: Any, first_item: Any, drawn: List[Tuple[Any, ...]]) -> None:
        self.staged, self.first_item, self.drawn = staged, first_item, drawn
        self.head = staged._inner[0]

    def _call(self, src: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], out: Any = None, stream: Any = None,
              each: Any = None) -> Any:
        head = self.head
        items, _, batch = _inputs.adapt(src, None, head._host_only, head._accepts)
        try:
            sigs = []
            for i, it in enumerate(items):
                it, a = each(i, it)
                items[i] = it
                if it.dtype != items[0].dtype:
                    raise DTypeError(f"item {i} is {it.dtype} but item 0 is {items[0].dtype}; the images of a list "
                                     "must share one dtype", argument="src")
                sigs.append(head._signature(it, a, {}, typed_key(a), ()))
            progs, later = self._programs(sigs)  # later: the plans the programs name, alive through the call
            last = later[-1]
            shape = (len(sigs),) + last.shape
            res = _outputs.host_result(None, shape, last.dtype, last.size_arg, ())
            _run.run(sigs, [it.ref for it in items], res, shape, last.dtype, "cpu", stages=progs)
        finally:
            if batch is not None:
                batch.close()
        torch = self.staged._tail(self.first_item)._output == "torch"
        return _outputs.deliver(res, None, torch, last.chw)

    def _programs(self, sigs: List[Any]) -> Tuple[List[np.ndarray], List[Any]]:
        """Each item's stage program and the signatures of the plans they name (a big plan is in no
        memo: these keep it alive), the last item's last segment's at the end (every item's has its
        shape and dtype): segment ``i + 1`` traced on the output of segment ``i`` (a placeholder of its
        shape and dtype), with the item's parameters."""
        st = self.staged
        ops = st._conv._chain.ops
        progs: List[np.ndarray] = []
        keep: List[Any] = []
        last: Optional[Any] = None
        blank: Dict[Tuple[Any, ...], np.ndarray] = {}
        for sig, prm in zip(sigs, self.drawn):
            stages = []
            prev = sig
            eng = engine_params(ops, prm)
            for i, (op, numerics) in enumerate(st._colour):
                key = (prev.shape, prev.dtype)
                img = blank.get(key)
                if img is None:
                    img = blank[key] = np.empty(prev.shape, prev.dtype)
                pipe = st._tail(self.first_item) if i + 1 == len(st._inner) else st._inner[i + 1]
                nxt = pipe._lookup(img, st._seg(eng, i + 1), {})
                stages.append((nxt.handle, numerics, op._steps(prm[st._cuts[i]])))
                keep.append(nxt)
                prev = nxt
            if last is not None and (prev.shape != last.shape or prev.dtype != last.dtype):
                raise ShapeError(f"item {len(progs)} produces {prev.shape} {prev.dtype} but item 0 produces "
                                 f"{last.shape} {last.dtype}; a list must produce one size (resize or crop to a "
                                 "fixed size)", argument="src")
            last = prev
            progs.append(program(stages))
        return progs, keep


def one_call_ready(colour: Optional[Sequence[Tuple[Any, str]]], items: Sequence[Any], device: str) -> bool:
    """Whether a batch of ``items`` runs as one call: every host step a colour op with Go's batch
    form (``colour``: (op, numerics) pairs), the Go switch on, the items host images of one dtype Go
    takes with those numerics (uint8; float32 with the tensor numerics) and the chain on the CPU."""
    from ._random_color import GO

    if not colour or not GO[0] or device not in ("auto", "cpu"):
        return False
    if not all(_channels_ok(x) for x in items):
        return False
    dts = {_dtype(x) for x in items}
    if len(dts) != 1 or None in dts:
        return False
    dt = dts.pop()
    return all(go_dtype(dt, numerics) for _, numerics in colour)


def _channels_ok(x: Any) -> bool:
    """Whether an item has 1 or 3 channels, what the Go colour kernels take (encoded items decode to
    RGB; PIL "RGB" and "L" images)."""
    from .._inputs import is_encoded_item, is_pil, is_tensor

    if is_encoded_item(x):
        return True
    if is_pil(x):
        return x.mode in ("RGB", "L")
    shape = getattr(x, "shape", ())
    if is_tensor(x):
        return len(shape) == 3 and shape[0] in (1, 3)
    return len(shape) == 2 or (len(shape) == 3 and shape[2] in (1, 3))


def _dtype(x: Any) -> Optional[np.dtype]:
    """An item's element type as the engine reads it (encoded and PIL images: uint8), or None for
    what a staged job does not take (device arrays, odd inputs)."""
    from .._inputs import is_encoded_item, is_pil, is_tensor

    if is_encoded_item(x) or is_pil(x):
        return np.dtype(np.uint8)
    if is_tensor(x):
        if x.device.type != "cpu":
            return None
        try:
            return np.dtype(str(x.dtype).replace("torch.", ""))
        except TypeError:  # a torch dtype NumPy has no name for (bfloat16): not a staged job's
            return None
    if type(x) is np.ndarray:
        return x.dtype
    return None
