"""Thread scaling of goprep calls: throughput with 1, 2 and 4 Python threads, as ratios to 1 thread.

    python benchmarks/ft_scaling.py [--calls N] [--threads 1,2,4] [--rounds R]

Two workloads, each call on its own small image, so that the Python side of a call (argument checks,
cache look-ups, result allocation: a few microseconds) weighs as much as the engine's work:
- ``pipeline``: a fused resize -> flip -> normalize pipeline on a 64x64 RGB image (to 32x32 CHW float32);
- ``eager``: goprep.resize on the same image.
With the GIL, that Python side runs one thread at a time, so adding threads gains only the engine's
part; on a free-threaded build (3.13t/3.14t, the GIL off) it runs in parallel too. The engine runs
single-threaded per call here (set_num_threads(1)) so that the ratios measure the threads' own
parallelism. The ratios cannot exceed the machine's free cores: ``py-only``, a pure-Python function
of similar cost that never calls goprep, measures those at the same time (calibration).
Prints one line per workload and thread count: calls/s (best of R rounds) and the ratio to 1 thread.
"""

from __future__ import annotations

import argparse
import os
import sys
import sysconfig
import threading
import time

import numpy as np

import goprep

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def _rate(fn, x: np.ndarray, threads: int, calls: int) -> float:
    """Calls per second of ``threads`` threads, each making ``calls`` calls of fn(x) after a barrier."""
    barrier = threading.Barrier(threads + 1)
    done = []

    def run() -> None:
        barrier.wait()
        for _ in range(calls):
            fn(x)
        done.append(time.perf_counter())

    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return threads * calls / (max(done) - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=3000, help="calls per thread per round")
    ap.add_argument("--threads", default="1,2,4")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    goprep.set_num_threads(1)
    x = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    pipe = goprep.pipeline(lambda im: goprep.normalize(goprep.flip(goprep.resize(im, (32, 32))), mean=MEAN, std=STD))
    def python_only(im: np.ndarray) -> int:  # the machine's own scaling, for calibration: no goprep
        return sum(i * i for i in range(300))

    work = {"pipeline": pipe, "eager": lambda im: goprep.resize(im, (32, 32)), "py-only": python_only}
    ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    print(f"# CPython {sys.version.split()[0]}{'t' if ft else ''}, GIL {'on' if gil else 'off'}, "
          f"{os.cpu_count()} CPUs, goprep {goprep.__version__}, {a.calls} calls/thread, best of {a.rounds}")
    for name, fn in work.items():
        for _ in range(200):
            fn(x)  # warm: plans built, caches filled
        base = None
        for n in (int(s) for s in a.threads.split(",")):
            r = max(_rate(fn, x, n, a.calls) for _ in range(a.rounds))
            base = base or r
            print(f"{name:9s} threads={n}: {r:9.0f} calls/s  x{r / base:.2f}")
    if gil != getattr(sys, "_is_gil_enabled", lambda: True)():
        print("# the GIL changed state during the run", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
