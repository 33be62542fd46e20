"""goprep's documented submodules (transforms, data, triton, metrics, ray, dask, testing) work after a plain
``import goprep`` (PEP 562 lazy imports), without making ``import goprep`` load anything heavy.

Each check runs in a fresh interpreter: in this test process other tests have already imported the
submodules, which would hide a missing lazy import."""

import pytest

from conftest import run_python

pytestmark = pytest.mark.slow  # a fresh interpreter per check

# What the docs spell after `import goprep`, and the attribute each names.
DOCUMENTED = {
    "transforms": ["from_torchvision", "from_hf", "from_timm"],
    "metrics": ["register", "unregister", "enable_tracing"],
    "ray": ["Preprocessor", "preprocess", "deployment"],
    "dask": ["map_blocks"],
    "testing": ["simulate_gpu", "inject_gpu_fault"],
    "data": ["Loader", "Dataset", "image_folder", "files"],
    "triton": ["infer_func", "run_requests"],
}

# Never loaded by `import goprep` alone: the optional libraries, OpenCV/Pillow, and goprep's own native
# extension and lazily imported submodules.
HEAVY = ["torch", "torchvision", "transformers", "timm", "ray", "dask", "distributed", "prometheus_client",
         "grpc", "onnxruntime", "opentelemetry", "pandas", "pyarrow", "cv2", "PIL", "goprep._ext._native",
         *(f"goprep.{m}" for m in DOCUMENTED)]


def _ok(p):
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p.stdout


@pytest.mark.parametrize("sub", sorted(DOCUMENTED))
def test_documented_spelling_works_after_plain_import(sub):
    out = _ok(run_python(f"""
        import goprep
        mod = goprep.{sub}
        import sys
        assert mod is sys.modules["goprep.{sub}"], mod
        for name in {DOCUMENTED[sub]!r}:
            assert callable(getattr(goprep.{sub}, name)), name
        print("OK", mod.__name__)
    """))
    assert f"OK goprep.{sub}" in out


def test_import_goprep_loads_no_heavy_module():
    out = _ok(run_python(f"""
        import sys
        import goprep
        dir(goprep)  # listing the submodules imports none of them
        loaded = [m for m in {HEAVY!r} if m in sys.modules]
        print("LOADED", loaded)
    """))
    assert "LOADED []" in out, out


def test_dir_lists_submodules_and_unknown_names_still_fail():
    out = _ok(run_python(f"""
        import goprep
        names = dir(goprep)
        assert set({sorted(DOCUMENTED)!r}) <= set(names), names
        assert "resize" in names and "pipeline" in names
        try:
            goprep.no_such_thing
        except AttributeError as e:
            assert "no_such_thing" in str(e), e
        else:
            raise AssertionError("goprep.no_such_thing did not raise")
        assert not hasattr(goprep, "_ext_nonexistent")
        print("OK")
    """))
    assert "OK" in out


def test_star_import_imports_no_submodule():
    out = _ok(run_python("""
        import sys
        from goprep import *
        print("LOADED", [m for m in ("goprep.ray", "goprep.dask", "goprep.transforms") if m in sys.modules])
    """))
    assert "LOADED []" in out, out


@pytest.mark.parametrize(
    "blocked,spelling,extra",
    [
        ("ray", "goprep.ray", "ray"),
        ("dask", "goprep.dask", "dask"),
        ("prometheus_client", "goprep.metrics.register()", "serve"),
        ("opentelemetry", "goprep.metrics.enable_tracing()", "serve"),
    ],
)
def test_missing_optional_dependency_names_the_extra(blocked, spelling, extra):
    # sys.modules[name] = None is Python's own way to make `import name` fail.
    out = _ok(run_python(f"""
        import sys
        sys.modules[{blocked!r}] = None
        import goprep
        try:
            {spelling}
        except ImportError as e:
            msg = str(e)
            assert e.name == {blocked!r}, e.name
            print("MSG", msg)
        else:
            raise AssertionError("{spelling} did not raise ImportError")
    """))
    assert f'pip install ".[{extra}]"' in out, out
    assert blocked in out, out


def test_explicit_submodule_import_without_dependency_names_the_extra():
    out = _ok(run_python("""
        import sys
        sys.modules["ray"] = None
        try:
            import goprep.ray
        except ImportError as e:
            print("MSG", e)
    """))
    assert 'pip install ".[ray]"' in out, out
