"""Dynamic batching for ``goprep serve`` (``--max-queue-delay``), as Triton's dynamic batcher does it:
requests that arrive within the delay of the oldest waiting one run as one execution
(oip.Engine.run_batch): one goprep call for all their files (decoded in parallel, GIL released), one
model call, and each reply takes its own rows.

``Batcher`` lives on the server's event loop. A request joins the queue (at most ``max_queue``
waiting: more get RESOURCE_EXHAUSTED); when a worker thread is free, the batcher takes the waiting
requests in arrival order, up to ``max_batch`` images, as soon as they fill the target (the largest
preferred batch size, else ``max_batch``) or the oldest has waited ``delay`` - whichever comes first.
A request never splits across batches, so a batch may close below the target when the next request
does not fit. A client that cancels while queued leaves the queue; one that cancels while its batch
runs gets nothing and the others their replies.
"""

from __future__ import annotations

import asyncio
import collections
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import BadRequest, OverLimit, detached

_DELAY = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*(us|µs|ms|s)?\s*$")
MAX_DELAY_US = 60_000_000  # 60 s: longer would only hold requests back


def parse_delay(text: str) -> int:
    """``--max-queue-delay``'s value in microseconds: a number with a unit (500us, 2ms, 0.01s) or a
    bare number of microseconds (Triton's ``max_queue_delay_microseconds``); ValueError saying the
    form otherwise."""
    m = _DELAY.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a delay: give microseconds (500, 500us), milliseconds (2ms) or seconds (0.01s)")
    scale = {"ms": 1e3, "s": 1e6}.get(m.group(2) or "us", 1.0)
    us = round(float(m.group(1)) * scale)
    if us > MAX_DELAY_US:
        raise ValueError(f"{text} is over the largest delay, {MAX_DELAY_US // 1_000_000} s")
    return us


def fused_files(prep: Any, groups: List[List[bytes]], max_pixels: int) -> Tuple[Any, List[int], Dict[int, Exception]]:
    """The files of several requests (``groups``, in order) through a fused implementation:
    (the tensors of the groups that succeeded, concatenated in order; those groups' positions; each
    failed group's error by position).

    All the files go in as one call. A bad file fails only its own group: the call's error names
    the file (``src[i]``: decode.decode_error finds its group), so that group is dropped and the call
    is repeated once without it. One bad request thus costs the others one extra call. If the repeat
    fails too, or an error names no file, each remaining group runs alone (a second bad request costs
    the others at most one call each), so no request ever fails for another's file."""
    live = list(range(len(groups)))
    failed: Dict[int, Exception] = {}
    for _ in range(2):
        starts, at = [], 0
        for g in live:
            starts.append(at)
            at += len(groups[g])
        try:
            return prep.files([f for g in live for f in groups[g]], max_pixels, starts), live, failed
        except (BadRequest, OverLimit) as e:
            j = getattr(e, "request", None)
            if len(live) == 1:
                failed[live[0]] = detached(e)
                return None, [], failed
            if j is None:
                break
            failed[live.pop(j)] = detached(e)
    parts, ok = [], []
    for g in live:  # one call each
        try:
            parts.append(prep.files(groups[g], max_pixels))
            ok.append(g)
        except (BadRequest, OverLimit) as e:
            failed[g] = detached(e)
    return (np.concatenate(parts) if parts else None), ok, failed


def batching_config(preferred: Sequence[int], delay_us: int) -> Dict[str, Any]:
    """ModelConfig's dynamic_batching settings (triton.model_config) of a batcher (both front ends)."""
    return {"preferred_batch_size": list(preferred), "max_queue_delay_microseconds": delay_us}


def queue_limit_message(max_queue: int) -> str:
    """RESOURCE_EXHAUSTED's message when the batching queue is full (both front ends)."""
    return f"the server is at its limit of {max_queue} requests waiting to be batched (--max-queue); retry later"


@dataclass
class _Entry:
    """A request waiting in the queue: its images, arrival (perf_counter_ns) and the future its
    handler awaits; ``taken`` once a batch holds it."""

    req: Any
    items: int
    arrived: int
    fut: "asyncio.Future[Any]"
    taken: bool = False


