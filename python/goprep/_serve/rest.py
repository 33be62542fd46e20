"""KServe v2 REST (the Open Inference Protocol over HTTP/1.1) for ``goprep serve --http-port``, on
aiohttp's low-level server in the gRPC server's event loop, over the same service.Service: one
engine, worker pool, dynamic batcher, statistics, drain and limits for both protocols.

Endpoints (Triton's paths; ``[/versions/V]`` optional, V "1"):

- ``GET /v2/health/live``, ``/v2/health/ready``, ``/v2/models/M[/versions/V]/ready``: 200, or 400
  when not ready (KServe: a 4xx is "false"; Triton answers 400);
- ``GET /v2`` (server metadata), ``/v2/models/M[/versions/V]`` (model metadata),
  ``.../config`` (Triton's model configuration), ``/v2/models[/M[/versions/V]]/stats``
  (statistics), ``POST /v2/repository/index``: the gRPC messages as JSON (``message_json``);
- ``POST /v2/models/M[/versions/V]/infer``: JSON tensors, and Triton's binary tensor data extension
  (rest_codec.py reads and writes both).

Status codes: the service's canonical codes (service.status_of) as Triton's HTTP front end maps
them (``http_status``), every error a JSON ``{"error": message}``. Limits: the gRPC flags
(``Limits``): the body size (413 before the body is read when Content-Length says so), a read
timeout for headers and bodies (slow or stalled clients are cut off; each connection is one
coroutine, so none blocks another), a cap on open requests (503) and connections (closed at once),
and a graceful drain.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from . import logfilter, rest_codec
from .errors import BadRequest, OverLimit
from .triton import EXTENSIONS, repository_index
from .service import Service


# ServerMetadata over REST: the Triton extensions both front ends serve, and the binary tensor data
# extension, which is REST's alone.
REST_EXTENSIONS = (*EXTENSIONS, "binary_tensor_data")
JSON = "application/json"
LINGER = 2.0  # seconds an unread request body is still drained after an error reply, so the client reads it


def http_status(code: str, reason: str = "") -> int:
    """The HTTP status of a canonical code, as Triton's HTTP front end maps its errors: a full queue
    is Triton's UNAVAILABLE (503, retry later); a request body over the size limit 413; a request of
    more images than max_batch_size is Triton's INVALID_ARG (400), as is any other bad request."""
    if code == "RESOURCE_EXHAUSTED":
        return {"queue": 503, "concurrency": 503, "request_size": 413}.get(reason, 400)
    return {"OK": 200, "INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "DEADLINE_EXCEEDED": 408,
            "UNAVAILABLE": 503, "UNIMPLEMENTED": 501,
            "CANCELLED": 499}.get(code, 500)  # 499: the client closed the request (nobody reads the reply)


@dataclass(frozen=True)
class Limits:
    """The REST server's limits, each one of the gRPC server's flags (server.py)."""

    max_body: int  # bytes of a request body (--max-request-mb)
    timeout: float  # seconds for a request's headers, and for its body, to arrive (--body-timeout);
    # also how long an idle keep-alive connection stays open
    max_open: int  # requests being handled at once, every endpoint (--max-concurrent-rpcs)
    max_connections: int  # client connections open at once (--max-connections)


def message_json(msg: Any) -> Dict[str, Any]:
    """A protobuf message as Triton's REST JSON: field names as in the .proto, 64-bit integers as
    JSON numbers (perf_analyzer reads them as numbers), enums by name, every scalar and repeated
    field present (defaults included, as Triton writes them), sub-messages when set."""
    out: Dict[str, Any] = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        mt = f.message_type
        if mt is not None and mt.GetOptions().map_entry:
            vf = mt.fields_by_name["value"]
            out[f.name] = {k: _field_value(vf, x) for k, x in v.items()}
        elif _repeated(f):
            out[f.name] = [_field_value(f, x) for x in v]
        elif (mt is not None or f.containing_oneof is not None) and not msg.HasField(f.name):
            continue
        else:
            out[f.name] = _field_value(f, v)
    return out


def _repeated(f: Any) -> bool:
    """Whether field ``f`` is repeated: ``is_repeated`` where protobuf has it (6.x; ``label`` is
    deprecated there), ``label`` before it (5.x, which a fresh install can still resolve to)."""
    rep = getattr(f, "is_repeated", None)
    return bool(rep) if rep is not None else f.label == f.LABEL_REPEATED


def _field_value(f: Any, x: Any) -> Any:
    if f.message_type is not None:
        return message_json(x)
    if f.enum_type is not None:
        v = f.enum_type.values_by_number.get(x)
        return v.name if v is not None else x
    if isinstance(x, bytes):
        import base64

        return base64.b64encode(x).decode()
    return x


def _route(path: str) -> Tuple[str, str, str]:
    """(endpoint, model, version) of a request path; endpoint "" when no endpoint has that path."""
    if path in ("/v2", "/v2/"):
        return "server", "", ""
    if path in ("/v2/health/live", "/v2/health/ready"):
        return path.rsplit("/", 1)[1], "", ""
    if path == "/v2/repository/index":
        return "index", "", ""
    if path == "/v2/models/stats":
        return "stats", "", ""
    m = _MODEL.match(path)
    if m is None:
        return "", "", ""
    return m.group(3) or "metadata", m.group(1), m.group(2) or ""


