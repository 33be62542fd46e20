"""Parts of goprep's build that setup.py imports (setup.py puts the repository root on sys.path).

- ``toolchain``  -- which Go builds goprep, the environment its commands run in, running them with progress.
- ``cross``      -- cross-compiling the extension (GOPREP_TARGET_ARCH=aarch64).
- ``gopy_edits`` -- the two checked edits made to gopy's generated output.

Not part of the installed package: MANIFEST.in puts it in the sdist, which builds with it.
"""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository (or sdist) root
GOPROXY_DIR = "_goproxy"  # the sdist's module proxy, relative to ROOT


def log(msg: str) -> None:
    print(f"goprep: {msg}", flush=True)
