import pytest

import goprep
from conftest import run_python


@pytest.mark.slow
def test_ld_bind_now_info_devices():
    p = run_python(
        "import goprep; i = goprep.info(); d = goprep.devices(); print(sorted(i), type(d).__name__)",
        env={"LD_BIND_NOW": "1"},
    )
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}"


@pytest.mark.slow
def test_import_is_lazy_and_loads_no_gpu_libs():
    p = run_python(
        r"""
import importlib.machinery, os, sys
import goprep
pkg_dir = os.path.dirname(os.path.realpath(goprep.__file__))
suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES) + (".so",)
# the native extension is a compiled module: no goprep submodule may come from a shared library yet
native = sorted(
    name for name, m in list(sys.modules.items())
    if name.startswith("goprep") and str(getattr(m, "__file__", "") or "").endswith(suffixes)
)
maps = open("/proc/self/maps").read()
mapped = {l.split()[-1] for l in maps.splitlines() if len(l.split()) >= 6}
gpu = sorted(p for p in mapped if "libcuda" in p or "libnvidia-ml" in p)
so = sorted(p for p in mapped if os.path.realpath(p).startswith(pkg_dir) or "_native" in os.path.basename(p))
print("NATIVE", native)
print("GPU", gpu)
print("SO", so)
assert not native, native
assert not gpu, gpu
assert not so, so
# touching the public names must not crash either
for n in ["resize", "flip", "crop", "letterbox", "cvt_color", "normalize", "pipeline", "LetterboxInfo",
          "set_num_threads", "get_num_threads", "info", "devices", "GoprepError", "ForkError"]:
    getattr(goprep, n)
"""
    )
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}"


def test_public_names():
    for name in [
        "resize", "flip", "crop", "letterbox", "cvt_color", "normalize", "pipeline", "LetterboxInfo",
        "set_num_threads", "get_num_threads", "info", "devices", "GoprepError", "InvalidArgumentError",
        "ShapeError", "DTypeError", "PipelineError", "BackendError", "DeviceError", "ForkError",
    ]:
        assert hasattr(goprep, name), name


def test_info_keys():
    i = goprep.info()
    assert isinstance(i, dict)
    for k in ["version", "backend", "threads", "cuda_available", "cuda_reason"]:
        assert k in i, f"info() lacks {k!r}: {i}"
    assert isinstance(i["version"], str) and i["version"]
    assert isinstance(i["backend"], str) and i["backend"]
    assert isinstance(i["threads"], int) and i["threads"] == goprep.get_num_threads()
    assert isinstance(i["cuda_available"], bool)
    if not i["cuda_available"]:
        assert isinstance(i["cuda_reason"], str) and i["cuda_reason"], "cuda_reason should say why"


def test_devices():
    d = goprep.devices()
    assert isinstance(d, list)
    if not goprep.info()["cuda_available"]:
        assert d == []


def test_version_attribute_matches_info():
    import importlib.metadata

    v = goprep.__version__
    assert isinstance(v, str) and v[0].isdigit(), v
    assert v == goprep.info()["version"] == goprep.info()["engine_version"]
    assert v == importlib.metadata.version("goprep")  # what pip installed


@pytest.mark.slow
def test_use_after_lazy_import_in_subprocess():
    p = run_python(
        r"""
import numpy as np, goprep
x = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
assert np.array_equal(goprep.flip(x), x[:, ::-1])
print("ok")
"""
    )
    assert p.returncode == 0 and "ok" in p.stdout, p.stderr


@pytest.mark.slow
def test_version_has_one_source():
    """__init__.py's __version__ is the only place the version is written: pyproject.toml reads it and the
    engine's copy (gomod/binding/version.go) is generated from it and checked fresh here and in CI."""
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parent.parent
    if not (root / "scripts" / "gen_version.py").exists():
        pytest.skip("not run from a source checkout")
    p = subprocess.run([sys.executable, str(root / "scripts" / "gen_version.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    toml = (root / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in toml and 'attr = "goprep.__version__"' in toml
