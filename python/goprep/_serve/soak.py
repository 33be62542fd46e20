"""``python -m goprep serve-soak``: the soak test of ``goprep serve`` (issue 41, "Reliability under
load"). It starts the server (bench.server_process: loopback, a free port, always stopped) and keeps
``--concurrency`` requests in flight for ``--duration`` seconds, drawn from a fixed mix (``CASES``):
valid JPEGs of several sizes, a PNG, a raw frame and a batch of three; corrupt, truncated and empty
files; image-bomb headers; wrong input names, datatypes and shapes; too many images; a message over
the server's size limit; and clients that cancel mid-request or give up at a short deadline.

Every reply is checked. A valid request's tensor must equal what the same pipeline gives in this
process (oip.Engine, built as the server builds it) within ``ATOL``, float rounding; the in-process
tensors are themselves held to Pillow's decode plus the reference preprocessing within
protocol.TOLERANCE at start-up. A bad request must get its documented status (INVALID_ARGUMENT,
RESOURCE_EXHAUSTED, NOT_FOUND; tests/test_serve_oip.py) with a message free of the server's insides
(``LEAKS``); UNKNOWN, INTERNAL or any other status is a wrong reply. A cancelled call may end
cancelled or with its checked reply.

Three results, all must hold: **0 crashes** (the server process alive, every periodic health check
answered, and one at the end), **0 wrong replies**, and **RSS flat**: the server's resident set is
sampled every second; after ``warmup`` seconds, the median of the last ``window`` seconds may exceed
the median of the first ``window`` seconds after warm-up by at most ``RSS_GROWTH`` (10%). Both
default to a tenth of the duration (60 s for a 10-minute soak), at least 15 s: with dynamic batching
the RSS is a saw-tooth of about 10 s (the engine's buffers for a batch of large images, freed in
bursts), so shorter windows measure the phase of the saw, not growth.

Protocols are clients (``CLIENTS``: one class each, the same cases and checks); ``--max-queue-delay``
runs the server with dynamic batching, where a bad item must fail only its own request.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import io
import json
import os
import random
import statistics
import struct
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import protocol
from .loadgen import MODEL, frames

ATOL = 1e-5  # server vs in-process: the same code on the same bytes, so float rounding at most
RSS_GROWTH = 0.10
LEAKS = ("Traceback", 'File "', ".py", ".go:", ".cpp", ".h:", "onnxruntime", "0x7f")  # never in a client's message
MAX_BATCH, MAX_REQUEST_MB, BODY_TIMEOUT = 8, 4, 10  # the soaked server's --max-batch, --max-request-mb, --body-timeout
OK, CANCELLED = "OK", "CANCELLED"


@dataclass
class Case:
    """One kind of request: its single input (name, datatype, shape, raw contents; ``inputs`` None:
    send none), what it may end with (``codes``; "OK" checked against ``want``, the in-process
    tensor) and how the client sends it (``cancel``: call cancelled after a random delay up to this
    many seconds; ``deadline``: the client's timeout)."""

    kind: str
    weight: int
    inputs: Optional[Tuple[str, str, List[int], bytes]]
    codes: Tuple[str, ...]
    words: str = ""  # a word an error's message must contain
    model: str = MODEL
    outputs: Tuple[str, ...] = ()
    cancel: float = 0.0
    deadline: float = 0.0
    want: Optional[np.ndarray] = None
    body: Optional[bytes] = None  # sent as the whole message instead of an encoded request
    http_codes: Optional[Tuple[str, ...]] = None  # over REST, when its statuses map differently (rest.http_status)
    protocols: Tuple[str, ...] = ("grpc", "http")  # the clients that send it
    headers: Dict[str, str] = field(default_factory=dict)  # REST: headers beyond the client's own
    mode: str = ""  # REST: "close_mid_body": half the body sent, then the socket closed
    wire: Dict[str, Any] = field(default_factory=dict)  # each client's encoding, cached


def request_of(case: Case) -> Any:
    """The ModelInferRequest of a case (its inputs in raw_input_contents)."""
    req = protocol.pb().ModelInferRequest(model_name=case.model, id=case.kind)
    if case.inputs is not None:
        name, dtype, shape, raw = case.inputs
        req.inputs.add(name=name, datatype=dtype, shape=shape)
        if raw:
            req.raw_input_contents.append(raw)
    for o in case.outputs:
        req.outputs.add(name=o)
    return req


def _encode(img: np.ndarray, fmt: str, quality: int = 90) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    return buf.getvalue()


def _jpeg_bomb(jpeg: bytes, w: int = 60000, h: int = 60000) -> bytes:
    """A real JPEG whose frame header (SOF0) claims w x h."""
    k = jpeg.index(b"\xff\xc0")
    return jpeg[: k + 5] + struct.pack(">HH", h, w) + jpeg[k + 9:]


def _png_bomb(w: int = 60000, h: int = 60000) -> bytes:
    """A grayscale PNG of under 1 KB whose header claims w x h (four rows of data)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    data = zlib.compress(b"\0" * (w + 1) * 4, 9)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def _files(files: Sequence[bytes]) -> Tuple[str, str, List[int], bytes]:
    return (protocol.IMAGE, "BYTES", [len(files)], protocol.pack_bytes(files))


def _frame(a: np.ndarray, datatype: str = "UINT8") -> Tuple[str, str, List[int], bytes]:
    return (protocol.FRAME, datatype, list(a.shape), np.ascontiguousarray(a).tobytes())


def build_cases(proto: str = "grpc") -> List[Case]:
    """The mix sent over ``proto``: about half valid requests, a third malformed or over a limit, the
    rest cancelled (and, over REST, its own encodings and malformed bodies: soak_http.http_cases)."""
    ims = {s: frames(1, s[0], s[1], seed=s[0])[0] for s in ((120, 160), (480, 640), (720, 1280), (1080, 1920))}
    jpg = {s: _encode(im, "JPEG") for s, im in ims.items()}
    odd = frames(1, 333, 517, seed=5)[0]
    vga, small = jpg[480, 640], jpg[120, 160]
    bad, limit = ("INVALID_ARGUMENT",), ("RESOURCE_EXHAUSTED",)
    cases = [
        Case("jpeg_160x120", 6, _files([small]), (OK,)),
        Case("jpeg_640x480", 10, _files([vga]), (OK,)),
        Case("jpeg_1280x720", 4, _files([jpg[720, 1280]]), (OK,)),
        Case("jpeg_1920x1080", 3, _files([jpg[1080, 1920]]), (OK,)),
        Case("png_517x333", 3, _files([_encode(odd, "PNG")]), (OK,)),
        Case("jpeg_batch_3", 4, _files([small, vga, _encode(odd, "JPEG")]), (OK,)),
        Case("frame_480x640", 4, _frame(ims[480, 640]), (OK,)),
        Case("new_connection", 2, _files([vga]), (OK,)),  # its own channel, opened and closed
        Case("corrupt", 3, _files([b"\xff\xd8" + bytes(random.Random(1).getrandbits(8) for _ in range(3000))]), bad,
             "image[0]"),
        Case("truncated", 3, _files([vga[: len(vga) // 3]]), bad, "image[0]"),
        Case("empty_file", 1, _files([b""]), bad, "image[0]"),
        Case("bad_in_batch", 3, _files([small, vga, b"GIF89a not a jpeg"]), bad, "image[2]"),
        Case("jpeg_bomb", 3, _files([small, _jpeg_bomb(small)]), bad, "limit"),
        Case("png_bomb", 2, _files([_png_bomb()]), bad, "limit"),
        Case("frame_over_pixels", 1, (protocol.FRAME, "UINT8", [5000, 5000, 3], b""), bad, "limit",
             protocols=("grpc",)),  # no data: REST's binary encoding has no such request (soak_http's JSON one)
        Case("wrong_dtype", 2, _frame(ims[120, 160].astype(np.float32), "FP32"), bad, protocol.FRAME),
        Case("wrong_shape", 2, _frame(np.ascontiguousarray(ims[120, 160][..., :2])), bad, protocol.FRAME),
        Case("wrong_name", 2, ("PIXELS", "UINT8", [4], b"\0" * 4), bad, "PIXELS"),
        Case("frame_short_data", 1, (protocol.FRAME, "UINT8", [120, 160, 3], b"\0" * 1000), bad, "bytes"),
        Case("bytes_bad_prefix", 1, (protocol.IMAGE, "BYTES", [1], b"\xff\xff\x00\x00abc"), bad, protocol.IMAGE),
        Case("no_inputs", 1, None, bad, "input"),
        Case("unknown_output", 1, _files([small]), bad, "NOPE", outputs=("NOPE",)),
        Case("unknown_model", 1, _files([small]), ("NOT_FOUND",), "nope", model="nope"),
        Case("too_many_images", 2, _files([small] * (MAX_BATCH + 1)), limit, f"at most {MAX_BATCH}",
             http_codes=bad),  # Triton's REST: INVALID_ARG (400)
        Case("oversized_message", 1, _frame(np.zeros((1200, 1600, 3), np.uint8)), limit),  # 5.5 MiB > 4
        Case("cancel_1080p", 6, _files([jpg[1080, 1920]]), (OK, CANCELLED), cancel=0.5),
        Case("cancel_batch", 3, _files([vga, vga, jpg[720, 1280]]), (OK, CANCELLED), cancel=0.5),
        Case("deadline_10ms", 3, _files([jpg[720, 1280]]), (OK, "DEADLINE_EXCEEDED"), deadline=0.01),
        Case("corrupt_message", 2, None, ("INVALID_ARGUMENT",),  # bytes that are no ModelInferRequest
             body=b"\x0a\xff\xff\xff\xff\x0f not a protobuf message", protocols=("grpc",)),
    ]
    if proto == "http":
        from .soak_http import http_cases

        cases += http_cases(small, ims[120, 160])
    return [c for c in cases if proto in c.protocols]


# Cases left out of the default mix (``--extra KIND``) because the server fails them today: none now
# (a message that is not a ModelInferRequest got UNKNOWN and a traceback until oip.parser; it is in
# build_cases). Add one here with its reason when a new failure is found.
EXTRA_CASES: Dict[str, Callable[[], "Case"]] = {}


def attach_references(cases: List[Case], preprocess: str = "goprep") -> None:
    """Set each case's ``want``: the TENSOR the in-process pipeline gives for its request (oip.Engine
    as serve builds it), for the cases that may succeed; each image's tensor also checked against
    Pillow's decode plus the reference preprocessing (protocol.TOLERANCE), so the reference is right."""
    from .decode import pil_decode
    from .oip import Engine, Limits
    from .preprocess import make, reference

    eng = Engine(MODEL, make(preprocess), None, 0, Limits(max_batch=MAX_BATCH))
    eng.warm()
    for c in cases:
        if OK not in c.codes:
            continue
        name, dtype, shape, raw = c.inputs  # type: ignore[misc]
        req = request_of(c)
        c.want = protocol.outputs(eng.infer(req))[protocol.TENSOR].copy()
        if name == protocol.IMAGE and preprocess == "goprep":
            for k, f in enumerate(protocol.unpack_bytes(raw, shape[0])):
                err = protocol.tensor_error(c.want[k], reference(pil_decode(bytes(f))))
                if err:
                    raise RuntimeError(f"the in-process pipeline disagrees with the reference on {c.kind} image {k}: {err}")


