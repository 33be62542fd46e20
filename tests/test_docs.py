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
