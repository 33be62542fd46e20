"""Issue 36's training benchmark: a folder of JPEGs to float32 CHW training batches with
RandomResizedCrop(224) + RandomHorizontalFlip + normalize, goprep against torchvision's DataLoader and
NVIDIA DALI's CPU pipeline, side by side in one interleaved run, at 1 core and at all cores.

Data: ``FILES`` JPEGs (quality 90) of about 500x375 (a quarter 375x500) in an ImageFolder in a temporary
directory, random crops of the suite's photographs (images.PHOTOS), made by ``make_jpegs``.

Rows (key ``"<implementation> <c>c"``, c = cores; each sample is one epoch over every file):

- ``goprep-loader``: ``goprep.data.Loader`` (``c`` loader threads, prefetch 2, torch output, no
  pinning) calling the recipe's torchvision Compose converted by ``gt.from_torchvision`` once per
  batch with the batch's generator (decode, crop, resize, flip and normalize fused in one call; equal
  bit for bit to ``gt.random_resized_crop`` then ``goprep.normalize``, and 15-20% less CPU: the
  normalisation is fused into the resize's SIMD pass), goprep's engine on ``c`` threads;
- ``goprep-batch``: the same transform called on the same batches (the loader's plan and
  generator seeds) in a plain loop: the bare call, to show the loader's overhead;
- ``goprep-decode-floor`` (1 core only): the same batches and draws through
  ``gt.random_resized_crop(..., interpolation="nearest", antialias=False)`` to uint8 HWC: the
  crop-aware decode with almost no resize work, the bound the per-core target's detail reports;
- ``torchvision``: ``DataLoader(ImageFolder(root, Compose([RandomResizedCrop(224),
  RandomHorizontalFlip(), ToTensor(), Normalize()])), shuffle=True)`` with ``c`` worker processes
  (persistent, so that every sample is a steady-state epoch; Pillow decodes);
- ``dali-cpu``: DALI's ``fn.readers.file`` (shuffled), ``fn.decoders.image_random_crop`` (CPU),
  ``fn.resize`` to 224x224, ``fn.crop_mirror_normalize`` (mirror from ``fn.random.coin_flip``),
  ``device_id=None``, ``num_threads=c``, run synchronously (exec_async and exec_pipelined off: nothing
  runs between its samples, when other rows are timed), its outputs used in place (no copy). Skipped
  with the reason when ``nvidia.dali`` is not installed (``pip install nvidia-dali-cuda120``).

Every row first runs one untimed epoch (plans, worker processes, page cache). Each sample records wall
time (``time.perf_counter``) and CPU time: the process's (``time.process_time``, every thread) plus,
for torchvision, its worker processes' (``/proc/<pid>/stat``). CPU time per image depends less on
other load than wall time, so it is reported beside every row.

Checked before anything is timed: goprep's batch call equals the per-item calls with the same drawn
parameters (``gt.resized_crop_with`` on each path) bit for bit, the timed transform (the converted
Compose) equals that batch normalized (``goprep.normalize``) bit for bit, and the loader's first batch
equals the bare call with the loader's generator seed; and torchvision's functional ops on Pillow's
decode, with the parameters goprep drew, give goprep's batch within ``TV_TOL`` (issue 36's bound on PIL
images).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from . import images
from .imagenet_eval import EvalResult
from .machine import usable_cores
from .targets import NOT_RUN, Target, _judge
from .task import MEAN, STD
from .timing import Stats

SIZE = 224  # RandomResizedCrop's output
FILES, BATCH, REPEATS = 1000, 256, 3
QUICK_FILES, QUICK_BATCH, QUICK_REPEATS = 48, 16, 1
IMPLS = ("goprep-loader", "goprep-batch", "torchvision", "dali-cpu")
# the per-core target's measured bound: the same boxes decoded (crop-aware) with a nearest gather to the
# output and no antialias or normalize, uint8 HWC; what the decode alone leaves of 1 ms per image
FLOOR = "goprep-decode-floor"
TV_TOL = 1e-5  # torchvision on Pillow's decode, same parameters: goprep within this (normalised units)
DALI_MISSING = "DALI not installed (pip install nvidia-dali-cuda120; its CPU pipeline needs no GPU)"


@dataclass
class TrainResult(EvalResult):
    """imagenet_eval's result (``per_image``: wall seconds per image, ``checks``, ``error``, ``ratio``)
    with CPU seconds per image, the skipped rows' reasons and the run's shape."""

    cpu_per_image: dict[str, Stats] = field(default_factory=dict)
    cores: dict[str, int] = field(default_factory=dict)  # row -> the cores it was given
    skipped: dict[str, str] = field(default_factory=dict)  # implementation -> why it did not run
    files: int = 0
    batch: int = 0
    repeats: int = 0
    core_counts: tuple[int, ...] = ()

    def images_per_s(self, key: str, best: bool = False) -> float | None:
        st = self.per_image.get(key)
        return None if st is None else 1.0 / (st.min if best else st.median)

    def as_dict(self) -> dict[str, Any]:
        d = super().as_dict()
        d.update(cpu_per_image_s={k: v.as_dict() for k, v in self.cpu_per_image.items()}, cores=self.cores,
                 skipped=self.skipped, files=self.files, batch=self.batch, repeats=self.repeats,
                 core_counts=list(self.core_counts))
        return d


def make_jpegs(root: str, n: int, seed: int = 0) -> list[str]:
    """``n`` JPEG files (quality 90) in an ImageFolder at ``root`` (``root/<photo>/<k>.jpg``, the class
    being the photograph it was cut from), returned in ImageFolder's order. Each is a random 60-100%
    crop of one of the suite's photographs, resized (bicubic) to 500x375 or, one in four, 375x500, each
    side +-20 pixels: ImageNet's typical size and shape."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    for name in images.PHOTOS:
        os.makedirs(os.path.join(root, name), exist_ok=True)
    for k in range(n):
        name = images.PHOTOS[k % len(images.PHOTOS)]
        a = images._photo(name)
        h, w = a.shape[:2]
        ch, cw = int(h * rng.uniform(0.6, 1)), int(w * rng.uniform(0.6, 1))
        y, x = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        wh = (500, 375) if rng.random() < 0.75 else (375, 500)
        wh = (wh[0] + int(rng.integers(-20, 21)), wh[1] + int(rng.integers(-20, 21)))
        Image.fromarray(a[y:y + ch, x:x + cw]).resize(wh, Image.BICUBIC).save(
            os.path.join(root, name, f"{k:05d}.jpg"), "JPEG", quality=90)
    return [os.path.join(root, c, f) for c in sorted(os.listdir(root)) for f in sorted(os.listdir(os.path.join(root, c)))]


