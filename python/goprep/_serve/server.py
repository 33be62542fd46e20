"""``python -m goprep serve``: an inference front end speaking the Open Inference Protocol v2 over
gRPC (KServe v2 / Triton's ``inference.GRPCInferenceService``; protocol.py), and with ``--http-port``
over KServe v2 REST too (rest.py, in the same event loop and over the same service.Service), so
``tritonclient.grpc``, ``tritonclient.http``, curl and KServe clients work unchanged.

A grpc.aio server reads requests on its event loop and hands each one to a bounded pool of worker
threads (oip.py): the images are decoded by the configured implementation or preset, each its own
way, the header checked against the pixel limit first (preprocess.py, decode.py; goprep's fused with
its preprocessing in one call), or taken as raw frames (``np.frombuffer``, zero-copy) and
preprocessed, and run through the user's ONNX model (``--model
PATH.onnx``, onnxruntime) or returned as the tensor. With ``--max-queue-delay`` requests are batched
dynamically (batching.py): those arriving within the delay run as one preprocessing call and one
model call. Every argument is checked before anything starts; SIGTERM drains (new requests
UNAVAILABLE, waiting ones run at once, running ones finish within ``--grace``).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, List


from .preprocess import IMPLEMENTATIONS, PRESET_HELP, make

READY = "goprep-serve listening on"
# Two gRPC worker threads per core: with more, the threads mostly hand the GIL to each other (8 vs 4
# workers on 2 cores, docs/SERVING.md "Worker threads"); serve-bench gives every variant the same.
# The cores this process may run on (its affinity: a container's cpuset), not the host's; a CPU quota
# without a cpuset is not seen.
WORKERS = 2 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


DESCRIPTION = (
    "An inference server speaking the Open Inference Protocol v2 over gRPC (KServe v2, Triton's "
    "GRPCInferenceService: tritonclient.grpc works unchanged). Takes JPEG/PNG files (input IMAGE, BYTES) or raw "
    "uint8 RGB frames (input FRAME), preprocesses them (python, opencv or goprep: the same 224x224 ImageNet "
    "tensor; or a torchvision/timm preset through goprep.transforms), runs your ONNX model (--model PATH.onnx) "
    "or returns the tensor, and serves Prometheus metrics. See docs/SERVING.md."
)


def _ranged(kind: Callable[[str], Any], lo: Any, hi: Any = None, what: str = "") -> Callable[[str], Any]:
    """An argparse type: ``kind(text)`` within [lo, hi], else a message saying the range."""

    def conv(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if v != v or v < lo or (hi is not None and v > hi):  # v != v: NaN
            rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise argparse.ArgumentTypeError(f"{text} is out of range ({what or rng})")
        return v

    return conv


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a positive number of seconds")
    return v


def _host(text: str) -> str:
    """An IP address (v4 or v6, brackets optional) or a host name; the form grpc binds."""
    t = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        return str(ipaddress.ip_address(t))
    except ValueError:
        pass
    if not t or len(t) > 253 or not all(c.isalnum() or c in "-." for c in t):
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address or host name")
    return t


def _device(text: str) -> str:
    """goprep's placement names: cpu, auto, cuda, cuda:N."""
    t = text.strip().lower()
    if t in ("cpu", "auto", "cuda") or (t.startswith("cuda:") and t[5:].isdigit()):
        return t
    raise argparse.ArgumentTypeError(f"{text!r} is not cpu, auto, cuda or cuda:N")


