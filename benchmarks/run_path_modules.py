"""Which goprep modules one call passes through, per input kind: a structural measure of the run path.

    python benchmarks/run_path_modules.py            # the goprep on sys.path
    PYTHONPATH=OLD/python python benchmarks/run_path_modules.py

For each input kind, a warmed-up call (signature memoised) runs under sys.setprofile; the goprep
module of every Python frame entered or resumed is recorded in order. Printed per kind: the distinct
modules visited, and the re-entries (how often the call comes back into a module it had already left,
A -> B -> A counting one). Lower is a shorter path. Deterministic: no timing involved.
"""

from __future__ import annotations

import sys

import numpy as np


def _trace_modules(fn):
    seq = []

    def prof(frame, event, arg):
        if event in ("call", "return"):
            f = frame if event == "call" else frame.f_back
            name = f.f_globals.get("__name__", "") if f is not None else ""
            if name.startswith("goprep.") and (not seq or seq[-1] != name):
                seq.append(name)

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    left, reentries = set(), 0
    for prev, cur in zip(seq, seq[1:]):
        left.add(prev)
        if cur in left:
            reentries += 1
    return len(set(seq)), reentries, seq


def main() -> None:
    import goprep
    from PIL import Image

    rgb = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
    nv12 = np.random.default_rng(1).integers(0, 256, (720, 640), dtype=np.uint8)
    import io

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "JPEG", quality=90)
    jpeg = buf.getvalue()
    prep = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (224, 224)), mean=0.5, std=0.5), device="cpu")
    frame = goprep.yuv(nv12, "nv12", preset="opencv")
    pil = Image.fromarray(rgb)
    out = np.empty((3, 224, 224), np.float32)
    cases = {
        "ndarray (fast path)": lambda: prep(rgb),
        "ndarray out=": lambda: prep(rgb, out=out),
        "PIL image": lambda: prep(pil),
        "list of 2 ndarrays": lambda: prep([rgb, rgb]),
        "YUV frame": lambda: prep(frame),
        "JPEG bytes": lambda: prep(jpeg),
        "list of 2 JPEGs": lambda: prep([jpeg, jpeg]),
        "eager resize": lambda: goprep.resize(rgb, (224, 224)),
        "eager decode": lambda: goprep.decode(jpeg),
    }
    try:
        import torch

        t = torch.from_numpy(np.ascontiguousarray(rgb.transpose(2, 0, 1)))
        cases["torch tensor"] = lambda: prep(t)
    except ImportError:
        pass
    print(f"goprep from {goprep.__file__}")
    print(f"| {'call':<22} | modules | re-entries |")
    print(f"|{'-' * 24}|--------:|-----------:|")
    for name, fn in cases.items():
        fn()
        fn()  # memoised
        n, re, seq = _trace_modules(fn)
        print(f"| {name:<22} | {n:>7} | {re:>10} |")
        if "-v" in sys.argv:
            print("   ", " > ".join(s.replace("goprep.", "") for s in seq))


if __name__ == "__main__":
    main()
