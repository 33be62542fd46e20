"""What both front ends of ``goprep serve`` share (gRPC: oip.Servicer; KServe v2 REST: rest.py): one
``Service`` per server holds the engine, the worker pool, the dynamic batcher, the statistics, the
drain state and the request metrics, and runs every inference request through the same lifecycle
(``Service.infer``), so a limit, a status or a statistic means the same over either protocol.

A request's lifecycle: refused at once while draining; its body read within ``body_timeout``
(the protocol's reader); refused if the queue is full; run (batched, or alone on a worker thread);
counted in the statistics (success, or fail once it named this model) and the metrics. Its result is
an ``Outcome`` whose ``code`` is a canonical status name (gRPC's ``StatusCode`` names, which are
google.rpc's): each front end maps it to its wire (oip.py: the gRPC status itself; rest.py: an HTTP
status). ``status_of`` is the one mapping from the server's exceptions to those codes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional, Sequence, Tuple

from .batching import Batcher
from .errors import BadRequest, NotFound, OverLimit, TooLarge, detached
from .triton import Stats

log = logging.getLogger("goprep.serve")

TRACEBACKS = 5  # failed requests logged with their traceback; later ones in one line, at most one a second
INTERNAL_MESSAGE = "internal error while running the model (see the server's log)"
DRAINING_MESSAGE = "the server is shutting down"


@dataclass
class Outcome:
    """One request's answer: ``code`` "OK" with ``reply`` (a ModelInferResponse), or an error code
    (canonical name), the message for the client and the limit's label (goprep_serve_rejected_total)."""

    code: str = "OK"
    message: str = ""
    reason: str = ""
    reply: Any = None


def status_of(e: BaseException) -> Tuple[str, str]:
    """The canonical code and rejection reason of a request error raised while reading or running a
    request (errors.py); ("INTERNAL", "") for anything else (the caller logs it)."""
    if isinstance(e, TooLarge):  # an image over the pixel limit: a request this server cannot take as sent
        return "INVALID_ARGUMENT", e.reason
    if isinstance(e, OverLimit):
        return "RESOURCE_EXHAUSTED", e.reason
    if isinstance(e, BadRequest):
        return "INVALID_ARGUMENT", ""
    if isinstance(e, NotFound):
        return "NOT_FOUND", ""
    if isinstance(e, asyncio.TimeoutError):
        return "DEADLINE_EXCEEDED", "body_timeout"
    return "INTERNAL", ""


async def _caught(read: Callable[[], Awaitable[Any]]) -> Any:
    """``read()``'s request, or the request error it raised (BadRequest, OverLimit, a lost
    connection) as the value, without its traceback. Raised out of asyncio.wait_for's task instead,
    the error would hold that task through wait_for's frame in its traceback, and the reader's frames
    (the request, its connection, the body read so far) with it: a reference cycle per bad request,
    freed only by the garbage collector (aiohttp also keeps a lost connection's error in the
    request's stream)."""
    try:
        return await read()
    except (BadRequest, OverLimit) as e:
        return detached(e)
    except ConnectionError as e:
        e.__context__ = None
        return e.with_traceback(None)


def not_found_message(name: str) -> str:
    """NOT_FOUND's message for another model's name or version (both front ends)."""
    return f"this server serves model {name!r} (version 1)"


def workers_limit_message(max_queue: int) -> str:
    """RESOURCE_EXHAUSTED's message when every worker and queue slot is taken (no batching)."""
    return f"the server is at its limit of {max_queue} requests waiting for a worker (--max-queue); retry later"


class State:
    """What the front ends and the shutdown share: draining, and the requests being worked on."""

    def __init__(self) -> None:
        self.draining = False
        self.working = 0  # inference requests whose body arrived and that have not been answered
        self.idle = asyncio.Event()
        self.idle.set()