def check(case: Case, code: str, message: str, tensor: Optional[np.ndarray], proto: str = "grpc") -> str:
    """'' when a reply over ``proto`` is one ``case`` may end with, else what is wrong."""
    codes = case.http_codes if proto == "http" and case.http_codes else case.codes
    if code not in codes:
        return f"{case.kind}: status {code} ({message[:200]!r}), want {' or '.join(codes)}"
    if code == OK:
        if tensor is None:
            return f"{case.kind}: reply has no {protocol.TENSOR} output"
        err = protocol.tensor_error(tensor, case.want, ATOL)  # type: ignore[arg-type]
        return f"{case.kind}: {err}" if err else ""
    leak = [w for w in LEAKS if w in message]
    if leak:
        return f"{case.kind}: {code} message shows the server's insides ({leak}): {message[:300]!r}"
    if case.words and code in ("INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "NOT_FOUND") and case.words not in message:
        return f"{case.kind}: {code} message {message[:200]!r} does not name {case.words!r}"
    return ""


class GrpcClient:
    """The Open Inference Protocol over gRPC (grpc.aio), ``channels`` connections shared round-robin."""

    name = "grpc"

    def __init__(self, target: str, channels: int = 4, timeout: float = 60.0) -> None:
        self.target, self.timeout = target, timeout
        self.n = channels
        self.opts = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 1 << 30),
                     ("grpc.use_local_subchannel_pool", 1)]
        self.chans: List[Any] = []
        self.k = 0

    async def open(self) -> None:
        import grpc

        self.chans = [grpc.aio.insecure_channel(self.target, options=self.opts) for _ in range(self.n)]
        for ch in self.chans:
            await asyncio.wait_for(ch.channel_ready(), self.timeout)

    async def close(self) -> None:
        for ch in self.chans:
            await ch.close()

    def _wire(self, case: Case) -> bytes:
        if case.body is not None:
            return case.body
        if self.name not in case.wire:
            case.wire[self.name] = request_of(case).SerializeToString()
        return case.wire[self.name]

    async def infer(self, case: Case, rng: random.Random) -> Tuple[str, str, Optional[np.ndarray]]:
        """(status name, message, the reply's TENSOR or None)."""
        import grpc

        body = self._wire(case)
        own = None
        if case.kind == "new_connection":
            own = grpc.aio.insecure_channel(self.target, options=self.opts)
            ch = own
        else:
            self.k = (self.k + 1) % len(self.chans)
            ch = self.chans[self.k]
        try:
            call = ch.unary_unary(f"/{protocol.SERVICE}/ModelInfer")(body, timeout=case.deadline or self.timeout)
            if case.cancel:
                await asyncio.sleep(rng.uniform(0, case.cancel))
                if call.cancel():
                    return CANCELLED, "", None
            try:
                rep = await call
            except grpc.aio.AioRpcError as e:
                return e.code().name, e.details() or "", None
            except asyncio.CancelledError:
                if case.cancel:
                    return CANCELLED, "", None
                raise
            out = protocol.outputs(protocol.pb().ModelInferResponse.FromString(rep))
            return OK, "", out.get(protocol.TENSOR)
        finally:
            if own is not None:
                await own.close()

    async def batch_sizes(self) -> Dict[int, int]:
        """The server's executions by batch size (ModelStatistics' batch_stats)."""
        call = self.chans[0].unary_unary(f"/{protocol.SERVICE}/ModelStatistics")
        rep = protocol.pb().ModelStatisticsResponse.FromString(
            await call(protocol.pb().ModelStatisticsRequest(name=MODEL).SerializeToString(), timeout=10))
        return {b.batch_size: b.compute_infer.count for s in rep.model_stats for b in s.batch_stats}

    async def background(self, running: Any, record: Any) -> None:
        """Load beside the workers' (none over gRPC: its stalled calls are tests/test_serve_oip_connections.py's)."""

    async def healthy(self) -> bool:
        """ServerReady answered true within 10 s."""
        try:
            call = self.chans[0].unary_unary(f"/{protocol.SERVICE}/ServerReady")
            rep = await call(protocol.pb().ServerReadyRequest().SerializeToString(), timeout=10)
            return protocol.pb().ServerReadyResponse.FromString(rep).ready
        except Exception:  # noqa: BLE001 - any failure is an unanswered health check
            return False


