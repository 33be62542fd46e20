"""Per-call overhead of two goprep trees, old vs new, in one run (issue 25: the Python run path must
cost no more per call than before).

    python benchmarks/run_path_overhead.py OLD_PYTHON_DIR NEW_PYTHON_DIR [ALTERNATIONS]

Each *_PYTHON_DIR is a tree's ``python/`` folder with its extension built in place. The script
alternates child processes of the two trees (old-new, new-old, ...: drift cancels); each child times
blocks of calls on thread CPU time (other processes on a shared machine disturb it less than wall
time), one engine thread, and prints the median per-call time of each probe. The report is the
median over the alternations per tree and the ratio new / old (below 1: the new tree is cheaper).
The profiler's cost is the probes' "profiled" minus plain times; each child also runs
benchmarks/profiler_cost.py's section 1 (goprep._benchsuite.profiler.overhead_us, 11 rounds), whose
off/on per-call times and differences are reported as "profiler_cost.py ...".
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, statistics, time
import numpy as np
import goprep

goprep.set_num_threads(1)
tiny = np.zeros((4, 4, 3), np.uint8)
img = np.random.default_rng(0).integers(0, 256, (64, 64, 3), np.uint8)
out = np.empty((32, 32, 3), np.uint8)
flip_cpu = goprep.pipeline(lambda x: goprep.flip(x), device="cpu")
flip_auto = goprep.pipeline(lambda x: goprep.flip(x))
import io
from PIL import Image
pil = Image.fromarray(img)
pair = [img, img]
frame = goprep.yuv(np.random.default_rng(1).integers(0, 256, (96, 64), np.uint8), "nv12", preset="opencv")
_buf = io.BytesIO()
pil.save(_buf, "JPEG", quality=90)
jpeg = _buf.getvalue()
norm = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (32, 32)), mean=0.5, std=0.25), device="cpu")
probes = {
    "pipeline(flip) 4x4 cpu": lambda: flip_cpu(tiny),
    "pipeline(flip) 4x4 auto": lambda: flip_auto(tiny),
    "eager flip 4x4": lambda: goprep.flip(tiny),
    "pipeline resize+normalize 64x64": lambda: norm(img),
    "eager resize 64x64 out=": lambda: goprep.resize(img, (32, 32), out=out),
    # every other input kind through the same pipeline (issue 39: one run path for each)
    "pipeline resize+normalize PIL 64x64": lambda: norm(pil),
    "pipeline resize+normalize list of 2 64x64": lambda: norm(pair),
    "pipeline resize+normalize NV12 frame 64x64": lambda: norm(frame),
    "pipeline resize+normalize JPEG 64x64": lambda: norm(jpeg),
}
res = {}
clock = time.thread_time_ns
block, rounds = 400, 9
for prof in (False, True):
    goprep.set_profiling(prof)
    for name, fn in probes.items():
        for _ in range(block):
            fn()
        times = []
        for _ in range(rounds):
            t = clock()
            for _ in range(block):
                fn()
            times.append((clock() - t) / block / 1e3)
        res[name + (" profiled" if prof else "")] = statistics.median(times)
goprep.set_profiling(False)
# benchmarks/profiler_cost.py's section 1 (the bench's profiler targets), in the same child
from goprep._benchsuite.profiler import overhead_us
prof = overhead_us(rounds=11)
for k in ("call_us_profiling_off", "eager_call_us_profiling_off", "overhead_us", "eager_overhead_us"):
    res["profiler_cost.py " + k] = prof[k]
goprep.set_num_threads(1)
print(json.dumps(res))
"""


def child(path: str) -> dict:
    env = dict(os.environ, PYTHONPATH=path)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    runs: dict = {"old": [], "new": []}
    for k in range(n):
        order = (("old", old), ("new", new)) if k % 2 == 0 else (("new", new), ("old", old))
        for tag, path in order:
            runs[tag].append(child(path))
    names = list(runs["old"][0])
    print(f"{n} alternations, each probe the median of 9 blocks of 400 calls, thread CPU time, 1 engine thread")
    print(f"{'probe':44s} {'old us':>8s} {'new us':>8s} {'new/old':>8s}")
    for name in names:
        o = statistics.median(r[name] for r in runs["old"])
        w = statistics.median(r[name] for r in runs["new"])
        ratio = f"{w / o:8.3f}" if "overhead_us" not in name else f"{w - o:+7.2f}us"  # a difference: may be ~0
        print(f"{name:44s} {o:8.2f} {w:8.2f} {ratio}")
    for name in names:
        if name.endswith(" profiled"):
            base = name[: -len(" profiled")]
            o = statistics.median(r[name] - r[base] for r in runs["old"])
            w = statistics.median(r[name] - r[base] for r in runs["new"])
            print(f"profiler cost, {base:30s} old {o:+.2f} us, new {w:+.2f} us")


if __name__ == "__main__":
    main()
