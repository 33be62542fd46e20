"""A training batch with ColorJitter: one engine call of staged jobs against the three-call path
(docs/perf/2026-12-07-train-fused-color.md).

    python benchmarks/train_fused_color.py [REPS] [N] [THREADS]    (--help: the arguments)

N (default 64) JPEGs of about 500x375 at quality 90 (train_batch.py's ``jpegs``) through
``from_torchvision(Compose([RandomResizedCrop(224), RandomHorizontalFlip(),
ColorJitter(0.4, 0.4, 0.4, 0.1), ToTensor(), Normalize(...)]))`` into float32 (N, 3, 224, 224)
batches, at THREADS (default 1) goprep threads:

- one call: ``prep(data)``, each item decoded, cropped, resized and flipped into a worker's scratch
  image, jittered there in Go and normalized into its slot (transforms/_staged_call.py);
- three calls: the same under ``goprep.testing.colour_path(one_call=False)``: segment 1 into a uint8 batch, the colour
  batch call (binding ColorBatch), segment 2 into the result.

The two alternate within each of REPS (default 9) rounds, each call with a seed of its own (the
first call of a seed builds its plans; a shared seed would find the other's in the memo); printed:
median wall time per batch, images/s, and process CPU time per image.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_batch import jpegs  # noqa: E402


def positive(text: str) -> int:
    """An argument that must be an integer >= 1."""
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def arguments(argv=None) -> argparse.Namespace:
    """REPS, N and THREADS, each optional and positional (the order of the usage line)."""
    ap = argparse.ArgumentParser(description="One engine call of staged jobs against the three-call path "
                                 "for a training batch with ColorJitter.")
    ap.add_argument("reps", nargs="?", type=positive, default=9, help="rounds, each timing both paths (default 9)")
    ap.add_argument("n", nargs="?", type=positive, default=64, help="JPEGs per batch (default 64)")
    ap.add_argument("threads", nargs="?", type=positive, default=1, help="goprep threads (default 1)")
    return ap.parse_args(argv)


def main() -> None:
    args = arguments()
    import torch
    import torchvision.transforms as T

    import goprep
    import goprep.testing
    import goprep.transforms as gt

    reps, n, threads = args.reps, args.n, args.threads
    goprep.set_num_threads(threads)
    data = jpegs(n)
    prep = gt.from_torchvision(T.Compose([
        T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ToTensor(),
        T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]))
    cases = {"one call": True, "three calls": False}
    wall = {k: [] for k in cases}
    cpu = {k: [] for k in cases}
    seed = 1000
    for one in cases.values():  # warm: the templates and the second segment's plan
        with goprep.testing.colour_path(one_call=one):
            torch.manual_seed(seed)
            prep(data)
    for r in range(reps):
        for name, one in (list(cases.items()) if r % 2 == 0 else list(cases.items())[::-1]):
            seed += 1
            with goprep.testing.colour_path(one_call=one):
                torch.manual_seed(seed)
                c0, t0 = time.process_time(), time.perf_counter()
                y = prep(data)
                wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            assert y.shape == (n, 3, 224, 224)
    print(f"{n} JPEGs, goprep {threads} thread(s), {reps} rounds, medians")
    base = statistics.median(wall["three calls"])
    for name in cases:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:12s} {w * 1e3:8.1f} ms/batch {n / w:8.0f} images/s  x{base / w:5.3f}  "
              f"cpu {c / n * 1e3:6.3f} ms/image  (min {min(wall[name]) * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
