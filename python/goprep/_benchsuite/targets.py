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


# Issue 37's targets, the keys ``python -m goprep._benchsuite.yuv --issue37`` prints (tests check each
# is judged by the bench): the NV12 rows (yuv.py), the reduced decode (decode.py), the distinct-image
# batch against the copy bound and its scaling on all threads (cold.py), cached arrays (batch 256,
# below) on all threads and JPEG batches (decode.py) on 2 threads, the last three under
# scaling_target's rule with the copy's scaling on the same thread count.
ISSUE37 = (
    "yuv_nv12_vs_rgb_squash_1080p", "yuv_opencv_vs_nv12_squash_1080p",
    "yuv_nv12_vs_rgb_crop_1080p", "yuv_opencv_vs_nv12_crop_1080p",
    "decode_fast_vs_cv2_reduced_1080p",
    "cold_batch_vs_bandwidth_bound", "cold_batch_thread_scaling_out",
    "batch256_thread_scaling", "decode_batch64_2_threads_vs_1",
)

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


COPY_RULE = 0.9  # issue 37: a batch's N-thread scaling passes at >= 1.8x, or within 10% of the copy's own
LOW_COPY = 1.5  # a copy scaling below this on 2+ threads means the run did not get the cores: said in the detail


def scaling_target(key: str, name: str, measured: float | None, best: float | None, copy_scaling: float | None,
                   usable_cores: int, why: str = "") -> Target:
    """Issue 37's rule for a batch on N threads against 1: PASS at >= 1.8x, or at >= 90% of the
    machine's own bound, a copy of bytes on N threads against 1 (``copy_scaling``, measured in the
    same run: cold.py's copy rows). The threshold is the looser of the two; the detail states both.
    SKIP on 1 usable core, where there is nothing to scale onto."""
    if usable_cores < 2:
        return Target(key, name, 1.8, ">=", "x", measured, "SKIP", "1 usable core")
    threshold = 1.8 if copy_scaling is None else min(1.8, round(COPY_RULE * copy_scaling, 2))
    t = _judge(key, name, measured, ">=", threshold, "x", why, best)
    rule = ("target >= 1.8x; the copy's scaling was not measured" if copy_scaling is None else
            f"target >= 1.8x, or within 10% of the copy's own scaling {copy_scaling:.2f}x (>= {COPY_RULE * copy_scaling:.2f}x)")
    if copy_scaling is not None and copy_scaling < LOW_COPY:
        rule += "; the copy itself barely scaled: other processes held the cores, judge this on an idle machine"
    if t.status != "SKIP":  # a configuration not run keeps NOT_RUN as its whole detail
        t.detail = f"{t.detail}; {rule}" if t.detail else rule
    return t


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
    copy_scaling: float | None = None,
) -> list[Target]:
    """``b1``: 512x512 batch 1 with every implementation; ``b256``: 512x512 batch 256 with the goprep rows;
    ``copy_scaling``: the machine's copy on ``all_threads`` threads against 1 (cold.py), for issue 37's
    rule on the batch-256 ("cached arrays") scaling."""
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
    why = _why(b256, "goprep-1t-out", "goprep-all-out")
    best = ratio(b256, "goprep-1t-out", "goprep-all-out", best=True)
    out.append(scaling_target("batch256_thread_scaling", name, scaling, best, copy_scaling, usable_cores, why))
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
