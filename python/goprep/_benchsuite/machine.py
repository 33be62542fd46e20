"""Describe the machine and the library versions a benchmark ran on."""

from __future__ import annotations

import importlib
import os
import platform
import sys
import time
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
        + (
            f", torch {v['torch']}, torchvision {v['torchvision']}"
            if v.get("torchvision")
            else ", torch: not installed"
        ),
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


class LoadMonitor:
    """CPU used by *other* processes while a measurement runs.

    On a shared or virtual machine, a compiler or test run next door can halve a measurement. This
    compares system-wide busy time (/proc/stat) with this process's own CPU time (all threads, the
    Go runtime's included) over the same wall-clock interval, so every result can say
    how many cores something else was using meanwhile. Linux only; elsewhere it reports None.
    """

    def __init__(self) -> None:
        self._t0 = time.perf_counter()
        self._own0 = self._own_cpu()
        self._sys0 = self._system()

    @staticmethod
    def _own_cpu() -> float:
        return time.process_time()  # user + system time of every thread of this process

    @staticmethod
    def _system() -> tuple[float, float] | None:
        """(busy, steal) seconds summed over CPUs since boot, or None when /proc/stat is missing."""
        line = _read("/proc/stat").split("\n", 1)[0].split()
        if not line or line[0] != "cpu":
            return None
        v = [int(x) for x in line[1:]]
        v += [0] * (8 - len(v))
        tick = float(os.sysconf("SC_CLK_TCK"))
        user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
        return (user + nice + system + irq + softirq) / tick, steal / tick

    def stop(self) -> dict[str, float | None]:
        """Average cores used over the interval: by this process, by everything else, stolen by the hypervisor."""
        wall = max(time.perf_counter() - self._t0, 1e-9)
        own = (self._own_cpu() - self._own0) / wall
        s1 = self._system()
        if self._sys0 is None or s1 is None:
            return {"wall_s": wall, "own_cores": own, "other_cores": None, "steal_cores": None}
        busy = (s1[0] - self._sys0[0]) / wall
        return {
            "wall_s": wall,
            "own_cores": own,
            # /proc/stat ticks are coarse (10 ms): clamp the small negative values that produces
            "other_cores": max(0.0, busy - own),
            "steal_cores": (s1[1] - self._sys0[1]) / wall,
        }


def load_warning(load: dict[str, float | None], threshold: float = 0.15) -> str:
    """A short warning when other processes (or the hypervisor) took CPU during a measurement."""
    other, steal = load.get("other_cores") or 0.0, load.get("steal_cores") or 0.0
    if other < threshold and steal < threshold:
        return ""
    parts = [f"other processes used {other:.2f} cores"] if other >= threshold else []
    if steal >= threshold:
        parts.append(f"hypervisor stole {steal:.2f} cores")
    return "background load: " + ", ".join(parts) + " on average during this measurement; expect noise"
