"""YUV video frames in (issue 37): a 1080p NV12 frame -> 224 CHW float32 (ImageNet normalize), 1
thread, side by side in one interleaved run. Tasks (``BENCH_TASKS``): the 224x224 squash (bilinear)
and the crop task (shorter side 256 bilinear + centre crop 224). Rows per task (key "<task> <row>"):

- ``goprep-nv12``: ``prep(goprep.yuv(frame, preset="opencv"))``, the conversion fused into the resize;
- ``goprep-rgb``: the same pipeline on the frame already converted to RGB (the yardstick);
- ``opencv-numpy``: ``cv2.cvtColor``, ``cv2.resize`` (INTER_LINEAR), crop, NumPy normalize;
- ``probe-nv12`` / ``probe-rgb``: the bound's probe (below).

Targets: NV12 / RGB <= 1.3x; OpenCV / NV12 >= 5x.

The bound, measured in the same run. The NV12 call has to do what the RGB call does plus convert
every pixel its taps read (``tap_pixels``: the source rows the vertical taps read times the pixel
pairs holding a column the horizontal taps read, as the converter works on chroma-sharing pairs).
The converter alone is timed only by Go benchmarks (BenchmarkYUVConv, BenchmarkYUVConvPairs in
gomod/engine), which no binding entry point reaches; so the probe is a goprep pipeline that only
crops: a contiguous window of exactly that many rows and pair columns, from the NV12 frame (convert
+ store) and from the RGB frame (load + store), both into a reused ``out=``. Their difference is the
conversion's cost at the dense, contiguous rate: the cheapest way to convert those pixels (the real
taps are scattered, and the load the RGB call does is subtracted). So

- NV12 / RGB >= (RGB + conversion) / RGB, and
- OpenCV / NV12 <= OpenCV / (RGB + conversion);

a FAIL's detail states these figures (docs/perf/2026-12-06-yuv-sparse.md derives the same bound from
the converter's 32-bit multiplies, ~0.3 ns per pixel).

``benchmarks/yuv_nv12.py`` times the same callables (``methods``) with its own alternating rounds and
the antialiased crop task too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .decode import row_lines
from .imagenet_eval import EvalResult
from .task import MEAN, STD, Threads
from .scenarios import Settings
from .targets import Target, _judge
from .timing import calibrated, measure

H, W = 1080, 1920
OUT = 224


@dataclass(frozen=True)
class YUVTask:
    """One preprocessing task on the frame: ``size`` is goprep.resize's argument (an int: the
    shorter side, then a centre crop of OUT), ``aa`` its antialias."""

    name: str
    size: Any
    aa: bool = False

    @property
    def crop(self) -> bool:
        return isinstance(self.size, int)

    def resized_hw(self, h: int = H, w: int = W) -> tuple[int, int]:
        """(height, width) after the resize: torchvision's shorter-side rule (int truncation)."""
        if not self.crop:
            return tuple(self.size)  # type: ignore[return-value]
        s = self.size
        return (s, int(s * w / h)) if h <= w else (int(s * h / w), s)

    def crop_origin(self, h: int = H, w: int = W) -> tuple[int, int]:
        """Top-left of the centre crop in the resized image (goprep's and torchvision's rounding)."""
        if not self.crop:
            return 0, 0
        rh, rw = self.resized_hw(h, w)
        return int(round((rh - OUT) / 2.0)), int(round((rw - OUT) / 2.0))


TASKS = {
    "squash": YUVTask("squash 224x224", (OUT, OUT)),
    "crop": YUVTask("shorter side 256 + crop 224", 256),
    "crop-aa": YUVTask("shorter side 256 + crop 224, antialias", 256, True),
}
BENCH_TASKS = ("squash", "crop")  # the issue's two; yuv_nv12.py also times crop-aa


