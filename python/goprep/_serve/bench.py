"""``python -m goprep serve-bench``: the same inference server with each preprocessing implementation,
each in its own process, driven by a load generator in another process, at several concurrency levels
and both payloads; every reply checked. Prints "metric | pure Python | goprep | change" and writes JSON:
``{"machine": {...}, "results": [{"preprocess", "payload", "concurrency", "qps", "p50_ms", "p99_ms",
"p999_ms", "errors", "server_cores", "server_ms_per_request"}, ...], "breakdown": <the goprep server's goprep calls by part, from its
metrics endpoint>}``, and with the ``goprep-batched`` variant (goprep serve with dynamic batching)
``"batch_sizes": {"goprep-batched": {size: executions}}``. Every server and the load generator speak
the Open Inference Protocol v2 over gRPC (ModelInfer), so the variants differ only in their
preprocessing (and the batched one in its batching). The PyTriton variants (bench_triton.py) serve the
same model inside Triton Inference Server, preprocessing with OpenCV or goprep; ``--perf-analyzer``
measures the named variants with Triton's perf_analyzer too (``"perf_analyzer"`` rows); with
``--model`` the results hold the targets of issue 41 (``"targets"``).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .._benchsuite.profiler import overhead_us as profiler_overhead_us
from .bench_triton import PYTRITON
from .loadgen import PAYLOADS, balanced_orders
from .overhead import VARIANTS as VARIANTS_OVERHEAD
from .server import READY, WORKERS

VARIANTS = ("none", "python", "opencv", "goprep")  # "none": the server without preprocessing (its floor)
# goprep serve with dynamic batching (--max-queue-delay): asked for by name, not in the default set
BATCHED = "goprep-batched"
# goprep serve --frontend go (gofront.py: the gRPC request path in Go): asked for by name
GOFRONT = "goprep-go"


def preprocess_of(variant: str) -> str:
    """The server's --preprocess of a variant (the batched one is goprep's, a PyTriton one its bound
    function's)."""
    return "goprep" if variant in (BATCHED, GOFRONT) else PYTRITON.get(variant, variant)

RESULT_KEYS = ("preprocess", "payload", "concurrency", "qps", "p50_ms", "p99_ms", "p999_ms", "errors", "server_cores",
               "server_ms_per_request", "client_cores")


