"""``python -m goprep serve``: the reference gRPC inference front end.

A grpcio sync server with a pool of worker threads, the way Python model servers run: each request
is decoded (raw frames with ``np.frombuffer``, zero-copy; JPEG with OpenCV, which releases the GIL),
preprocessed by the selected implementation, then either run through a small ONNX model (``--model``,
top-k reply) or checksummed, so a client can verify the tensor (protocol.py).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from concurrent import futures
from typing import Any, Callable, List, Optional

import numpy as np

from . import protocol
from .preprocess import IMPLEMENTATIONS, make

READY = "goprep-serve listening on"
# Two gRPC worker threads per core: with more, the threads mostly hand the GIL to each other (8 vs 4
# workers on 2 cores, docs/SERVING.md "Worker threads"); serve-bench gives every variant the same.
# The cores this process may run on (its affinity: a container's cpuset), not the host's; a CPU quota
# without a cpuset is not seen.
WORKERS = 2 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


DESCRIPTION = (
    "The reference gRPC inference front end: takes raw uint8 frames or JPEG bytes, preprocesses them with "
    "Pillow+NumPy (python), OpenCV+NumPy (opencv) or goprep into the same tensor (224x224 bilinear, flip, "
    "ImageNet normalize, CHW float32), optionally runs a small ONNX model, and serves Prometheus metrics. "
    "See docs/SERVING.md."
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m goprep serve", description=DESCRIPTION)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051, metavar="N",
                   help="gRPC port (default 50051); 0 picks a free one (printed)")
    p.add_argument("--preprocess", choices=list(IMPLEMENTATIONS), default="goprep",
                   help="who preprocesses: Pillow+NumPy, OpenCV+NumPy, goprep (default), or none "
                        "(no preprocessing: the transport's floor)")
    p.add_argument("--workers", type=int, default=WORKERS, metavar="N",
                   help=f"gRPC worker threads (default 2 per core: {WORKERS})")
    p.add_argument("--model", action="store_true", help="run the built-in ONNX classifier and reply with top-k")
    p.add_argument("--topk", type=int, default=5, metavar="K", help="classes in a --model reply (default 5)")
    p.add_argument("--metrics-port", type=int, default=None, metavar="N",
                   help="serve Prometheus metrics on this port (0: a free one, printed)")
    p.add_argument("--device", default="cpu", help='goprep placement: "cpu" (default), "auto", "cuda", "cuda:N"')
    p.add_argument("--num-threads", type=int, default=None, metavar="N",
                   help="goprep.set_num_threads / cv2.setNumThreads for each call (default: the libraries' own)")
    p.add_argument("--switch-interval", type=float, default=None, metavar="S",
                   help="sys.setswitchinterval for the server (default Python's 0.005 s); see docs/SERVING.md")
    p.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                   help="keep glibc's default malloc settings (default: keep ~1 MB request buffers in the heap, malloc.py)")
    p.add_argument("--profile", action="store_true", help="turn goprep's profiler on (implied by --metrics-port)")
    p.add_argument("--max-seconds", type=float, default=0, metavar="S",
                   help="exit after this long (default 0: run until stopped)")
    # Test and load-test plumbing, hidden from --help (tests/test_serve.py, serve-bench, docs/SERVING.md
    # "Faults under load"): the simulated GPU, injected faults, and the parent to outlive.
    hidden = argparse.SUPPRESS
    p.add_argument("--simulate-gpu", action="store_true", help=hidden)  # goprep's simulated GPU
    p.add_argument("--fault-every", type=int, default=0, help=hidden)  # inject GPU faults every N requests
    p.add_argument("--fault-kind", default="launch", choices=["launch", "oom"], help=hidden)
    p.add_argument("--fault-count", type=int, default=3, help=hidden)  # faults per injection (3 opens the breaker)
    p.add_argument("--breaker-cooldown", type=float, default=None, help=hidden)  # GPU breaker cool-down, seconds
    p.add_argument("--parent-pid", type=int, default=0, help=hidden)  # exit when this process is gone (serve-bench)
    return p


class Service:
    """The request handlers (plain callables over bytes, so tests can call them without a network)."""

    def __init__(self, prep: Optional[Callable[[np.ndarray], np.ndarray]], model: Any = None, topk: int = 5,
                 fault: Optional[Callable[[], None]] = None) -> None:
        import cv2

        self._cv2 = cv2
        self._rgb = getattr(cv2, "IMREAD_COLOR_RGB", None)
        self._prep = prep
        self._model = model
        self._topk = topk
        self._fault = fault

    def decode(self, req: bytes) -> np.ndarray:
        kind, (h, w, c), body = protocol.decode_request(req)
        if kind == protocol.RAW:
            return np.frombuffer(body, np.uint8).reshape(h, w, c)  # a read-only view of the request bytes
        buf = np.frombuffer(body, np.uint8)
        img = self._cv2.imdecode(buf, self._rgb) if self._rgb is not None else None
        if self._rgb is None:
            bgr = self._cv2.imdecode(buf, self._cv2.IMREAD_COLOR)
            img = None if bgr is None else self._cv2.cvtColor(bgr, self._cv2.COLOR_BGR2RGB)
        if img is None:
            raise ValueError("payload is not a decodable JPEG")
        return img

    def infer(self, req: bytes, context: Any = None) -> bytes:
        try:
            img = self.decode(req)
        except ValueError as e:
            if context is None:
                raise
            import grpc

            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        if self._fault is not None:
            self._fault()
        if self._prep is None:
            return protocol.none_reply(img)
        t = self._prep(img)
        if self._model is not None:
            return protocol.topk_reply(self._model.scores(t), self._topk)
        return protocol.checksum(t)

    def stats(self, req: bytes, context: Any = None) -> bytes:
        import goprep
        from goprep import _native

        out = {"stats": goprep.stats(reset=req == b"reset"), "pid": os.getpid()}
        if _native.loaded():
            out["gpu"] = goprep.info()["gpu"]
        return json.dumps(out).encode()


def _fault_injector(every: int, kind: str, count: int) -> Callable[[], None]:
    import goprep.testing

    lock = threading.Lock()
    n = [0]

    def maybe() -> None:
        with lock:
            n[0] += 1
            hit = n[0] % every == 0
        if hit:
            goprep.testing.inject_gpu_fault(kind, count)

    return maybe


def build_server(args: argparse.Namespace) -> Any:
    import grpc

    if args.num_threads is not None:
        if args.preprocess == "goprep":
            import goprep

            goprep.set_num_threads(args.num_threads)
        if args.preprocess == "opencv":
            import cv2

            cv2.setNumThreads(args.num_threads)
    if args.simulate_gpu or args.breaker_cooldown is not None:
        import goprep.testing

        if args.simulate_gpu:
            goprep.testing.simulate_gpu(True)
        goprep.testing.reset_gpu(30.0 if args.breaker_cooldown is None else args.breaker_cooldown)
    prep = make(args.preprocess, args.device)
    model = None
    if args.model:
        from .model import Classifier

        model = Classifier()
    fault = _fault_injector(args.fault_every, args.fault_kind, args.fault_count) if args.fault_every > 0 else None
    svc = Service(prep, model, args.topk, fault)
    svc.infer(protocol.encode_request(protocol.RAW, np.zeros((480, 640, 3), np.uint8), (480, 640, 3)))  # warm: trace, plan
    handler = grpc.method_handlers_generic_handler(
        protocol.SERVICE,
        {
            "Infer": grpc.unary_unary_rpc_method_handler(svc.infer),
            "Stats": grpc.unary_unary_rpc_method_handler(svc.stats),
        },
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=args.workers, thread_name_prefix="goprep-serve"),
        handlers=[handler],
        options=[("grpc.max_receive_message_length", 64 << 20), ("grpc.so_reuseport", 0)],
    )
    port = server.add_insecure_port(f"{args.host}:{args.port}")
    if port == 0:
        raise SystemExit(f"goprep serve: cannot bind {args.host}:{args.port}")
    return server, port, svc


def _watchdog(parent: int, max_seconds: float, stop: threading.Event) -> None:
    t_end = time.monotonic() + max_seconds if max_seconds > 0 else None
    while not stop.wait(0.5):
        if parent and os.getppid() != parent:  # the parent is gone (we were re-parented)
            break
        if t_end is not None and time.monotonic() > t_end:
            break
    stop.set()


def main(argv: List[str]) -> int:
    args = _parser().parse_args(argv)
    if args.workers < 1:
        print("goprep serve: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.model and args.preprocess == "none":
        print("goprep serve: --model needs a preprocessing implementation (not none)", file=sys.stderr)
        return 2
    if args.fault_every and not args.simulate_gpu:
        print("goprep serve: --fault-every needs --simulate-gpu (faults are injected into the simulated GPU)", file=sys.stderr)
        return 2
    if args.tune_malloc:
        from .malloc import tune

        tune()
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    if args.profile or args.metrics_port is not None:
        import goprep

        goprep.set_profiling(True)
    server, port, _ = build_server(args)
    metrics_port = None
    if args.metrics_port is not None:
        import prometheus_client

        from goprep import metrics

        registry = prometheus_client.CollectorRegistry()
        metrics.register(registry)
        httpd, _t = prometheus_client.start_http_server(args.metrics_port, addr=args.host, registry=registry)
        metrics_port = httpd.server_port
    server.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    threading.Thread(target=_watchdog, args=(args.parent_pid, args.max_seconds, stop), daemon=True).start()
    line = f"{READY} {args.host}:{port} preprocess={args.preprocess} pid={os.getpid()}"
    if metrics_port is not None:
        line += f" metrics={args.host}:{metrics_port}"
    print(line, flush=True)
    try:
        while not stop.wait(0.2):
            pass
    finally:
        server.stop(grace=1.0).wait(5)
    return 0
