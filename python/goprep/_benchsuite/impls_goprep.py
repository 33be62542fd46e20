"""goprep's benchmark rows: the task as ``@goprep.pipeline`` functions, the references every row is
checked against, and the serving and per-call overhead probes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .impls_peers import opencv_task
from .task import (
    MEAN,
    OUT_H,
    OUT_W,
    REF_RESIZE,
    REF_TASK,
    REF_TASK_AA,
    REF_TASK_AA_CUBIC,
    ROUNDING_TOL,
    SCALE,
    STD,
    Fn,
    Impl,
    Threads,
)


def goprep_pipelines() -> dict[str, Fn]:
    """The task as ``@goprep.pipeline`` functions (plus the antialiased and CUDA variants)."""
    import goprep

    # device="cpu": the CPU rows must measure the CPU engine even where device="auto" would pick a GPU.
    @goprep.pipeline(device="cpu")
    def task(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W))
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    @goprep.pipeline(device="cpu")
    def task_antialias(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W), antialias=True)
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    @goprep.pipeline(device="cpu")
    def task_antialias_bicubic(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W), interpolation="bicubic", antialias=True)
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    # antialias="torch": PyTorch's uint8 weights, the numbers torchvision v2 computes on a uint8 tensor
    # (the like-for-like comparison with the torchvision antialias rows)
    @goprep.pipeline(device="cpu")
    def task_antialias_torch(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W), antialias="torch")
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    @goprep.pipeline(device="cpu")
    def task_antialias_bicubic_torch(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W), interpolation="bicubic", antialias="torch")
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    # antialias="torch-noaa": PyTorch's uint8 kernel without antialias, the numbers of the torchvision
    # row (v2.Resize(antialias=False) on a uint8 tensor)
    @goprep.pipeline(device="cpu")
    def task_torch_noaa(img: np.ndarray) -> np.ndarray:
        img = goprep.resize(img, (OUT_H, OUT_W), antialias="torch-noaa")
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

    fns: dict[str, Fn] = {"task": task, "task_antialias": task_antialias, "task_antialias_bicubic": task_antialias_bicubic}
    fns["task_antialias_torch"] = task_antialias_torch
    fns["task_torch_noaa"] = task_torch_noaa
    fns["task_antialias_bicubic_torch"] = task_antialias_bicubic_torch
    if goprep.info().get("cuda_available"):

        @goprep.pipeline(device="cuda")
        def task_cuda(img: np.ndarray) -> np.ndarray:
            img = goprep.resize(img, (OUT_H, OUT_W))
            img = goprep.flip(img)
            return goprep.normalize(img, mean=MEAN, std=STD, scale=SCALE)

        fns["task_cuda"] = task_cuda
    return fns


def references(threads: Threads) -> dict[str, Fn]:
    """What every row is checked against: goprep on the CPU with one thread."""
    import goprep

    pipes = goprep_pipelines()

    def one_thread(fn: Fn) -> Fn:
        def run(x: np.ndarray) -> np.ndarray:
            threads.goprep(1)
            return fn(x)

        return run

    return {
        REF_TASK: one_thread(pipes["task"]),
        REF_TASK_AA: one_thread(pipes["task_antialias"]),
        REF_TASK_AA_CUBIC: one_thread(pipes["task_antialias_bicubic"]),
        REF_RESIZE: one_thread(lambda x: goprep.resize(x, (OUT_H, OUT_W))),
    }


def _with_reused_out(fn: Fn) -> Fn:
    """``fn`` writing into one result buffer per input shape, allocated by its first call."""
    bufs: dict[tuple[int, ...], np.ndarray] = {}

    def run(x: np.ndarray) -> np.ndarray:
        out = bufs.get(x.shape)
        if out is None:
            out = bufs[x.shape] = fn(x)
            return out
        return fn(x, out=out)

    return run


def goprep_impls(threads: Threads, *, antialias: bool) -> list[Impl]:
    pipes = goprep_pipelines()
    task = pipes["task"]
    reused = _with_reused_out(task)
    rows = [
        Impl("goprep-1t", "goprep CPU, 1 thread", "goprep", task, "1", {"goprep": 1}),
        Impl(
            "goprep-all",
            f"goprep CPU, {threads.all} threads",
            "goprep",
            task,
            "all",
            {"goprep": threads.all},
        ),
        Impl(
            "goprep-1t-out",
            "goprep CPU, 1 thread, out= reused",
            "goprep",
            reused,
            "1",
            {"goprep": 1},
            note="writes into a preallocated result (out=), as a batching server does",
        ),
        Impl(
            "goprep-all-out",
            f"goprep CPU, {threads.all} threads, out= reused",
            "goprep",
            reused,
            "all",
            {"goprep": threads.all},
            note="writes into a preallocated result (out=), as a batching server does",
        ),
    ]
    if "task_cuda" in pipes:
        rows.append(
            Impl(
                "goprep-cuda",
                "goprep CUDA",
                "goprep",
                pipes["task_cuda"],
                "all",
                {"goprep": threads.all},
                tolerance=ROUNDING_TOL,
                baseline="goprep-all",
                note="host arrays in and out: transfers are included in the time",
            )
        )
    if antialias:
        rows.append(
            Impl(
                "goprep-aa-1t",
                "goprep CPU antialias=True, 1 thread",
                "goprep",
                pipes["task_antialias"],
                "1",
                {"goprep": 1},
                reference=REF_TASK_AA,
                baseline="goprep-aa-1t",
                note="reference for the Pillow Image.resize and torchvision antialias rows",
            )
        )
        rows.append(
            Impl(
                "goprep-aacubic-1t",
                "goprep CPU bicubic antialias=True, 1 thread",
                "goprep",
                pipes["task_antialias_bicubic"],
                "1",
                {"goprep": 1},
                reference=REF_TASK_AA_CUBIC,
                baseline="goprep-aacubic-1t",
                note="Pillow BICUBIC numerics; reference for the torchvision bicubic row",
            )
        )
        rows.append(
            Impl(
                "goprep-aatorch-1t",
                'goprep CPU antialias="torch", 1 thread',
                "goprep",
                pipes["task_antialias_torch"],
                "1",
                {"goprep": 1},
                reference=REF_TASK_AA,
                tolerance=ROUNDING_TOL,
                baseline="goprep-aa-1t",
                note="PyTorch's uint8 weights: torchvision v2's numbers on uint8 tensors",
            )
        )
        rows.append(
            Impl(
                "goprep-noaatorch-1t",
                'goprep CPU antialias="torch-noaa", 1 thread',
                "goprep",
                pipes["task_torch_noaa"],
                "1",
                {"goprep": 1},
                tolerance=ROUNDING_TOL,
                note="PyTorch's uint8 kernel without antialias: the torchvision v2 row's numbers",
            )
        )
        rows.append(
            Impl(
                "goprep-aacubictorch-1t",
                'goprep CPU bicubic antialias="torch", 1 thread',
                "goprep",
                pipes["task_antialias_bicubic_torch"],
                "1",
                {"goprep": 1},
                reference=REF_TASK_AA_CUBIC,
                tolerance=ROUNDING_TOL,
                baseline="goprep-aacubic-1t",
                note="PyTorch's uint8 weights: torchvision v2's numbers on uint8 tensors",
            )
        )
    return rows



def serving_fns() -> dict[str, Fn]:
    """Single-request functions for the serving scenario (threads are set by the scenario)."""
    return {"goprep": goprep_pipelines()["task"], "opencv": opencv_task}


def overhead_fns() -> dict[str, Callable[[np.ndarray], Any]]:
    """Calls on a tiny image, where the time is all call overhead."""
    import cv2

    import goprep

    @goprep.pipeline
    def flip_pipeline(img: np.ndarray) -> np.ndarray:
        return goprep.flip(img)

    return {
        "goprep.pipeline(flip)": flip_pipeline,
        "goprep.flip (eager)": lambda x: goprep.flip(x),
        "cv2.flip": lambda x: cv2.flip(x, 1),
    }
