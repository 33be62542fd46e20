"""Running Triton's ``perf_analyzer`` (shipped in the tritonclient wheel) against ``goprep serve``,
over gRPC or over KServe v2 REST (``--http-port``): where its libraries are, its input data, its
command. docs/SERVING.md "perf_analyzer" shows the command; tests/test_serve_triton.py (gRPC) and
tests/test_serve_perf_analyzer.py (both protocols) run it.

perf_analyzer links ``libb64.so.0d`` (Debian's libb64-0d: a system package,
scripts/perf_analyzer_deps.sh installs it) and ``libcudart.so.12`` (PyPI's nvidia-cuda-runtime-cu12,
in the test extra): ``python -m goprep._serve.perfanalyzer libdir`` prints the directory to put on
LD_LIBRARY_PATH.

Its ``--input-data`` JSON gives each input's content in base64: for BYTES the serialised tensor
(each element prefixed with its uint32 little-endian length, protocol.pack_bytes), for UINT8 the raw
bytes; and the shape of one batch item (``-b N`` sends N of them in one request).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import sys
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import protocol

CUDART_DIST = "nvidia-cuda-runtime-cu12"
CUDART = "libcudart.so.12"


def _installed(dist_name: str, file_name: str) -> Optional[str]:
    """Where the installed distribution ``dist_name`` put its file ``file_name`` (its RECORD), or None:
    found whatever PATH says and from any environment that sees the distribution (a venv with the
    system's site-packages too)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == file_name:
            return os.path.abspath(str(dist.locate_file(f)))
    return None


def binary() -> Optional[str]:
    """The perf_analyzer executable the tritonclient wheel installed, else the one on PATH."""
    p = _installed("tritonclient", "perf_analyzer")
    return p if p is not None and os.access(p, os.X_OK) else shutil.which("perf_analyzer")


def cudart_dir() -> Optional[str]:
    """The directory of libcudart.so.12 in the installed nvidia-cuda-runtime-cu12 wheel (None: not
    installed)."""
    p = _installed(CUDART_DIST, CUDART)
    return None if p is None else os.path.dirname(p)


def env() -> Dict[str, str]:
    """This process's environment with libcudart's directory first on LD_LIBRARY_PATH."""
    e = dict(os.environ)
    d = cudart_dir()
    if d:
        e["LD_LIBRARY_PATH"] = d + (os.pathsep + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
    return e


def input_data(files: Sequence[bytes] = (), frames: Sequence[np.ndarray] = ()) -> Dict[str, Any]:
    """perf_analyzer's --input-data document: one entry per file (input IMAGE, item shape [1]) and per
    frame (input FRAME, item shape [H, W, 3]); perf_analyzer cycles through them."""
    data: List[Dict[str, Any]] = []
    for f in files:
        raw = protocol.pack_bytes([f])
        data.append({protocol.IMAGE: {"content": {"b64": base64.b64encode(raw).decode()}, "shape": [1]}})
    for a in frames:
        a = np.ascontiguousarray(a, np.uint8)
        if a.ndim != 3 or a.shape[2] != 3:
            raise ValueError(f"a frame must be (H, W, 3) uint8, got shape {a.shape}")
        data.append({protocol.FRAME: {"content": {"b64": base64.b64encode(a.tobytes()).decode()},
                                      "shape": list(a.shape)}})
    return {"data": data}


PROTOCOLS = ("grpc", "http")


def command(target: str, input_json: str, model: str = "goprep", batch: int = 1, concurrency: int = 1,
            window_ms: int = 500, trials: int = 3, protocol: str = "grpc") -> List[str]:
    """A bounded perf_analyzer run over ``protocol`` (grpc: ``target`` is the gRPC address; http: the
    ``--http-port`` address, KServe v2 REST): ``trials`` windows of ``window_ms`` at most (stability
    is not waited for), ``batch`` items per request, ``concurrency`` requests in flight."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    exe = binary() or "perf_analyzer"
    return [exe, "-m", model, "-u", target, "-i", protocol, "--input-data", input_json, "-b", str(batch),
            "--concurrency-range", str(concurrency), "--measurement-mode", "time_windows",
            "-p", str(window_ms), "--max-trials", str(trials), "--stability-percentage", "999"]


_CLIENT = re.compile(r"Client:\s+Request count: (\d+)")
_SERVER = re.compile(r"Server:\s+Inference count: (\d+)\s+Execution count: (\d+)\s+Successful request count: (\d+)")


def summary(stdout: str) -> Dict[str, Optional[int]]:
    """The counts of a perf_analyzer run's report (its last measurement): the requests its client
    counted (``requests``), and the server's side, read from ModelStatistics around the window
    (``inferences``, ``executions``, ``successes``; None when it printed no server side, as for a
    server whose ServerMetadata does not list ``statistics``). ValueError when there is no report."""
    client = _CLIENT.findall(stdout)
    if not client:
        raise ValueError(f"no perf_analyzer report in its output: {stdout[-500:]!r}")
    server = _SERVER.findall(stdout)
    inferences, executions, successes = map(int, server[-1]) if server else (None, None, None)
    return {"requests": int(client[-1]), "inferences": inferences, "executions": executions, "successes": successes}


def main(argv: List[str]) -> int:
    if argv != ["libdir"]:
        print("usage: python -m goprep._serve.perfanalyzer libdir", file=sys.stderr)
        return 2
    d = cudart_dir()
    if d is None:
        print(f"{CUDART_DIST} is not installed (pip install {CUDART_DIST})", file=sys.stderr)
        return 1
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