def _http_client(target: str) -> Any:
    from .soak_http import HttpClient

    return HttpClient(target)


CLIENTS: Dict[str, Any] = {"grpc": GrpcClient, "http": _http_client}


def rss_mb(pid: int) -> Optional[float]:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS")) / 1024
    except (OSError, StopIteration):
        return None


def rss_growth(samples: List[Tuple[float, float]], warmup: float, window: float) -> Dict[str, Any]:
    """RSS after warm-up: the median of the first ``window`` seconds after ``warmup`` (baseline) and of
    the last ``window`` seconds (final), and final / baseline - 1; None when the samples do not span
    both windows apart."""
    none = {"baseline_mb": None, "final_mb": None, "growth": None}
    if not samples or samples[-1][0] < warmup + 2 * window:
        return none
    end = samples[-1][0]
    first = [m for t, m in samples if warmup <= t < warmup + window]
    last = [m for t, m in samples if t > end - window]
    if not first or not last:
        return none
    b, f = statistics.median(first), statistics.median(last)
    return {"baseline_mb": round(b, 1), "final_mb": round(f, 1), "growth": round(f / b - 1, 4)}


class _ServerLog:
    """Reads the server's stderr (so its pipe never fills) and keeps its last lines and how many
    tracebacks it logged."""

    def __init__(self, proc: Any) -> None:
        self.lines: collections.deque = collections.deque(maxlen=200)
        self.tracebacks = 0
        self.first: List[str] = []  # the lines of the first tracebacks (with the line before each)
        self.t = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self.t.start()

    def _read(self, f: Any) -> None:
        try:
            for line in f:
                if line.startswith("Traceback"):
                    self.tracebacks += 1
                    if self.tracebacks <= 3 and self.lines:
                        self.first.append(self.lines[-1])
                if 0 < self.tracebacks <= 3 and len(self.first) < 120:
                    self.first.append(line.rstrip())
                self.lines.append(line.rstrip())
        except (ValueError, OSError):  # closed when the server was stopped
            pass


