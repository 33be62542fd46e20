"""Assert that goprep's extension loads anywhere: its NEEDED entries are the C library family only.

    python scripts/check_needed.py [EXTENSION.so ...]

With no argument, checks the extension of the goprep that this Python imports. Exits 1 naming
each extra library (libpython3.x: gopy linked it without -dynamic-link=true; libcuda /
libnvidia-ml: the lazy driver shim was bypassed). One source for the rule: setup.py (after every
build), tests/test_install.py and .ci/run (on the installed wheel and sdist) all use it.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from typing import List

# glibc's own libraries and the dynamic loader; anything else must not be a load-time dependency.
ALLOWED = re.compile(r"^(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[-\w]*)\.so(\.[\d.]+)?$")


def needed(so: str) -> List[str]:
    """The NEEDED entries of a shared object, read with readelf -d."""
    readelf = shutil.which("readelf")
    if readelf is None:
        raise RuntimeError("readelf (binutils) not found: cannot read the extension's NEEDED entries")
    out = subprocess.run([readelf, "-d", so], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def disallowed(libs: List[str]) -> List[str]:
    return [n for n in libs if not ALLOWED.match(n)]


def installed_extension() -> str:
    import goprep._ext as ext  # the package only, not the Go runtime

    (so,) = glob.glob(os.path.join(os.path.dirname(ext.__file__), "_native*.so"))
    return so


def main(argv: List[str]) -> int:
    paths = argv or [installed_extension()]
    rc = 0
    for so in paths:
        libs = needed(so)
        bad = disallowed(libs)
        print(f"{so}: NEEDED {', '.join(libs) or '(none)'}" + (f"  <- not allowed: {', '.join(bad)}" if bad else ""))
        if bad or not libs:
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