def frame_1080p(seed: int = 0) -> np.ndarray:
    """A 1080p NV12 frame with smooth content (a gradient scene with noise), as a decoder returns it."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    y = (110 + 80 * np.sin(xx / 90.0) * np.cos(yy / 70.0) + rng.normal(0, 6, (H, W))).clip(16, 235).astype(np.uint8)
    u = (128 + 40 * np.sin(np.arange(W // 2) / 50.0))[None].repeat(H // 2, 0)
    v = (128 + 40 * np.cos(np.arange(H // 2) / 40.0))[:, None].repeat(W // 2, 1)
    uv = np.stack([u, v], -1).astype(np.uint8).reshape(H // 2, W)
    return np.ascontiguousarray(np.concatenate([y, uv]))


def _taps(n_in: int, n_out: int, first: int, count: int) -> set[int]:
    """Source indices a bilinear (half-pixel centres, edge-clamped) resize n_in -> n_out reads for
    outputs first..first+count-1."""
    scale = n_in / n_out
    read: set[int] = set()
    for i in range(first, first + count):
        x0 = min(max(int(np.floor((i + 0.5) * scale - 0.5)), 0), n_in - 1)
        read.update((x0, min(x0 + 1, n_in - 1)))
    return read


def tap_pixels(t: YUVTask) -> tuple[int, int]:
    """(rows, columns) of the pixels the task's bilinear taps read in the 1080p frame: distinct source
    rows, and 2 x the distinct pixel pairs holding a column read. For an antialiased resize (more taps)
    this undercounts, which keeps it a lower bound."""
    rh, rw = t.resized_hw()
    top, left = t.crop_origin()
    oh, ow = (OUT, OUT)
    rows = _taps(H, rh, top, oh)
    pairs = {c // 2 for c in _taps(W, rw, left, ow)}
    return len(rows), 2 * len(pairs)


def methods(t: YUVTask, frame: np.ndarray, rgb: np.ndarray) -> dict[str, Callable[[Any], Any]]:
    """The task's callables (each takes an ignored argument, writes a reused (3, 224, 224) buffer and
    returns it): goprep-nv12, goprep-rgb, cvtcolor+goprep, opencv-numpy."""
    import cv2

    import goprep

    mean, std = np.asarray(MEAN, np.float32), np.asarray(STD, np.float32)

    @goprep.pipeline(device="cpu")
    def prep(img: Any) -> Any:
        img = goprep.resize(img, t.size, antialias=t.aa)
        if t.crop:
            img = goprep.center_crop(img, OUT)
        return goprep.normalize(img, mean=MEAN, std=STD)

    out = np.empty((3, OUT, OUT), np.float32)
    rh, rw = t.resized_hw()
    top, left = t.crop_origin()
    interp = cv2.INTER_AREA if t.aa else cv2.INTER_LINEAR

    def opencv_numpy(_: Any = None) -> np.ndarray:
        small = cv2.resize(cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12), (rw, rh), interpolation=interp)
        x = small[top : top + OUT, left : left + OUT].astype(np.float32)
        x *= 1 / 255.0
        x -= mean
        x /= std
        out[:] = x.transpose(2, 0, 1)
        return out

    return {
        "goprep-nv12": lambda _=None: prep(goprep.yuv(frame, preset="opencv"), out=out),
        "goprep-rgb": lambda _=None: prep(rgb, out=out),
        "cvtcolor+goprep": lambda _=None: prep(cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12), out=out),
        "opencv-numpy": opencv_numpy,
    }


def check(t: YUVTask, fns: dict[str, Callable[[Any], Any]]) -> float:
    """Before timing: the fused NV12 call equals the RGB call bit for bit (raises if not); returns
    OpenCV+NumPy's largest difference from it (normalised units)."""
    ref = np.array(fns["goprep-rgb"]())
    nv = np.array(fns["goprep-nv12"]())
    if not np.array_equal(nv, ref):
        raise RuntimeError(f"{t.name}: goprep NV12 differs from goprep on the converted RGB frame by "
                           f"{float(np.abs(nv - ref).max()):.3g}")
    return float(np.abs(np.array(fns["opencv-numpy"]()) - ref).max())