def goprep_transform(size: int = SIZE) -> Callable[..., Any]:
    """The recipe as one goprep batch call: ``torchvision_compose`` converted (``gt.from_torchvision``),
    called on a list of paths with ``generator=``: each path decoded only in its drawn box, cropped,
    resized to ``size``, flipped (p=0.5) and normalized to float32 NCHW in one engine call. Why not
    ``gt.random_resized_crop`` then ``goprep.normalize``: the same tensors bit for bit (``check``), but
    its uint8 HWC output takes the engine's scalar antialias pass and a second pass to normalize
    (docs/perf/2026-12-06-train-speed.md: 1.53 against 1.93 ms CPU per image on 1 thread)."""
    import goprep.transforms as gt

    return gt.from_torchvision(torchvision_compose(size))


def torchvision_compose(size: int = SIZE) -> Any:
    import torchvision.transforms as T

    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])


def check(paths: Sequence[str], size: int = SIZE, seed: int = 7) -> dict[str, float]:
    """The checks made before timing (module docstring), as the largest absolute difference each found:
    ``batch-vs-per-item``, ``fused-vs-batch`` and ``loader-vs-batch`` must be 0,
    ``torchvision-same-params`` at most TV_TOL."""
    import numpy as np
    import torch
    import torchvision.transforms.functional as F
    from PIL import Image

    import goprep
    import goprep.data
    import goprep.transforms as gt

    items = list(paths)
    crops, prms = gt.random_resized_crop(items, size, hflip=0.5, generator=np.random.default_rng(seed),
                                         return_params=True)
    per = np.stack([gt.resized_crop_with(p, prm, size) for p, prm in zip(items, prms)])
    out = {"batch-vs-per-item": float(np.abs(crops.astype(np.int16) - per.astype(np.int16)).max())}
    transform = goprep_transform(size)
    norm = np.asarray(goprep.normalize(crops, mean=MEAN, std=STD))
    fused = np.asarray(transform(items, generator=np.random.default_rng(seed)))
    out["fused-vs-batch"] = float(np.abs(fused - norm).max())
    with goprep.data.Loader(items, transform, batch_size=len(items), seed=seed, threads=1, output="numpy") as ld:
        (x, _), = list(ld)
        idx = ld.plan()[0]
    want = transform([items[i] for i in idx], generator=np.random.default_rng(goprep.data.batch_seed(seed, 0, idx)))
    out["loader-vs-batch"] = float(np.abs(x - np.asarray(want)).max())
    worst = 0.0
    for k, (p, prm) in enumerate(zip(items, prms)):
        with Image.open(p) as im:
            t = F.resized_crop(im.convert("RGB"), prm.top, prm.left, prm.height, prm.width, [size, size],
                               antialias=True)
        t = F.normalize(F.to_tensor(F.hflip(t) if prm.hflip else t), MEAN, STD)
        worst = max(worst, float((torch.from_numpy(norm[k]) - t).abs().max()))
    out["torchvision-same-params"] = worst
    return out


