"""A training batch as per-item calls against one fused call (docs/perf/2026-12-06-train-batch.md).

    python benchmarks/train_batch.py [REPS] [N]

N (default 64) JPEGs of about 500x375 at quality 90, made from the tests' photographs (scikit-image's
astronaut, chelsea, coffee: random crops resized to ~500x375 or ~375x500), through
``from_torchvision(Compose([RandomResizedCrop(224), RandomHorizontalFlip(), ToTensor(),
Normalize(...)]))`` into float32 (N, 3, 224, 224) batches, at goprep 1 and 2 threads:

- per-item calls: ``torch.stack([prep(b) for b in data])``, each item its own engine call;
- one fused call: ``prep(data)``, the whole batch one engine call (its plans shared: _variants.py);
- fused, every item traced: the same with the plan variants switched off (each item traced and its
  plan built by NewPlan, one by one, as before them);
- fused, plans memoised: the same seed again, every plan from the memo (the engine call alone);
- torchvision + Pillow in this one process (1 thread), for scale.

The cases run interleaved, REPS (default 7) rounds, each call with a seed of its own (a seed shared
with another case would find that case's plans in the memo); printed: median wall time, images/s,
the ratio to the per-item calls, and process CPU time per image (all threads).
"""

from __future__ import annotations

import io
import statistics
import sys
import time

import numpy as np


def jpegs(n: int, seed: int = 0) -> list:
    import skimage.data
    from PIL import Image

    rng = np.random.default_rng(seed)
    srcs = [skimage.data.astronaut(), skimage.data.chelsea(), skimage.data.coffee()]
    out = []
    for i in range(n):
        a = srcs[i % 3]
        h, w = a.shape[:2]
        ch, cw = int(h * rng.uniform(0.6, 1)), int(w * rng.uniform(0.6, 1))
        y, x = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
        size = (500, 375) if rng.random() < 0.75 else (375, 500)
        size = (size[0] + int(rng.integers(-20, 21)), size[1] + int(rng.integers(-20, 21)))
        im = Image.fromarray(a[y:y + ch, x:x + cw]).resize(size, Image.BICUBIC)
        b = io.BytesIO()
        im.save(b, "JPEG", quality=90)
        out.append(b.getvalue())
    return out


def main() -> None:
    import torch
    import torchvision.transforms as T
    from PIL import Image

    import goprep
    import goprep.transforms as gt
    from goprep.transforms import _variants

    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    data = jpegs(n)
    t = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                   T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    prep = gt.from_torchvision(t)
    torch.set_num_threads(1)

    def timed(f, seed):
        torch.manual_seed(seed)
        c0, w0 = time.process_time(), time.perf_counter()
        f()
        return time.perf_counter() - w0, time.process_time() - c0

    def traced():
        _variants.ENABLED[0] = False
        try:
            prep(data)
        finally:
            _variants.ENABLED[0] = True

    def memoised(seed):
        torch.manual_seed(seed)
        prep(data)  # fills the memo with this seed's plans
        return timed(lambda: prep(data), seed)

    cases = [("per-item calls", lambda: torch.stack([prep(b) for b in data])),
             ("one fused call", lambda: prep(data)),
             ("fused, every item traced", traced),
             ("fused, plans memoised", None),
             ("torchvision + Pillow, 1 thread", lambda: torch.stack([t(Image.open(io.BytesIO(b)).convert("RGB")) for b in data]))]
    print(f"{n} JPEGs, mean {sum(map(len, data)) // n} bytes; RandomResizedCrop(224) + flip + normalize, float32 CHW")
    for threads in (1, 2):
        goprep.set_num_threads(threads)
        for s in range(2):  # warm-up: templates, buffers, memo
            timed(lambda: prep(data), 10 + s)
        res = {k: ([], []) for k, _ in cases}
        for r in range(reps):
            for i, (k, f) in enumerate(cases):
                seed = 100000 * threads + 100 * r + i
                w, c = memoised(seed) if f is None else timed(f, seed)
                res[k][0].append(w)
                res[k][1].append(c)
        base = statistics.median(res["per-item calls"][0])
        print(f"goprep threads={threads}")
        for k, (w, c) in res.items():
            mw, mc = statistics.median(w), statistics.median(c)
            print(f"  {k:32s} {mw * 1e3:7.1f} ms  {n / mw:6.0f} img/s  x{base / mw:5.2f}  cpu {mc / n * 1e3:5.2f} ms/img")


if __name__ == "__main__":
    main()