_MODEL = re.compile(r"^/v2/models/([^/]+)(?:/versions/([^/]+))?(?:/(ready|config|stats|infer))?/?$")
_METHODS = {"server": "GET", "live": "GET", "ready": "GET", "metadata": "GET", "config": "GET", "stats": "GET",
            "index": "POST", "infer": "POST"}


def _protocol_log() -> logging.Logger:
    """The logger aiohttp's server reports connection-level errors to (rate-limited: OncePerSecond)."""
    return logfilter.install(logging.getLogger("goprep.serve.http"), logfilter.OncePerSecond)


class _Refuse(asyncio.Protocol):
    """A connection over --max-connections: closed as soon as it is accepted."""

    def connection_made(self, transport: Any) -> None:
        transport.close()


class RestServer:
    """The KServe v2 REST front end of ``service`` on HOST:PORT (module doc)."""

    def __init__(self, service: Service, limits: Limits) -> None:
        self.service, self.limits = service, limits
        self.engine = service.engine
        self.open = 0  # requests being handled
        self._waiting: set = set()  # connections whose first request's headers have not arrived yet
        self._runner: Any = None
        self._listener: Optional[asyncio.AbstractServer] = None

    async def start(self, host: str, port: int) -> int:
        """Listen on HOST:PORT (0: a free port); the port. OSError when it cannot listen."""
        from aiohttp import web

        lim = self.limits
        server = web.Server(self._handle, access_log=None, keepalive_timeout=lim.timeout, lingering_time=LINGER,
                            handler_cancellation=True, logger=_protocol_log())
        runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()

        loop = asyncio.get_running_loop()

        def protocol() -> asyncio.Protocol:
            # the connections aiohttp holds, each counted once asyncio has made it (the connections of
            # one accept round are made together: a burst may pass the cap by that round's)
            if len(server.connections) >= lim.max_connections:
                return _Refuse()
            h = server()
            self._waiting.add(h)
            loop.call_later(lim.timeout, self._first_request_due, h)
            return h

        try:
            self._listener = await loop.create_server(protocol, host, port, reuse_address=True)
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        return self._listener.sockets[0].getsockname()[1]

    def _first_request_due(self, handler: Any) -> None:
        """Close a connection whose first request's headers have not arrived within the timeout.
        (aiohttp's keep-alive timer bounds the headers of every later request on a connection, and
        in its recent versions the first's too.)"""
        if handler in self._waiting:
            self._waiting.discard(handler)
            if handler.transport is not None:
                handler.transport.close()

    async def stop(self) -> None:
        """Stop listening and close the connections (after the service's drain)."""
        if self._listener is not None:
            self._listener.close()
            await self._listener.wait_closed()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- requests -------------------------------------------------------------------------------------

    async def _handle(self, request: Any) -> Any:
        """Every request: the endpoint its path names, within the cap on open requests (health
        probes, which cost nothing, answer beyond it: a loaded server is not a dead one); an error
        as JSON, never a traceback."""
        self._waiting.discard(request.protocol)
        endpoint, model, version = _route(request.path)
        if not endpoint:
            return _error(404, f"no endpoint {request.path!r}: see the KServe v2 REST API (GET /v2, "
                               f"POST /v2/models/{self.engine.name}/infer, ...)")
        if request.method != _METHODS[endpoint] and not (request.method == "HEAD" and _METHODS[endpoint] == "GET"):
            r = _error(405, f"{request.path} takes {_METHODS[endpoint]}, not {request.method}")
            r.headers["Allow"] = _METHODS[endpoint]
            return r
        if self.open >= self.limits.max_open and endpoint not in ("live", "ready"):  # probes answer at the cap
            met = self.service.metrics
            if met is not None:
                met.rejected.labels(reason="concurrency").inc()
            r = _error(503, f"the server is at its limit of {self.limits.max_open} requests open at once "
                            f"(--max-concurrent-rpcs); retry later")
            r.headers["Retry-After"] = "1"
            r.force_close()  # its body, if any, is not read
            return r
        self.open += 1
        try:
            if endpoint == "infer":
                return await self._infer(request, model, version)
            return await self._describe(request, endpoint, model, version)
        except BadRequest as e:
            return _error(400, str(e))
        except Exception as e:  # noqa: BLE001 - a bug here must not become a traceback for the client
            self.service.log_failure(e, f"REST {request.method} {request.path[:200]}")
            return _error(500, "internal error (see the server's log)")
        finally:
            self.open -= 1

    async def _describe(self, request: Any, endpoint: str, model: str, version: str) -> Any:
        """The health, metadata, config, statistics and repository endpoints."""
        from aiohttp import web

        svc = self.service
        ready = not svc.state.draining
        if endpoint == "live":
            return web.Response(status=200)
        if endpoint == "ready":
            if model and not svc.serves(model, version):
                return _error(404, svc.not_found())
            return web.Response(status=200 if ready else 400)
        if endpoint == "server":
            return _json({"name": "goprep", "version": svc.version, "extensions": list(REST_EXTENSIONS)})
        if endpoint == "index":
            body = await _small_body(request, self.limits.timeout)
            ready_only = False
            if body.strip():
                doc = rest_codec.json_object(body, "the repository index request")
                ready_only = doc.get("ready", False)
                if not isinstance(ready_only, bool):
                    raise BadRequest(f"'ready' must be true or false, got {ready_only!r}")
            return _json([message_json(m) for m in repository_index(self.engine.name, ready, ready_only).models])
        if model and not svc.serves(model, version):
            return _error(404, svc.not_found())
        if endpoint == "metadata":
            return _json(message_json(self.engine.metadata()))
        if endpoint == "config":
            return _json(message_json(svc.config().config))
        return _json({"model_stats": [message_json(svc.stats.message(self.engine.name))]})  # stats

    async def _infer(self, request: Any, model: str, version: str) -> Any:
        """One inference request through service.Service.infer: the body read within the timeout and
        the size limit, decoded (rest_codec), run, its reply encoded as the request asked."""
        from aiohttp import web

        parsed: list = []

        async def read() -> Any:
            coding = request.headers.get("Content-Encoding", "identity").strip().lower()
            if coding not in CODINGS:
                raise BadRequest(f"Content-Encoding {coding[:40]!r} is not taken: send {', '.join(CODINGS)}")
            size = request.content_length
            if size is not None and size > self.limits.max_body:
                raise _too_large(size, self.limits.max_body)
            body = await _read_body(request, self.limits.max_body)
            req = await _off_loop(rest_codec.decode_request, len(body), body,
                                  request.headers.get(rest_codec.HEADER_LENGTH), model, version)
            parsed.append(req)
            return req

        out = await self.service.infer(read)
        if out.code != "OK":
            r = _error(http_status(out.code, out.reason), out.message)
            if out.code in ("RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "UNAVAILABLE") and not parsed:
                r.force_close()  # the body was not read: this connection cannot carry another request
            if out.code == "RESOURCE_EXHAUSTED" and out.reason in ("queue", "concurrency") or out.code == "UNAVAILABLE":
                r.headers["Retry-After"] = "1"
            return r
        rep = parsed[0]
        size = sum(len(b) for b in out.reply.raw_output_contents)
        body, header_length = await _off_loop(rest_codec.encode_reply, size, out.reply, rep)
        if header_length is None:
            return web.Response(body=body, content_type=JSON)
        r = web.Response(body=body, content_type="application/octet-stream")
        r.headers[rest_codec.HEADER_LENGTH] = str(header_length)
        return r


OFF_LOOP = 256 << 10  # bytes of JSON or tensors above which decoding or encoding runs off the event loop


async def _off_loop(fn: Callable[..., Any], size: int, *args: Any) -> Any:
    """``fn(*args)``: inline when ``size`` bytes are cheap to handle, else on a thread, so a large
    JSON body does not stall the event loop (and with it every other request, gRPC's too)."""
    if size < OFF_LOOP:
        return fn(*args)
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


def _too_large(size: int, limit: int) -> OverLimit:
    return OverLimit(f"the request body of {size} bytes is over the server's limit of {limit} bytes "
                     f"(--max-request-mb {limit >> 20})", "request_size")


CODINGS = ("identity", "gzip", "deflate")  # request Content-Encodings taken (aiohttp inflates them)


async def _read_body(request: Any, limit: int) -> bytes:
    """The request body (decompressed when the client sent Content-Encoding gzip or deflate), at
    most ``limit`` bytes: OverLimit as soon as more arrive; BadRequest for a body that cannot be
    read as sent (a corrupt compressed stream, a malformed chunk)."""
    from aiohttp.web import RequestPayloadError

    chunks, n = [], 0
    while True:
        try:
            chunk = await request.content.readany()
        except RequestPayloadError as e:
            first = (str(e).strip().splitlines() or [""])[-1].strip()
            raise BadRequest(f"the request body cannot be read as sent: {first[:200]}") from None
        if not chunk:
            return b"".join(chunks)
        n += len(chunk)
        if n > limit:
            raise _too_large(n, limit)
        chunks.append(chunk)


SMALL_BODY = 64 << 10  # the largest body of a request that is not an inference


async def _small_body(request: Any, timeout: float) -> bytes:
    """A small request body (the repository index's), read within ``timeout``; BadRequest when it
    is larger or late."""
    try:
        return await asyncio.wait_for(_read_body(request, SMALL_BODY), timeout)
    except OverLimit:
        raise BadRequest(f"this endpoint takes a JSON body of at most {SMALL_BODY} bytes") from None
    except asyncio.TimeoutError:
        raise BadRequest(f"the request's body did not arrive within {timeout:g} s") from None


def _json(doc: Any, status: int = 200) -> Any:
    from aiohttp import web

    return web.Response(status=status, body=json.dumps(doc, separators=(",", ":")).encode(), content_type=JSON)


def _error(status: int, message: str) -> Any:
    """An error reply: ``{"error": message}``, as Triton writes it."""
    return _json({"error": message}, status)
