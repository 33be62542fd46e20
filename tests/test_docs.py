"""Every code block in README.md and docs/*.md runs as written.

- ```python blocks each run, as a test of their own, in a fresh namespace that holds only what the
  block imports, with goprep's lazily imported submodules (goprep.transforms, .ray, ...) unloaded as
  in a new process, so a block that relies on an earlier block's names or imports fails: a reader
  can copy any one block.
  Every block of docs/GPU.md, and a block right after `<!-- docs-test: needs-cuda-gpu -->` in any
  file, runs on a GPU: the real one when goprep can use one, else the simulated GPU of
  goprep.testing (the real CUDA kernels compiled for the CPU). A block right after
  `<!-- docs-test: needs-torch-cuda -->` hands device memory to PyTorch, which the simulated GPU's
  host memory cannot be: it runs only with a real GPU and a CUDA PyTorch, and is reported as skipped,
  with that reason, elsewhere. A block right after `<!-- no-run: why -->` (a cluster, the reader's own
  model) is compiled only, and reported as skipped with its why.
- ```sh blocks: each `python -m goprep ...` command runs (with this Python); the install, build and
  test commands (pip install, go test, pytest, scripts/build_wheels.sh, python -m build) are what
  .ci/run runs, so they are only recognised here, and reported as skipped with what CI runs of each
  (of build_wheels.sh's versions: which wheels CI builds, which it never does). Any other command
  fails this test, so that a new block cannot slip through unrun.
"""

import contextlib
import gc
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

import goprep

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NEEDS_GPU = "<!-- docs-test: needs-cuda-gpu -->"  # runs on the real GPU, else the simulated one
NEEDS_TORCH_CUDA = "<!-- docs-test: needs-torch-cuda -->"  # runs only with a real GPU and a CUDA PyTorch
NO_RUN = "<!-- no-run:"  # followed by why: such a block is compiled, not run
README = ROOT / "README.md"
README_MAX_LINES = 150  # the README is the product page; detail goes to docs/
CI_COMMANDS = ("pip install", "go test", "pytest", "scripts/build_wheels.sh", "bash scripts/build_wheels.sh",
               "python -m build")
NO_TORCH_CUDA = ("the simulated GPU's device memory is host memory, which PyTorch cannot take as CUDA "
                 "tensors: it runs with a real GPU and a CUDA build of PyTorch")

BLOCK = re.compile(r"(?P<before>[^\n]*)\n```(?P<lang>\w+)\n(?P<body>.*?)```", re.S)


def blocks(path):
    """(lang, body, line, marker, note) for each fenced block of a Markdown file; marker is the
    `docs-test`/`no-run` comment on the line before it ("needs-cuda-gpu", "needs-torch-cuda", "no-run")
    or "", note that comment's text."""
    text = path.read_text()
    out = []
    for m in BLOCK.finditer("\n" + text):
        line = text.count("\n", 0, max(m.start("body") - 1, 0)) + 1
        prev = m.group("before") + text[: max(m.start() - 1, 0)].rstrip().rsplit("\n", 1)[-1]
        marks = [name for name, mark in (("needs-cuda-gpu", NEEDS_GPU), ("needs-torch-cuda", NEEDS_TORCH_CUDA),
                                         ("no-run", NO_RUN)) if mark in prev]
        assert len(marks) <= 1, f"{path.name}:{line}: one marker a block, got {marks}"
        note = re.search(r"<!--\s*(.*?)\s*-->", prev)
        out.append((m.group("lang"), m.group("body"), line, marks[0] if marks else "",
                    note.group(1) if marks and note else ""))
    return out


def _real_gpu():
    return bool(goprep.devices())


def _rel(path):
    return str(path.relative_to(ROOT))


# goprep's public submodules, which `import goprep` imports only on first access (PEP 562).
LAZY_SUBMODULES = ("transforms", "metrics", "ray", "dask", "testing", "data", "triton")


@contextlib.contextmanager
def _as_in_a_new_process():
    """Unload goprep's lazily imported submodules for the duration (restoring this process's after), so
    that a block which uses `goprep.transforms` without importing it works only through the lazy import."""
    saved = {}
    for sub in LAZY_SUBMODULES:
        saved[sub] = sys.modules.pop(f"goprep.{sub}", None)
        goprep.__dict__.pop(sub, None)
    try:
        yield
    finally:
        for sub, mod in saved.items():
            sys.modules.pop(f"goprep.{sub}", None)
            goprep.__dict__.pop(sub, None)
            if mod is not None:
                sys.modules[f"goprep.{sub}"] = mod
                setattr(goprep, sub, mod)


