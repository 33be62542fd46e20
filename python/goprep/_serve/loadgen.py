"""The load generator of ``serve-bench``: a separate process driving a server (Open Inference
Protocol v2 over gRPC, ModelInfer, the same for every variant; or with ``--protocol http`` over
KServe v2 REST with binary tensor data, rest_codec.py) with N requests in
flight (N client threads, or N grpc.aio coroutines, each sending its next request when the last reply
came back), checking every reply against its own reference tensor (protocol.py). Given several
servers (comma-separated ``--target``, aio) it drives them in interleaved slices (run_levels_aio).

``python -m goprep._serve.loadgen --target HOST:PORT --payload raw|jpeg --concurrency 1,4,16 ...``
prints one JSON object per concurrency level.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import protocol


def frames(count: int, height: int, width: int, seed: int = 0) -> List[np.ndarray]:
    """Deterministic camera-like RGB frames: smooth gradients, a few shapes, mild sensor noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    out = []
    for i in range(count):
        a, b, c = rng.uniform(0.1, 0.6, 3)
        img = np.stack([(xx * a + yy * b) % 256, (yy * c + 40 * i) % 256, (xx * b + yy * a + 90) % 256], -1)
        for _ in range(4):  # rectangles: edges for the resize to get right
            y0, x0 = rng.integers(0, height // 2), rng.integers(0, width // 2)
            img[y0 : y0 + height // 4, x0 : x0 + width // 4] = rng.uniform(0, 255, 3)
        img += rng.normal(0, 6, img.shape)
        out.append(np.clip(img, 0, 255).astype(np.uint8))
    return out


MODEL = "goprep"  # the model name the servers serve (serve's default)
INFER = f"/{protocol.SERVICE}/ModelInfer"


# The payloads (--payload): raw frames, or their JPEGs; each at --height x --width unless its size is here.
PAYLOADS = ("raw", "jpeg", "jpeg1080")
PAYLOAD_SIZES = {"jpeg1080": (1080, 1920)}


def payload_size(kind: str, height: int, width: int) -> Tuple[int, int]:
    """The frame size (H, W) of payload ``kind``: its own (PAYLOAD_SIZES) or the one given."""
    return PAYLOAD_SIZES.get(kind, (height, width))


def payloads(kind: str, images: List[np.ndarray], model: str = MODEL) -> Tuple[List[bytes], List[np.ndarray]]:
    """The serialised ModelInferRequests for ``images`` (one image each: a FRAME, or its JPEG as IMAGE,
    shape [1, 1] as tritonclient and perf_analyzer send it, which a Triton model with max_batch_size
    needs) and the RGB image each one stands for: the frame, or its JPEG as Pillow decodes it (the
    reference every variant's decode is held to: goprep's decoder equals it byte for byte, OpenCV's
    libjpeg-turbo too). ``kind``: PAYLOADS ("jpeg1080" is a JPEG too; its size is the caller's)."""
    if kind == "raw":
        return [protocol.infer_request(model, "raw", im).SerializeToString() for im in images], images
    from .decode import pil_decode

    reqs, decoded = [], []
    for jpeg in jpegs(images):
        req = protocol.infer_request(model, "jpeg", jpeg)
        req.inputs[0].shape[:] = [1, 1]
        reqs.append(req.SerializeToString())
        decoded.append(pil_decode(jpeg))
    return reqs, decoded


def jpegs(images: List[np.ndarray]) -> List[bytes]:
    """The JPEG files (OpenCV, quality 90) of RGB ``images``: the requests' files (also perf_analyzer's)."""
    import cv2

    out = []
    for im in images:
        ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(im[..., ::-1]), [cv2.IMWRITE_JPEG_QUALITY, 90])
        assert ok
        out.append(buf.tobytes())
    return out


def _stat(pid: int) -> Optional[Tuple[int, float]]:
    """(parent pid, user + system CPU seconds) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _children(pid: int) -> List[int]:
    """The child processes of ``pid`` (its threads' /proc children lists); [] when unreadable."""
    out: List[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    return out


def _cpu_seconds(pid: int) -> Optional[float]:
    """The CPU seconds of process ``pid`` and of its live descendants (PyTriton's server is a Python
    process, its tritonserver and the stubs): None when ``pid`` is gone. A descendant that exits
    between two readings takes its time with it: the servers' processes live as long as the run."""
    own = _stat(pid)
    if own is None:
        return None
    total, todo, seen = own[1], _children(pid), {pid}
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        st = _stat(k)
        if st is not None:
            total += st[1]
            todo += _children(k)
    return total


class Checker:
    """Checks every reply of one server: the full tensor against the reference within
    protocol.TOLERANCE, the top-k against the built-in model run here (``model``), or the decoded
    shape (``shapes``: the "none" calibration variant).

    The top-k scores are the model's on ``own``, the tensors of the server's own preprocessing (default
    ``refs``): the implementations agree within one uint8 level (protocol.TOLERANCE), which moves the
    model's scores by more than check_topk's tolerance (0.34 vs 0.338 for Pillow's resample), so each
    server's model is held to its own input, and its tensor to the shared reference."""

    def __init__(self, refs: List[np.ndarray], model: "bool | str", shapes: Optional[List[Tuple[int, ...]]] = None,
                 own: Optional[List[np.ndarray]] = None) -> None:
        """``model``: False (the reply is the tensor), True (the built-in model's top-k), or the path
        of the ONNX file the server runs (the reply is its first output, the logits, checked within
        model.LOGITS_RTOL of this process's run of the same file on the server's own tensor)."""
        self.refs = refs
        self.shapes = shapes
        self.scores: Optional[List[np.ndarray]] = None
        self.logits: Optional[List[np.ndarray]] = None
        self._parse = protocol.pb().ModelInferResponse.FromString
        if isinstance(model, str):
            from .model import OnnxModel

            onnx = OnnxModel(model)
            self.output = onnx.outputs[0].name
            self.logits = [onnx.run(np.asarray(t, np.float32)[None])[self.output] for t in (refs if own is None else own)]
        elif model:
            from .model import Classifier

            clf = Classifier()
            self.scores = [clf.scores(r) for r in (refs if own is None else own)]

    def check(self, i: int, rep: Any) -> str:
        """'' when ``rep`` is right for request ``i``, else what is wrong; ``rep``: a serialised
        ModelInferResponse (gRPC) or the reply's outputs by name (REST)."""
        try:
            out = rep if isinstance(rep, dict) else protocol.outputs(self._parse(rep))
        except Exception as e:  # noqa: BLE001 - any malformed reply is an error to report
            return f"bad reply: {e}"
        if self.shapes is not None:
            got = out.get(protocol.SHAPE)
            ok = got is not None and got.shape == (1, 3) and tuple(got[0]) == self.shapes[i]
            return "" if ok else f"expected the decoded shape {self.shapes[i]}, got {out}"
        if self.logits is not None:
            from .model import logits_error

            got = out.get(self.output)
            if got is None:
                return f"expected a {self.output} output, got {sorted(out)}"
            return logits_error(got, self.logits[i])
        if self.scores is not None:
            if protocol.TOPK_INDEX not in out or protocol.TOPK_SCORE not in out:
                return f"expected a top-k reply, got {sorted(out)}"
            return protocol.check_topk(out[protocol.TOPK_INDEX][0], out[protocol.TOPK_SCORE][0], self.scores[i])
        t = out.get(protocol.TENSOR)
        if t is None:
            return f"expected a {protocol.TENSOR} output, got {sorted(out)}"
        return protocol.tensor_error(t[0], self.refs[i])


class _Tally:
    """What one measured run's workers share: the latencies of the good replies and the errors (into
    ``lat`` and ``errors``, pooled over an interleaved run's slices), whether replies count now (those
    of the warm-up and of the drain do not), and the stop flag. One for the threads and the aio
    workers alike; the threads pass a lock."""

    def __init__(self, lat: List[float], errors: List[str], lock: Optional[threading.Lock] = None) -> None:
        self.lat, self.errors, self._lock = lat, errors, lock
        self.record = self.stop = False
        self.seen = 0  # replies counted, good or failed

    def add(self, err: str, seconds: float) -> None:
        if not self.record:
            return
        if self._lock is None:
            self._add(err, seconds)
        else:
            with self._lock:
                self._add(err, seconds)

    def extend_until_seen(self, t_cap: float) -> bool:
        """Whether a measured window must go on: it has counted no reply yet and ``t_cap``
        (perf_counter) has not passed. A window runs past its duration until its first reply, so a
        machine too loaded to answer within the duration gives a low QPS, not 0 (seen in CI)."""
        return self.seen == 0 and time.perf_counter() < t_cap

    def _add(self, err: str, seconds: float) -> None:
        self.seen += 1
        if err:
            self.errors.append(err)
        else:
            self.lat.append(seconds)


def _rpc_error(e: Any) -> str:
    """A failed call (grpc.RpcError) as the error line the figures report."""
    return f"rpc {e.code().name}: {e.details()}"


class _Failed(Exception):
    """A call that got no reply to check: its error line."""


def _grpc_call(channel: Any, reqs: List[bytes], timeout: float) -> Any:
    """``call(n)``: request ``n`` over a grpc.aio channel, its serialised reply."""
    import grpc

    infer = channel.unary_unary(INFER)  # requests are serialised once, up front

    async def call(n: int) -> Any:
        try:
            return await infer(reqs[n], timeout=timeout)
        except grpc.RpcError as e:
            raise _Failed(_rpc_error(e)) from None

    return call


def _http_call(session: Any, target: str, bodies: List[Tuple[bytes, int]], timeout: float) -> Any:
    """``call(n)``: request ``n`` as a binary KServe v2 REST request (rest_codec.encode_request, built
    once, up front) on an aiohttp session, its outputs by name."""
    import asyncio

    import aiohttp

    from .rest_codec import HEADER_LENGTH, decode_reply

    url = f"http://{target}/v2/models/{MODEL}/infer"
    limit = aiohttp.ClientTimeout(total=timeout)

    async def call(n: int) -> Any:
        body, header = bodies[n]
        try:
            async with session.post(url, data=body, headers={HEADER_LENGTH: str(header)}, timeout=limit) as r:
                data = await r.read()
                if r.status != 200:
                    raise _Failed(f"http {r.status}: {data[:300].decode('utf-8', 'replace')}")
                try:
                    return decode_reply(data, r.headers.get(HEADER_LENGTH))
                except (ValueError, KeyError, TypeError) as e:
                    raise _Failed(f"bad reply: {e}") from None
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            raise _Failed(f"http {type(e).__name__}: {e}") from None

    return call


def run_level(target: str, reqs: List[bytes], checker: Checker, concurrency: int, warmup: float, duration: float,
              server_pid: int, timeout: float = 30.0, channels: int = 1) -> Dict[str, Any]:
    import grpc

    opts = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
    if channels > 1:  # separate connections, not subchannels shared through the global pool
        opts.append(("grpc.use_local_subchannel_pool", 1))
    chans = [grpc.insecure_channel(target, options=opts) for _ in range(max(1, min(channels, concurrency)))]
    try:
        for channel in chans:
            grpc.channel_ready_future(channel).result(timeout=timeout)
        stubs = [ch.unary_unary(INFER) for ch in chans]  # requests are serialised once, up front
        lat: List[float] = []
        errors: List[str] = []
        tally = _Tally(lat, errors, threading.Lock())

        def worker(k: int) -> None:
            i = k
            infer = stubs[k % len(stubs)]
            while not tally.stop:
                n = i % len(reqs)
                t0 = time.perf_counter()
                try:
                    err = checker.check(n, infer(reqs[n], timeout=timeout))
                except grpc.RpcError as e:
                    err = _rpc_error(e)
                tally.add(err, time.perf_counter() - t0)
                i += concurrency

        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(concurrency)]
        for t in threads:
            t.start()
        time.sleep(warmup)
        cpu0, t0, own0 = _cpu_seconds(server_pid) if server_pid else None, time.perf_counter(), time.process_time()
        tally.record = True
        time.sleep(duration)
        t_cap = time.perf_counter() + timeout
        while tally.extend_until_seen(t_cap):
            time.sleep(0.01)
        tally.record = False
        cpu1, t1, own1 = _cpu_seconds(server_pid) if server_pid else None, time.perf_counter(), time.process_time()
        tally.stop = True
        for t in threads:
            t.join(timeout + 5)
        return _figures(concurrency, lat, errors, t1 - t0, cpu0, cpu1, own1 - own0)
    finally:
        for channel in chans:
            channel.close()


def run_level_aio(target: str, reqs: List[bytes], checker: Checker, concurrency: int, warmup: float, duration: float,
                  server_pid: int, timeout: float = 30.0, wire: str = "grpc") -> Dict[str, Any]:
    """run_level with grpc.aio (or aiohttp, ``wire`` http): N coroutines on one event loop, each
    sending its next request when the last reply came back. Same requests, checks and figures; the
    client spends less CPU per request than N blocking threads contending for the GIL, leaving more
    of a shared machine to the server."""
    return run_levels_aio([target], reqs, [checker], [concurrency], warmup, duration, [server_pid], 1, timeout,
                          wire)[0][0]


def run_levels_aio(targets: List[str], reqs: List[bytes], checkers: List[Checker], levels: List[int], warmup: float,
                   duration: float, server_pids: List[int], rounds: int = 1,
                   timeout: float = 30.0, wire: str = "grpc") -> List[List[Dict[str, Any]]]:
    """Drive several servers at each concurrency level in turn, interleaved: every level is split into
    ``rounds`` rounds, and each round gives every server one slice (``warmup / rounds`` unmeasured,
    then ``duration / rounds`` measured), the servers' order changing from round to round
    (balanced_orders). A change in
    what else the machine runs then hits every server alike instead of whichever ran at that moment
    (on the shared 2-core machine one server's QPS swung by 2x between back-to-back runs). Latencies,
    errors, wall time and server CPU are pooled over a server's slices. Returns, per level, one
    figures dict per target (in ``targets`` order). ``wire`` http: the targets are REST
    addresses (serve --http-port), the requests sent as binary tensor data."""
    import asyncio

    async def slice_(call: Any, checker: Checker, concurrency: int, warm: float, dur: float, pid: int,
                     acc: Dict[str, Any]) -> None:
        tally = _Tally(acc["lat"], acc["errors"])

        async def worker(k: int) -> None:
            i = k + acc["offset"]
            while not tally.stop:
                n = i % len(reqs)
                t0 = time.perf_counter()
                try:
                    err = checker.check(n, await call(n))
                except _Failed as e:
                    err = str(e)
                tally.add(err, time.perf_counter() - t0)
                i += concurrency

        tasks = [asyncio.ensure_future(worker(k)) for k in range(concurrency)]
        await asyncio.sleep(warm)
        cpu0, t0, own0 = _cpu_seconds(pid) if pid else None, time.perf_counter(), time.process_time()
        tally.record = True
        await asyncio.sleep(dur)
        t_cap = time.perf_counter() + timeout
        while tally.extend_until_seen(t_cap):
            await asyncio.sleep(0.01)
        tally.record = False
        cpu1, t1, own1 = _cpu_seconds(pid) if pid else None, time.perf_counter(), time.process_time()
        acc["client"] += own1 - own0
        tally.stop = True
        await asyncio.wait_for(asyncio.gather(*tasks), timeout + 5)
        acc["wall"] += t1 - t0
        acc["offset"] += concurrency  # the next slice starts at other frames
        if cpu0 is None or cpu1 is None:
            acc["cpu"] = None
        elif acc["cpu"] is not None:
            acc["cpu"] += cpu1 - cpu0

    async def run() -> List[List[Dict[str, Any]]]:
        if wire == "http":
            import aiohttp

            from .rest_codec import encode_request

            parse = protocol.pb().ModelInferRequest.FromString
            bodies = [encode_request(parse(r)) for r in reqs]
            # one connection per request in flight, at most: as N clients each keeping theirs alive
            channels = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=max(levels))) for _ in targets]
            infers = [_http_call(ch, t, bodies, timeout) for ch, t in zip(channels, targets)]
        else:
            import grpc

            opts = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
            channels = [grpc.aio.insecure_channel(t, options=opts) for t in targets]
            infers = [_grpc_call(ch, reqs, timeout) for ch in channels]
        try:
            if wire != "http":
                for ch in channels:
                    await asyncio.wait_for(ch.channel_ready(), timeout)
            order = balanced_orders(len(targets))
            done = 0  # rounds run so far: the design's rows carry on across levels
            out = []
            for c in levels:
                accs = [{"lat": [], "errors": [], "wall": 0.0, "cpu": 0.0, "offset": 0, "client": 0.0} for _ in targets]
                for _ in range(rounds):
                    row, done = order[done % len(order)], done + 1
                    for t in row:
                        await slice_(infers[t], checkers[t], c, warmup / rounds, duration / rounds, server_pids[t], accs[t])
                out.append([_figures(c, a["lat"], a["errors"], a["wall"], 0.0 if a["cpu"] is not None else None, a["cpu"],
                                     a["client"]) for a in accs])
            return out
        finally:
            for ch in channels:
                await ch.close()

    return asyncio.run(run())


