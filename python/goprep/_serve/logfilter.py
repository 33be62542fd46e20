"""Log filters of the server: what a client can make a library log (with a traceback, at ERROR) is
rate-limited and rewritten as one line, so that no client floods the server's log, and a client's
doing never reads as a server fault."""

from __future__ import annotations

import logging
import time


class OncePerSecond(logging.Filter):
    """Lets through at most one record a second, without its traceback, counting those dropped, as
    ``prefix: message: exception (N like it not logged)`` at ``level``.  Used for aiohttp's report of a
    malformed HTTP message (a client's fault, answered 400 by aiohttp)."""

    def __init__(self, prefix: str = "REST", level: int = logging.WARNING) -> None:
        super().__init__()
        self.prefix, self.level = prefix, level
        self.last, self.dropped = 0.0, 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if now - self.last < 1.0:
            self.dropped += 1
            return False
        exc = record.exc_info[1] if record.exc_info else None
        why = " ".join(str(exc).split())[:200] if exc is not None else ""
        record.msg = f"{self.prefix}: {record.getMessage()}{': ' + why if why else ''} ({self.dropped} like it not logged)"
        record.args, record.exc_info, record.exc_text = (), None, None
        record.levelno, record.levelname = self.level, logging.getLevelName(self.level)
        self.last, self.dropped = now, 0
        return True


# grpc.aio logs this, with a traceback at ERROR, when the core refuses to send a handler's reply
# because the call has already ended: the client cancelled it or its deadline passed between the
# handler's return and the send (a race no handler can close).  The reply had nowhere to go.
REPLY_NOT_SENT = "ExecuteBatchError raised in core by servicer method"


class ReplyNotSent(OncePerSecond):
    """On grpc's ``grpc._cython.cygrpc`` logger: its REPLY_NOT_SENT records become one INFO line a
    second (the client is gone, not a server fault; soak tests count server tracebacks); every other
    record passes unchanged."""

    def __init__(self) -> None:
        super().__init__("gRPC: reply not sent, the call had ended (client cancelled or deadline)", logging.INFO)

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith(REPLY_NOT_SENT):
            return True
        return super().filter(record)


def install(logger: logging.Logger, kind: type) -> logging.Logger:
    """Add one ``kind`` filter to ``logger`` (idempotent); the logger."""
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())
    return logger
