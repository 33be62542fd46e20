"""Optional dependencies: which goprep extra brings which module, and the one ImportError that says so.

goprep is installed from a source tree or a built wheel (it is on no package index), so the hint names
both spellings. The extras themselves are defined in pyproject.toml's [project.optional-dependencies];
this table only maps an importable module to the extra that installs it.
"""

from __future__ import annotations

import importlib.util
import sys

# importable module -> the pyproject extra that installs it (the modules goprep requires by name)
EXTRA_OF = {
    "ray": "ray",
    "dask": "dask",
    "prometheus_client": "serve",
    "opentelemetry": "serve",
}


def install_hint(extra: str) -> str:
    """How to add ``extra`` to a goprep install."""
    return (f'pip install ".[{extra}]" in a goprep source tree, or pip install "/path/to/goprep-*.whl[{extra}]" '
            "for a built wheel")


def available(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (a ``sys.modules[name] = None`` entry,
    the standard way to block an import, counts as missing)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, feature: str) -> None:
    """Raise an ImportError naming the extra to install when ``module`` (needed by ``feature``, e.g.
    ``"goprep.ray"``) cannot be imported."""
    if not available(module):
        extra = EXTRA_OF[module]
        raise ImportError(f"{feature} needs the {module!r} package, which is not installed: "
                          f"{install_hint(extra)}", name=module)