def _delay(text: str) -> int:
    """--max-queue-delay in microseconds (batching.parse_delay)."""
    from .batching import parse_delay

    try:
        return parse_delay(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def bind_address(host: str, port: int) -> str:
    """HOST:PORT as grpc and clients take it (IPv6 in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


PORT = _ranged(int, 0, 65535, "0..65535; 0 picks a free port")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m goprep serve", description=DESCRIPTION)
    p.add_argument("--host", type=_host, default="127.0.0.1", help="address to bind: IPv4, IPv6 (::1) or a name (default 127.0.0.1)")
    p.add_argument("--port", type=PORT, default=8001, metavar="N",
                   help="gRPC port, 0..65535 (default 8001, Triton's); 0 picks a free one (printed)")
    p.add_argument("--http-port", type=PORT, default=None, metavar="N",
                   help="also serve KServe v2 REST (tritonclient.http, curl) on this port, 0..65535 (8000 is "
                        "Triton's; 0: a free one, printed); default: gRPC only")
    p.add_argument("--preprocess", default="goprep", metavar="SPEC",
                   help=f"who preprocesses: {', '.join(IMPLEMENTATIONS)} (default goprep; the same 224x224 ImageNet "
                        f"tensor, none: decode only, the server's floor), or {PRESET_HELP}")
    p.add_argument("--model", nargs="?", const="builtin", default="none", metavar="PATH.onnx",
                   help="the ONNX model to run on the preprocessed batch (onnxruntime; CUDA when available) and "
                        "reply with its outputs; 'builtin' (or --model alone): a tiny random-weight demo "
                        "classifier; default none: reply with the tensor")
    p.add_argument("--model-name", default="goprep", metavar="NAME", help="the model's name in the protocol (default goprep)")
    p.add_argument("--topk", type=_ranged(int, 0, 100000), default=0, metavar="K",
                   help="with --model: reply with the first output's top K per image (TOPK_INDEX, TOPK_SCORE) "
                        "instead of the outputs; 0 (default): the outputs")
    p.add_argument("--workers", type=_ranged(int, 1, 1024), default=WORKERS, metavar="N",
                   help=f"worker threads running requests (default 2 per core: {WORKERS})")
    p.add_argument("--max-queue", type=_ranged(int, 0, 100000), default=64, metavar="N",
                   help="requests waiting for a worker beyond those running (with --max-queue-delay: waiting to be "
                        "batched); more: RESOURCE_EXHAUSTED (default 64)")
    p.add_argument("--max-concurrent-rpcs", type=_ranged(int, 1, 100000), default=256, metavar="N",
                   help="calls open at once, all methods, including ones still sending their body (default 256)")
    p.add_argument("--max-streams-per-connection", type=_ranged(int, 1, 100000), default=100, metavar="N",
                   help="calls open at once on one connection (HTTP/2 MAX_CONCURRENT_STREAMS; default 100)")
    p.add_argument("--max-connections", type=_ranged(int, 1, 1000000), default=1024, metavar="N",
                   help="client connections open at once; more are closed at once (--frontend go: not accepted until one closes; default 1024)")
    p.add_argument("--body-timeout", type=_positive, default=10.0, metavar="S",
                   help="seconds a call may take to send its request body; then DEADLINE_EXCEEDED (default 10)")
    p.add_argument("--max-pixels", type=_ranged(int, 1, 1 << 31), default=4096 * 4096, metavar="N",
                   help="largest image or frame, width x height, checked from the header before decoding "
                        "(default 16777216 = 4096x4096)")
    p.add_argument("--max-batch", "--max-batch-size", dest="max_batch", type=_ranged(int, 1, 4096), default=64, metavar="N",
                   help="images per request and, with --max-queue-delay, per executed batch (Triton's max_batch_size; "
                        "default 64)")
    p.add_argument("--max-queue-delay", type=_delay, default=None, metavar="DELAY",
                   help="dynamic batching: requests arriving within DELAY of the oldest waiting one run as one "
                        "preprocessing call and one model call, up to --max-batch images; DELAY in microseconds "
                        "(500, 500us; Triton's max_queue_delay_microseconds), 2ms or 0.01s; 0 batches what is "
                        "already waiting (default: off, each request runs alone)")
    p.add_argument("--preferred-batch-size", type=_ranged(int, 1, 4096), nargs="+", default=[], metavar="N",
                   help="with --max-queue-delay: a batch that reaches the largest of these sizes runs without "
                        "waiting out the delay (Triton's preferred_batch_size; default: --max-batch)")
    p.add_argument("--max-request-mb", type=_ranged(int, 1, 2047), default=64, metavar="MB",
                   help="largest request message, MiB (default 64)")
    p.add_argument("--grace", type=_ranged(float, 0, 3600), default=10.0, metavar="S",
                   help="on SIGTERM/SIGINT: seconds running requests get to finish while new ones are refused (default 10)")
    p.add_argument("--metrics-port", type=PORT, default=None, metavar="N",
                   help="serve Prometheus metrics on this port, 0..65535 (0: a free one, printed)")
    p.add_argument("--device", type=_device, default="cpu", help='goprep placement: "cpu" (default), "auto", "cuda", "cuda:N"')
    p.add_argument("--num-threads", type=_ranged(int, 1, 1024), default=None, metavar="N",
                   help="goprep.set_num_threads / cv2.setNumThreads for each call (default: the libraries' own)")
    p.add_argument("--switch-interval", type=_positive, default=None, metavar="S",
                   help="sys.setswitchinterval for the server (default Python's 0.005 s); see docs/SERVING.md")
    p.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                   help="keep glibc's default malloc settings (default: keep ~1 MB request buffers in the heap, "
                        "one arena per core, free pages trimmed every 5 s: malloc.py)")
    p.add_argument("--profile", action="store_true", help="turn goprep's profiler on (implied by --metrics-port)")
    p.add_argument("--frontend", choices=["python", "go"], default="python",
                   help="who serves gRPC: python (default: grpc.aio, every option) or go (grpc-go inside this "
                        "process: requests decoded, batched and preprocessed in Go, Python runs only the model, once "
                        "per batch; --preprocess goprep on the CPU: no --http-port or --metrics-port; docs/SERVING.md)")
    p.add_argument("--max-seconds", type=_ranged(float, 0, 1e9), default=0, metavar="S",
                   help="exit after this long (default 0: run until stopped)")
    # Test and load-test plumbing, hidden from --help (tests/test_serve*.py, serve-bench, docs/SERVING.md
    # "Faults under load"): the simulated GPU, injected faults, a delay per request, the parent to outlive.
    hidden = argparse.SUPPRESS
    p.add_argument("--simulate-gpu", action="store_true", help=hidden)  # goprep's simulated GPU
    p.add_argument("--fault-every", type=_ranged(int, 0), default=0, help=hidden)  # inject GPU faults every N requests
    p.add_argument("--fault-kind", default="launch", choices=["launch", "oom"], help=hidden)
    p.add_argument("--fault-count", type=_ranged(int, 1), default=3, help=hidden)  # faults per injection (3 opens the breaker)
    p.add_argument("--breaker-cooldown", type=_ranged(float, 0), default=None, help=hidden)  # GPU breaker cool-down, seconds
    p.add_argument("--test-delay", type=_ranged(float, 0, 60), default=0.0, help=hidden)  # seconds each request sleeps (drain tests)
    p.add_argument("--parent-pid", type=_ranged(int, 0), default=0, help=hidden)  # exit when this process is gone (serve-bench)
    return p


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


def _load_model(spec: str) -> Any:
    """The model to serve: None for "none", the built-in demo model, or an ONNX file (ValueError with
    a one-line reason when it cannot be loaded)."""
    from .model import OnnxModel, builtin

    if spec == "none":
        return None
    if spec == "builtin":
        return builtin()
    if not os.path.isfile(spec):
        raise ValueError(f"--model {spec}: no such file (give a .onnx file, 'builtin' or 'none')")
    try:
        return OnnxModel(spec, name=os.path.basename(spec))
    except ValueError as e:
        raise ValueError(f"--model {spec}: {e}") from None
    except Exception as e:  # noqa: BLE001 - onnxruntime's own exception types: reported in one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"--model {spec}: onnxruntime cannot load it: {first[:300]}") from None


def build_engine(args: argparse.Namespace, metrics: Any = None) -> Any:
    """The request engine for ``args`` (oip.Engine), warmed up; ValueError for a preprocessing spec,
    model or --topk that does not work."""
    from .oip import Engine, Limits

    if args.num_threads is not None:
        import cv2

        import goprep

        goprep.set_num_threads(args.num_threads)
        cv2.setNumThreads(args.num_threads)
    if args.simulate_gpu or args.breaker_cooldown is not None:
        import goprep.testing

        if args.simulate_gpu:
            goprep.testing.simulate_gpu(True)
        goprep.testing.reset_gpu(30.0 if args.breaker_cooldown is None else args.breaker_cooldown)
    prep = make(args.preprocess, args.device)
    model = _load_model(args.model)
    fault = _fault_injector(args.fault_every, args.fault_kind, args.fault_count) if args.fault_every > 0 else None
    limits = Limits(max_pixels=args.max_pixels, max_batch=args.max_batch, body_timeout=args.body_timeout,
                    max_queue=args.max_queue)
    engine = Engine(args.model_name, prep, model, args.topk, limits, metrics, fault, args.test_delay)
    engine.warm()
    return engine


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The checks that involve several arguments (argparse checked each one's range)."""
    if args.model != "none" and args.preprocess == "none":
        p.error("--model needs preprocessing (--preprocess is none)")
    if args.topk and args.model == "none":
        p.error("--topk needs --model")
    if args.fault_every and not args.simulate_gpu:
        p.error("--fault-every needs --simulate-gpu (faults are injected into the simulated GPU)")
    if not args.model_name or len(args.model_name) > 200 or not all(c.isalnum() or c in "-_." for c in args.model_name):
        p.error(f"--model-name must be 1-200 letters, digits, '-', '_' or '.', got {args.model_name!r}")
    if args.max_queue_delay is None and args.preferred_batch_size:
        p.error("--preferred-batch-size needs --max-queue-delay (dynamic batching)")
    if args.max_queue_delay is not None and args.max_queue < 1:
        p.error("--max-queue-delay needs --max-queue >= 1 (requests wait in the queue to be batched)")
    if any(n > args.max_batch for n in args.preferred_batch_size):
        p.error(f"--preferred-batch-size {max(args.preferred_batch_size)} is over --max-batch {args.max_batch}")
    if args.metrics_port is not None and args.metrics_port == args.port != 0:
        p.error("--metrics-port must differ from --port")
    if args.frontend == "go":
        _check_go(p, args)
    if args.http_port is not None and args.http_port != 0 and args.http_port in (args.port, args.metrics_port):
        p.error("--http-port must differ from --port and --metrics-port")


# The flags --frontend go does not serve, each with the value that means "not used".
GO_UNSUPPORTED = (("--http-port", "http_port", None), ("--metrics-port", "metrics_port", None),
                  ("--device", "device", "cpu"),
                  ("--simulate-gpu", "simulate_gpu", False), ("--fault-every", "fault_every", 0),
                  ("--test-delay", "test_delay", 0.0), ("--profile", "profile", False))


def _check_go(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--frontend go serves goprep's preprocessing on the CPU, with or without a model (gofront.py)."""
    if args.preprocess != "goprep":
        p.error(f"--frontend go serves --preprocess goprep only, not {args.preprocess!r}")
    for flag, dest, off in GO_UNSUPPORTED:
        if getattr(args, dest) != off:
            p.error(f"{flag} is not served by --frontend go (use --frontend python)")


def _watch(parent: int, t_end: Any) -> bool:
    """Whether to stop: the parent ``parent`` (0: none) is gone, or monotonic time passed ``t_end``."""
    if parent and os.getppid() != parent:  # the parent is gone (we were re-parented)
        return True
    return t_end is not None and time.monotonic() > t_end


def _watchdog(parent: int, max_seconds: float, quit_: threading.Event, loop: Any, stop: Any) -> None:
    """Set the event loop's ``stop`` when the parent is gone or ``max_seconds`` have passed."""
    t_end = time.monotonic() + max_seconds if max_seconds > 0 else None
    while not quit_.wait(0.5):
        if _watch(parent, t_end):
            break
    if not quit_.is_set():
        loop.call_soon_threadsafe(stop.set)


def main(argv: List[str]) -> int:
    p = _parser()
    args = p.parse_args(argv)
    _check(p, args)
    logging.basicConfig(level=logging.INFO, format="goprep serve: %(levelname)s %(message)s")
    trim = False
    if args.tune_malloc:
        from .malloc import tune

        trim = tune()  # glibc: its heaps trimmed while serving (_trim_malloc)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    if args.profile or args.metrics_port is not None:
        import goprep

        goprep.set_profiling(True)
    registry = metrics = None
    if args.metrics_port is not None:
        import prometheus_client

        from goprep import metrics as engine_metrics

        from .metrics import Metrics

        registry = prometheus_client.CollectorRegistry()
        engine_metrics.register(registry)
        metrics = Metrics(registry)
    try:
        engine = build_engine(args, metrics)
    except ValueError as e:
        print(f"goprep serve: {e}", file=sys.stderr)
        return 2
    if args.frontend == "go":
        from . import gofront

        return gofront.serve(args, engine, bind_address(args.host, args.port), READY)
    return asyncio.run(_serve(args, engine, metrics, registry, trim))


# grpc.health.v1.Health service names (Kubernetes' gRPC probes call Health/Check): "live" answers
# SERVING for as long as the process serves (ServerLive); "ready", "" and the inference service's name
# answer SERVING until shutdown begins (ServerReady).
HEALTH_LIVE = ("live",)
HEALTH_READY = ("ready", "", "inference.GRPCInferenceService")
NOT_SERVING = 2  # health_pb2.HealthCheckResponse.NOT_SERVING


async def _add_health(server: Any) -> Any:
    """Add the standard gRPC health service (grpcio-health-checking) to ``server``; its servicer."""
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    hs = health.aio.HealthServicer()
    for name in HEALTH_LIVE + HEALTH_READY:
        await hs.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(hs, server)
    return hs


async def _trim_malloc() -> None:
    """Every malloc.TRIM_SECONDS, the free pages of malloc's heaps back to the OS (on a thread: it
    walks the heaps under their locks), so fragments kept by --tune-malloc cannot creep up RSS."""
    from .malloc import TRIM_SECONDS, trim

    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(TRIM_SECONDS)
        await loop.run_in_executor(None, trim)


async def _serve(args: argparse.Namespace, engine: Any, metrics: Any, registry: Any, trim: bool = False) -> int:
    import grpc

    from . import logfilter
    from .oip import Servicer
    from .service import Service

    logfilter.install(logging.getLogger("grpc._cython.cygrpc"), logfilter.ReplyNotSent)

    svc = Service(engine, args.workers, metrics, args.max_queue_delay, args.preferred_batch_size)
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", args.max_request_mb << 20),
            ("grpc.max_send_message_length", 1 << 30),
            ("grpc.max_concurrent_streams", args.max_streams_per_connection),
            ("grpc.max_allowed_incoming_connections", args.max_connections),
            # a connection that has not finished its HTTP/2 handshake by then is closed
            ("grpc.server_handshake_timeout_ms", int(1000 * max(args.body_timeout, 1.0))),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=args.max_concurrent_rpcs,
    )
    server.add_generic_rpc_handlers((Servicer(svc).handler(),))
    health = await _add_health(server)
    addr = bind_address(args.host, args.port)
    try:
        port = server.add_insecure_port(addr)
    except RuntimeError:
        port = 0
    if port == 0:
        print(f"goprep serve: cannot listen on {addr} (in use, or not an address of this machine)", file=sys.stderr)
        return 2
    metrics_port = httpd = None
    if registry is not None:
        from .metrics import serve as serve_metrics

        try:
            httpd, metrics_port = serve_metrics(args.host, args.metrics_port, registry)
        except OSError as e:
            print(f"goprep serve: cannot serve metrics on {bind_address(args.host, args.metrics_port)}: {e.strerror}",
                  file=sys.stderr)
            return 2
    rest = http_port = None
    if args.http_port is not None:
        from .rest import Limits as RestLimits
        from .rest import RestServer

        rest = RestServer(svc, RestLimits(max_body=args.max_request_mb << 20, timeout=args.body_timeout,
                                          max_open=args.max_concurrent_rpcs, max_connections=args.max_connections))
        try:
            http_port = await rest.start(args.host, args.http_port)
        except OSError as e:
            print(f"goprep serve: cannot serve HTTP on {bind_address(args.host, args.http_port)}: {e.strerror}",
                  file=sys.stderr)
            await svc.close()
            if httpd is not None:
                httpd.shutdown()
                httpd.server_close()
            return 2
    await server.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    quit_watch = threading.Event()
    threading.Thread(target=_watchdog, args=(args.parent_pid, args.max_seconds, quit_watch, loop, stop),
                     daemon=True).start()
    line = f"{READY} {bind_address(args.host, port)} preprocess={args.preprocess} model={args.model} pid={os.getpid()}"
    if metrics_port is not None:
        line += f" metrics={bind_address(args.host, metrics_port)}"
    if http_port is not None:
        line += f" http={bind_address(args.host, http_port)}"
    print(line, flush=True)
    trimmer = loop.create_task(_trim_malloc()) if trim else None
    try:
        await stop.wait()
        for name in HEALTH_READY:  # readiness probes fail at once; liveness stays
            await health.set(name, NOT_SERVING)
        await svc.drain(args.grace)  # new requests UNAVAILABLE (REST: 503); running ones finish
        await server.stop(1.0)
        if rest is not None:
            await rest.stop()
    finally:
        quit_watch.set()
        if trimmer is not None:
            trimmer.cancel()
            await asyncio.gather(trimmer, return_exceptions=True)
        await svc.close()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
    print("goprep serve: stopped", file=sys.stderr, flush=True)
    return 0
