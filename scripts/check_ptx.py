#!/usr/bin/env python3
"""Assemble every committed kernel (kernels/ptx/*.ptx) with ptxas for the GPUs goprep targets, and fail
unless every entry point has a 0-byte stack frame and no spills; print registers and occupancy.

    python scripts/check_ptx.py            # ptxas from the nvidia-cuda-nvcc-cu12 wheel (or $PTXAS)

No GPU is needed: ptxas is the driver JIT's back end, run ahead of time. A stack frame means local
memory (the review's finding on the first kernels: each thread copied its 232-byte descriptor to
local memory), spills mean register pressure beyond what the kernel was written for; either costs
bandwidth on the path that is meant to run at the HBM roofline.

Occupancy is the standard calculation for the launch shape of gomod/engine (DeviceBatch.Launch:
32x8 = 256 threads per block): registers rounded up to 8 per thread and 256 per warp, 64 Ki
registers, 64 warps and 32 blocks per SM on sm_80 and sm_90.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ("sm_80", "sm_90")
BLOCK_THREADS = 256  # gomod/engine/gpu_desc.go: blockX * blockY
SM = {"regs": 65536, "warps": 64, "blocks": 32}  # identical for sm_80 and sm_90


def find_ptxas() -> str:
    if os.environ.get("PTXAS"):
        return os.environ["PTXAS"]
    try:
        import nvidia.cuda_nvcc  # the nvidia-cuda-nvcc-cu12 wheel

        for base in nvidia.cuda_nvcc.__path__:
            p = Path(base) / "bin" / "ptxas"
            if p.exists():
                return str(p)
    except ImportError:
        pass
    p = shutil.which("ptxas")
    if p:
        return p
    sys.exit("check_ptx: no ptxas: pip install nvidia-cuda-nvcc-cu12 (the test extra has it), or set PTXAS")


def occupancy(regs: int) -> float:
    per_warp = -(-max(regs, 1) * 32 // 256) * 256
    warps_per_block = BLOCK_THREADS // 32
    blocks = min(SM["regs"] // (per_warp * warps_per_block), SM["warps"] // warps_per_block, SM["blocks"])
    return blocks * warps_per_block / SM["warps"]


def check(ptxas: str, ptx: Path, arch: str) -> list[str]:
    r = subprocess.run([ptxas, f"-arch={arch}", "-v", "-o", os.devnull, str(ptx)], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{ptx.name} {arch}: ptxas failed:\n{r.stderr}"]
    errors, entry, frame, seen = [], None, None, 0
    for line in r.stderr.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)' for '(\w+)'", line):
            entry, frame = m.group(1), None
        elif m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            frame = tuple(int(g) for g in m.groups())
        elif (m := re.search(r"Used (\d+) registers", line)) and entry:
            regs = int(m.group(1))
            seen += 1
            if frame is None:
                errors.append(f"{entry} {arch}: no stack/spill line in ptxas -v output")
                frame = (-1, -1, -1)
            ok = frame == (0, 0, 0)
            print(f"  {arch} {entry:28s} {regs:3d} registers  stack {frame[0]:3d} B  spill {frame[1]}/{frame[2]} B"
                  f"  occupancy {occupancy(regs):4.0%}  {'ok' if ok else 'FAIL'}")
            if not ok:
                errors.append(f"{entry} {arch}: {frame[0]} bytes stack frame, {frame[1]}/{frame[2]} bytes spilled")
            entry = None
    if seen == 0:
        errors.append(f"{ptx.name} {arch}: ptxas reported no entry functions")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx-dir", default=str(ROOT / "kernels" / "ptx"))
    args = ap.parse_args()
    ptxas = find_ptxas()
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"check_ptx: {ptxas} ({version}), block of {BLOCK_THREADS} threads")
    errors = []
    files = sorted(Path(args.ptx_dir).glob("*.ptx"))
    if not files:
        errors.append(f"no .ptx in {args.ptx_dir}")
    for ptx in files:
        for arch in ARCHS:
            errors += check(ptxas, ptx, arch)
    for e in errors:
        print("check_ptx:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
