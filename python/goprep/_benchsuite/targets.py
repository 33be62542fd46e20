"""The performance targets, evaluated on what the run measured (512x512 -> 224x224, batch 1 unless said)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .scenarios import ConfigResult, OverheadResult, ServingResult


@dataclass
class Target:
    key: str  # stable id for tools that read the JSON
    name: str
    threshold: float
    op: str  # ">=" or "<"
    unit: str  # "x" (a ratio) or "us"
    measured: float | None  # from medians: what PASS/FAIL is judged on
    status: str  # PASS | FAIL | SKIP | INFO (reported, not judged)
    detail: str = ""
    best: float | None = None  # the same from the best repeat of each side, for noisy machines

    def line(self) -> str:
        got = "not measured" if self.measured is None else f"{self.measured:.2f}{self.unit}"
        if self.measured is not None and self.best is not None:
            got += f" (best repeats: {self.best:.2f}{self.unit})"
        want = f"{self.op} {self.threshold:g}{self.unit}"
        return f"{self.status:4}  {self.name}: {got} (target {want})" + (f"  [{self.detail}]" if self.detail else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "threshold": self.threshold,
            "op": self.op,
            "unit": self.unit,
            "measured": self.measured,
            "measured_best": self.best,
            "status": self.status,
            "detail": self.detail,
        }


NOT_RUN = "configuration not run"  # _why's reason for a configuration the run left out: SKIP, not FAIL


def _judge(
    key: str,
    name: str,
    measured: float | None,
    op: str,
    threshold: float,
    unit: str,
    why_missing: str = "",
    best: float | None = None,
) -> Target:
    if measured is None:
        # a configuration this run left out (``--sizes 1080p`` runs no 512) is not judged; a row that
        # ran and failed to measure is a failure
        status = "SKIP" if why_missing == NOT_RUN else "FAIL"
        return Target(key, name, threshold, op, unit, None, status, why_missing or "not measured")
    ok = measured >= threshold if op == ">=" else measured < threshold
    return Target(key, name, threshold, op, unit, measured, "PASS" if ok else "FAIL", best=best)


def _why(cfg: ConfigResult | None, *keys: str) -> str:
    if cfg is None:
        return NOT_RUN
    bad = []
    for k in keys:
        row = cfg.row(k)
        if row is None:
            bad.append(f"{k}: not run")
        elif not row.ok:
            bad.append(f"{k}: {row.status} {row.detail}".strip())
    return "; ".join(bad)


def evaluate(
    b1: ConfigResult | None,
    b256: ConfigResult | None,
    serving: ServingResult | None,
    overhead: OverheadResult | None,
    usable_cores: int,
    all_threads: int,
    *,
    b1080: ConfigResult | None = None,
    cold: ConfigResult | None = None,
) -> list[Target]:
    """``b1``: 512x512 batch 1 with every implementation; ``b256``: 512x512 batch 256 with the goprep rows."""
    out: list[Target] = []

    def ratio(cfg: ConfigResult | None, slow: str, fast: str, best: bool = False) -> float | None:
        return None if cfg is None else cfg.ratio(slow, fast, best=best)

    out.append(
        _judge(
            "vs_opencv_pipeline",
            "goprep CPU 1 thread vs OpenCV+NumPy pipeline (cv2.setNumThreads(1) for fairness)",
            ratio(b1, "opencv-1t", "goprep-1t"),
            ">=",
            3.0,
            "x",
            _why(b1, "opencv-1t", "goprep-1t"),
            ratio(b1, "opencv-1t", "goprep-1t", best=True),
        )
    )
    out.append(
        _judge(
            "vs_numpy",
            "goprep CPU 1 thread vs plain NumPy",
            ratio(b1, "numpy", "goprep-1t"),
            ">=",
            30.0,
            "x",
            _why(b1, "numpy", "goprep-1t"),
            ratio(b1, "numpy", "goprep-1t", best=True),
        )
    )
    out.append(
        _judge(
            "vs_cv2_resize_alone",
            "goprep CPU 1 thread (whole task) vs cv2.resize alone (1 thread)",
            ratio(b1, "cv2-resize-1t", "goprep-1t"),
            ">=",
            1.0,
            "x",
            _why(b1, "cv2-resize-1t", "goprep-1t"),
            ratio(b1, "cv2-resize-1t", "goprep-1t", best=True),
        )
    )

    # Judged with the result written into a reused buffer (out=): a fresh 154 MB result per call is
    # first-touch page faults, kernel zeroing that does not scale with goprep's threads. The
    # fresh-result ratio is reported beside it (INFO), never hidden.
    name = f"goprep batch 256, {all_threads} threads vs its own 1-thread throughput (out= reused)"
    scaling = ratio(b256, "goprep-1t-out", "goprep-all-out")
    fresh = ratio(b256, "goprep-1t", "goprep-all")
    info = Target(
        "batch256_thread_scaling_fresh",
        f"goprep batch 256, {all_threads} threads vs 1, a fresh result array per call",
        1.8, ">=", "x", fresh, "INFO", "not judged: includes the kernel's page zeroing",
    )
    if usable_cores < 2:
        out.append(Target("batch256_thread_scaling", name, 1.8, ">=", "x", scaling, "SKIP", "1 usable core"))
    else:
        why = _why(b256, "goprep-1t-out", "goprep-all-out")
        best = ratio(b256, "goprep-1t-out", "goprep-all-out", best=True)
        out.append(_judge("batch256_thread_scaling", name, scaling, ">=", 1.8, "x", why, best))
    out.append(info)

    name = "serving: goprep throughput with 2 Python threads vs 1"
    scaling = serving.scaling("goprep", 2) if serving is not None else None
    why = "" if serving is None else serving.errors.get("goprep", serving.errors.get("all", ""))
    if usable_cores < 2:
        out.append(Target("serving_2_threads", name, 1.8, ">=", "x", scaling, "SKIP", "1 usable core"))
    else:
        best = serving.scaling("goprep", 2, best=True) if serving is not None else None
        out.append(_judge("serving_2_threads", name, scaling, ">=", 1.8, "x", why, best))

    # issue 13: the torchvision-default task (antialiased resize of a uint8 tensor), 1080p -> 224, 1 thread;
    # and OpenCV+NumPy on a stream of distinct images (cold caches), 512x512, 1 thread.
    # vs_opencv_pipeline_1080p guards the strong downscale of the bilinear task: on AVX-512 VBMI
    # machines it took 1.13 ms against OpenCV+NumPy's 0.33 ms (0.29x) until the byte-permute kernels
    # left strong downscales to the AVX2 ones (buildGroups in gomod/engine/resize_fast.go), unseen
    # because every other bilinear target is judged at 512x512.
    for key, name, slow, fast, cfg, want in (
        ("vs_opencv_pipeline_1080p", "goprep CPU 1 thread vs OpenCV+NumPy pipeline, 1080p (cv2.setNumThreads(1))",
         "opencv-1t", "goprep-1t", b1080, 1.0),
        ("vs_torchvision_aa_1080p", "goprep antialias bilinear vs torchvision v2 (uint8 tensor), 1080p, 1 thread",
         "torchvision-aa-1t", "goprep-aa-1t", b1080, 1.5),
        ("vs_torchvision_aacubic_1080p", "goprep antialias bicubic vs torchvision v2 (uint8 tensor), 1080p, 1 thread",
         "torchvision-aacubic-1t", "goprep-aacubic-1t", b1080, 1.5),
        ("vs_torchvision_aatorch_1080p",
         'goprep antialias="torch" bilinear vs torchvision v2 (uint8 tensor, same numbers), 1080p, 1 thread',
         "torchvision-aa-1t", "goprep-aatorch-1t", b1080, 1.5),
        ("vs_torchvision_aacubictorch_1080p",
         'goprep antialias="torch" bicubic vs torchvision v2 (uint8 tensor, same numbers), 1080p, 1 thread',
         "torchvision-aacubic-1t", "goprep-aacubictorch-1t", b1080, 1.5),
        ("vs_torchvision_noaatorch_1080p",
         'goprep antialias="torch-noaa" vs torchvision v2 antialias=False (uint8 tensor, same numbers), 1080p, 1 thread',
         "torchvision-1t", "goprep-noaatorch-1t", b1080, 1.5),
        ("cold_vs_opencv_loop", "goprep 1 thread vs OpenCV+NumPy, a Python loop over 64 distinct 512x512 images",
         "opencv-1t", "goprep-1t", cold, 3.0),
    ):
        out.append(_judge(key, name, ratio(cfg, slow, fast), ">=", want, "x", _why(cfg, slow, fast),
                          ratio(cfg, slow, fast, best=True)))

    probe = f"goprep.pipeline(flip), {all_threads} threads"
    us = us_best = None
    why = "overhead probe not run"
    if overhead is not None:
        stats = overhead.per_call_us.get(probe)
        us = stats.median if stats is not None else None
        us_best = stats.min if stats is not None else None
        why = overhead.errors.get(probe, overhead.errors.get("all", "not measured"))
    name = "decorator + binding overhead per call (4x4x3 flip pipeline)"
    out.append(_judge("call_overhead", name, us, "<", 5.0, "us", why, us_best))
    return out