async def drive(client: Any, cases: List[Case], pid: int, proc: Any, duration: float, concurrency: int,
                seed: int = 0) -> Dict[str, Any]:
    """``concurrency`` workers sending cases drawn by weight for ``duration`` seconds, the client's
    own background load (REST: slowloris connections) alongside, a health check every 5 s and an
    RSS sample every second; the tallies."""
    await client.open()
    by_kind: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    wrong: List[str] = []
    n_wrong = 0
    rss: List[Tuple[float, float]] = []
    health = collections.Counter()
    t0 = time.monotonic()
    t_end = t0 + duration
    weights = [c.weight for c in cases]
    ok_ms: List[float] = []

    def record(case: Case, code: str, msg: str, tensor: Optional[np.ndarray]) -> None:
        nonlocal n_wrong
        by_kind[case.kind][code] += 1
        err = check(case, code, msg, tensor, client.name)
        if err:
            n_wrong += 1
            if len(wrong) < 50:
                wrong.append(f"t={time.monotonic() - t0:.1f}s {err}")

    def running() -> bool:
        return time.monotonic() < t_end and proc.poll() is None

    async def worker(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        while running():
            case = rng.choices(cases, weights)[0]
            t = time.perf_counter()
            try:
                code, msg, tensor = await client.infer(case, rng)
            except Exception as e:  # noqa: BLE001 - a client-side failure is a wrong reply too
                code, msg, tensor = f"CLIENT_{type(e).__name__}", str(e), None
                await asyncio.sleep(0.01)  # a client that fails at once must not starve the loop
            if code == OK and not case.cancel and not case.deadline:
                ok_ms.append(1000 * (time.perf_counter() - t))
            record(case, code, msg, tensor)

    async def monitor() -> None:
        k = 0
        while time.monotonic() < t_end and proc.poll() is None:
            m = rss_mb(pid)
            if m is not None:
                rss.append((time.monotonic() - t0, m))
            if k % 5 == 0:
                health["ok" if await client.healthy() else "failed"] += 1
            k += 1
            await asyncio.sleep(max(0.0, t0 + k - time.monotonic()))

    try:
        await asyncio.gather(monitor(), client.background(running, record), *(worker(k) for k in range(concurrency)))
        alive = proc.poll() is None
        health["ok" if alive and await client.healthy() else "failed"] += 1  # the one at the end
        batches = await client.batch_sizes() if alive else {}
    finally:
        await client.close()
    return {"wall_s": round(time.monotonic() - t0, 1), "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
            "wrong": n_wrong, "wrong_examples": wrong, "rss": rss, "health": dict(health), "alive": proc.poll() is None,
            "batch_sizes": dict(sorted(batches.items())), "ok_latency_ms": _percentiles(ok_ms)}


def _percentiles(ms: List[float]) -> Dict[str, float]:
    if not ms:
        return {}
    a = np.sort(np.array(ms))
    return {f"p{q}": round(float(a[min(len(a) - 1, int(len(a) * q / 100))]), 1) for q in (50, 99)}


def server_args(delay: Optional[str], proto: str = "grpc") -> Tuple[str, ...]:
    """The soaked server's flags beyond bench.server_process's."""
    extra = ("--max-batch", str(MAX_BATCH), "--max-request-mb", str(MAX_REQUEST_MB), "--body-timeout", str(BODY_TIMEOUT))
    extra += ("--http-port", "0") if proto == "http" else ()
    return extra + (("--max-queue-delay", delay) if delay is not None else ())


def soak(protocol_name: str = "grpc", duration: float = 600.0, concurrency: int = 32,
         delay: Optional[str] = None, warmup: Optional[float] = None, window: Optional[float] = None,
         seed: int = 0, extra_cases: Sequence[str] = ()) -> Dict[str, Any]:
    """One soak: start the server, drive it, stop it; the report (``passed``: the three results hold)."""
    from .bench import server_process

    warmup = max(15.0, duration / 10) if warmup is None else warmup
    window = max(15.0, duration / 10) if window is None else window
    if warmup + 2 * window + 5 > duration:
        raise ValueError(f"--duration {duration:g} leaves no room for the warm-up ({warmup:g} s) and two RSS "
                         f"windows ({window:g} s each)")
    extras = [EXTRA_CASES[k]() for k in extra_cases]
    cases = build_cases(protocol_name) + [c for c in extras if protocol_name in c.protocols]
    attach_references(cases)
    extra = server_args(delay, protocol_name)
    with server_process("goprep", extra, max_seconds=duration + 600) as srv:
        log = _ServerLog(srv["proc"])
        client = CLIENTS[protocol_name](srv["http"] if protocol_name == "http" else srv["target"])
        res = asyncio.run(drive(client, cases, srv["pid"], srv["proc"], duration, concurrency, seed))
        exit_code = srv["proc"].poll()
    growth = rss_growth(res["rss"], warmup, window)
    codes: collections.Counter = collections.Counter()
    for v in res["by_kind"].values():
        codes.update(v)
    crashes = int(not res["alive"]) + res["health"].get("failed", 0)
    report = {
        "protocol": protocol_name, "duration_s": duration, "concurrency": concurrency,
        "server_args": ["--preprocess", "goprep", *extra], "max_queue_delay": delay,
        "requests": sum(codes.values()), "codes": dict(codes), "crashes": crashes,
        "server_exit_code": exit_code, "server_tracebacks": log.tracebacks, "server_first_tracebacks": log.first,
        "rss_warmup_s": warmup,
        "rss_window_s": window, **growth, **{k: v for k, v in res.items() if k != "alive"},
    }
    report["rss"] = [(round(t, 1), round(m, 1)) for t, m in res["rss"]]
    report["passed"] = bool(crashes == 0 and res["wrong"] == 0 and growth["growth"] is not None
                            and growth["growth"] <= RSS_GROWTH)
    if (not report["passed"] or log.tracebacks) and log.lines:
        report["server_log_tail"] = list(log.lines)[-20:]
    return report


def summary(r: Dict[str, Any]) -> str:
    """The report as text: requests by kind and status, the three results."""
    out = [f"serve-soak {r['protocol']}: {r['requests']} requests in {r['wall_s']} s at concurrency {r['concurrency']}"
           f" (server {' '.join(r['server_args'])})", f"{'kind':<20} statuses"]
    for kind, codes in r["by_kind"].items():
        out.append(f"{kind:<20} " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    out.append(f"statuses: {', '.join(f'{c} {n}' for c, n in sorted(r['codes'].items()))}")
    out.append(f"valid replies' latency: {r['ok_latency_ms']} ms; executions by batch size: {r['batch_sizes']}")
    out.append(f"crashes: {r['crashes']} (server alive at the end: {r['server_exit_code'] is None}; health checks "
               f"{r['health']}); server log tracebacks: {r['server_tracebacks']}")
    out.append(f"wrong replies: {r['wrong']}" + "".join(f"\n  {w}" for w in r["wrong_examples"][:10]))
    g = r["growth"]
    out.append(f"RSS: median {r['baseline_mb']} MB in [{r['rss_warmup_s']:g}, {r['rss_warmup_s'] + r['rss_window_s']:g}) s,"
               f" {r['final_mb']} MB in the last {r['rss_window_s']:g} s: growth "
               f"{'n/a' if g is None else f'{100 * g:+.1f}%'} (limit +{100 * RSS_GROWTH:.0f}%)")
    out.append("PASSED" if r["passed"] else "FAILED")
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m goprep serve-soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=600.0, help="seconds of load (default 600)")
    p.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    p.add_argument("--protocol", default="grpc", help=f"comma-separated, each soaked in turn: {', '.join(CLIENTS)}")
    p.add_argument("--max-queue-delay", default=None, metavar="DELAY",
                   help="run the server with dynamic batching (serve --max-queue-delay DELAY)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--extra", action="append", default=[], choices=sorted(EXTRA_CASES),
                   help="add a case the server is known to fail to the mix (see EXTRA_CASES)")
    p.add_argument("--json", default=None, metavar="PATH", help="write the reports (a list) as JSON here")
    a = p.parse_args(argv)
    protos = a.protocol.split(",")
    for pr in protos:
        if pr not in CLIENTS:
            p.error(f"--protocol {pr!r}: choose from {', '.join(CLIENTS)}")
    if a.duration < 50 or not 1 <= a.concurrency <= 1024:
        p.error("--duration must be >= 50 s (warm-up and two RSS windows of 15 s) and --concurrency 1..1024")
    reports = []
    for pr in protos:
        r = soak(pr, a.duration, a.concurrency, a.max_queue_delay, seed=a.seed, extra_cases=a.extra)
        print(summary(r), flush=True)
        reports.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(reports, f, indent=1)
    return 0 if all(r["passed"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