@contextlib.contextmanager
def _simulated_gpu():
    """goprep.testing's simulated GPU for the duration, its counters and breaker reset before and after."""
    import goprep.testing as gt

    gt.simulate_gpu(True)
    gt.reset_gpu()
    try:
        yield
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)


def _run_block(code):
    """Run one compiled block in a namespace of its own."""
    namespace: dict = {"__name__": "__docs__"}
    try:
        with _as_in_a_new_process():
            exec(code, namespace)
    finally:
        # Drop the block's objects now (DeviceArrays hold pooled device memory that later tests count);
        # a failure's traceback would otherwise keep the namespace alive.
        namespace.clear()
        gc.collect()


def _why_no_torch_cuda(real_gpu):
    """Why a needs-torch-cuda block cannot run here, or "" when it can."""
    if not real_gpu:
        return "no GPU goprep can use: " + NO_TORCH_CUDA
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed: " + NO_TORCH_CUDA
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} has no usable CUDA: " + NO_TORCH_CUDA
    return ""


PY_BLOCKS = [(p, body, line, marker, note) for p in DOCS for lang, body, line, marker, note in blocks(p)
             if lang == "python"]


@pytest.mark.parametrize("path,body,line,marker,note", PY_BLOCKS, ids=[f"{_rel(b[0])}:{b[2]}" for b in PY_BLOCKS])
def test_python_block_runs(path, body, line, marker, note):
    import goprep.testing as gt

    code = compile("\n" * (line - 1) + body, _rel(path), "exec")  # tracebacks point at the doc's line
    if marker == "no-run":  # it needs a cluster or the reader's own model: compiled only
        pytest.skip(f"compiled, not run: {note}")
    real_gpu = _real_gpu()  # asked before the simulated GPU is switched on
    if marker == "needs-torch-cuda" and (why := _why_no_torch_cuda(real_gpu)):
        pytest.skip(why)
    if real_gpu or not (marker == "needs-cuda-gpu" or path.name == "GPU.md"):
        _run_block(code)
        return
    if not gt.simulated_gpu_available():
        pytest.skip("needs a GPU: none goprep can use, and this extension has no simulated one (built "
                    "without -tags cpukernel)")
    with _simulated_gpu():
        _run_block(code)
        gpu = goprep.info()["gpu"]
    # a GPU block that ran nothing on the GPU, or fell back to the CPU, would pass silently
    assert gpu["gpu_calls"] > 0 and gpu["gpu_failures"] == gpu["cpu_fallbacks"] == 0, (
        f"{_rel(path)}:{line}: the block did not run on the simulated GPU cleanly: {gpu}")