def probes(t: YUVTask, frame: np.ndarray, rgb: np.ndarray) -> dict[str, Callable[[Any], Any]]:
    """probe-nv12 / probe-rgb: a crop of tap_pixels(t) contiguous pixels (even origin, centred) from
    the NV12 frame and from the RGB frame, into a reused out= (see the module docstring)."""
    import goprep

    rows, cols = tap_pixels(t)
    top, left = (H - rows) // 2 & ~1, (W - cols) // 2 & ~1

    @goprep.pipeline(device="cpu")
    def window(img: Any) -> Any:
        return goprep.crop(img, top, left, rows, cols)

    out = np.empty((rows, cols, 3), np.uint8)
    return {
        "probe-nv12": lambda _=None: window(goprep.yuv(frame, preset="opencv"), out=out),
        "probe-rgb": lambda _=None: window(rgb, out=out),
    }


@dataclass
class YUVResult(EvalResult):
    """imagenet_eval's result: per_image holds "<task> <row>" -> seconds per frame, checks task ->
    OpenCV+NumPy's max |diff| from goprep; and the tap pixels the probe converts, per task."""

    pixels: dict[str, int] = field(default_factory=dict)
    tasks: tuple[str, ...] = BENCH_TASKS

    def conversion_s(self, task: str) -> float | None:
        """The tap pixels' dense conversion cost (probe-nv12 - probe-rgb, medians); 0 if negative."""
        a, b = self.per_image.get(f"{task} probe-nv12"), self.per_image.get(f"{task} probe-rgb")
        return None if a is None or b is None else max(0.0, a.median - b.median)

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "tap_pixels": self.pixels,
                "conversion_s": {z: self.conversion_s(z) for z in self.tasks}}


def run(threads: Threads, settings: Settings, tasks: tuple[str, ...] = BENCH_TASKS) -> YUVResult:
    """Check, then time every row of ``tasks`` in one interleaved run (goprep and OpenCV on 1 thread)."""
    res = YUVResult(tasks=tasks)
    try:
        import cv2

        one = {"goprep": 1, "cv2": 1}
        threads.apply(one)
        frame = frame_1080p()
        rgb = cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)
        level = 1.01 / 255 / min(STD)  # one uint8 step after normalize: OpenCV's bilinear is goprep's
        entries = []
        for z in tasks:
            t = TASKS[z]
            fns = methods(t, frame, rgb)
            res.checks[z] = worst = check(t, fns)
            if worst > level:
                raise RuntimeError(f"{t.name}: OpenCV+NumPy differs from goprep by {worst:.3g}; not timed")
            pr = probes(t, frame, rgb)
            if not np.array_equal(pr["probe-nv12"](), pr["probe-rgb"]()):
                raise RuntimeError(f"{t.name}: the NV12 crop probe differs from the RGB crop")
            rows, cols = tap_pixels(t)
            res.pixels[z] = rows * cols
            for k in ("goprep-nv12", "goprep-rgb", "opencv-numpy"):
                entries.append(calibrated(f"{z} {k}", fns[k], [None], settings, 1, one))
            entries += [calibrated(f"{z} {k}", f, [None], settings, 1, one) for k, f in pr.items()]
        res.per_image.update(measure(entries, settings.repeats, threads.apply))
    except Exception as exc:  # noqa: BLE001 - reported as the rows' failure, the run goes on
        res.error = f"{type(exc).__name__}: {exc}"
    return res


def lines(res: YUVResult) -> list[str]:
    out = row_lines("1080p NV12 frame -> 224 CHW float32 (ImageNet normalize), 1 thread, one interleaved run", res,
                    "frame")
    for z in res.tasks:
        conv = res.conversion_s(z)
        if conv is not None and z in res.pixels:
            out.append(f"  {z}: the taps read {res.pixels[z]} px; converting them densely costs {conv * 1e6:.1f} us "
                       f"({conv / res.pixels[z] * 1e9:.2f} ns/px, probe-nv12 - probe-rgb)")
    return out


