"""The soak's KServe v2 REST side (soak.py): the client (aiohttp, binary tensor data or JSON bodies)
and the cases only REST has: JSON tensors (base64 files, numbers), malformed JSON, a wrong
Inference-Header-Content-Length or binary_data_size, a client that closes its socket half-way
through the body, and slowloris connections that stall their headers or their body (kept open
beside the workers all the time: they must be cut off after ``--body-timeout``, and not slow the
others).

HTTP statuses are read back as the canonical codes rest.http_status maps from, so one case's
expectation serves both protocols (``Case.http_codes`` where Triton's REST maps differently).
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import protocol, rest_codec
from .loadgen import MODEL
from .soak import BODY_TIMEOUT, CANCELLED, OK, Case, request_of

# rest.http_status, read backwards: a status that is not here is a wrong reply by name (HTTP_500 ...)
CODES = {200: OK, 400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 408: "DEADLINE_EXCEEDED", 413: "RESOURCE_EXHAUSTED",
         500: "INTERNAL", 503: "UNAVAILABLE"}
STALLERS = 4  # slowloris connections open at any time
CLOSED = "CLOSED"  # a stalled connection the server closed without a reply


def _json_case(kind: str, weight: int, doc: Dict[str, Any], codes: Tuple[str, ...], words: str = "",
               headers: Optional[Dict[str, str]] = None, body: Optional[bytes] = None) -> Case:
    """A REST-only case whose body is ``doc`` as JSON (or ``body`` as given)."""
    raw = body if body is not None else json.dumps(doc).encode()
    return Case(kind, weight, None, codes, words, body=raw, protocols=("http",), headers=headers or {})


def http_cases(jpeg: bytes, frame: np.ndarray) -> List[Case]:
    """REST's own cases; ``jpeg`` a small valid file, ``frame`` its (H, W, 3) image."""
    bad = ("INVALID_ARGUMENT",)
    b64 = {"inputs": [{"name": protocol.IMAGE, "datatype": "BYTES", "shape": [1],
                       "parameters": {"content_type": "base64"}, "data": [base64.b64encode(jpeg).decode()]}]}
    small = np.ascontiguousarray(frame[:24, :32])
    nums = {"inputs": [{"name": protocol.FRAME, "datatype": "UINT8", "shape": list(small.shape),
                        "data": small.ravel().tolist()}]}
    json_jpeg = _json_case("json_jpeg_base64", 4, b64, (OK,))
    json_jpeg.inputs = (protocol.IMAGE, "BYTES", [1], protocol.pack_bytes([jpeg]))  # for its in-process reference
    json_frame = _json_case("json_frame_24x32", 2, nums, (OK,))
    json_frame.inputs = (protocol.FRAME, "UINT8", list(small.shape), small.tobytes())
    head = json.dumps({"inputs": [{"name": protocol.IMAGE, "datatype": "BYTES", "shape": [1],
                                   "parameters": {"binary_data_size": 999}}]}).encode()
    tail = protocol.pack_bytes([jpeg])
    return [
        json_jpeg, json_frame,
        _json_case("malformed_json", 2, {}, bad, "JSON", body=b'{"inputs": [{"name": "IMAGE", "datatype": '),
        _json_case("json_shape_string", 2, {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": "1",
                                                        "data": ["x"]}]}, bad, "inputs[0].shape"),
        _json_case("json_not_object", 1, {}, bad, "object", body=b"[1, 2, 3]"),
        _json_case("json_frame_over_pixels", 1, {"inputs": [{"name": protocol.FRAME, "datatype": "UINT8",
                                                             "shape": [5000, 5000, 3], "data": [0]}]}, bad, "inputs[0].data"),
        _json_case("header_length_too_big", 2, {}, bad, rest_codec.HEADER_LENGTH, body=head + tail,
                   headers={rest_codec.HEADER_LENGTH: str(len(head) + len(tail) + 50)}),
        _json_case("binary_size_wrong", 2, {}, bad, "binary_data_size", body=head + tail,
                   headers={rest_codec.HEADER_LENGTH: str(len(head))}),
        Case("close_mid_body", 3, (protocol.IMAGE, "BYTES", [1], tail * 40), (CANCELLED,), protocols=("http",),
             mode="close_mid_body"),
    ]


