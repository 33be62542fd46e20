"""The 1-thread training call's CPU per image, by part (docs/perf/2026-12-07-train-percore.md).

    python benchmarks/train_percore.py [REPS] [FILES] [DIR]

FILES (default 512) JPEGs made by the training bench (``_benchsuite.train.make_jpegs``: ~500x375,
quality 90) in a temporary ImageFolder (or in DIR, kept, and reused when it holds them), then, with goprep on 1 thread, interleaved for REPS rounds
(default 5), batches of 256 paths with the bench's recipe (RandomResizedCrop(224) + flip + ToTensor +
Normalize converted by ``from_torchvision``), each row printed as its min and median process CPU
time per image (``time.process_time``: every thread; min-of-N is the least disturbed by other load):

- ``batch``: the bare converted call on a list of paths, ``generator=`` a fresh seeded generator;
- ``loader``: ``goprep.data.Loader`` (1 thread, prefetch 2, torch output) over the same files;
- ``floor``: the bench's decode floor, ``gt.random_resized_crop(..., interpolation="nearest",
  antialias=False)`` on the same batches and seeds (crop-aware decode, nearest gather, uint8 HWC);
- ``draws``: the Python parameter draws alone (the converted transform's ``draw`` on the batch), when
  the transform exposes one.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np


def main() -> None:
    import goprep
    import goprep.data
    import goprep.transforms as gt
    from goprep._benchsuite import train

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    batch = 256
    goprep.set_num_threads(1)
    keep = len(sys.argv) > 3
    root = sys.argv[3] if keep else tempfile.mkdtemp(prefix="goprep-percore-")
    try:
        found = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jpg"))
        paths = found if keep and len(found) == files else train.make_jpegs(root, files)
        transform = train.goprep_transform()
        batches = [paths[i:i + batch] for i in range(0, files - batch + 1, batch)]
        loader = goprep.data.Loader(root, transform, batch_size=batch, seed=0, threads=1, prefetch=2,
                                    output="torch", pin_memory=False, drop_last=True)

        def run_batch(seed: int) -> int:
            return sum(len(transform(b, generator=np.random.default_rng(seed + k))) for k, b in enumerate(batches))

        def run_floor(seed: int) -> int:
            return sum(len(gt.random_resized_crop(b, train.SIZE, hflip=0.5, interpolation="nearest", antialias=False,
                                                  generator=np.random.default_rng(seed + k)))
                       for k, b in enumerate(batches))

        def run_loader(seed: int) -> int:
            loader.set_epoch(seed)
            return sum(len(y) for _, y in loader)

        rows = {"batch": run_batch, "loader": run_loader, "floor": run_floor}
        cpu: dict[str, list[float]] = {k: [] for k in rows}
        for fn in rows.values():  # warm-up: plans, templates, page cache
            fn(10_000)
        for r in range(reps):
            for k, fn in rows.items():
                c0 = time.process_time()
                n = fn(r * 100)
                cpu[k].append((time.process_time() - c0) / n)
        loader.close()
        print(f"goprep {os.path.dirname(goprep.__file__)}: {files} files, batches of {batch}, 1 thread, {reps} rounds; "
              "process CPU per image")
        for k, v in cpu.items():
            print(f"  {k:8} min {min(v) * 1e3:6.3f} ms ({1 / min(v):5.0f}/s)  median {statistics.median(v) * 1e3:6.3f} ms")
        f, b = min(cpu["floor"]), min(cpu["batch"])
        print(f"  batch - floor: {(b - f) * 1e3:.3f} ms per image")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