def test_readme_is_at_most_150_lines():
    n = len(README.read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines: move detail to docs/ (at most {README_MAX_LINES})"


def test_readme_usage_example_results():
    ns: dict = {}
    (body,) = [b for lang, b, *_ in blocks(ROOT / "README.md") if lang == "python" and "def prep" in b]
    exec(compile(body, "README.md", "exec"), ns)
    assert ns["x"].shape == (3, 224, 224)
    assert ns["batch"].shape == (8, 3, 224, 224)
    assert ns["mixed"].shape == (2, 3, 224, 224)
    assert ns["boxes"].shape == (1, 4)


def _commands(body):
    for raw in body.splitlines():
        raw = raw.split(" #", 1)[0].strip()
        if raw and not raw.startswith("#"):
            yield from (c.strip() for c in raw.split("&&"))


SH = [(p, line, cmd) for p in DOCS for lang, body, line, *_ in blocks(p) if lang in ("sh", "bash")
      for cmd in _commands(body)]


CI_RUN = ROOT / ".ci" / "run"
DEVELOPING = ROOT / "docs" / "DEVELOPING.md"
BUILD_WHEELS = "scripts/build_wheels.sh"


def _ci_test_command():
    """The README's test command, split at &&, as .ci/run extracts it (the sh block after the marker)."""
    m = re.search(r"<!-- ci-test-command -->\n```sh\n(.*?)```", README.read_text(), re.S)
    assert m, "README.md lost its <!-- ci-test-command --> block, which .ci/run runs"
    return list(_commands(m.group(1)))


def _ci_assignment(text, var):
    m = re.search(rf"^{var}=(\S+)$", text, re.M)
    assert m, f".ci/run passes ${var} to {BUILD_WHEELS} but never assigns it a plain value"
    return m.group(1)


def ci_wheels():
    """The wheels .ci/run builds and tests, by architecture, as build_wheels.sh names their CPythons
    ({"x86_64": {"3.11", "3.14", "3.14t"}, "aarch64": {"3.11"}}): read from its build_wheels.sh calls,
    a "$var" argument as that variable's first plain assignment (ci_python=, ft=)."""
    text = CI_RUN.read_text()
    wheels: dict = {"x86_64": set(), "aarch64": set()}
    for line in text.splitlines():
        if line.strip().startswith(("#", "echo ")):
            continue
        for m in re.finditer(r"build_wheels\.sh((?: +(?:--arch \w+|\"\$\w+\"|3\.\d+t?))+)", line):
            args = m.group(1).split()
            arch = "x86_64"
            if args[0] == "--arch":
                arch, args = args[1], args[2:]
            wheels[arch] |= {_ci_assignment(text, a[2:-1]) if a.startswith('"$') else a for a in args}
    return wheels


def _pyversions(vs):
    return sorted(vs, key=lambda v: (tuple(map(int, v.rstrip("t").split("."))), v.endswith("t")))


def _listed(vs):
    vs = _pyversions(vs)
    return ", ".join(vs[:-1]) + " and " + vs[-1] if len(vs) > 1 else "".join(vs)


def advertised_wheels():
    """The CPythons scripts/build_wheels.sh builds by default: those pyproject advertises
    (tests/test_install.py checks that they agree)."""
    script = (ROOT / BUILD_WHEELS).read_text()
    return re.search(r"\|\| VERSIONS=\(([^)]*)\)", script).group(1).split()


def what_ci_runs(cmd):
    """What .ci/run runs of an install, build or test command that a doc shows, each claim checked
    against .ci/run, the README and pyproject.toml: why test_shell_commands does not run it itself."""
    readme = _ci_test_command()
    if cmd in readme:
        return f"part of the README's test command, which .ci/run runs as written: {' && '.join(readme)}"
    argv = shlex.split(cmd)
    if argv[0] == "pytest":
        assert "pytest" in readme, readme
        return "a selection of the tests that .ci/run runs whole (the README test command's pytest)"
    if argv[:2] == ["pip", "install"] and len(argv) == 3:
        extra = re.fullmatch(r"\.(?:\[(\w+)\])?", argv[2])
        assert extra, f"{cmd!r}: teach tests/test_docs.py what CI runs of it"
        test_extra = re.search(r"^test = \[(.*)$", (ROOT / "pyproject.toml").read_text(), re.M).group(1)
        bundled = re.search(r'"goprep\[([\w,]+)\]"', test_extra).group(1).split(",")
        assert extra.group(1) in (None, *bundled), f"{cmd!r}: the test extra does not include it"
        return ("the README test command's pip install \".[test]\" installs this tree"
                + (f" with the test extra, which includes [{extra.group(1)}]" if extra.group(1) else ""))
    if BUILD_WHEELS in argv:
        args = argv[argv.index(BUILD_WHEELS) + 1:]
        arch = "x86_64"
        if args[:1] == ["--arch"]:
            arch, args = args[1], args[2:]
        asked = args or advertised_wheels()
        built = [v for v in asked if v in ci_wheels()[arch]]
        never = [v for v in asked if v not in ci_wheels()[arch]]
        said = f".ci/run builds and tests the {arch} wheels for {_listed(built) or 'none'} of these"
        return said + (f"; {_listed(never)}: buildable by this command, never built by CI" if never else "")
    if argv[:3] == ["python", "-m", "build"]:
        assert f"-m build {' '.join(argv[3:])}" in CI_RUN.read_text(), f"{cmd!r} is not in .ci/run"
        return ".ci/run builds the sdist this way and installs it offline (GOPROXY=off, no Go on PATH)"
    raise AssertionError(f"{cmd!r}: teach tests/test_docs.py what CI runs of it")


def test_what_ci_runs_of_each_documented_command():
    """Every install, build or test command in the docs is one .ci/run runs, or the skip reason says
    exactly which part of it CI runs (test_shell_commands reports it)."""
    reasons = {cmd: what_ci_runs(cmd) for _, _, cmd in SH if cmd.startswith(CI_COMMANDS)}
    assert reasons, "no install/build/test command found in the docs"
    wheels = [r for c, r in reasons.items() if BUILD_WHEELS in c]
    assert wheels, "the docs no longer show how to build the wheels"


def test_platform_text_names_the_wheels_ci_builds():
    """README.md's and docs/DEVELOPING.md's platform tables say which x86-64 wheels CI builds and
    tests, and which are only buildable, as .ci/run and build_wheels.sh's defaults have it."""
    ci = ci_wheels()
    assert ci["x86_64"] and ci["aarch64"], ci
    ci_python = _ci_assignment(CI_RUN.read_text(), "ci_python")
    never = set(advertised_wheels()) - ci["x86_64"]
    for path in (README, DEVELOPING):
        text = " ".join(path.read_text().split())
        built = re.search(r"CI builds and tests the ([\d., andt]+?) wheels", text)
        unbuilt = re.search(r"([\d., andt]+?) wheels: buildable, never built by CI", text)
        assert built and unbuilt, f"{_rel(path)}: the Python row no longer says which wheels CI builds"
        assert _pyversions(re.findall(r"3\.\d+t?", built.group(1))) == _pyversions(ci["x86_64"]), built.group(0)
        assert _pyversions(re.findall(r"3\.\d+t?", unbuilt.group(1))) == _pyversions(never), unbuilt.group(0)
        assert f"{ci_python}: every test" in text, f"{_rel(path)} does not name CI's Python {ci_python}"
    developing = " ".join(DEVELOPING.read_text().split())
    for v in ci["aarch64"]:
        assert f"the cp{v.replace('.', '')} aarch64 wheel" in developing, v


@pytest.mark.slow
@pytest.mark.parametrize("path,line,cmd", SH, ids=[f"{_rel(p)}:{n}:{c[:40]}" for p, n, c in SH])
def test_shell_commands(path, line, cmd):
    if cmd.startswith(CI_COMMANDS):
        pytest.skip(f"{cmd}: {what_ci_runs(cmd)}")
    argv = shlex.split(cmd)
    assert argv[:3] == ["python", "-m", "goprep"], (
        f"{_rel(path)}:{line}: {cmd!r} is neither a `python -m goprep` command nor one .ci/run runs; "
        "teach tests/test_docs.py how to check it"
    )
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    r = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=600, env=env,
                       cwd=ROOT / "tests")
    where = f"{_rel(path)}:{line}: {cmd}"
    assert r.returncode == 0, f"{where} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def test_devices_keys_match_api_md():
    """Every key docs/API.md lists for goprep.devices() is there (on the simulated GPU without a real one)."""
    text = (ROOT / "docs" / "API.md").read_text()
    m = re.search(r"`goprep\.devices\(\)` -> list of usable GPUs, each a dict with (.*?); empty", text, re.S)
    assert m, "docs/API.md no longer describes goprep.devices()"
    documented = set(re.findall(r"`(\w+)`", m.group(1)))
    import goprep.testing as gt

    real = _real_gpu()
    if not real:
        gt.simulate_gpu(True)
    try:
        devs = goprep.devices()
    finally:
        if not real:
            gt.simulate_gpu(False)
    assert devs
    for d in devs:
        assert documented <= set(d), f"missing {sorted(documented - set(d))} in {d}"