def _proc_cpu_s(pids: Sequence[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far, from /proc (0 where gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


class _Row:
    """One implementation at one core count: ``epoch()`` runs one epoch over every file and returns
    (images, extra CPU seconds used outside this process); ``close()`` releases what it holds."""

    def __init__(self, key: str, cores: int, epoch: Callable[[int], tuple[int, float]],
                 close: Callable[[], None] = lambda: None, goprep_threads: int | None = None) -> None:
        self.key, self.cores, self.epoch, self.close, self.goprep_threads = key, cores, epoch, close, goprep_threads
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def sample(self, e: int) -> None:
        import goprep

        before = goprep.get_num_threads()
        if self.goprep_threads is not None:
            goprep.set_num_threads(self.goprep_threads)
        try:
            c0, w0 = time.process_time(), time.perf_counter()
            n, extra_cpu = self.epoch(e)
            w, c = time.perf_counter() - w0, time.process_time() - c0 + extra_cpu
        finally:
            goprep.set_num_threads(before)
        if n <= 0:
            raise RuntimeError(f"{self.key}: an epoch gave no images")
        self.wall.append(w / n)
        self.cpu.append(c / n)


def _goprep_rows(paths: list[str], root: str, batch: int, c: int) -> list[_Row]:
    import numpy as np

    import goprep.data
    import goprep.transforms as gt

    transform = goprep_transform()
    loader = goprep.data.Loader(root, transform, batch_size=batch, seed=0, threads=c, prefetch=2, output="torch",
                                pin_memory=False)
    items = loader.samples.items

    def loader_epoch(e: int) -> tuple[int, float]:
        loader.set_epoch(e)
        return sum(len(y) for _, y in loader), 0.0

    def batch_epoch(e: int) -> tuple[int, float]:
        loader.set_epoch(e)  # the loader's order and seeds, no threads
        n = 0
        for idx in loader.plan():
            g = np.random.default_rng(goprep.data.batch_seed(0, e, idx))
            n += len(transform([items[i] for i in idx], generator=g))
        return n, 0.0

    def floor_epoch(e: int) -> tuple[int, float]:
        loader.set_epoch(e)  # the same batches and draws as batch_epoch, without the resize's work
        n = 0
        for idx in loader.plan():
            g = np.random.default_rng(goprep.data.batch_seed(0, e, idx))
            n += len(gt.random_resized_crop([items[i] for i in idx], SIZE, hflip=0.5, interpolation="nearest",
                                            antialias=False, generator=g))
        return n, 0.0

    rows = [_Row(f"goprep-loader {c}c", c, loader_epoch, loader.close, goprep_threads=c),
            _Row(f"goprep-batch {c}c", c, batch_epoch, goprep_threads=c)]
    if c == 1:
        rows.append(_Row(f"{FLOOR} {c}c", c, floor_epoch, goprep_threads=c))
    return rows


def _torchvision_row(root: str, batch: int, c: int) -> _Row:
    import torch
    import torchvision

    ds = torchvision.datasets.ImageFolder(root, transform=torchvision_compose())
    dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=c, persistent_workers=True,
                                     generator=torch.Generator().manual_seed(0))

    def epoch(e: int) -> tuple[int, float]:
        it = iter(dl)  # persistent workers: the same processes every epoch, started by the first
        pids = [w.pid for w in getattr(it, "_workers", [])]
        c0 = _proc_cpu_s(pids)
        n = sum(len(y) for _, y in it)
        return n, _proc_cpu_s(pids) - c0

    def close() -> None:
        it = getattr(dl, "_iterator", None)
        if it is not None:
            it._shutdown_workers()  # joins the worker processes now, not at garbage collection

    return _Row(f"torchvision {c}c", c, epoch, close)


def _dali_row(root: str, n_files: int, batch: int, c: int) -> _Row:
    import numpy as np
    from nvidia.dali import fn, pipeline_def, types

    @pipeline_def(batch_size=batch, num_threads=c, device_id=None, seed=0, exec_async=False, exec_pipelined=False)
    def train_pipe() -> Any:
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        img = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB, random_area=[0.08, 1.0],
                                            random_aspect_ratio=[3 / 4, 4 / 3])
        img = fn.resize(img, resize_x=SIZE, resize_y=SIZE)
        img = fn.crop_mirror_normalize(img, dtype=types.FLOAT, output_layout="CHW", mean=[m * 255 for m in MEAN],
                                       std=[s * 255 for s in STD], mirror=fn.random.coin_flip(probability=0.5))
        return img, labels

    pipe = train_pipe()
    pipe.build()
    steps = math.ceil(n_files / batch)

    def epoch(e: int) -> tuple[int, float]:
        n = 0
        for _ in range(steps):
            x, _ = pipe.run()
            n += np.asarray(x.as_tensor()).shape[0]  # the batch as one (N, 3, 224, 224) array, no copy
        return n, 0.0

    return _Row(f"dali-cpu {c}c", c, epoch)


def run(files: int = FILES, batch: int = BATCH, repeats: int = REPEATS, core_counts: Sequence[int] | None = None,
        say: Callable[[str], None] = lambda s: None) -> TrainResult:
    """Make the data set in a temporary directory, check, then time every row (module docstring):
    ``repeats`` epochs each, rows interleaved (order rotated each repeat) after a warm-up epoch."""
    cores = tuple(dict.fromkeys(core_counts or (1, usable_cores())))
    res = TrainResult(files=files, batch=batch, repeats=repeats, core_counts=cores)
    root = tempfile.mkdtemp(prefix="goprep-train-bench-")
    rows: list[_Row] = []
    try:
        import goprep

        if "jpeg" not in goprep.info()["codecs"]:
            res.error = "goprep was built without its JPEG decoder (goprep.info()['codecs'])"
            return res
        say(f"making {files} JPEGs in {root}")
        paths = make_jpegs(root, files)
        res.checks = check(paths[:8])
        bad = {k: v for k, v in res.checks.items() if v > (TV_TOL if k == "torchvision-same-params" else 0)}
        if bad:
            res.error = f"goprep's batch differs from the per-item path or from torchvision: {bad}; not timed"
            return res
        try:
            import nvidia.dali  # noqa: F401
        except ImportError:
            res.skipped["dali-cpu"] = DALI_MISSING
        for c in cores:
            rows += _goprep_rows(paths, root, batch, c)
            rows.append(_torchvision_row(root, batch, c))
            if "dali-cpu" not in res.skipped:
                rows.append(_dali_row(root, files, batch, c))
        for r in rows:
            say(f"warm-up: {r.key}")
            r.sample(0)
            r.wall.clear()
            r.cpu.clear()
        for rep in range(repeats):
            for i in range(len(rows)):
                rows[(rep + i) % len(rows)].sample(1 + rep)
        for r in rows:
            res.per_image[r.key] = Stats.of(r.wall)
            res.cpu_per_image[r.key] = Stats.of(r.cpu)
            res.cores[r.key] = r.cores
    except Exception as exc:  # noqa: BLE001 - reported as the rows' failure, the bench goes on
        res.error = f"{type(exc).__name__}: {exc}"
    finally:
        for r in rows:
            try:
                r.close()
            except Exception:  # noqa: BLE001 - closing is best effort; the numbers are taken
                pass
        shutil.rmtree(root, ignore_errors=True)
    return res


def lines(res: TrainResult) -> list[str]:
    out = [f"== training input: {res.files} JPEGs (~500x375, q90) -> RandomResizedCrop({SIZE}) + flip + normalize, "
           f"float32 CHW batches of {res.batch}; {res.repeats} epochs per row, interleaved =="]
    if res.checks:
        out.append("  checks: " + ", ".join(f"{k} max diff {v:.3g}" for k, v in res.checks.items()))
    if res.error:
        out.append(f"  error: {res.error}")
    for impl, why in res.skipped.items():
        out.append(f"  {impl}: skipped: {why}")
    if res.per_image:
        out.append(f"  {'row':22} {'images/s':>9} {'per core':>9} {'best':>9} {'CPU ms/image':>13} {'best':>6} "
                   f"{'images/CPU-s':>13}")
    for key, st in res.per_image.items():
        cpu, c = res.cpu_per_image[key], res.cores[key]
        out.append(f"  {key:22} {1 / st.median:9.0f} {1 / st.median / c:9.0f} {1 / st.min:9.0f} {cpu.median * 1e3:13.2f} "
                   f"{cpu.min * 1e3:6.2f} {1 / cpu.median:13.0f}")
    for c in res.core_counts:
        lo, bare = res.per_image.get(f"goprep-loader {c}c"), res.per_image.get(f"goprep-batch {c}c")
        if lo is not None and bare is not None:
            out.append(f"  loader overhead, {c} core(s): {(lo.median / bare.median - 1) * 100:+.1f}% time per image "
                       f"against the bare batch call")
    return out


def targets(res: TrainResult) -> list[Target]:
    """The issue's three targets, judged at the run's largest core count on wall-time medians, and the
    same ratios from CPU time per image (INFO: less sensitive to other load, not judged)."""
    c = max(res.core_counts) if res.core_counts else usable_cores()
    gp = f"goprep-loader {c}c"
    why = res.error or ("" if res.per_image else NOT_RUN)
    out = []
    for key, other, goal, name in (
        ("train_vs_torchvision", f"torchvision {c}c", 3.0,
         f"training batches: goprep loader vs torchvision DataLoader (Pillow, {c} workers), {c} cores"),
        ("train_vs_dali_cpu", f"dali-cpu {c}c", 1.5, f"training batches: goprep loader vs DALI CPU pipeline, {c} cores"),
    ):
        if other.startswith("dali") and "dali-cpu" in res.skipped:
            out.append(Target(key, name, goal, ">=", "x", None, "SKIP", res.skipped["dali-cpu"]))
            continue
        out.append(_judge(key, name, res.ratio(other, gp), ">=", goal, "x", why, res.ratio(other, gp, best=True)))
        cpu = _cpu_ratio(res, other, gp)
        out.append(Target(key + "_cpu", name + ", CPU time per image", goal, ">=", "x", cpu, "INFO",
                          "not judged: process CPU time, all threads and worker processes"))
    one = "goprep-loader 1c"
    ips, best = res.images_per_s(one), res.images_per_s(one, best=True)
    name = "training batches: goprep loader images/s on 1 core vs 1000"
    t = _judge("train_per_core", name, None if ips is None else ips / 1000, ">=", 1.0, "x",
               why if 1 in res.core_counts else NOT_RUN, None if best is None else best / 1000)
    t.detail = t.detail or _floor_detail(res)
    out.append(t)
    cpu = res.cpu_per_image.get(one)
    out.append(Target("train_per_core_cpu", "training batches: goprep loader images per CPU-second (1 core) vs 1000",
                      1.0, ">=", "x", None if cpu is None else 1 / cpu.median / 1000, "INFO",
                      "not judged: process CPU time"))
    return out


def _floor_detail(res: TrainResult) -> str:
    """The per-core target's bound, from the same run: the decode floor's images/s on 1 core and what
    it leaves of the 1 ms an image may take for 1000 images/s, against what the rest costs now."""
    floor, full = res.per_image.get(f"{FLOOR} 1c"), res.per_image.get("goprep-loader 1c")
    if floor is None or full is None:
        return ""
    left = 1e-3 - floor.median
    head = (f"bound: decoding the same boxes alone (nearest gather, no resize or normalize) runs at "
            f"{1 / floor.median:.0f} images/s on 1 core, ")
    if left <= 0:
        return head + "so 1000 images/s is out of reach on this run whatever the resize costs"
    return head + (f"leaving {left * 1e3:.2f} ms per image for the resize, normalize and loader at 1000 "
                   f"images/s; they take {(full.median - floor.median) * 1e3:.2f} ms")


def _cpu_ratio(res: TrainResult, slow: str, fast: str) -> float | None:
    a, b = res.cpu_per_image.get(slow), res.cpu_per_image.get(fast)
    return None if a is None or b is None else a.median / b.median


def _core_counts(text: str) -> list[int]:
    """``--cores``' value: distinct positive integers, in order."""
    parts = text.split(",")
    if not all(v.strip().isdigit() and int(v) > 0 for v in parts):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}")
    return list(dict.fromkeys(int(v) for v in parts))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m goprep bench --train``: this benchmark alone, its lines, targets and a JSON file."""
    from . import machine

    p = argparse.ArgumentParser(prog="python -m goprep bench --train",
                                description="Issue 36's training-input benchmark alone: goprep's loader against "
                                            "torchvision's DataLoader and DALI's CPU pipeline.")
    p.add_argument("--quick", action="store_true", help=f"{QUICK_FILES} files, batches of {QUICK_BATCH}, 1 epoch")
    p.add_argument("--files", type=int, metavar="N", help=f"JPEG files to make (default {FILES})")
    p.add_argument("--batch", type=int, metavar="N", help=f"batch size (default {BATCH})")
    p.add_argument("--repeats", type=int, metavar="N", help=f"timed epochs per row (default {REPEATS})")
    p.add_argument("--cores", type=_core_counts, metavar="LIST",
                   help="comma-separated core counts (default: 1 and all usable)")
    p.add_argument("--out", default="bench_results", metavar="DIR", help="where the JSON goes (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="exit 1 if a target fails")
    args = p.parse_args(list(argv) if argv is not None else None)
    for name in ("files", "batch", "repeats"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    started = _dt.datetime.now().astimezone()
    info = machine.machine_info()
    print("\n".join(machine.machine_lines(info)), flush=True)
    res = run(args.files or (QUICK_FILES if args.quick else FILES), args.batch or (QUICK_BATCH if args.quick else BATCH),
              args.repeats or (QUICK_REPEATS if args.quick else REPEATS), args.cores, say=lambda s: print(s, flush=True))
    found = targets(res)
    print("\n".join(lines(res) + ["", "== targets (PASS/FAIL judged on medians) =="] + [t.line() for t in found]), flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"goprep-train-bench-{started.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump({"started": started.isoformat(timespec="seconds"), "argv": list(argv or []), "machine": info,
                   "train": res.as_dict(), "targets": [t.as_dict() for t in found]}, f, indent=1, default=str)
    print(f"wrote {path}")
    return 1 if args.check and any(t.status == "FAIL" for t in found) else 0