def targets(res: YUVResult) -> list[Target]:
    why = res.error or "not measured"
    out = []
    for z in BENCH_TASKS:
        name = TASKS[z].name
        rgb, nv, cv = (res.per_image.get(f"{z} {k}") for k in ("goprep-rgb", "goprep-nv12", "opencv-numpy"))
        conv = res.conversion_s(z)
        floor = None if rgb is None or conv is None else rgb.median + conv
        t1 = _judge(f"yuv_nv12_vs_rgb_{z}_1080p", f"goprep NV12 vs the same pipeline on RGB, 1080p {name}, 1 thread "
                    "(time ratio)", res.ratio(f"{z} goprep-nv12", f"{z} goprep-rgb"), "<", 1.3, "x", why,
                    res.ratio(f"{z} goprep-nv12", f"{z} goprep-rgb", best=True))
        t2 = _judge(f"yuv_opencv_vs_nv12_{z}_1080p", f"OpenCV cvtColor+resize+NumPy vs goprep NV12, 1080p {name}, "
                    "1 thread", res.ratio(f"{z} opencv-numpy", f"{z} goprep-nv12"), ">=", 5.0, "x", why,
                    res.ratio(f"{z} opencv-numpy", f"{z} goprep-nv12", best=True))
        if floor is not None and rgb is not None and cv is not None:
            px = res.pixels[z]
            base = (f"measured bound: converting the {px} px the taps read at the dense rate costs {conv * 1e6:.0f} us "
                    f"({conv / px * 1e9:.2f} ns/px) on top of RGB's {rgb.median * 1e6:.0f} us")
            if t1.status == "FAIL":
                t1.detail = f"{base}, so NV12 / RGB >= {floor / rgb.median:.2f}x"
            if t2.status == "FAIL":
                t2.detail = f"{base}, so OpenCV / NV12 <= {cv.median / floor:.2f}x"
        out += [t1, t2]
    return out


class _NoProgress:
    def update(self, n: float = 1) -> None:
        pass

    def set_description_str(self, desc: str | None = None, refresh: bool = True) -> None:
        pass


def issue37(threads: Threads, settings: Settings) -> tuple[list[str], list[Target]]:
    """Every issue-37 row, section by section (this module's, cold.py's, decode.py's 1080p subset, and
    the batch-256 goprep rows for cached arrays), and the ISSUE37 targets judged on them."""
    from . import cold, decode, images, impls_goprep, scenarios
    from .targets import ISSUE37, evaluate

    out: list[str] = []
    res = run(threads, settings)
    out += lines(res) + [""]
    cold_res = cold.run(threads, settings)
    out += cold.lines(cold_res) + [""]
    dec = decode.run(threads, settings, ("1080p",), decode.ISSUE37_ROWS)
    out += decode.lines(dec) + [""]
    keys = ("goprep-1t-out", "goprep-all-out")
    rows = [r for r in impls_goprep.goprep_impls(threads, antialias=True) if r.key in keys]
    b256 = scenarios.run_config(images.SIZES["512"], 256, rows, impls_goprep.references(threads), threads,
                                settings, _NoProgress())
    from .report import config_lines

    out += ["(cached arrays: 512x512 batch 256, goprep rows only)"] + config_lines(b256, settings.repeats)
    judged = targets(res) + cold.targets(cold_res)
    judged += decode.targets(dec, threads.all, cold_res.copy_scaling(2))
    judged += evaluate(None, b256, None, None, threads.all, threads.all, copy_scaling=cold_res.copy_scaling())
    return out, [next(t for t in judged if t.key == k) for k in ISSUE37]


def main(argv: list[str] | None = None) -> int:
    """python -m goprep._benchsuite.yuv [--issue37] [--repeats N]: this section alone, or every issue-37 row."""
    import argparse
    import time

    p = argparse.ArgumentParser(prog="python -m goprep._benchsuite.yuv")
    p.add_argument("--issue37", action="store_true", help="every issue-37 row and target, not only the NV12 rows")
    p.add_argument("--repeats", type=int, default=9, help="interleaved repeats, a positive integer (default: %(default)s)")
    a = p.parse_args(argv)
    if a.repeats < 1:  # as python -m goprep bench says it: an error, never silently 1
        p.error(f"--repeats must be a positive integer, got {a.repeats}")
    threads = Threads()
    settings = Settings(repeats=a.repeats, min_sample_s=0.05, max_calls=100_000)
    t0 = time.perf_counter()
    try:
        if a.issue37:
            text, judged = issue37(threads, settings)
        else:
            res = run(threads, settings)
            text, judged = lines(res), targets(res)
    finally:
        threads.restore()
    print("\n".join(text + ["", "== issue 37 targets ==" if a.issue37 else "== targets =="] + [t.line() for t in judged]))
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