def test_api_converters_example_runs():
    text = (README.parent / "docs" / "CONVERTERS.md").read_text()
    m = re.search(r"# Converters: `goprep.transforms`\n```python\n(.*?)```", text, re.S)
    assert m, "docs/CONVERTERS.md has no converters example"
    namespace: dict = {}
    exec(compile(m.group(1), "docs/CONVERTERS.md", "exec"), namespace)
    assert tuple(namespace["x"].shape) == (3, 224, 224)
    assert tuple(namespace["xb"].shape) == (8, 3, 224, 224)


def _python_blocks(text):
    """(code, runs) for every ```python block; a block right after a ``<!-- no-run: why -->`` line
    (one that needs a cluster, GPUs or the reader's own model) is compiled, not run."""
    pat = r"^(?:(<!-- no-run:[^\n]*-->)\n)?```python\n(.*?)^```"
    return [(m.group(2), m.group(1) is None) for m in re.finditer(pat, text, re.S | re.M)]


def test_scale_doc_examples_run():
    path = README.parent / "docs" / "SCALE.md"
    blocks = _python_blocks(path.read_text())
    assert sum(runs for _, runs in blocks) >= 2, "docs/SCALE.md lost its runnable examples"
    shapes = []
    for i, (code, runs) in enumerate(blocks, 1):
        compiled = compile(code, f"docs/SCALE.md python block {i}", "exec")  # every block is valid Python
        if runs:
            namespace: dict = {}  # each block on its own: a reader can copy any one
            with _as_in_a_new_process():
                exec(compiled, namespace)
            if "first" in namespace:
                shapes.append(namespace["first"].shape)
    assert shapes == [(4, 3, 224, 224)]