class Service:
    """The served model behind every front end (module doc). ``delay_us``: dynamic batching's
    max_queue_delay_microseconds (None: off, each request its own execution); ``preferred``: its
    preferred batch sizes."""

    def __init__(self, engine: Any, workers: int, metrics: Any = None, delay_us: Optional[int] = None,
                 preferred: Sequence[int] = ()) -> None:
        import goprep

        self.engine, self.metrics = engine, metrics
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="goprep-serve")
        self.workers = workers
        self.state = State()
        self.stats = Stats()
        self.batcher = None if delay_us is None else Batcher(
            engine.run_batch, self.pool, workers, engine.limits.max_batch, delay_us, engine.limits.max_queue,
            self.stats.execution, tuple(preferred), metrics.batch_queue if metrics is not None else None)
        self.version = goprep.__version__
        self._failures, self._last_log = 0, 0.0

    # -- what the metadata methods of both protocols answer -------------------------------------------

    def serves(self, name: str, version: str) -> bool:
        """Whether ``name`` and ``version`` ("" or "1") name the served model."""
        return name == self.engine.name and version in ("", "1")

    def not_found(self) -> str:
        """NOT_FOUND's message for another model's name or version."""
        return not_found_message(self.engine.name)

    def config(self) -> Any:
        """The ModelConfigResponse (with dynamic_batching when the batcher is on)."""
        return self.engine.config(self.batcher.config() if self.batcher is not None else None)

    # -- one inference request ----------------------------------------------------------------------

    async def infer(self, read: Callable[[], Awaitable[Any]]) -> Outcome:
        """Run one inference request whose call has arrived: ``read()`` returns its ModelInferRequest
        (or an object with the same fields) or raises BadRequest for a malformed one; it is given
        ``body_timeout`` seconds. Never raises but CancelledError (the client went away: a request of
        this model then counts as failed)."""
        t0 = time.perf_counter()
        met, st, lim = self.metrics, self.state, self.engine.limits
        if met is not None:
            met.in_flight.inc()
        out = Outcome()
        counted = False
        arrived, mine, answered = 0, False, False  # for the statistics: requests of this model, OK or failed
        try:
            if st.draining:
                out = Outcome("UNAVAILABLE", DRAINING_MESSAGE)
                return out
            try:
                req = await asyncio.wait_for(_caught(read), lim.body_timeout)
            except asyncio.TimeoutError:
                req = None
            if req is None or isinstance(req, (BadRequest, OverLimit)):
                code, reason = status_of(req) if req is not None else ("DEADLINE_EXCEEDED", "body_timeout")
                msg = str(req) if req is not None else f"the request's body did not arrive within {lim.body_timeout:g} s"
                out = Outcome(code, msg, reason)
                return out
            if isinstance(req, ConnectionError):  # the client went away while its request arrived (REST: mid-body)
                out = Outcome("CANCELLED", "the client closed its connection before its request arrived")
                return out
            arrived = time.perf_counter_ns()
            mine = self.serves(req.model_name, req.model_version)
            if st.draining:
                out = Outcome("UNAVAILABLE", DRAINING_MESSAGE)
                return out
            b = self.batcher
            if b.full() if b is not None else st.working >= self.workers + lim.max_queue:
                out = Outcome("RESOURCE_EXHAUSTED", b.limit_message() if b is not None else workers_limit_message(
                    lim.max_queue), "queue")
                return out
            counted = True
            st.working += 1
            st.idle.clear()
            try:
                if b is not None:
                    rep, timing = await b.submit(req, self.engine.items(req), arrived)
                else:
                    rep, timing = await asyncio.get_running_loop().run_in_executor(self.pool, self.engine.run, req)
                self.stats.success(arrived, time.perf_counter_ns(), timing, executed=b is None)
                answered = True
                out = Outcome(reply=rep)
            except Exception as e:  # noqa: BLE001 - classified; an unknown one is logged, the client gets INTERNAL
                code, reason = status_of(e)
                if code == "INTERNAL":
                    self.log_failure(e, f"ModelInfer (request id {getattr(req, 'id', '')!r})")
                    out = Outcome(code, INTERNAL_MESSAGE)
                else:
                    out = Outcome(code, str(e), reason)
            return out
        finally:
            if mine and not answered:  # an error, or the client went away
                self.stats.fail(arrived, time.perf_counter_ns())
            if counted:
                st.working -= 1
                if st.working == 0:
                    st.idle.set()
            if met is not None:
                met.in_flight.dec()
                met.requests.labels(code=out.code).inc()
                if out.reason:
                    met.rejected.labels(reason=out.reason).inc()
                if out.code == "OK":
                    met.stages["total"].observe(time.perf_counter() - t0)

    def log_failure(self, e: BaseException, what: str) -> None:
        """Log a failed request (``what``: which): the first TRACEBACKS with their traceback, then at
        most one line a second (with how many were not logged), so failing requests cannot flood the
        server's log, whichever protocol they came by."""
        self._failures += 1
        if self._failures <= TRACEBACKS:
            log.error("%s failed", what, exc_info=e)
            return
        now = time.monotonic()
        if now - self._last_log >= 1.0:
            first = (str(e).strip().splitlines() or [""])[0][:300]
            log.error("%s failed: %s: %s (%d failures so far, tracebacks of the first %d only)",
                      what, type(e).__name__, first, self._failures, TRACEBACKS)
            self._last_log = now

    # -- shutdown -------------------------------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Refuse new requests (UNAVAILABLE, not ready) and wait up to ``grace`` seconds for the ones
        being worked on to finish."""
        self.state.draining = True
        if self.batcher is not None:
            self.batcher.flush()  # what waits runs now
        try:
            await asyncio.wait_for(self.state.idle.wait(), grace)
        except asyncio.TimeoutError:
            log.warning("%d requests still running after the %g s grace period", self.state.working, grace)

    async def close(self) -> None:
        """Stop the batcher (after drain and the servers' stop) and the worker pool."""
        if self.batcher is not None:
            await self.batcher.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