class HttpClient:
    """KServe v2 REST over aiohttp: binary tensor data for the shared cases, each REST case's own
    body; cancellation closes the connection mid-request (aiohttp drops a connection whose reply
    was not read)."""

    name = "http"

    def __init__(self, target: str, timeout: float = 60.0) -> None:
        self.target, self.timeout = target, timeout
        self.host, port = target.rsplit(":", 1)
        self.host = self.host.strip("[]")
        self.port = int(port)
        self.session: Any = None

    async def open(self) -> None:
        import aiohttp

        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                             timeout=aiohttp.ClientTimeout(total=self.timeout))
        self._t10 = aiohttp.ClientTimeout(total=10)

    async def close(self) -> None:
        await self.session.close()

    def _wire(self, case: Case) -> Tuple[str, bytes, Dict[str, str]]:
        """The path, body and headers of a case's request."""
        if "http" not in case.wire:
            path = f"/v2/models/{case.model}/infer"
            if case.body is not None:
                body, headers = case.body, {"Content-Type": "application/json", **case.headers}
            else:
                body, n = rest_codec.encode_request(request_of(case))
                if case.outputs:  # encode_request asks for every output; this case names its own
                    doc = json.loads(body[:n])
                    doc["outputs"] = [{"name": o, "parameters": {"binary_data": True}} for o in case.outputs]
                    head = json.dumps(doc).encode()
                    body, n = head + body[n:], len(head)
                headers = {rest_codec.HEADER_LENGTH: str(n), "Content-Type": "application/octet-stream"}
            if case.kind == "new_connection":
                headers["Connection"] = "close"
            case.wire["http"] = (path, body, headers)
        return case.wire["http"]

    async def _post(self, path: str, body: bytes, headers: Dict[str, str]) -> Tuple[int, bytes, Optional[str]]:
        async with self.session.post(f"http://{self.target}{path}", data=body, headers=headers) as r:
            return r.status, await r.read(), r.headers.get(rest_codec.HEADER_LENGTH)

    async def infer(self, case: Case, rng: random.Random) -> Tuple[str, str, Optional[np.ndarray]]:
        """(status name, message, the reply's TENSOR or None)."""
        path, body, headers = self._wire(case)
        if case.mode == "close_mid_body":
            return await self._close_mid_body(path, body, headers, rng)
        limit = case.deadline or (rng.uniform(0, case.cancel) if case.cancel else self.timeout)
        try:
            status, data, hlen = await asyncio.wait_for(self._post(path, body, headers), limit)
        except asyncio.TimeoutError:
            if case.cancel:
                return CANCELLED, "", None
            return "DEADLINE_EXCEEDED", f"client timeout {limit:g} s", None
        if status == 200:
            out = rest_codec.decode_reply(data, hlen)
            return OK, "", out.get(protocol.TENSOR)
        try:
            msg = str(json.loads(data)["error"])
        except (ValueError, KeyError, TypeError):
            msg = f"not a JSON error: {data[:200]!r}"
        return CODES.get(status, f"HTTP_{status}"), msg, None

    async def _close_mid_body(self, path: str, body: bytes, headers: Dict[str, str],
                              rng: random.Random) -> Tuple[str, str, Optional[np.ndarray]]:
        """Send the headers and part of the body on a raw socket, then close it."""
        _, w = await asyncio.open_connection(self.host, self.port)
        try:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            w.write(f"POST {path} HTTP/1.1\r\nHost: {self.target}\r\nContent-Length: {len(body)}\r\n{head}\r\n".encode())
            w.write(body[: rng.randrange(1, len(body))])
            await w.drain()
            await asyncio.sleep(rng.uniform(0, 0.05))
        finally:
            w.close()
        return CANCELLED, "", None

    async def background(self, running: Callable[[], bool], record: Callable[..., None]) -> None:
        """STALLERS slowloris connections, one after another each, half stalling their headers and
        half their body, while ``running()``; each recorded as the kind slowloris_headers or
        slowloris_body: the server must answer 408 or close it within --body-timeout (plus a margin),
        else STALLED, a wrong reply."""
        stall = {k: Case(k, 0, None, ("DEADLINE_EXCEEDED", CLOSED), protocols=("http",))
                 for k in ("slowloris_headers", "slowloris_body")}

        async def staller(k: int) -> None:
            case = stall["slowloris_headers" if k % 2 == 0 else "slowloris_body"]
            while running():
                code = await self._stall(case.kind == "slowloris_body", running)
                if code:
                    record(case, code, "", None)

        await asyncio.gather(*(staller(k) for k in range(STALLERS)))

    async def _stall(self, body: bool, running: Callable[[], bool]) -> str:
        """One stalled connection: what the server did ("" when the soak ended first)."""
        r, w = await asyncio.open_connection(self.host, self.port)
        try:
            req = f"POST /v2/models/{MODEL}/infer HTTP/1.1\r\nHost: {self.target}\r\n"
            if body:
                req += f"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" + '{"inputs": ['
            w.write(req.encode())
            await w.drain()
            give_up = asyncio.get_running_loop().time() + BODY_TIMEOUT + 20
            while running():
                try:
                    line = await asyncio.wait_for(r.readline(), 1.0)
                except asyncio.TimeoutError:
                    if asyncio.get_running_loop().time() > give_up:
                        return "STALLED"
                    continue
                if not line:
                    return CLOSED
                parts = line.split()
                status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
                return CODES.get(status, f"HTTP_{status}")
            return ""
        except (ConnectionError, OSError):
            return CLOSED
        finally:
            w.close()

    async def healthy(self) -> bool:
        """GET /v2/health/ready answered 200 within 10 s."""
        try:
            async with self.session.get(f"http://{self.target}/v2/health/ready", timeout=self._t10) as r:
                return r.status == 200
        except Exception:  # noqa: BLE001 - any failure is an unanswered health check
            return False

    async def batch_sizes(self) -> Dict[int, int]:
        """The server's executions by batch size (the model's statistics' batch_stats)."""
        async with self.session.get(f"http://{self.target}/v2/models/{MODEL}/stats", timeout=self._t10) as r:
            doc = await r.json()
        return {int(b["batch_size"]): int(b["compute_infer"]["count"]) for s in doc.get("model_stats", [])
                for b in s.get("batch_stats", [])}
