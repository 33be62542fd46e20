"""``Loader``: batches made by a few threads (no worker processes, nothing pickled), each batch one
call of the transform on its encoded images, delivered in order with a bounded prefetch.

Threads and shutdown: each iteration (one epoch) starts its own threads and joins them when it ends,
when the consumer leaves it (``break``, an exception, Ctrl-C: the generator is closed as the for loop
drops it), and on ``Loader.close()``. The threads share only an ``_Epoch`` (one lock and its condition
variable guard all of its state, so no GIL is assumed); every wait has a timeout, after which a thread
re-checks whether the epoch was stopped or its owner (the iteration) was garbage-collected.
"""

from __future__ import annotations

import threading
import time
import warnings
import weakref
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _outpool
from .._validate import as_positive_int, as_seconds
from ._batch import BatchRunner, Reads
from ._order import EpochSampler, batches
from ._source import as_samples

WAIT_S = 0.25  # the longest a waiting thread goes without re-checking for a stop


class _Owner:
    """Held by one iteration's generator only; the threads hold a weak reference, so an iteration
    dropped without being closed (kept in a reference cycle) still stops its threads."""


class _Epoch:
    """The state one iteration shares with its threads, all under ``lock``: the next batch to start,
    how many the consumer has taken, the finished ones by number, and the stop flag."""

    def __init__(self, runner: BatchRunner, plan: List[Any], seed: int, epoch: int, prefetch: int,
                 owner: _Owner) -> None:
        self.runner, self.plan, self.seed, self.epoch, self.prefetch = runner, plan, seed, epoch, prefetch
        # entered as `with self.lock` (a C-level __enter__): an interrupt can land inside a Python-level
        # one (Condition.__enter__) after it took the lock, which then leaks (bpo-29988)
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.next = 0  # the next batch a thread takes
        self.taken = 0  # batches the consumer has taken
        self.done: Dict[int, Tuple[bool, Any]] = {}  # batch -> (ok, result or exception)
        self.stopped = False
        self.owner = weakref.ref(owner)
        self.threads: List[threading.Thread] = []

    def work(self) -> None:
        """A thread's loop: take the next batch while fewer than ``prefetch`` are ahead of the
        consumer, run it, file the result; return when all are taken or the epoch stops."""
        while True:
            with self.lock:
                while not self.stopped and self.next < len(self.plan) and self.next >= self.taken + self.prefetch:
                    self.cond.wait(WAIT_S)
                    if self.owner() is None:
                        self.stopped = True
                if self.stopped or self.next >= len(self.plan):
                    return
                b = self.next
                self.next += 1
            try:
                res: Tuple[bool, Any] = (True, self.runner.run(self.seed, self.epoch, self.plan[b]))
            except BaseException as e:  # handed to the consumer, raised there in order
                res = (False, e)
            with self.lock:
                if not self.stopped:
                    self.done[b] = res
                self.cond.notify_all()
            del res  # not kept alive while this thread waits or makes the next batch (pool blocks: _reserve)

    def take(self, b: int, timeout: Optional[float]) -> Tuple[bool, Any]:
        """Batch ``b``'s result, waiting for it (raises when the epoch was stopped by ``close`` or
        after ``timeout`` seconds)."""
        start = time.monotonic()
        with self.lock:
            while self.stopped or b not in self.done:
                if self.stopped:  # checked first: a batch that was running at close() files its result
                    raise RuntimeError("goprep.data.Loader: closed during the epoch")
                if not any(t.is_alive() for t in self.threads):  # cannot happen; never wait for nothing
                    raise RuntimeError(f"goprep.data.Loader: batch {b} was never made (its threads ended)")
                if timeout is not None and time.monotonic() - start > timeout:
                    raise TimeoutError(f"goprep.data.Loader: batch {b} not ready after {timeout} s")
                self.cond.wait(WAIT_S)
            res = self.done.pop(b)
            self.taken = b + 1
            self.cond.notify_all()
        return res

    def stop(self, join_timeout: float) -> None:
        """Stop taking batches and join the threads (a batch already running finishes first)."""
        with self.lock:
            self.stopped = True
            self.done.clear()
            self.cond.notify_all()
        deadline = time.monotonic() + join_timeout
        for t in self.threads:
            if t.ident is not None:  # started (an interrupt can land between append and start)
                t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in self.threads if t.is_alive()]
        if alive:
            warnings.warn(f"goprep.data.Loader: {', '.join(alive)} still running a batch after {join_timeout} s; "
                          "left as daemon threads", RuntimeWarning, stacklevel=3)


