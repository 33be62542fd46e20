"""Running Triton's ``perf_analyzer`` (shipped in the tritonclient wheel) against ``goprep serve``,
over gRPC or over KServe v2 REST (``--http-port``): where its libraries are, its input data, its
command. docs/TRITON.md "perf_analyzer" shows the command; tests/test_serve_triton.py (gRPC) and
tests/test_serve_perf_analyzer.py (both protocols) run it.

perf_analyzer links ``libb64.so.0d`` (Debian's libb64-0d: a system package,
scripts/perf_analyzer_deps.sh installs it) and ``libcudart.so.12`` (PyPI's nvidia-cuda-runtime-cu12,
in the test extra): ``python -m goprep._serve.perfanalyzer libdir`` prints the directory to put on
LD_LIBRARY_PATH. tritonclient's wheels from 2.52 on build it against glibc 2.38 and libstdc++'s
GLIBCXX_3.4.32 (Ubuntu 24.04): on an older system (Debian 12: glibc 2.36) it cannot start, so
``launcher`` runs it through the dynamic loader of a private newer C runtime: Debian 13's libc6,
libstdc++6 and libgcc-s1, pinned by hash (``RUNTIME``), fetched once from Debian's archive into
goprep's cache directory. ``python -m goprep._serve.perfanalyzer run ARGS...`` runs it that way.

Its ``--input-data`` JSON gives each input's content in base64: for BYTES the serialised tensor
(each element prefixed with its uint32 little-endian length, protocol.pack_bytes), for UINT8 the raw
bytes; and the shape of one batch item (``-b N`` sends N of them in one request).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple

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


# Debian 13's C runtime (glibc 2.41, GCC 14's libstdc++ and libgcc_s): per package, the .deb files
# that may serve it and their sha256, tried in order (Debian's pool drops a version some time after
# a point release supersedes it, so each package lists more than one where there is one)
_POOL = "http://deb.debian.org/debian/pool/main"
RUNTIME: Tuple[Tuple[Tuple[str, str], ...], ...] = (
    (("g/glibc/libc6_2.41-12+deb13u1_amd64.deb", "0a51c7ba7c59b3c664b836fe33c5184e6f5a869f57e86613381e954d74282b66"),
     ("g/glibc/libc6_2.41-12_amd64.deb", "6cff801097cd0eb2126b60e533f37afdc78456efacdf2bfae62877f00c795d0b")),
    (("g/gcc-14/libstdc++6_14.2.0-19_amd64.deb", "ab1fa05837aa7a92aae748fd07a18a35f7d18bb4a71c4724fe2bbf0e32089de0"),),
    (("g/gcc-14/libgcc-s1_14.2.0-19_amd64.deb", "3c71917b490d1a17aed43196a2787a256ecf060526cdb20216a74bedc061b150"),),
)
_LIBDIR = "usr/lib/x86_64-linux-gnu"
_LOADER = "ld-linux-x86-64.so.2"


def runtime_dir() -> str:
    """Where the private C runtime's libraries go: goprep's cache directory (XDG_CACHE_HOME, else
    ~/.cache), one directory per pinned set."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = hashlib.sha256("".join(h for pkg in RUNTIME for _, h in pkg).encode()).hexdigest()[:12]
    return os.path.join(base, "goprep", f"perf-analyzer-runtime-{tag}")


def _deb_data(deb: bytes) -> tarfile.TarFile:
    """The data archive of a .deb (an ar archive: debian-binary, control.tar.*, data.tar.*)."""
    if not deb.startswith(b"!<arch>\n"):
        raise ValueError("not a .deb (ar) archive")
    pos = 8
    while pos + 60 <= len(deb):
        name, size = deb[pos:pos + 16].decode().strip().rstrip("/"), int(deb[pos + 48:pos + 58].decode())
        body = deb[pos + 60:pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size & 1)
    raise ValueError("no data.tar in the .deb")


