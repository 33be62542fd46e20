"""Describe the machine and the library versions a benchmark ran on."""

from __future__ import annotations

import importlib
import os
import platform
import sys
from typing import Any


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (x86 ``model name``, Arm ``Model``/``CPU part``)."""
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware") and value.strip():
            return value.strip()
    return platform.processor() or platform.machine() or "unknown"


def physical_cores() -> int | None:
    """Distinct (package, core) pairs in /proc/cpuinfo; None when it does not say."""
    cores: set[tuple[str, str]] = set()
    phys = core = ""
    for line in _read("/proc/cpuinfo").splitlines() + [""]:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            phys = value.strip()
        elif key == "core id":
            core = value.strip()
        elif not key and core:
            cores.add((phys, core))
            phys = core = ""
    return len(cores) or None


def usable_cores() -> int:
    """Cores this process may run on (CPU affinity / cgroup cpusets), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _simd_flags() -> list[str]:
    wanted = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "neon", "asimd", "sve")
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            have = set(value.split())
            return [f for f in wanted if f in have]
    return []


def _mem_total_gib() -> float | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 1024**2, 1)
    return None


def _version(module: str) -> str | None:
    """Version of an importable module, None when it is not installed (imports it)."""
    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - a broken optional install counts as absent
        return None
    return str(getattr(mod, "__version__", "unknown"))


def machine_info() -> dict[str, Any]:
    """Everything needed to read a result file later: CPU, cores, memory, versions, goprep.info()."""
    info: dict[str, Any] = {
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": physical_cores(),
        "usable_cores": usable_cores(),
        "simd": _simd_flags(),
        "mem_total_gib": _mem_total_gib(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "versions": {
            name: _version(name)
            for name in ("numpy", "cv2", "PIL", "skimage", "matplotlib", "tqdm", "torch", "torchvision")
        },
    }
    try:
        import goprep

        info["goprep"] = {k: v for k, v in goprep.info().items()}
    except Exception as exc:  # noqa: BLE001 - report, do not die
        info["goprep"] = {"error": f"{type(exc).__name__}: {exc}"}
    return info


def machine_lines(info: dict[str, Any]) -> list[str]:
    """The machine block printed at the top of the report."""
    v = info["versions"]
    gp = info.get("goprep", {})
    lines = [
        f"CPU      : {info['cpu_model']} | {info['usable_cores']} usable cores "
        f"({info['logical_cores']} logical, {info['physical_cores'] or '?'} physical)"
        f" | SIMD: {' '.join(info['simd']) or '?'} | RAM {info['mem_total_gib']} GiB",
        f"Python   : {info['python']} on {info['platform']}",
        "Versions : "
        + ", ".join(f"{k} {v[k]}" for k in ("numpy", "cv2", "PIL", "skimage") if v.get(k))
        + (f", torch {v['torch']}, torchvision {v['torchvision']}" if v.get("torchvision") else ", torch: not installed"),
    ]
    if "error" in gp:
        lines.append(f"goprep   : info() failed: {gp['error']}")
    else:
        lines.append(
            f"goprep   : {gp.get('version')} backend={gp.get('backend')} threads={gp.get('threads')} "
            f"cuda_available={gp.get('cuda_available')}"
            + (f" ({gp.get('cuda_reason')})" if not gp.get("cuda_available") and gp.get("cuda_reason") else "")
        )
    return lines