def balanced_orders(n: int) -> List[List[int]]:
    """The servers' order in each round of an interleaved level: the rows of a Williams design, so
    over a full cycle of rows (n for even n, 2n for odd) every server takes every position equally
    often and follows every other server equally often; what a server inherits from the one before
    it (a warm cache, a loaded machine) is then spread evenly too. A plain rotation gives every
    position but always the same predecessor."""
    if n <= 1:
        return [list(range(n))]
    first = [0]
    lo, hi = 1, n - 1
    while len(first) < n:  # 0, 1, n-1, 2, n-2, ...
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(x + r) % n for x in first] for r in range(n)]
    if n % 2:  # odd n: the mirrored rows complete the balance
        rows += [row[::-1] for row in rows]
    return rows


def _figures(concurrency: int, lat: List[float], errors: List[str], wall: float, cpu0: Optional[float],
             cpu1: Optional[float], client_cpu: Optional[float] = None) -> Dict[str, Any]:
    ms = np.sort(np.array(lat)) * 1e3 if lat else np.zeros(1)
    return {
        "concurrency": concurrency,
        "qps": len(lat) / wall,
        "p50_ms": float(np.percentile(ms, 50)),
        "p99_ms": float(np.percentile(ms, 99)),
        "p999_ms": float(np.percentile(ms, 99.9)),
        "errors": len(errors),
        "server_cores": (cpu1 - cpu0) / wall if cpu0 is not None and cpu1 is not None else None,
        # the server's CPU over every reply it sent, checked good or not (it did the work for both)
        "server_ms_per_request": (1e3 * (cpu1 - cpu0) / (len(lat) + len(errors))
                                  if cpu0 is not None and cpu1 is not None and lat + errors else None),
        # the load generator's own CPU (all its threads) over the measured window: what the client took
        # of the machine's cores while this server was driven
        "client_cores": client_cpu / wall if client_cpu is not None and wall > 0 else None,
        "requests": len(lat),
        "first_errors": errors[:5],
    }


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m goprep._serve.loadgen",
                                description="serve-bench's load generator: drives one or more servers and prints JSON.")
    p.add_argument("--target", required=True, help="HOST:PORT, or several comma-separated (interleaved, aio client)")
    p.add_argument("--payload", choices=PAYLOADS, default="raw",
                   help="request payload (default raw; jpeg1080: JPEGs of 1920x1080 frames, whatever the size flags)")
    p.add_argument("--concurrency", default="1,4,16", help="comma-separated requests in flight (default 1,4,16)")
    p.add_argument("--warmup", type=float, default=1.0, metavar="S", help="unmeasured seconds per level (default 1)")
    p.add_argument("--duration", type=float, default=5.0, metavar="S", help="measured seconds per level (default 5)")
    p.add_argument("--images", type=int, default=8, metavar="N", help="distinct frames the requests cycle through (default 8)")
    p.add_argument("--height", type=int, default=480, metavar="PX", help="frame height (default 480)")
    p.add_argument("--width", type=int, default=640, metavar="PX", help="frame width (default 640)")
    p.add_argument("--model", action="store_true", help="the servers run the built-in model: check top-k replies")
    p.add_argument("--model-file", default="", metavar="PATH.onnx",
                   help="the servers run this ONNX model and reply with its logits: check them (Checker)")
    p.add_argument("--none", action="store_true", help="the server is the 'none' calibration variant: check shapes")
    p.add_argument("--none-targets", default="",
                   help="comma-separated indices of the targets that are the 'none' variant (with several targets)")
    p.add_argument("--preprocess", default="",
                   help="comma-separated, one per target: the server's preprocessing variant (python, opencv, goprep, "
                        "none), whose own tensors the model's top-k is checked against (default: the reference, opencv)")
    p.add_argument("--server-pid", default="0", help="measure this process's CPU use (comma-separated, one per target)")
    p.add_argument("--rounds", type=int, default=1, help="with several targets: rounds per level (interleaved slices)")
    p.add_argument("--channels", type=int, default=1, help="gRPC connections the threads share (default 1)")
    p.add_argument("--client", choices=["aio", "threads"], default="threads",
                   help="grpc.aio coroutines or one blocking thread per request in flight (default)")
    p.add_argument("--protocol", choices=["grpc", "http"], default="grpc",
                   help="gRPC (default), or KServe v2 REST with binary tensor data (the targets are serve's "
                        "--http-port addresses; needs --client aio)")
    p.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                   help="keep glibc's default malloc settings (default: as the server, malloc.py)")
    a = p.parse_args(argv)
    if a.tune_malloc:
        from .malloc import tune

        tune()
    targets = [t for t in a.target.split(",") if t]
    pids = [int(x) for x in a.server_pid.split(",")]
    if len(pids) == 1:
        pids *= len(targets)
    if len(pids) != len(targets):
        p.error("--server-pid needs one pid per target")
    none_idx = {int(x) for x in a.none_targets.split(",") if x} | (set(range(len(targets))) if a.none else set())
    if (len(targets) > 1 or a.rounds > 1) and a.client != "aio":
        p.error("several targets, or --rounds above 1, need --client aio")
    if a.protocol == "http" and a.client != "aio":
        p.error("--protocol http needs --client aio")
    reqs, decoded = payloads(a.payload, frames(a.images, *payload_size(a.payload, a.height, a.width)))
    from .preprocess import reference

    levels = [int(x) for x in a.concurrency.split(",")]
    variants = [v for v in a.preprocess.split(",") if v] or ["opencv"] * len(targets)
    if len(variants) != len(targets):
        p.error("--preprocess needs one variant per target")
    none_idx |= {i for i, v in enumerate(variants) if v == "none"}
    refs = [reference(im) for im in decoded]
    shapes = Checker([], False, [im.shape for im in decoded]) if none_idx else None
    checked: Dict[str, Checker] = {}  # one per variant: its model scores come from its own preprocessing
    for i, v in enumerate(variants):
        if i not in none_idx and v not in checked:
            own = None
            if a.model or a.model_file:
                from .preprocess import make

                prep = make(v)
                own = [np.array(prep(im)) for im in decoded]  # a copy: goprep's variant reuses its buffer
            checked[v] = Checker(refs, a.model_file or a.model, own=own)
    checkers = [shapes if i in none_idx else checked[v] for i, v in enumerate(variants)]
    if len(targets) > 1 or a.rounds > 1:
        for rs in run_levels_aio(targets, reqs, checkers, levels, a.warmup, a.duration, pids, max(1, a.rounds),  # type: ignore[arg-type]
                                 wire=a.protocol):
            for k, r in enumerate(rs):
                r["payload"], r["target"] = a.payload, k
                print(json.dumps(r), flush=True)
        return 0
    for c in levels:
        if a.client == "aio":
            r = run_level_aio(targets[0], reqs, checkers[0], c, a.warmup, a.duration, pids[0],  # type: ignore[arg-type]
                              wire=a.protocol)
        else:
            r = run_level(targets[0], reqs, checkers[0], c, a.warmup, a.duration, pids[0], channels=a.channels)  # type: ignore[arg-type]
        r["payload"], r["target"] = a.payload, 0  # the one target: rows read alike either way
        print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
