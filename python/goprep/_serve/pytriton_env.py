"""A Python environment that runs PyTriton (Triton Inference Server 2.51) with this goprep build:
shared by tests/test_serve_pytriton.py and ``serve-bench``'s PyTriton variants (pytriton_server.py).

nvidia-pytriton 0.7 requires numpy<2, so it cannot share this environment (pip would downgrade NumPy
and the opencv-python-headless that requires numpy>=2 with it). ``cached_venv()`` builds a venv of this
interpreter holding PACKAGES (pip, from the package index: about 370 MB for PyTriton alone, ~60 s with
a cold pip cache on the 2-core machine; cached under CACHE, built once under a lock, a marker file
written last). ``overlay()`` makes a venv over it, without pip, whose one .pth file puts a folder
holding only a link to the goprep package this process imports, then the cached venv's
site-packages, on sys.path: PyTriton's process and the stub's embedded interpreter then see this very
goprep build and the cached venv's NumPy, PyTriton, OpenCV and onnxruntime, and nothing else of this
environment. goprep's extension links no libpython, so this interpreter's build of it loads in a venv
of the same interpreter.

Triton's Python-backend stub embeds the interpreter through ``libpython3.X.so.1.0`` and finds its
packages through the ``python3`` first on PATH (it ignores PYTHONPATH): the environment ``overlay()``
returns puts the overlay first on PATH and LD_LIBRARY_PATH at this interpreter's LIBDIR, so the stub
loads this interpreter's libpython and not another installation's of the same minor version
(Debian's 3.11.2 under pyenv's 3.11.7 fails: ``'_thread.RLock' object has no attribute
'_recursion_count'``, 3.11.7's standard library on 3.11.2's C core).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
from typing import Dict, Iterator, Optional, Tuple

PYTRITON = "nvidia-pytriton==0.7.0"  # bundles Triton Inference Server 2.51; its stubs: CPython 3.8-3.13
# What serve-bench's PyTriton variants also need: an OpenCV wheel built for NumPy 1 (4.11 and later
# require numpy>=2 on CPython 3.9+), Pillow (the header checks, decode.py), and onnxruntime for the
# model (1.32 accepts numpy>=1.21.6; the same version as the test extra's, so its results match).
PACKAGES = (PYTRITON, "opencv-python-headless==4.10.0.84", "onnxruntime==1.32.0", "pillow==12.0.0")
STUB_VERSIONS = ((3, 8), (3, 13))
CACHE = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "goprep" / "test-pytriton"
INSTALL_TIMEOUT_S = 900
# Triton's admin endpoints (statistics, the repository, ...) need the access token: the servers read it
# from this variable (examples/pytriton_server.py), clients send it in these headers.
TOKEN_ENV = "GOPREP_TRITON_TOKEN"
GRPC_TOKEN_HEADER = "triton-grpc-protocol-triton-access-token"
HTTP_TOKEN_HEADER = "triton-access-token"


def skip_reason() -> Optional[str]:
    """Why this interpreter cannot run PyTriton's Python-backend stub, or None."""
    if not (sys.platform == "linux" and sysconfig.get_platform().endswith("x86_64")):
        return "nvidia-pytriton 0.7 is tested here on Linux x86_64 only (its manylinux_2_35 x86_64 wheel)"
    if not STUB_VERSIONS[0] <= sys.version_info[:2] <= STUB_VERSIONS[1]:
        return f"nvidia-pytriton 0.7 ships Python-backend stubs for CPython 3.8-3.13, not {sys.version.split()[0]}"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "nvidia-pytriton 0.7 has no stub for free-threaded CPython"
    if not sysconfig.get_config_var("Py_ENABLE_SHARED") or not libpython():
        return ("PyTriton's Python-backend stub loads libpython3.X.so.1.0, and this interpreter is built "
                "without a shared libpython (Py_ENABLE_SHARED=0)")
    return None


def libpython() -> Optional[pathlib.Path]:
    """This interpreter's shared libpython, or None."""
    lib = pathlib.Path(sysconfig.get_config_var("LIBDIR") or "/nonexistent") / (sysconfig.get_config_var("INSTSONAME") or "-")
    return lib if lib.is_file() else None


@contextlib.contextmanager
def _locked(path: pathlib.Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached_venv(packages: Tuple[str, ...] = PACKAGES) -> pathlib.Path:
    """A venv of this interpreter with ``packages`` installed (cached: keyed by the interpreter and the
    package list, rebuilt when its marker is missing); its python. RuntimeError when pip fails."""
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    key = hashlib.sha256(f"{base}\n{sys.version}\n{' '.join(packages)}".encode()).hexdigest()[:12]
    venv = CACHE / f"py{sys.version_info[0]}{sys.version_info[1]}-{key}"
    python, done = venv / "bin" / "python", venv / "goprep-test-ready"
    with _locked(CACHE / f"{venv.name}.lock"):
        if not done.is_file():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
            p = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *packages],
                               capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
            if p.returncode != 0:
                raise RuntimeError(f"pip install {' '.join(packages)} into {venv} failed:\n{p.stdout[-3000:]}{p.stderr[-3000:]}")
            done.write_text(" ".join(packages))
    return python


def _purelib(python: pathlib.Path) -> pathlib.Path:
    return pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                       capture_output=True, text=True, check=True, timeout=120).stdout.strip())


def overlay(workdir: pathlib.Path, token: str, cached: Optional[pathlib.Path] = None
            ) -> Tuple[pathlib.Path, Dict[str, str], pathlib.Path]:
    """(the python to run, the servers' environment, PyTriton's package folder): an overlay venv
    under ``workdir`` (made without pip; see the module's comment) over ``cached`` (default
    cached_venv()), whose environment has the access token ``token`` in TOKEN_ENV and PyTriton's
    workspace under ``workdir``."""
    cached = cached or cached_venv()
    site = _purelib(cached)
    here = workdir / "goprep-only"
    here.mkdir(parents=True, exist_ok=True)
    import goprep

    package = pathlib.Path(goprep.__file__).resolve().parent
    for name in ("goprep", "goprep.libs"):  # goprep.libs: what auditwheel vendors, if a wheel has any
        if (package.parent / name).is_dir() and not (here / name).exists():
            (here / name).symlink_to(package.parent / name, target_is_directory=True)
    venv = workdir / "venv"
    subprocess.run([str(cached.resolve()), "-m", "venv", "--without-pip", "--clear", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (_purelib(python) / "goprep-overlay.pth").write_text(f"{here}\n{site}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    lib = libpython()
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        ([str(lib.parent)] if lib else []) + [str(site / "nvidia_pytriton.libs")]
        + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"  # the stub's python3
    env[TOKEN_ENV] = token
    cache = workdir / "cache"
    cache.mkdir(exist_ok=True)
    env["XDG_CACHE_HOME"] = str(cache)  # PyTriton's workspace, if a kill leaves it
    return python, env, site / "pytriton"