def _download(candidates: Sequence[Tuple[str, str]]) -> bytes:
    """The first of ``candidates`` (pool path, sha256) that downloads with its pinned hash; OSError
    naming every one that did not."""
    why = []
    for path, sha in candidates:
        try:
            with urllib.request.urlopen(f"{_POOL}/{path}", timeout=120) as r:
                deb = r.read()
        except OSError as e:
            why.append(f"{path}: {e}")
            continue
        if hashlib.sha256(deb).hexdigest() == sha:
            return deb
        why.append(f"{path}: sha256 differs from the pinned one")
    raise OSError("cannot fetch perf_analyzer's C runtime from Debian's archive: " + "; ".join(why))


def fetch_runtime() -> str:
    """The private runtime's library directory, fetched and unpacked first when it is not there yet
    (each .deb checked against its pinned sha256; only the shared libraries directly under usr/lib are
    kept, by their base names). Unpacked into a directory of this process and thread, then renamed
    into place: a process fetching at the same time either wins the rename or finds the other's.
    OSError / ValueError when it cannot be had."""
    d = runtime_dir()
    if os.path.exists(os.path.join(d, _LOADER)):
        return d
    tmp = f"{d}.tmp{os.getpid()}-{threading.get_ident()}"
    try:
        os.makedirs(tmp, exist_ok=True)
        for pkg in RUNTIME:
            with _deb_data(_download(pkg)) as tar:
                for m in tar.getmembers():
                    name = m.name.lstrip("./")
                    if (m.isfile() or m.issym()) and os.path.dirname(name) == _LIBDIR:
                        m.name = os.path.basename(name)
                        tar.extract(m, tmp, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
        try:
            os.replace(tmp, d)
        except OSError:  # another process put it there first
            if not os.path.exists(os.path.join(d, _LOADER)):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return d


def _starts(argv: List[str]) -> Tuple[bool, str]:
    """Whether ``argv + ["--version"]`` runs perf_analyzer (exit 0 and its banner), and what it printed."""
    r = subprocess.run(argv + ["--version"], env=env(), capture_output=True, text=True, timeout=60)
    out = (r.stdout + r.stderr).strip()
    return r.returncode == 0 and "Perf Analyzer" in out, out


@functools.lru_cache(maxsize=None)
def launcher() -> List[str]:
    """The argv prefix that starts perf_analyzer here: the executable itself, or, where the system's C
    runtime is older than the one it was built against ("version `GLIBC_2.38' not found"), the private
    runtime's dynamic loader with its libraries first (then libcudart's directory, LD_LIBRARY_PATH and
    the system's). A perf_analyzer that cannot start for another reason (libb64 missing, say) is
    returned as it is: running it shows why. RuntimeError when it is not installed."""
    exe = binary()
    if exe is None:
        raise RuntimeError("perf_analyzer is not installed (tritonclient's manylinux wheel up to 2.60: the test extra)")
    ok, out = _starts([exe])
    if ok or not re.search(r"version `GLIBC(XX)?_[\d.]+' not found", out):
        return [exe]
    d = fetch_runtime()
    dirs = [d, cudart_dir() or "", *os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep),
            "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"]
    return [os.path.join(d, _LOADER), "--library-path", os.pathsep.join(x for x in dirs if x), exe]


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
    try:
        prefix = launcher()
    except (RuntimeError, OSError, ValueError):  # not installed, or its C runtime cannot be had: the
        prefix = ["perf_analyzer"]  # command as the docs show it (running it says why)
    return [*prefix, "-m", model, "-u", target, "-i", protocol, "--input-data", input_json, "-b", str(batch),
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
    if argv[:1] == ["run"]:  # perf_analyzer ARGS as launcher starts it
        return subprocess.run(launcher() + argv[1:], env=env()).returncode
    if argv != ["libdir"]:
        print("usage: python -m goprep._serve.perfanalyzer libdir | run ARGS...", file=sys.stderr)
        return 2
    d = cudart_dir()
    if d is None:
        print(f"{CUDART_DIST} is not installed (pip install {CUDART_DIST})", file=sys.stderr)
        return 1
    print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
