"""The README's usage example must run as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_usage_example_runs():
    text = README.read_text()
    m = re.search(r"## Use\n\n```python\n(.*?)```", text, re.S)
    assert m, "README has no '## Use' python example"
    namespace: dict = {}
    exec(compile(m.group(1), "README.md", "exec"), namespace)
    assert namespace["x"].shape == (3, 224, 224)
    assert namespace["batch"].shape == (8, 3, 224, 224)
    assert namespace["mixed"].shape == (2, 3, 224, 224)
    assert namespace["boxes"].shape == (1, 4)


def test_api_converters_example_runs():
    text = (README.parent / "docs" / "API.md").read_text()
    m = re.search(r"## Converters: `goprep.transforms`\n```python\n(.*?)```", text, re.S)
    assert m, "docs/API.md has no converters example"
    namespace: dict = {}
    exec(compile(m.group(1), "docs/API.md", "exec"), namespace)
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
    namespace: dict = {}
    for i, (code, runs) in enumerate(blocks, 1):
        compiled = compile(code, f"docs/SCALE.md python block {i}", "exec")  # every block is valid Python
        if runs:
            exec(compiled, namespace)  # in order, one namespace: later blocks use earlier ones' names
    assert namespace["first"].shape == (4, 3, 224, 224)
