#!/usr/bin/env python3
"""Compile the CUDA C kernels in kernels/*.cu to PTX with NVRTC, and check that the committed PTX is fresh.

    python scripts/build_ptx.py           # compile kernels/*.cu -> kernels/ptx/<stem>.ptx + kernels/ptx/MANIFEST
    python scripts/build_ptx.py --check   # no compiler needed: exit 1 if kernels/ptx is stale

The compiler is NVRTC from the pip wheel nvidia-cuda-nvrtc-cu12==12.0.140 (see NVRTC_WHEEL below), loaded
with ctypes; no CUDA toolkit and no GPU are needed. NVRTC 12.0 emits PTX ISA 8.0, which every driver from
the R525 series (CUDA 12.0) on can JIT. Newer NVRTC releases emit newer ISA versions that older drivers
reject, so the exact wheel is pinned and the script refuses any other NVRTC major.minor.

Every kernel is compiled with the same flags (FLAGS below). --fmad=false matters: the kernels re-express
the Go CPU engine's arithmetic step for step, and a contracted multiply-add would round differently.
Headers (kernels/*.cuh, kernels/*.h) are handed to NVRTC by name and contents, so `#include "goprep.h"`
resolves without any include path.

Outputs are deterministic (no timestamps, no paths): rerunning on unchanged sources gives no diff.
The MANIFEST records the compiler, flags, target, PTX ISA and minimum driver, a sha256 over the kernel
sources and the sha256 of each .ptx; kernels/embed_test.go (go test ./kernels/) and --check recompute
them, so CI detects stale PTX without a CUDA compiler.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import importlib.metadata
import os
import re
import sys
from pathlib import Path

NVRTC_WHEEL = "nvidia-cuda-nvrtc-cu12"
NVRTC_WHEEL_VERSION = "12.0.140"
NVRTC_VERSION = (12, 0)  # what nvrtcVersion() must report for the pinned wheel
ARCH = "compute_52"
FLAGS = [f"--gpu-architecture={ARCH}", "--fmad=false", "-default-device"]

SOURCE_EXTS = (".cu", ".cuh", ".h")
HEADER_EXTS = (".cuh", ".h")

# PTX ISA version -> the first driver series (and CUDA release) that can JIT it.
MIN_DRIVER = {
    "7.0": "R450 (CUDA 11.0)",
    "7.1": "R455 (CUDA 11.1)",
    "7.2": "R460 (CUDA 11.2)",
    "7.3": "R465 (CUDA 11.3)",
    "7.4": "R470 (CUDA 11.4)",
    "7.5": "R495 (CUDA 11.5)",
    "7.6": "R510 (CUDA 11.6)",
    "7.7": "R515 (CUDA 11.7)",
    "7.8": "R520 (CUDA 11.8)",
    "8.0": "R525 (CUDA 12.0)",
    "8.1": "R530 (CUDA 12.1)",
    "8.2": "R535 (CUDA 12.2)",
    "8.3": "R545 (CUDA 12.3)",
    "8.4": "R550 (CUDA 12.4)",
    "8.5": "R555 (CUDA 12.5)",
    "8.7": "R570 (CUDA 12.8)",
    "8.8": "R575 (CUDA 12.9)",
    "9.0": "R580 (CUDA 13.0)",
}
MAX_ISA = (8, 0)  # R525 must be able to JIT everything we ship

REPO = Path(__file__).resolve().parent.parent
RERUN = "run python scripts/build_ptx.py"
INSTALL = f"pip install {NVRTC_WHEEL}=={NVRTC_WHEEL_VERSION}"

PROBE_SRC = b'extern "C" __global__ void goprep_probe() {}\n'


class Stale(Exception):
    pass


# ----------------------------------------------------------------------------------------------------
# sources and hashes


def source_files(kdir: Path) -> list[Path]:
    """kernels/*.cu, *.cuh, *.h (not recursive), sorted by file name (byte order of the UTF-8 name)."""
    files = [p for p in kdir.iterdir() if p.is_file() and p.suffix in SOURCE_EXTS]
    return sorted(files, key=lambda p: p.name.encode())


def source_hash(files: list[Path]) -> str:
    """sha256 over, for each file in name order: name, NUL, decimal byte length, NUL, contents.

    kernels/embed_test.go recomputes exactly this; change both together."""
    h = hashlib.sha256()
    for p in files:
        data = p.read_bytes()
        h.update(p.name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_VERSION_RE = re.compile(rb"^\s*\.version\s+(\d+)\.(\d+)\s*$", re.M)
_TARGET_RE = re.compile(rb"^\s*\.target\s+(\S+?)\s*$", re.M)


def ptx_isa(ptx: bytes) -> str:
    m = _VERSION_RE.search(ptx)
    if not m:
        raise RuntimeError("NVRTC output has no .version line")
    return f"{int(m.group(1))}.{int(m.group(2))}"


# ----------------------------------------------------------------------------------------------------
# NVRTC via ctypes


def find_nvrtc() -> Path | None:
    env = os.environ.get("GOPREP_NVRTC")
    if env:
        return Path(env)
    try:
        import nvidia  # namespace package shared by NVIDIA's wheels
    except ImportError:
        return None
    names = ["libnvrtc.so.12", "libnvrtc.so"]
    for base in list(getattr(nvidia, "__path__", [])):
        libdir = Path(base) / "cuda_nvrtc" / "lib"
        for n in names:
            if (libdir / n).exists():
                return libdir / n
        bindir = Path(base) / "cuda_nvrtc" / "bin"  # Windows wheels
        if bindir.is_dir():
            dlls = sorted(bindir.glob("nvrtc64_*.dll"))
            dlls = [d for d in dlls if "builtins" not in d.name]
            if dlls:
                return dlls[0]
    return None


class NVRTC:
    def __init__(self, path: Path):
        self.path = path
        self.lib = lib = ctypes.CDLL(str(path))
        c = ctypes
        lib.nvrtcGetErrorString.restype = c.c_char_p
        lib.nvrtcGetErrorString.argtypes = [c.c_int]
        lib.nvrtcVersion.argtypes = [c.POINTER(c.c_int), c.POINTER(c.c_int)]
        lib.nvrtcCreateProgram.argtypes = [
            c.POINTER(c.c_void_p), c.c_char_p, c.c_char_p, c.c_int,
            c.POINTER(c.c_char_p), c.POINTER(c.c_char_p),
        ]
        lib.nvrtcDestroyProgram.argtypes = [c.POINTER(c.c_void_p)]
        lib.nvrtcCompileProgram.argtypes = [c.c_void_p, c.c_int, c.POINTER(c.c_char_p)]
        lib.nvrtcGetPTXSize.argtypes = [c.c_void_p, c.POINTER(c.c_size_t)]
        lib.nvrtcGetPTX.argtypes = [c.c_void_p, c.c_char_p]
        lib.nvrtcGetProgramLogSize.argtypes = [c.c_void_p, c.POINTER(c.c_size_t)]
        lib.nvrtcGetProgramLog.argtypes = [c.c_void_p, c.c_char_p]

    def _ok(self, rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(rc).decode()}")

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._ok(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def compile(self, name: str, src: bytes, headers: dict[str, bytes], flags: list[str]) -> bytes:
        c = ctypes
        prog = c.c_void_p()
        hnames = sorted(headers)
        n = len(hnames)
        hsrc = (c.c_char_p * max(n, 1))(*[headers[k] for k in hnames])
        hinc = (c.c_char_p * max(n, 1))(*[k.encode() for k in hnames])
        self._ok(self.lib.nvrtcCreateProgram(c.byref(prog), src, name.encode(), n, hsrc, hinc),
                 "nvrtcCreateProgram")
        try:
            opts = (c.c_char_p * len(flags))(*[f.encode() for f in flags])
            rc = self.lib.nvrtcCompileProgram(prog, len(flags), opts)
            size = c.c_size_t()
            self.lib.nvrtcGetProgramLogSize(prog, c.byref(size))
            buf = c.create_string_buffer(size.value)
            self.lib.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace").strip()
            if rc != 0:
                raise RuntimeError(f"compiling {name} failed "
                                   f"({self.lib.nvrtcGetErrorString(rc).decode()}):\n{log}")
            if log:
                print(f"{name}: compiler log:\n{log}", file=sys.stderr)
            self._ok(self.lib.nvrtcGetPTXSize(prog, c.byref(size)), "nvrtcGetPTXSize")
            buf = c.create_string_buffer(size.value)
            self._ok(self.lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
            return buf.raw.rstrip(b"\0")
        finally:
            self.lib.nvrtcDestroyProgram(c.byref(prog))


def load_nvrtc(any_version: bool) -> tuple[NVRTC, str]:
    path = find_nvrtc()
    if path is None:
        sys.exit(f"build_ptx: NVRTC not found (looked for nvidia/cuda_nvrtc/lib/libnvrtc.so.12 in the "
                 f"installed 'nvidia' packages of {sys.executable}).\n"
                 f"Install the pinned compiler with:\n    {sys.executable} -m {INSTALL}")
    try:
        nv = NVRTC(path)
        ver = nv.version()
    except OSError as e:
        sys.exit(f"build_ptx: cannot load {path}: {e}\nReinstall with:\n    {sys.executable} -m {INSTALL}")
    try:
        wheel = importlib.metadata.version(NVRTC_WHEEL)
    except importlib.metadata.PackageNotFoundError:
        wheel = "unknown"
    if ver != NVRTC_VERSION and not any_version:
        sys.exit(f"build_ptx: {path} is NVRTC {ver[0]}.{ver[1]} (wheel {NVRTC_WHEEL} {wheel}), but the PTX "
                 f"must be built with NVRTC {NVRTC_VERSION[0]}.{NVRTC_VERSION[1]} (PTX ISA 8.0, loads on "
                 f"R525+ drivers).\nInstall the pinned compiler with:\n    {sys.executable} -m {INSTALL}")
    desc = f"NVRTC {ver[0]}.{ver[1]} ({NVRTC_WHEEL}=={wheel})"
    return nv, desc


# ----------------------------------------------------------------------------------------------------
# manifest


def render_manifest(compiler: str, isa: str, src_hash: str, files: list[Path],
                    ptx: dict[str, bytes]) -> str:
    lines = [
        "# Written by scripts/build_ptx.py; do not edit. Rebuild: python scripts/build_ptx.py",
        f"compiler: {compiler}",
        f"flags: {' '.join(FLAGS)}",
        f"arch: {ARCH}",
        f"ptx_isa: {isa}",
        f"min_driver: {MIN_DRIVER.get(isa, 'unknown')}",
        f"sources: {' '.join(p.name for p in files)}",
        f"source_sha256: {src_hash}",
    ]
    for name in sorted(ptx):
        lines.append(f"ptx: {name} {sha256(ptx[name])}")
    return "\n".join(lines) + "\n"


def parse_manifest(text: str) -> tuple[dict[str, str], dict[str, str]]:
    fields: dict[str, str] = {}
    ptx: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, val = line.partition(":")
        val = val.strip()
        if key == "ptx":
            name, _, digest = val.partition(" ")
            ptx[name] = digest.strip()
        else:
            fields[key] = val
    return fields, ptx


# ----------------------------------------------------------------------------------------------------
# commands


def build(kdir: Path, out: Path, any_version: bool) -> int:
    files = source_files(kdir)
    cus = [p for p in files if p.suffix == ".cu"]
    headers = {p.name: p.read_bytes() for p in files if p.suffix in HEADER_EXTS}
    nv, compiler = load_nvrtc(any_version)

    ptx: dict[str, bytes] = {}
    errors = []
    for cu in cus:
        try:
            ptx[cu.stem + ".ptx"] = nv.compile(cu.name, cu.read_bytes(), headers, FLAGS)
        except RuntimeError as e:
            errors.append(str(e))
    if errors:  # write nothing: kernels/ptx keeps its last good state (and --check flags it stale)
        print("\n\n".join(errors), file=sys.stderr)
        print(f"build_ptx: {len(errors)} of {len(cus)} kernel file(s) failed to compile; "
              f"{out} left unchanged", file=sys.stderr)
        return 1
    # The ISA the compiler emits, also when there is nothing to compile.
    isa = ptx_isa(nv.compile("goprep_probe.cu", PROBE_SRC, {}, FLAGS))
    for name, data in ptx.items():
        if ptx_isa(data) != isa:
            sys.exit(f"build_ptx: {name} has PTX ISA {ptx_isa(data)}, the probe {isa}")
        if b".entry" not in data:
            print(f"build_ptx: warning: {name} has no .entry (no extern \"C\" __global__ kernel?)",
                  file=sys.stderr)
    major, minor = (int(x) for x in isa.split("."))
    if (major, minor) > MAX_ISA and not any_version:
        sys.exit(f"build_ptx: the compiler emits PTX ISA {isa}; R525 drivers need <= "
                 f"{MAX_ISA[0]}.{MAX_ISA[1]}. Install: {sys.executable} -m {INSTALL}")

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ptx"):
        if old.name not in ptx:
            old.unlink()
            print(f"removed {old}")
    for name, data in sorted(ptx.items()):
        write_if_changed(out / name, data)
    manifest = render_manifest(compiler, isa, source_hash(files), files, ptx)
    write_if_changed(out / "MANIFEST", manifest.encode())
    print(f"{compiler}, {' '.join(FLAGS)}: PTX ISA {isa}, min driver {MIN_DRIVER.get(isa, 'unknown')}; "
          f"{len(ptx)} kernel file(s) -> {out}")
    return 0


def write_if_changed(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    path.write_bytes(data)
    print(f"wrote {path}")


def check(kdir: Path, out: Path) -> int:
    try:
        mpath = out / "MANIFEST"
        if not mpath.exists():
            raise Stale(f"{mpath} is missing")
        fields, listed = parse_manifest(mpath.read_text())
        files = source_files(kdir)
        if fields.get("source_sha256") != source_hash(files):
            raise Stale("the kernel sources changed since the PTX was built "
                        f"(recorded sources: {fields.get('sources', '?')}; now: "
                        f"{' '.join(p.name for p in files)})")
        if fields.get("flags") != " ".join(FLAGS):
            raise Stale(f"the PTX was built with flags {fields.get('flags')!r}, the script now uses "
                        f"{' '.join(FLAGS)!r}")
        want = {p.stem + ".ptx" for p in files if p.suffix == ".cu"}
        if set(listed) != want:
            raise Stale(f"MANIFEST lists {sorted(listed)}, the sources need {sorted(want)}")
        present = {p.name for p in out.glob("*.ptx")}
        if present != want:
            raise Stale(f"{out} holds {sorted(present)}, the sources need {sorted(want)}")
        for name, digest in sorted(listed.items()):
            data = (out / name).read_bytes()
            if sha256(data) != digest:
                raise Stale(f"{out / name} does not match its sha256 in MANIFEST")
            isa = ptx_isa(data)
            if isa != fields.get("ptx_isa"):
                raise Stale(f"{name} has PTX ISA {isa}, MANIFEST says {fields.get('ptx_isa')}")
            if tuple(int(x) for x in isa.split(".")) > MAX_ISA:
                raise Stale(f"{name} has PTX ISA {isa} > {MAX_ISA[0]}.{MAX_ISA[1]} (R525 can't JIT it)")
    except Stale as e:
        print(f"kernels/ptx is stale: {e}\n{RERUN}", file=sys.stderr)
        return 1
    print(f"{out} is up to date ({len(want)} PTX file(s), PTX ISA {fields.get('ptx_isa')}, "
          f"{fields.get('compiler')})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="verify kernels/ptx against the sources without compiling; exit 1 if stale")
    ap.add_argument("--kernels", type=Path, default=REPO / "kernels", help="kernel source dir")
    ap.add_argument("--out", type=Path, default=None, help="output dir (default: KERNELS/ptx)")
    ap.add_argument("--any-nvrtc", action="store_true",
                    help=f"allow an NVRTC other than {NVRTC_VERSION[0]}.{NVRTC_VERSION[1]} "
                         "(for experiments; the committed PTX must use the pinned one)")
    args = ap.parse_args(argv)
    kdir = args.kernels
    out = args.out if args.out is not None else kdir / "ptx"
    if not kdir.is_dir():
        sys.exit(f"build_ptx: {kdir} is not a directory")
    if args.check:
        return check(kdir, out)
    return build(kdir, out, args.any_nvrtc)


if __name__ == "__main__":
    sys.exit(main())