class Loader(Reads):
    """Training batches from encoded images, made by goprep's threads.

    ``source``: a list of paths or encoded bytes (with ``labels``, one int each; None: the sample
    indices), a directory laid out as torchvision's ImageFolder, or ``goprep.data.Samples``.
    ``transform``: called once per batch with the batch's list of paths/bytes, and
    ``generator=`` a fresh generator (``generator="numpy"`` or ``"torch"``) seeded from
    ``(seed, epoch, the batch's indices)`` when it has that parameter; returns the batch (e.g. float32
    ``(N, C, H, W)``).

    Iterating gives one epoch of ``(images, labels)``: torch tensors (int64 labels; pinned when CUDA
    is available, or as ``pin_memory`` says) or NumPy arrays with ``output="numpy"``. ``set_epoch(e)``
    before each epoch changes the shuffle and the draws, as DistributedSampler's. ``rank`` /
    ``world_size`` / ``shard`` shard each epoch for DDP (see ``goprep.data.shard_indices``);
    ``drop_last`` drops a last, shorter batch. ``threads`` threads make up to ``prefetch`` batches
    ahead of the consumer. ``on_error="skip"``: corrupt images are left out and counted
    (``skipped``, ``skipped_files``); ``"raise"`` (default): ``DecodeError`` naming the file.
    ``timeout``: seconds to wait for one batch before ``TimeoutError`` (None: no limit).
    ``close()`` (or leaving a ``with`` block) stops every running epoch and joins its threads."""

    def __init__(self, source: Any, transform: Any, *, batch_size: int, labels: Optional[Sequence[int]] = None,
                 shuffle: bool = True, seed: int = 0, rank: int = 0, world_size: int = 1, shard: str = "pad",
                 drop_last: bool = False, threads: int = 2, prefetch: int = 2, output: str = "torch",
                 pin_memory: Optional[bool] = None, generator: str = "numpy", on_error: str = "raise",
                 timeout: Optional[float] = None, join_timeout: float = 60.0) -> None:
        self.samples = as_samples(source, labels)
        self.batch_size = as_positive_int("batch_size", batch_size)
        self.threads = as_positive_int("threads", threads)
        self.prefetch = as_positive_int("prefetch", prefetch)
        self.timeout = None if timeout is None else as_seconds("timeout", timeout)
        self.join_timeout, self.drop_last = as_seconds("join_timeout", join_timeout), bool(drop_last)
        self.sampler = EpochSampler(len(self.samples), seed=seed, shuffle=shuffle, rank=rank, world_size=world_size,
                                    shard=shard)
        self._runner = BatchRunner(self.samples, transform, output=output, generator=generator, on_error=on_error,
                                   pin_memory=pin_memory)
        self._lock = threading.Lock()
        self._epochs: "weakref.WeakSet[_Epoch]" = weakref.WeakSet()
        self._closed = False
        self._room: Optional[_outpool.Reservation] = None  # result-pool room for the batches alive at once
        self._room_release: Optional[weakref.finalize] = None

    @property
    def epoch(self) -> int:
        return self.sampler.epoch

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration reads: its order and its random draws (as DistributedSampler)."""
        self.sampler.set_epoch(epoch)

    def plan(self) -> List[Any]:
        """This rank's batches of the current epoch: arrays of sample indices, in delivery order."""
        return batches(self.sampler.indices(), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return len(self.plan())

    def __iter__(self) -> Iterator[Tuple[Any, Any]]:
        with self._lock:
            if self._closed:
                raise RuntimeError("goprep.data.Loader: iterated after close()")
        return self._iterate(self.plan(), self.sampler.seed, self.sampler.epoch)

    def _iterate(self, plan: List[Any], seed: int, epoch: int) -> Iterator[Tuple[Any, Any]]:
        owner = _Owner()
        ep = _Epoch(self._runner, plan, seed, epoch, self.prefetch, owner)
        try:
            with self._lock:
                if self._closed:
                    raise RuntimeError("goprep.data.Loader: iterated after close()")
                self._epochs.add(ep)
            for k in range(min(self.threads, len(plan))):
                t = threading.Thread(target=ep.work, name=f"goprep-data-{k}", daemon=True)
                ep.threads.append(t)  # before start: stop() joins whatever started
                t.start()
            for b in range(len(plan)):
                ok, val = ep.take(b, self.timeout)
                if not ok:
                    raise val
                if val is not None:  # None: every image of the batch was skipped
                    if self._room is None:
                        self._reserve(val[0])
                    yield val
                    val = None  # the consumer's batch is its own to keep or drop while the next one waits
        finally:
            ep.stop(self.join_timeout)
            with self._lock:
                self._epochs.discard(ep)
            del owner

    def _reserve(self, images: Any) -> None:
        """Make room in goprep's result pool (``_outpool.reserve``) for the batches this loader keeps
        alive at once, sized by its first batch ``images``: ``prefetch`` made ahead or running, the two
        the consumer holds (a for loop keeps the last one until the next is handed over, and taking a
        batch lets a thread start another), and each running call's intermediates (at most one output's
        size: e.g. uint8 crops before a separate ``normalize``). Why: the pool's default 256 MiB holds
        one float32 batch of 256x3x224x224 (154 MB), so without it every batch was fresh pages the
        kernel zeroes (measured: +0.1 to +2.3 ms CPU per image, system time). Given back by ``close()``
        or when the loader is collected; kept across epochs, whose first batches would otherwise miss
        the pool again. The pool makes a block only when no free one fits, so the room is an upper
        bound: what is held is the most batches that were ever alive at once."""
        nbytes = getattr(images, "nbytes", None)
        if not isinstance(nbytes, int) or nbytes < _outpool.MIN_BYTES:
            return
        room = _outpool.reserve((self.prefetch + 2 + min(self.threads, self.prefetch)) * nbytes)
        with self._lock:
            if self._room is not None or self._closed:  # another iteration of this loader reserved first
                room.release()
                return
            self._room = room
            self._room_release = weakref.finalize(self, room.release)

    def close(self) -> None:
        """Stop every running epoch of this loader and join its threads; later iterations raise."""
        with self._lock:
            self._closed = True
            running = list(self._epochs)
            release, self._room_release = self._room_release, None
        for ep in running:
            ep.stop(self.join_timeout)
        if release is not None:
            release()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
