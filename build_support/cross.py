"""Cross-compiling the extension (GOPREP_TARGET_ARCH=aarch64: scripts/build_wheels.sh --arch aarch64).

Only the extension is built for the target: gopy and goimports run here, so they are built for this
machine (a GOARCH=arm64 `go tool gopy` cannot run without binfmt_misc: "exec format error"). gopy's
own `go build` steps inherit GOARCH (set here) and CC/CXX (the caller's compiler for the target,
e.g. zig cc -target aarch64-linux-gnu.2.17), and link with this Python's flags: its headers stand
in for the target's (same CPython version and ABI; pyconfig.h of a pyenv/source build, not
Debian's multiarch one). The file name and the wheel's platform tag are the target's.
"""

from __future__ import annotations

import os
import platform
import sys
import sysconfig
from typing import List

from . import log
from .toolchain import run_with_progress

_CROSS = {"aarch64": "arm64"}  # GOPREP_TARGET_ARCH -> GOARCH


def target_arch():
    """None for a native build, else the target machine (GOPREP_TARGET_ARCH; aarch64 only, on Linux x86_64)."""
    arch = os.environ.get("GOPREP_TARGET_ARCH", "").strip().lower()
    if arch in ("", platform.machine().lower()):
        return None
    if arch not in _CROSS:
        raise RuntimeError(f"GOPREP_TARGET_ARCH={arch}: only aarch64 can be cross-compiled")
    if not (sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")):
        raise RuntimeError("GOPREP_TARGET_ARCH: cross-compiling from Linux x86_64 only")
    return arch


def target_ext_suffix() -> str:
    """EXT_SUFFIX for the target: this Python's, with its machine replaced (.cpython-311-aarch64-linux-gnu.so)."""
    host = sysconfig.get_config_var("EXT_SUFFIX")
    arch = target_arch()
    if arch is None:
        return host
    machine = platform.machine()
    if f"-{machine}-" not in host:
        raise RuntimeError(f"cannot derive the {arch} EXT_SUFFIX from {host!r}")
    return host.replace(f"-{machine}-", f"-{arch}-")


def host_tool_env(env: dict) -> dict:
    """env for building a tool that runs here: no target GOARCH or compiler, no cgo."""
    tool = {k: v for k, v in env.items() if k not in ("GOARCH", "CC", "CXX", "CGO_CFLAGS", "CGO_LDFLAGS")}
    tool["CGO_ENABLED"] = "0"
    return tool


def cross_gopy(go, env: dict, bindir: str, arch: str) -> List[str]:
    """Build gopy for this machine; set env up for the target's `go build` steps that gopy runs."""
    run_with_progress([go.exe, "build", "-o", bindir + os.sep, "github.com/go-python/gopy"],
                      host_tool_env(env), "gopy (host tool)")
    if not env.get("CC"):
        raise RuntimeError(f"GOPREP_TARGET_ARCH={arch}: set CC (and CXX) to a C compiler for {arch}")
    env["GOARCH"] = _CROSS[arch]
    env["CGO_ENABLED"] = "1"
    log(f"cross-compiling the extension for {arch} (GOARCH={env['GOARCH']}, CC={env['CC']})")
    return [os.path.join(bindir, "gopy")]