@dataclass
class Batcher:
    """The dynamic batcher of one model (module doc). ``run_batch(reqs) -> (results, Timing)`` runs
    one execution on ``pool`` (oip.Engine.run_batch); ``executed(timing)`` records it once in the
    statistics; at most ``workers`` executions run at once."""

    run_batch: Callable[[Sequence[Any]], Tuple[List[Any], Any]]
    pool: Any
    workers: int
    max_batch: int
    delay_us: int
    max_queue: int
    executed: Callable[[Any], None]
    preferred: Sequence[int] = ()
    gauge: Any = None  # metrics.Metrics.batch_queue: the requests waiting
    queue: Deque[_Entry] = field(default_factory=collections.deque)
    waiting_items: int = 0
    flushing: bool = False  # draining: run what waits without waiting for the delay
    _task: Optional["asyncio.Task[None]"] = None
    _wake: Optional[asyncio.Event] = None
    _free: Optional[asyncio.Semaphore] = None
    _running: set = field(default_factory=set)

    @property
    def target(self) -> int:
        """Images at which a batch closes without waiting for the delay."""
        fit = [p for p in self.preferred if p <= self.max_batch]
        return max(fit) if fit else self.max_batch

    def config(self) -> Dict[str, Any]:
        """ModelConfig's dynamic_batching (triton.model_config)."""
        return batching_config(self.preferred, self.delay_us)

    def full(self) -> bool:
        """Whether the queue holds its limit of waiting requests."""
        return len(self.queue) >= self.max_queue

    def limit_message(self) -> str:
        """RESOURCE_EXHAUSTED's message when the queue is full: the limit and its flag."""
        return queue_limit_message(self.max_queue)

    async def submit(self, req: Any, items: int, arrived: int) -> Any:
        """Queue one request of ``items`` images that arrived at ``arrived``; its (reply, Timing), or
        its exception. Cancelled while queued, it leaves the queue (the batch forms without it)."""
        loop = asyncio.get_running_loop()
        if self._task is None:
            self._wake, self._free = asyncio.Event(), asyncio.Semaphore(self.workers)
            self._task = loop.create_task(self._loop())
        e = _Entry(req, items, arrived, loop.create_future())
        self.queue.append(e)
        self.waiting_items += items
        self._counted()
        self._wake.set()  # type: ignore[union-attr]
        try:
            return await e.fut
        finally:
            if not e.taken:  # cancelled while queued
                self.queue.remove(e)
                self.waiting_items -= items
                self._counted()
            # The entry's future holds the error being raised, whose traceback holds this frame: a
            # reference cycle (with the request) unless the frame lets go of the entry.
            del e

    def flush(self) -> None:
        """Run what waits at once from now on (shutdown's drain)."""
        self.flushing = True
        if self._wake is not None:
            self._wake.set()

    async def close(self) -> None:
        """Stop forming batches (after the drain; a batch already running still answers)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None  # its CancelledError's traceback holds the loop's frame, and so this batcher

    async def _loop(self) -> None:
        """Form a batch whenever a worker is free, and start it."""
        wake, free = self._wake, self._free
        assert wake is not None and free is not None
        while True:
            await free.acquire()  # a worker is free: form its batch
            try:
                batch = await self._form(wake)
            except BaseException:
                free.release()
                raise
            t = asyncio.get_running_loop().create_task(self._execute(batch))
            # The entries are their execution's now: this frame, parked at the next acquire, must not
            # keep the last batch (its requests and errors) alive, nor tie it to this task at close.
            del batch
            self._running.add(t)  # a reference, so the task is not collected while it runs
            t.add_done_callback(self._running.discard)

    async def _form(self, wake: asyncio.Event) -> List[_Entry]:
        """The next batch: wait for a request, then until the target is met or the oldest waiting
        request's delay has passed; take requests in arrival order up to max_batch images."""
        while True:
            while not self.queue:
                wake.clear()
                await wake.wait()
            while self.queue and self.waiting_items < self.target and not self.flushing:
                left = (self.queue[0].arrived + self.delay_us * 1000 - time.perf_counter_ns()) / 1e9
                if left <= 0:
                    break
                wake.clear()
                try:
                    await asyncio.wait_for(wake.wait(), left)
                except asyncio.TimeoutError:
                    break
            if self.queue:  # (empty: every waiting request was cancelled; wait again)
                break
        batch: List[_Entry] = []
        n = 0
        while self.queue and (not batch or n + self.queue[0].items <= self.max_batch):
            e = self.queue.popleft()
            e.taken = True
            self.waiting_items -= e.items
            n += e.items
            batch.append(e)
        self._counted()
        return batch

    def _counted(self) -> None:
        if self.gauge is not None:
            self.gauge.set(len(self.queue))

    async def _execute(self, batch: List[_Entry]) -> None:
        """Run one batch on a worker thread; hand each request its result (unless its client left)."""
        try:
            reqs = [e.req for e in batch]
            try:
                results, timing = await asyncio.get_running_loop().run_in_executor(self.pool, self.run_batch, reqs)
            except Exception as exc:  # noqa: BLE001 - run_batch answers per request; this is the pool itself
                results, timing = [exc] * len(batch), None
            if timing is not None and timing.items:
                self.executed(timing)
            for e, r in zip(batch, results):
                if e.fut.done():  # the client cancelled while its batch ran
                    continue
                if isinstance(r, BaseException):
                    e.fut.set_exception(r)
                else:
                    e.fut.set_result((r, timing))
        finally:
            self._free.release()  # type: ignore[union-attr]
