"""serve-bench's PyTriton variants (pytriton_server.py in pytriton_env's overlay venv) and its second
client, Triton's perf_analyzer (perfanalyzer.py): starting and stopping the PyTriton servers, and one
bounded perf_analyzer measurement of a server with the load generator's JPEGs.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pathlib
import queue
import secrets
import signal
import socket
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence

# the variants, and the preprocessing each one's bound function runs
PYTRITON = {"pytriton-opencv": "opencv", "pytriton-goprep": "goprep"}
START_TIMEOUT_S = 180.0  # up and its model loaded: 6-10 s measured on the 2-core machine, more when loaded
STOP_TIMEOUT_S = 30.0


class PyTritonEnv:
    """The overlay venv the PyTriton servers run in (pytriton_env.overlay, made once per serve-bench
    run under ``workdir``) and the access token its servers get."""

    def __init__(self, workdir: pathlib.Path) -> None:
        from . import pytriton_env

        reason = pytriton_env.skip_reason()
        if reason:
            raise RuntimeError(f"the PyTriton variants cannot run with this interpreter: {reason}")
        self.token = secrets.token_hex(16)
        self.python, self.env, _ = pytriton_env.overlay(workdir, self.token)


def free_ports(n: int) -> List[int]:
    """``n`` loopback ports free now (another process may take one before it is bound: callers retry)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _stop(proc: "subprocess.Popen[str]") -> None:
    """SIGTERM, then whatever is left of its process group (tritonserver, the stubs) killed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_TIMEOUT_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=STOP_TIMEOUT_S)


@contextlib.contextmanager
def pytriton_process(env: PyTritonEnv, variant: str, model_path: str, max_queue_delay_us: int = 2000,
                     max_batch_size: int = 32) -> Iterator[Dict[str, Any]]:
    """A PyTriton server of ``variant`` (PYTRITON) on free loopback ports, in its own process group:
    yields its gRPC address and pid (the Python process; tritonserver is its child); always stopped.
    Retries on other ports when one was taken (three tries); RuntimeError with its log when it does
    not come up within START_TIMEOUT_S."""
    from .pytriton_server import READY

    for _ in range(3):
        ports = free_ports(3)
        cmd = [str(env.python), "-m", "goprep._serve.pytriton_server", "--preprocess", PYTRITON[variant],
               "--model", model_path, "--grpc-port", str(ports[0]), "--http-port", str(ports[1]),
               "--metrics-port", str(ports[2]), "--max-queue-delay-us", str(max_queue_delay_us),
               "--max-batch-size", str(max_batch_size), "--parent-pid", str(os.getpid())]
        proc = subprocess.Popen(cmd, env=env.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", start_new_session=True, stdin=subprocess.DEVNULL)
        lines: List[str] = []
        q: "queue.Queue[Optional[str]]" = queue.Queue()

        def read(out: Any = proc.stdout) -> None:  # drains the pipe for the server's whole life
            for line in out:
                if len(lines) < 2000:
                    lines.append(line)
                q.put(line)
            q.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline, state = time.monotonic() + START_TIMEOUT_S, ""
        try:
            while not state:
                try:
                    line = q.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    state = "timeout"
                    break
                if line is None:
                    state = "exited"
                elif "already in use" in line:
                    state = "port"
                elif line.startswith(READY):
                    state = "ready"
        except BaseException:
            _stop(proc)
            raise
        if state == "ready":
            break
        _stop(proc)
        if state != "port":
            raise RuntimeError(f"PyTriton server {variant} did not start ({state}):\n{''.join(lines[-60:])}")
    else:
        raise RuntimeError("three sets of free ports were taken before the PyTriton server bound them")
    try:
        yield {"target": f"127.0.0.1:{ports[0]}", "pid": proc.pid, "proc": proc, "token": env.token}
    finally:
        _stop(proc)


def perf_analyzer(target: str, files: Sequence[bytes], concurrency: int, seconds: float, workdir: pathlib.Path,
                  token: str = "", timeout: float = 300.0) -> Dict[str, Any]:
    """One perf_analyzer run over gRPC against ``target`` (model goprep, one file per request, cycling
    through ``files``) at ``concurrency`` in flight: three windows of ``seconds / 3``. Returns its
    ``{"qps", "p99_ms", "p50_ms"}`` (its CSV), or ``{"error": why}`` when it is not installed or fails
    twice (perf_analyzer checks no reply; serve-bench's own client does)."""
    from . import perfanalyzer

    if perfanalyzer.binary() is None:
        return {"error": "perf_analyzer is not installed (tritonclient's wheel)"}
    data = workdir / f"pa-input-{len(files)}.json"
    data.write_text(json.dumps(perfanalyzer.input_data(files=files)))
    out = workdir / "pa.csv"
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    window = max(200, int(seconds * 1000 / 3))
    for attempt in range(2):
        # perf_analyzer exits 2 ("Failed to obtain stable measurement") unless its last three windows'
        # QPS and P99 are all within the stability percentage of their mean: at 999% (perfanalyzer.py's)
        # one window far off the others on the loaded shared machine failed a run (goprep, 2 s windows). One
        # number is wanted here, not a stable one: any window is accepted (100000%), and a failure is
        # retried once with windows twice as long.
        cmd = perfanalyzer.command(target, str(data), concurrency=concurrency, window_ms=window * (1 + attempt),
                                   trials=3)
        cmd[cmd.index("--stability-percentage") + 1] = "100000"
        cmd += ["-f", str(out), "--percentile", "99"]
        if token:
            from .pytriton_env import GRPC_TOKEN_HEADER

            cmd += ["-H", f"{GRPC_TOKEN_HEADER}:{token}"]
        try:
            r = subprocess.run(cmd, env=perfanalyzer.env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"perf_analyzer ran past {timeout:.0f} s"}
        if r.returncode == 0 and out.is_file():
            break
    else:
        return {"error": f"perf_analyzer failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-400:]}"}
    with open(out) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {"error": "perf_analyzer wrote no result"}
    row = rows[0]
    return {"qps": float(row["Inferences/Second"]), "p99_ms": float(row["p99 latency"]) / 1e3,
            "p50_ms": float(row["p50 latency"]) / 1e3}
