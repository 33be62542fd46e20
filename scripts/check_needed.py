"""Assert that goprep's extension loads anywhere: its NEEDED entries are the C library family only.

    python scripts/check_needed.py [--static-codecs] [EXTENSION.so ...]

With no argument, checks the extension of the goprep that this Python imports. Exits 1 naming
each extra library (libpython3.x: gopy linked it without -dynamic-link=true; libcuda /
libnvidia-ml: the lazy driver shim was bypassed). One source for the rule: setup.py (after every
build), tests/test_install.py and .ci/run (on the installed wheel and sdist) all use it.

The image decoders (gomod/codec) are the one exception: a source build links the system's libjpeg,
libpng16 and zlib (found by pkg-config, so present wherever it was built), which it may NEED. The
wheels link them statically (scripts/build_wheels.sh) and are checked with --static-codecs, which
allows the C library family only.
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
# The system codec libraries a source build links (gomod/codec's #cgo pkg-config: libjpeg libpng).
CODECS = re.compile(r"^(libjpeg|libpng16|libz)\.so(\.[\d.]+)?$")


def needed(so: str) -> List[str]:
    """The NEEDED entries of a shared object, read with readelf -d."""
    readelf = shutil.which("readelf")
    if readelf is None:
        raise RuntimeError("readelf (binutils) not found: cannot read the extension's NEEDED entries")
    out = subprocess.run([readelf, "-d", so], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def disallowed(libs: List[str], static_codecs: bool = False) -> List[str]:
    return [n for n in libs if not (ALLOWED.match(n) or (not static_codecs and CODECS.match(n)))]


def installed_extension() -> str:
    import goprep._ext as ext  # the package only, not the Go runtime

    (so,) = glob.glob(os.path.join(os.path.dirname(ext.__file__), "_native*.so"))
    return so


def main(argv: List[str]) -> int:
    static_codecs = "--static-codecs" in argv
    paths = [a for a in argv if a != "--static-codecs"] or [installed_extension()]
    rc = 0
    for so in paths:
        libs = needed(so)
        bad = disallowed(libs, static_codecs)
        print(f"{so}: NEEDED {', '.join(libs) or '(none)'}" + (f"  <- not allowed: {', '.join(bad)}" if bad else ""))
        if bad or not libs:
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