@contextmanager
def server_process(preprocess: str, extra: Tuple[str, ...] = (), timeout: float = 90.0,
                   max_seconds: float = 1800.0) -> Iterator[Dict[str, Any]]:
    """Start ``python -m goprep serve`` on a free loopback port; yield its address, pid, metrics
    address and REST address (``http``: with ``--http-port``, else None); always stop it (SIGTERM,
    then SIGKILL), also if the caller fails. The server exits by itself when this process dies or
    after ``max_seconds``."""
    cmd = [sys.executable, "-m", "goprep", "serve", "--host", "127.0.0.1", "--port", "0", "--preprocess", preprocess,
           "--parent-pid", str(os.getpid()), "--max-seconds", str(max_seconds), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = _read_ready(proc, timeout)
        fields = dict(f.split("=", 1) for f in line.split()[4:] if "=" in f)
        info = {"target": line.split()[3], "pid": proc.pid, "metrics": fields.get("metrics"), "http": fields.get("http"),
                "proc": proc}
        yield info
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for f in (proc.stdout, proc.stderr):
            if f:
                f.close()


def _read_ready(proc: "subprocess.Popen[str]", timeout: float) -> str:
    import selectors

    sel = selectors.DefaultSelector()
    assert proc.stdout is not None
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()
            if line.startswith(READY):
                return line.strip()
            if not line and proc.poll() is not None:
                break
        elif proc.poll() is not None:
            break
    err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
    raise RuntimeError(f"server {' '.join(proc.args)} did not start (exit {proc.poll()}): {err[-2000:]}")  # type: ignore[arg-type]


def _loadgen(targets: List[str], server_pids: List[int], payload: str, concurrency: List[int], warmup: float,
             duration: float, frame: Tuple[int, int], model: "bool | str", client: str, tune_malloc: bool, limit: float,
             extra: List[str]) -> List[Dict[str, Any]]:
    """Run the load generator (loadgen.py) in its own process; its JSON rows."""
    cmd = [sys.executable, "-m", "goprep._serve.loadgen", "--target", ",".join(targets), "--payload", payload,
           "--concurrency", ",".join(map(str, concurrency)), "--warmup", str(warmup), "--duration", str(duration),
           "--server-pid", ",".join(map(str, server_pids)), "--height", str(frame[0]), "--width", str(frame[1]),
           "--client", client, *extra]
    # model: True, the built-in model's top-k replies; a path, the logits of that ONNX file
    cmd += (["--model-file", model] if isinstance(model, str) else ["--model"] if model else [])
    cmd += [] if tune_malloc else ["--no-tune-malloc"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed ({out.returncode}): {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def run_load(target: str, payload: str, concurrency: List[int], warmup: float, duration: float, server_pid: int,
             model: "bool | str" = False, timeout: Optional[float] = None, frame: Tuple[int, int] = (480, 640),
             none: bool = False, client: str = "aio", tune_malloc: bool = True,
             preprocess: str = "", protocol: str = "grpc") -> List[Dict[str, Any]]:
    """Run the load generator against one server (``preprocess``: its variant, whose own tensors
    the model's top-k is checked against; "": the reference; ``protocol`` http: ``target`` is its REST
    address); one result dict per concurrency level."""
    limit = timeout if timeout is not None else 120 + len(concurrency) * (warmup + duration) * 3
    return _loadgen([target], [server_pid], payload, concurrency, warmup, duration, frame, model, client, tune_malloc,
                    limit, (["--none"] if none else []) + (["--preprocess", preprocess] if preprocess else [])
                    + ["--protocol", protocol])


def run_load_interleaved(targets: List[str], payload: str, concurrency: List[int], warmup: float, duration: float,
                         server_pids: List[int], none: List[bool], rounds: int, model: "bool | str" = False,
                         frame: Tuple[int, int] = (480, 640), tune_malloc: bool = True,
                         preprocess: Optional[List[str]] = None, protocol: str = "grpc") -> List[List[Dict[str, Any]]]:
    """One load generator process driving every server, interleaved (loadgen.run_levels_aio): per
    concurrency level, one result dict per target, in ``targets`` order. ``preprocess``: each
    target's variant (run_load)."""
    limit = 120 + len(concurrency) * len(targets) * (warmup + duration) * 3
    extra = ["--none-targets", ",".join(str(k) for k, n in enumerate(none) if n), "--rounds", str(rounds),
             "--protocol", protocol]
    if preprocess:
        extra += ["--preprocess", ",".join(preprocess)]
    rows = _loadgen(targets, server_pids, payload, concurrency, warmup, duration, frame, model, "aio", tune_malloc,
                    limit, extra)
    # grouped by what each row says it measured (its level and target index), not by position
    got = {(r["concurrency"], r["target"]): r for r in rows}
    want = [(c, k) for c in concurrency for k in range(len(targets))]
    if len(rows) != len(want) or set(got) != set(want):
        raise RuntimeError(f"load generator rows {sorted(got)} do not match the levels x targets {want}")
    return [[got[c, k] for k in range(len(targets))] for c in concurrency]


def fetch_breakdown(metrics: str) -> Dict[str, Any]:
    """Per goprep pipeline, its calls and seconds by part, read from the server's metrics endpoint
    (HOST:PORT): ``{pipeline: {"calls", "engine_s", "gil_wait_s", "python_s", "gpu_s"}}``."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=30).read().decode()
    keys = {"goprep_calls_total": "calls", "goprep_engine_seconds_total": "engine_s",
            "goprep_gil_wait_seconds_total": "gil_wait_s", "goprep_python_seconds_total": "python_s",
            "goprep_gpu_seconds_total": "gpu_s"}
    out: Dict[str, Dict[str, float]] = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            k = keys.get(smp.name)
            if k and "pipeline" in smp.labels:
                d = out.setdefault(smp.labels["pipeline"], {v: 0.0 for v in keys.values()})
                d[k] += smp.value
    return out


def fetch_batches(target: str, model: str = "goprep") -> Dict[int, int]:
    """The executions per batch size so far, from the server's ModelStatistics (batch_stats)."""
    import grpc

    from . import protocol

    m = protocol.pb()
    with grpc.insecure_channel(target) as ch:
        call = ch.unary_unary(f"/{protocol.SERVICE}/ModelStatistics",
                              request_serializer=m.ModelStatisticsRequest.SerializeToString,
                              response_deserializer=m.ModelStatisticsResponse.FromString)
        (st,) = call(m.ModelStatisticsRequest(name=model), timeout=30).model_stats
    return {b.batch_size: b.compute_infer.count for b in st.batch_stats}


def machine() -> Dict[str, Any]:
    import grpc

    import goprep

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "goprep": goprep.__version__,
        "grpcio": grpc.__version__,
        "platform": platform.platform(),
    }


def _pick(results: List[Dict[str, Any]], prep: str, payload: str, conc: int) -> Optional[Dict[str, Any]]:
    return next((r for r in results if r["preprocess"] == prep and r["payload"] == payload and r["concurrency"] == conc), None)


def _peak(results: List[Dict[str, Any]], prep: str, payload: str) -> Optional[Dict[str, Any]]:
    rs = [r for r in results if r["preprocess"] == prep and r["payload"] == payload]
    return max(rs, key=lambda r: r["qps"]) if rs else None


def table(results: List[Dict[str, Any]], top: int, base: str = "python", base_name: str = "pure Python",
          other: str = "goprep") -> str:
    """The comparison of variant ``other`` (default goprep) against ``base`` at ``top`` in flight."""
    rows = [("metric", base_name, other, "change")]
    for payload in PAYLOADS:
        b, g = _pick(results, base, payload, top), _pick(results, other, payload, top)
        pb, pg = _peak(results, base, payload), _peak(results, other, payload)
        if not (b and g and pb and pg):
            continue
        rows.append((f"P99 latency, {payload}, {top} in flight", f"{b['p99_ms']:.1f} ms", f"{g['p99_ms']:.1f} ms",
                     f"{g['p99_ms'] / b['p99_ms']:.2f}x" if b["p99_ms"] else "-"))
        rows.append((f"peak QPS, {payload}", f"{pb['qps']:.0f}", f"{pg['qps']:.0f}", f"{pg['qps'] / pb['qps']:.2f}x" if pb["qps"] else "-"))
        if b["server_cores"] is not None and g["server_cores"] is not None:
            rows.append((f"server CPU, {payload}, {top} in flight", f"{b['server_cores']:.2f} cores", f"{g['server_cores']:.2f} cores", "-"))
        cb, cg = b.get("server_ms_per_request"), g.get("server_ms_per_request")
        if cb is not None and cg is not None:
            rows.append((f"server CPU per request, {payload}", f"{cb:.2f} ms", f"{cg:.2f} ms", f"{cg / cb:.2f}x" if cb else "-"))
    if len(rows) == 1:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines)


def targets(results: List[Dict[str, Any]], top: int) -> List[Tuple[str, bool, str]]:
    """The issue's targets (issue 28), at the top concurrency: (what, met, measured). JPEG: QPS >= 3x
    the Python server and >= 2x the OpenCV one, P99 <= 0.5x Python's; raw frames, the same figures
    against the earlier targets (2x, 1.2x, 0.5x)."""
    out = []
    for payload, vs_py, vs_cv in (("jpeg", 3.0, 2.0), ("raw", 2.0, 1.2)):
        g, p, o = (_pick(results, v, payload, top) for v in ("goprep", "python", "opencv"))
        if g and p and p["qps"]:
            r = g["qps"] / p["qps"]
            out.append((f"{payload}: goprep QPS >= {vs_py:g}x python", r >= vs_py, f"{r:.2f}x"))
        if g and o and o["qps"]:
            r = g["qps"] / o["qps"]
            out.append((f"{payload}: goprep QPS >= {vs_cv:g}x opencv", r >= vs_cv, f"{r:.2f}x"))
        if g and p and p["p99_ms"]:
            r = g["p99_ms"] / p["p99_ms"]
            out.append((f"{payload}: goprep P99 <= 0.5x python", r <= 0.5, f"{r:.2f}x"))
    return out


# Issue 41's targets in setting (a) (the tiny model, standing in for one on an accelerator), at 16 in
# flight: (what, variant, over variant, measure, bound, at least (True) or at most).
TARGETS_41 = (
    ("goprep serve QPS >= 2.25x pure Python", "goprep", "python", "qps", 2.25, True),
    ("goprep serve P99 <= 0.5x pure Python", "goprep", "python", "p99_ms", 0.5, False),
    ("goprep serve QPS >= 1.5x OpenCV server", "goprep", "opencv", "qps", 1.5, True),
    ("goprep serve --frontend go QPS >= 2.25x pure Python", GOFRONT, "python", "qps", 2.25, True),
    ("goprep serve --frontend go P99 <= 0.5x pure Python", GOFRONT, "python", "p99_ms", 0.5, False),
    ("goprep serve --frontend go QPS >= 1.5x OpenCV server", GOFRONT, "opencv", "qps", 1.5, True),
    ("PyTriton+goprep QPS >= 1.5x PyTriton+OpenCV", "pytriton-goprep", "pytriton-opencv", "qps", 1.5, True),
)
# A figure is bound by the machine's cores when the server and the load generator together used this
# share of them over the window (the rest went to other processes: the machine's load average says how
# much else ran).
CORE_BOUND = 0.85


def targets_41(results: List[Dict[str, Any]], level: int, cores: int) -> List[Dict[str, Any]]:
    """Issue 41's targets (TARGETS_41) per JPEG payload at ``level`` in flight: what, the ratio, met,
    and where the machine's cores bound either side (server + client CPU over CORE_BOUND of ``cores``)."""
    out = []
    for payload in PAYLOADS:
        for what, v, base, key, bound, at_least in TARGETS_41:
            a, b = _pick(results, v, payload, level), _pick(results, base, payload, level)
            if not (a and b and b[key]):
                continue
            ratio = a[key] / b[key]
            bound_by = [x["preprocess"] for x in (a, b) if x.get("server_cores") is not None
                        and x.get("client_cores") is not None and x["server_cores"] + x["client_cores"] >= CORE_BOUND * cores]
            out.append({"target": what, "payload": payload, "concurrency": level, "ratio": ratio,
                        "met": ratio >= bound if at_least else ratio <= bound, "core_bound": bound_by,
                        "cores_used": {x["preprocess"]: [x.get("server_cores"), x.get("client_cores")] for x in (a, b)}})
    return out


def targets_table(rows: List[Dict[str, Any]], cores: int) -> str:
    """targets_41's rows as text, one line each."""
    lines = []
    for t in rows:
        used = "; ".join(f"{v}: server {s:.2f} + client {c:.2f} cores" if s is not None and c is not None else f"{v}: -"
                         for v, (s, c) in t["cores_used"].items())
        bound = f" - bound by the {cores} cores ({', '.join(t['core_bound'])})" if t["core_bound"] else ""
        lines.append(f"target {t['payload']}, {t['concurrency']} in flight: {t['target']}: {t['ratio']:.2f}x "
                     f"({'met' if t['met'] else 'NOT met'}) [{used}]{bound}")
    return "\n".join(lines)


DESCRIPTION = (
    "Load-test the reference server (python -m goprep serve) with each preprocessing implementation: each "
    "server in its own process, driven by a load generator in another process at several concurrency levels "
    "with raw frames and JPEGs, optionally with a model (--model tiny|mobilenet) and against PyTriton servers; "
    "every reply is checked. Prints a table of QPS, latency and server CPU per request, and the targets; --json "
    "writes the results. See docs/LOADTEST.md."
)


def main(argv: Optional[List[str]] = None) -> int:
    from .model import BENCH_MODELS

    ap = argparse.ArgumentParser(prog="python -m goprep serve-bench", description=DESCRIPTION)
    ap.add_argument("--quick", action="store_true", help="concurrency 1 and 16, 3 s per level (under 3 minutes on 2 cores)")
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    ap.add_argument("--concurrency", help="comma-separated levels (default 1,4,16,32; --quick 1,16)")
    ap.add_argument("--duration", type=float, help="measured seconds per level (default 8; --quick 3)")
    ap.add_argument("--warmup", type=float, help="unmeasured seconds before each level (default 2; --quick 1)")
    every = VARIANTS + (BATCHED, GOFRONT) + tuple(PYTRITON)
    ap.add_argument("--preprocess", default=",".join(VARIANTS),
                    help=f"variants to run (default none,python,opencv,goprep; none = no preprocessing, the floor; "
                         f"{BATCHED}: goprep with dynamic batching, --max-queue-delay; {GOFRONT}: goprep serve --frontend go "
                         f"(gRPC); {', '.join(PYTRITON)}: "
                         f"Triton Inference Server (PyTriton) preprocessing with OpenCV or goprep, JPEGs and --model only)")
    ap.add_argument("--max-queue-delay", default="2ms", metavar="DELAY",
                    help=f"the {BATCHED} server's --max-queue-delay, and the PyTriton servers' (default 2ms)")
    ap.add_argument("--frame", default="480x640", help="raw frame size HxW (default 480x640; jpeg1080: 1080x1920)")
    ap.add_argument("--payloads", default="raw,jpeg",
                    help="request payloads: raw uint8 frames, their JPEGs, JPEGs of 1920x1080 frames (jpeg1080), "
                         "comma-separated (default raw,jpeg)")
    # Two worker threads per core: on the 2-core machine, 4 workers against 8 (four alternated --quick
    # runs, raw frames, 16 in flight, medians) served Python 231 vs 185 QPS, OpenCV 364 vs 367, goprep
    # 585 vs 523, with less server CPU per request for all three (fewer threads contending for the GIL).
    ap.add_argument("--workers", type=int, default=WORKERS, help=f"server worker threads, every variant (default 2 per core: {WORKERS})")
    ap.add_argument("--num-threads", type=int, default=None,
                    help="every server: goprep.set_num_threads / cv2.setNumThreads (default: the libraries' own)")
    ap.add_argument("--model", nargs="?", const="tiny", default=None, choices=list(BENCH_MODELS),
                    help="servers also run this ONNX model and reply with its logits, checked against the load "
                         "generator's run of it: tiny (--model alone) or mobilenet (MobileNetV3-Small, random "
                         "weights, exported once and cached)")
    ap.add_argument("--perf-analyzer", default="", metavar="VARIANTS",
                    help="also measure these variants (comma-separated) with Triton's perf_analyzer at the top level, "
                         "JPEG payloads")
    ap.add_argument("--client", choices=["aio", "threads"], default="aio",
                    help="load generator: grpc.aio coroutines (default) or one blocking thread per request in flight")
    ap.add_argument("--protocol", choices=["grpc", "http"], default="grpc",
                    help="what the load generator speaks: gRPC (default) or KServe v2 REST with binary tensor data "
                         "(every server also started with --http-port; needs --client aio)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="aio client: all servers run at once and each level is split into this many rounds, every "
                         "server getting one slice per round (default: one cycle of the balanced orders, 4 for the "
                         "four variants); 0: one server after the other")
    ap.add_argument("--no-tune-malloc", dest="tune_malloc", action="store_false",
                    help="every server and the load generator keep glibc's default malloc settings (default: tuned, malloc.py)")
    a = ap.parse_args(argv)
    if a.protocol == "http" and a.client != "aio":
        ap.error("--protocol http needs --client aio")
    addr = "http" if a.protocol == "http" else "target"  # the address the load goes to (server_process's)
    conc = [int(x) for x in (a.concurrency or ("1,16" if a.quick else "1,4,16,32")).split(",")]
    duration = a.duration if a.duration is not None else (3.0 if a.quick else 8.0)
    warmup = a.warmup if a.warmup is not None else (1.0 if a.quick else 2.0)
    variants = [v for v in a.preprocess.split(",") if v]
    if a.rounds is None:  # a whole cycle per level: every variant in every position and after every other alike
        a.rounds = len(balanced_orders(len(variants)))
    try:
        fh, fw = (int(x) for x in a.frame.lower().split("x"))
        if not (16 <= fh <= 8192 and 16 <= fw <= 8192):
            raise ValueError
    except ValueError:
        ap.error(f"--frame must be HxW with sides in [16, 8192], got {a.frame!r}")
    payloads = [p for p in a.payloads.split(",") if p]
    for p in payloads:
        if p not in PAYLOADS:
            ap.error(f"--payloads: unknown payload {p!r} (choose from {', '.join(PAYLOADS)})")
    try:
        from .batching import parse_delay

        delay_us = parse_delay(a.max_queue_delay)
    except ValueError as e:
        ap.error(f"--max-queue-delay: {e}")
    for v in variants:
        if v not in every:
            ap.error(f"--preprocess: unknown variant {v!r} (choose from {', '.join(every)})")
    pytriton = [v for v in variants if v in PYTRITON]
    if pytriton and (a.model is None or "raw" in payloads):
        ap.error(f"--preprocess {','.join(pytriton)}: the PyTriton variants need --model and JPEG payloads only")
    if pytriton and a.protocol == "http":
        ap.error(f"--preprocess {','.join(pytriton)}: the PyTriton variants are driven over gRPC (--protocol grpc)")
    if GOFRONT in variants and a.protocol == "http":
        ap.error(f"--preprocess {GOFRONT}: the Go front end serves gRPC only (--protocol grpc)")
    pa_variants = [v for v in a.perf_analyzer.split(",") if v]
    for v in pa_variants:
        if v not in variants or v == "none":
            ap.error(f"--perf-analyzer: {v!r} is not one of the variants run (--preprocess), or is none")
    started = time.monotonic()
    mach = machine()
    mach["profiler"] = profiler_overhead_us()
    model_path = ""
    if a.model:
        from .model import bench_model

        model_path = bench_model(a.model)  # made once (MobileNet: ~15-30 s), then cached
    mach["settings"] = {"concurrency": conc, "duration_s": duration, "warmup_s": warmup, "workers": a.workers,
                        "num_threads": a.num_threads, "tune_malloc": a.tune_malloc,
                        "model": a.model, "model_file": model_path or None,
                        "max_queue_delay": a.max_queue_delay if BATCHED in variants or pytriton else None,
                        "frame": [fh, fw, 3], "protocol": a.protocol,
                        "client": f"python {'aiohttp' if a.protocol == 'http' else 'grpcio'} ({a.client}), N requests in flight"}
    print(f"serve-bench: {', '.join(variants)} x {', '.join(payloads)} x concurrency {conc}, {duration:g} s each"
          f"{', model ' + a.model if a.model else ''} (load average {mach['load_average_at_start'][0]:.1f} on "
          f"{mach['cores']} cores)", file=sys.stderr)
    results: List[Dict[str, Any]] = []
    pa_rows: List[Dict[str, Any]] = []
    breakdown: Dict[str, Any] = {}
    batches: Dict[str, Dict[int, int]] = {}  # the batched variant's executions per batch size (warm-up, all levels)

    def extra_of(v: str) -> Tuple[str, ...]:
        extra = ("--workers", str(a.workers)) + (("--model", model_path) if model_path and v != "none" else ())
        if v == GOFRONT:  # no metrics endpoint: Go counts only the statistics
            extra += ("--frontend", "go")
        else:
            extra += ("--metrics-port", "0")  # every variant records the same request metrics
        if a.num_threads is not None:
            extra += ("--num-threads", str(a.num_threads))
        if not a.tune_malloc:
            extra += ("--no-tune-malloc",)
        if v == BATCHED:
            extra += ("--max-queue-delay", a.max_queue_delay)
        if a.protocol == "http":
            extra += ("--http-port", "0")
        return extra

    def report(v: str, r: Dict[str, Any]) -> None:
        results.append({"preprocess": v, **{k: r.get(k) for k in RESULT_KEYS if k != "preprocess"}})
        print(f"  {v:15s} {r['payload']:8s} c={r['concurrency']:<3d} {r['qps']:8.1f} qps  p50 {r['p50_ms']:7.2f} ms"
              f"  p99 {r['p99_ms']:7.2f} ms  errors {r['errors']}"
              + (f"  ({r['first_errors'][0]})" if r["first_errors"] else ""), file=sys.stderr)

    stack = ExitStack()
    tmp = pathlib.Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="goprep-serve-bench-")))
    env: List[Any] = []  # the PyTriton venv, made once when a PyTriton variant first starts

    def start(v: str) -> Any:
        """The server of variant ``v``, a context manager yielding its target and pid."""
        if v in PYTRITON:
            from .bench_triton import PyTritonEnv, pytriton_process

            if not env:
                env.append(PyTritonEnv(tmp / "pytriton"))
            return pytriton_process(env[0], v, model_path, delay_us)
        return server_process(preprocess_of(v), extra_of(v))

    def perf(srvs: Dict[str, Dict[str, Any]], payload: str) -> None:
        """perf_analyzer at the top level against each --perf-analyzer variant, with the payload's JPEGs."""
        if payload == "raw" or not pa_variants:
            return
        from .bench_triton import perf_analyzer
        from .loadgen import frames, jpegs, payload_size

        files = jpegs(frames(8, *payload_size(payload, fh, fw)))
        for v in pa_variants:
            if v in srvs:
                r = perf_analyzer(srvs[v]["target"], files, max(conc), duration, tmp, srvs[v].get("token", ""))
                pa_rows.append({"preprocess": v, "payload": payload, "concurrency": max(conc), **r})
                print(f"  {v:15s} {payload:8s} c={max(conc):<3d} perf_analyzer: "
                      + (f"{r['qps']:8.1f} qps  p99 {r['p99_ms']:7.2f} ms" if "qps" in r else r["error"]), file=sys.stderr)

    interleave = a.client == "aio" and a.rounds > 0
    mach["settings"]["interleaved_rounds"] = a.rounds if interleave else 0
    with stack:
        if interleave:
            # Every server up at once, driven in turns (the idle ones wait for requests).
            srvs = [stack.enter_context(start(v)) for v in variants]
            for payload in payloads:
                for level in run_load_interleaved([s[addr] for s in srvs], payload, conc, warmup, duration,
                                                  [s["pid"] for s in srvs], [v == "none" for v in variants], a.rounds,
                                                  model_path or False, (fh, fw), a.tune_malloc,
                                                  [preprocess_of(v) for v in variants], a.protocol):
                    for v, r in zip(variants, level):
                        report(v, r)
                perf(dict(zip(variants, srvs)), payload)
            if "goprep" in variants:
                breakdown = fetch_breakdown(srvs[variants.index("goprep")]["metrics"])
            if BATCHED in variants:
                batches[BATCHED] = fetch_batches(srvs[variants.index(BATCHED)]["target"])
            order = {(v, p): k for k, (v, p) in enumerate((v, p) for v in variants for p in payloads)}
            results.sort(key=lambda r: (order[r["preprocess"], r["payload"]], conc.index(r["concurrency"])))
        else:  # one server after the other
            for v in variants:
                with start(v) as srv:
                    for payload in payloads:
                        for r in run_load(srv[addr], payload, conc, warmup, duration, srv["pid"],
                                          (model_path or False) if v != "none" else False,
                                          frame=(fh, fw), none=v == "none", client=a.client, tune_malloc=a.tune_malloc,
                                          preprocess=preprocess_of(v), protocol=a.protocol):
                            report(v, r)
                        perf({v: srv}, payload)
                    if v == "goprep":
                        breakdown = fetch_breakdown(srv["metrics"])
                    if v == BATCHED:
                        batches[v] = fetch_batches(srv["target"])
    top = max(conc)
    doc: Dict[str, Any] = {"machine": mach, "results": results, "breakdown": breakdown}
    if batches:
        doc["batch_sizes"] = batches
    if pa_rows:
        doc["perf_analyzer"] = pa_rows
    for t in (table(results, top), table(results, top, "opencv", "OpenCV"), table(results, top, "goprep", "goprep", BATCHED),
              table(results, top, "goprep", "goprep", GOFRONT), table(results, top, other=GOFRONT),
              table(results, top, "opencv", "OpenCV", GOFRONT),
              table(results, top, "pytriton-opencv", "PyTriton+OpenCV", "pytriton-goprep")):
        if t:
            print()
            print(t)
    print()
    for r in pa_rows:
        own = _pick(results, r["preprocess"], r["payload"], r["concurrency"])
        if "qps" in r and own:
            print(f"perf_analyzer vs serve-bench's client, {r['preprocess']}, {r['payload']}, {r['concurrency']} in flight: "
                  f"{r['qps']:.0f} vs {own['qps']:.0f} QPS, P99 {r['p99_ms']:.1f} vs {own['p99_ms']:.1f} ms")
        elif "error" in r:
            print(f"perf_analyzer, {r['preprocess']}, {r['payload']}: {r['error']}")
    if BATCHED in batches and batches[BATCHED]:
        bs = batches[BATCHED]
        mean = sum(k * n for k, n in bs.items()) / sum(bs.values())
        print(f"{BATCHED}: {sum(bs.values())} executions, mean batch {mean:.2f} images, largest {max(bs)} "
              f"(--max-queue-delay {a.max_queue_delay})")
    for payload in payloads:
        floor = _peak(results, "none", payload)
        if floor:
            ms = floor.get("server_ms_per_request")
            wire = "REST" if a.protocol == "http" else "gRPC"
            print(f"server floor, {payload} ({wire} + decoding + reply, no preprocessing): peak {floor['qps']:.0f} QPS, "
                  + (f"{ms:.2f} ms server CPU per request" if ms is not None else "server CPU not measured"))
    if a.model == "tiny" and 16 in conc:  # issue 41's targets: setting (a), 16 in flight
        rows41 = targets_41(results, 16, mach["cores"] or 1)
        doc["targets"] = rows41
        if rows41:
            print(targets_table(rows41, mach["cores"] or 1))
        if "jpeg" in payloads and any(v in VARIANTS_OVERHEAD for v in variants):
            from .loadgen import frames, jpegs, payload_size
            from .overhead import inprocess_ms, overhead_rows, overhead_table

            inproc = inprocess_ms(model_path, jpegs(frames(8, *payload_size("jpeg", fh, fw))))
            doc["overhead"] = overhead_rows(results, "jpeg", 16, inproc)
            if doc["overhead"]:
                print(overhead_table(doc["overhead"]))
        if rows41 or doc.get("overhead"):
            load = (mach["load_average_at_start"][0], os.getloadavg()[0])
            if max(load) >= (mach["cores"] or 1):  # others wanted the cores too: each server got what was left
                print(f"the machine was shared: load average {load[0]:.1f} at the start, {load[1]:.1f} now, on "
                      f"{mach['cores']} cores; the servers' QPS are bound by the CPU left to them (server cores above)")
    elif not a.model:
        for what, met, got in targets(results, top):
            print(f"target {what}: {got} ({'met' if met else 'NOT met'})")
    prof = mach["profiler"]
    print(f"profiler, per call (tiny 4x4 flip; thread CPU time, median of {prof['rounds']:.0f} paired off/on rounds "
          f"[interquartile range]): pipeline {prof['call_us_profiling_off']:.2f} us off, "
          f"{prof['call_us_profiling_on']:.2f} us on, {prof['overhead_us']:+.2f} us "
          f"[{prof['overhead_us_q25']:+.2f}, {prof['overhead_us_q75']:+.2f}]; eager op "
          f"{prof['eager_call_us_profiling_off']:.2f} us off, {prof['eager_call_us_profiling_on']:.2f} us on, "
          f"{prof['eager_overhead_us']:+.2f} us [{prof['eager_overhead_us_q25']:+.2f}, "
          f"{prof['eager_overhead_us_q75']:+.2f}]; target < 1 us: {'met' if max(prof['overhead_us'], prof['eager_overhead_us']) < 1 else 'NOT met'}")
    errors = sum(r["errors"] for r in results)
    mach["load_average_at_end"] = os.getloadavg()
    print(f"replies checked: {sum(1 for _ in results)} runs, {errors} errors; load average {mach['load_average_at_end'][0]:.1f} "
          f"at the end; {time.monotonic() - started:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=2)
    return 1 if errors else 0
