"""The server's request errors, each mapped to one status code (service.status_of; gRPC's code, and
over REST the HTTP status rest.py gives that code): what a client did wrong (``BadRequest``:
INVALID_ARGUMENT; ``TooLarge``, an image over the pixel limit, too), a model this server does not
serve (``NotFound``: NOT_FOUND) or asked for beyond a configured limit (``OverLimit``:
RESOURCE_EXHAUSTED). Their messages go to the client, so they name the request's fields and the
limits, never server paths or library internals; anything else raised while serving is logged on the
server and answered with INTERNAL and a generic message."""

from __future__ import annotations


class BadRequest(ValueError):
    """The request is malformed: INVALID_ARGUMENT."""


class OverLimit(ValueError):
    """The request exceeds a configured limit (batch size, queue): RESOURCE_EXHAUSTED."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason  # the label of goprep_serve_rejected_total


class TooLarge(OverLimit):
    """An image larger than the pixel limit, seen from its header or shape before decoding: a request
    this server cannot take as sent, INVALID_ARGUMENT (issue 28), counted as a rejection."""


class NotFound(ValueError):
    """The request names a model (or version) this server does not serve: NOT_FOUND."""


def detached(e: BaseException) -> BaseException:
    """``e``, to be kept and answered later (a batch's result for one request), without a reference to
    the frame that caught it: a request error (the classes above, answered by its message alone, never
    logged) keeps no traceback and no implicit chain; any other keeps its traceback from the frame
    below the catching one (what the server's log shows). Why: kept in a list that the catching frame
    also holds, its traceback would close a reference cycle through that frame's locals, holding every
    request, tensor and reply of the batch until the garbage collector's next full pass, hundreds of
    MB under load (docs/perf/2026-12-06-serve-rss.md)."""
    if isinstance(e, (BadRequest, OverLimit, NotFound)):
        e.__context__ = None
        return e.with_traceback(None)
    tb = e.__traceback__
    return e.with_traceback(tb.tb_next if tb is not None else None)
