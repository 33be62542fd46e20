"""One preprocessing task, written with each library the suite compares.

The task: uint8 RGB ``(H, W, 3)`` image, or ``(N, H, W, 3)`` batch
    -> bilinear resize to 224x224 (half-pixel centres, no antialiasing, rounded to uint8)
    -> horizontal flip
    -> ``(x / 255 - mean) / std`` with the ImageNet mean/std, in float32
    -> float32 CHW: ``(3, 224, 224)`` or ``(N, 3, 224, 224)``, C-contiguous.

Every implementation returns exactly that shape, dtype and layout, so outputs can be compared with
goprep's element for element before any time is counted (see ``scenarios.check_output``).

Each competitor is written the way a careful user would write it (preallocated batch buffers,
in-place NumPy arithmetic), not as a straw man: the comparison is only worth something if the
competitors are reasonable.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .machine import usable_cores

OUT_H = OUT_W = 224
MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
STD: tuple[float, float, float] = (0.229, 0.224, 0.225)
SCALE: float = 1.0 / 255.0

# One uint8 rounding step expressed in normalised units (the largest of the three channels).
U8_STEP: float = 1.0 / (255.0 * min(STD))
# "Near exact": implementations that use the same fixed-point bilinear arithmetic as goprep/OpenCV
# may still differ in one uint8 rounding on a few pixels (the API promises >= 99.9 % equal).
NEAR_EXACT_TOL: float = U8_STEP * 1.01
# Float-bilinear implementations (Pillow, PyTorch) round differently from the fixed-point reference:
# allowed 0.05 (normalised), the project's stated tolerance for them.
ROUNDING_TOL: float = 0.05

_MEAN_CHW = np.asarray(MEAN, np.float32).reshape(3, 1, 1)
_STD_CHW = np.asarray(STD, np.float32).reshape(3, 1, 1)
_SCALE32 = np.float32(SCALE)

Fn = Callable[[np.ndarray], np.ndarray]

# Reference kinds: what an implementation's output is compared with (computed with goprep, 1 thread).
REF_TASK = "task"  # the full task
REF_TASK_AA = "task_antialias"  # the task with an antialiased (Pillow-style) resize
REF_TASK_AA_CUBIC = "task_antialias_bicubic"  # the same with Pillow's bicubic filter
REF_RESIZE = "resize"  # the uint8 resize alone, shape (224, 224, 3)


@dataclass
class Impl:
    """One row of the benchmark."""

    key: str  # stable id used in JSON and targets, e.g. "opencv-1t"
    label: str  # human-readable row label
    family: str  # goprep | numpy | opencv | pillow | torchvision
    fn: Fn
    threads: str  # "1" or "all": what the implementation is allowed to use
    # Process-wide thread counts this row runs under, library -> count (see Threads.apply); empty
    # for rows whose libraries have no thread pool (NumPy here, Pillow).
    thread_state: dict[str, int]
    reference: str = REF_TASK
    tolerance: float = NEAR_EXACT_TOL
    tolerance_unit: str = "normalized"  # or "uint8" for REF_RESIZE rows
    baseline: str = "goprep-1t"  # the goprep row whose time this row's "x goprep" ratio uses
    partial: bool = False  # True: does only part of the task (shown for reference, e.g. cv2.resize alone)
    note: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def _normalize_chw(u8: np.ndarray) -> np.ndarray:
    """(N, 224, 224, 3) uint8 -> (N, 3, 224, 224) float32, ``(x * scale - mean) / std`` in float32.

    Three in-place passes over a preallocated CHW output, reading the HWC input through a transposed
    view: about 3.5x faster than the textbook ``((x.astype(np.float32) / 255 - mean) / std)
    .transpose(...)`` plus ``ascontiguousarray`` (measured while writing this suite).
    """
    out = np.empty((u8.shape[0], 3, u8.shape[1], u8.shape[2]), np.float32)
    np.multiply(u8.transpose(0, 3, 1, 2), _SCALE32, out=out)
    out -= _MEAN_CHW
    out /= _STD_CHW
    return out


def _as_batch(x: np.ndarray) -> tuple[np.ndarray, bool]:
    """A 4-D view of ``x`` and whether the caller gave a single image."""
    return (x[None], True) if x.ndim == 3 else (x, False)


# --------------------------------------------------------------------------------------------------
# Thread configuration. Every row sets the thread counts of the libraries it uses right before it
# is timed, because rows are interleaved (see timing.py) and these settings are process-wide.


class Threads:
    """Process-wide thread settings, remembered at start so that they can be restored."""

    def __init__(self) -> None:
        import cv2

        self.all = usable_cores()
        self.cv2_default = cv2.getNumThreads()
        self.goprep_default: int | None = None
        self.torch_default: int | None = None
        try:
            import goprep

            self.goprep_default = int(goprep.get_num_threads())
        except Exception:  # noqa: BLE001 - goprep not ready: its rows will report the error
            pass

    def goprep(self, n: int) -> None:
        import goprep

        goprep.set_num_threads(n)

    def cv2(self, n: int) -> None:
        import cv2

        cv2.setNumThreads(n)

    def torch(self, n: int) -> None:
        import torch

        torch.set_num_threads(n)

    def profiler(self, on: int) -> None:
        import goprep

        goprep.set_profiling(bool(on))

    def apply(self, state: Mapping[str, int]) -> None:
        """Set the thread counts named in ``state`` ({"goprep": n, "cv2": n, "torch": n}) and goprep's
        profiler ({"profiler": 0 or 1}, the overhead rows)."""
        setters = {"goprep": self.goprep, "cv2": self.cv2, "torch": self.torch, "profiler": self.profiler}
        for library, n in state.items():
            setters[library](n)

    def restore(self) -> None:
        import cv2

        cv2.setNumThreads(self.cv2_default)
        if self.goprep_default is not None:
            try:
                self.goprep(self.goprep_default)
            except Exception:  # noqa: BLE001
                pass
        if self.torch_default is not None:
            self.torch(self.torch_default)


# --------------------------------------------------------------------------------------------------
# goprep


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


# --------------------------------------------------------------------------------------------------
# Plain NumPy


def _bilinear_coeffs(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Source indices and 11-bit fixed-point weights of a half-pixel-centre bilinear resize.

    Same arithmetic as OpenCV's INTER_LINEAR for uint8 (coordinate in float32, weights rounded to
    ``1/2048``), so the pure-NumPy row can be checked to the bit, not just to a tolerance.
    """
    f = ((np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5).astype(np.float32)
    s = np.floor(f).astype(np.intp)
    f -= s.astype(np.float32)
    low = s < 0
    f[low], s[low] = 0.0, 0
    high = s >= n_in - 1
    f[high], s[high] = 0.0, n_in - 1
    w1 = np.rint(f * np.float32(2048)).astype(np.int32)
    w0 = np.rint((np.float32(1) - f) * np.float32(2048)).astype(np.int32)
    return s, np.minimum(s + 1, n_in - 1), w0, w1


def numpy_resize_u8(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """Bilinear uint8 resize, half-pixel centres, in plain NumPy; (N, H, W, C) -> (N, out_h, out_w, C).

    Gathers the four neighbours with fancy indexing (only output-sized temporaries), blends
    horizontally with 11-bit weights and vertically the way OpenCV's SIMD path does
    (``((h0 >> 4) * b0 >> 16) + ((h1 >> 4) * b1 >> 16) + 2 >> 2``), bit-exact with cv2.resize.
    """
    _, h, w, _ = x.shape
    y0, y1, b0, b1 = _bilinear_coeffs(h, out_h)
    x0, x1, a0, a1 = _bilinear_coeffs(w, out_w)
    r0, r1 = y0[:, None], y1[:, None]
    c0, c1 = x0[None, :], x1[None, :]
    a0, a1 = a0[:, None], a1[:, None]  # broadcast over channels
    top = x[:, r0, c0].astype(np.int32) * a0
    top += x[:, r0, c1].astype(np.int32) * a1
    bot = x[:, r1, c0].astype(np.int32) * a0
    bot += x[:, r1, c1].astype(np.int32) * a1
    top >>= 4
    top *= b0[:, None, None]
    top >>= 16
    bot >>= 4
    bot *= b1[:, None, None]
    bot >>= 16
    top += bot
    top += 2
    top >>= 2
    return np.clip(top, 0, 255).astype(np.uint8)


def numpy_task(x: np.ndarray) -> np.ndarray:
    """The task in plain NumPy: resize, flip (a reversed view), normalize + transpose."""
    xb, single = _as_batch(x)
    n = xb.shape[0]
    out = np.empty((n, 3, OUT_H, OUT_W), np.float32)
    step = 32  # bound the int32 temporaries (a few x 19 MB per 32 images) for large batches
    for i in range(0, n, step):
        u8 = numpy_resize_u8(xb[i : i + step], OUT_H, OUT_W)
        out[i : i + step] = _normalize_chw(u8[:, :, ::-1])
    return out[0] if single else out


def numpy_impls(threads: Threads) -> list[Impl]:
    return [
        Impl(
            "numpy",
            "NumPy (plain)",
            "numpy",
            numpy_task,
            "1",
            {},
            note="fixed-point bilinear like OpenCV's (bit-exact with cv2.resize), vectorised over the batch",
        )
    ]


# --------------------------------------------------------------------------------------------------
# OpenCV


def _cv2_resize_flip(x: np.ndarray) -> np.ndarray:
    """cv2.resize + cv2.flip per image into a preallocated (N, 224, 224, 3) uint8 buffer."""
    import cv2

    xb, _ = _as_batch(x)
    u8 = np.empty((xb.shape[0], OUT_H, OUT_W, 3), np.uint8)
    tmp = np.empty((OUT_H, OUT_W, 3), np.uint8)
    for i in range(xb.shape[0]):
        cv2.resize(xb[i], (OUT_W, OUT_H), dst=tmp, interpolation=cv2.INTER_LINEAR)
        cv2.flip(tmp, 1, dst=u8[i])
    return u8


def opencv_task(x: np.ndarray) -> np.ndarray:
    out = _normalize_chw(_cv2_resize_flip(x))
    return out[0] if x.ndim == 3 else out


def opencv_resize_only(x: np.ndarray) -> np.ndarray:
    import cv2

    if x.ndim == 3:
        return cv2.resize(x, (OUT_W, OUT_H), interpolation=cv2.INTER_LINEAR)
    out = np.empty((x.shape[0], OUT_H, OUT_W, 3), np.uint8)
    for i in range(x.shape[0]):
        cv2.resize(x[i], (OUT_W, OUT_H), dst=out[i], interpolation=cv2.INTER_LINEAR)
    return out


def _blob_fn() -> tuple[Fn, str]:
    """cv2.dnn.blobFromImage(s) for the task, and a note of what it covers.

    blobFromImage does resize (INTER_LINEAR) + mean subtraction + scale + optional swapRB + NCHW
    float32. A per-channel scale (hence per-channel std) needs ``blobFromImageWithParams`` with
    ``Image2BlobParams`` (OpenCV >= 4.9); older versions get the std division in NumPy. It has no
    flip, so the image is flipped first with cv2.flip (a horizontal flip commutes with a half-pixel
    bilinear resize up to the rounding of mirrored fixed-point weights).
    """
    import cv2

    dnn = cv2.dnn
    size = (OUT_W, OUT_H)
    mean255 = tuple(255.0 * m for m in MEAN)
    if hasattr(dnn, "blobFromImageWithParams") and hasattr(dnn, "Image2BlobParams"):
        params = dnn.Image2BlobParams(tuple(1.0 / (255.0 * s) for s in STD), size, mean255, False, cv2.CV_32F)

        def blob(x: np.ndarray) -> np.ndarray:
            if x.ndim == 3:
                return dnn.blobFromImageWithParams(cv2.flip(x, 1), params)[0]
            return dnn.blobFromImagesWithParams([cv2.flip(im, 1) for im in x], params)

        return blob, (
            "cv2.dnn.blobFromImageWithParams covers resize + mean + per-channel std + CHW; flip is a cv2.flip before it"
        )

    def blob_old(x: np.ndarray) -> np.ndarray:
        if x.ndim == 3:
            out = dnn.blobFromImage(cv2.flip(x, 1), SCALE, size, mean255, swapRB=False, crop=False)[0]
        else:
            out = dnn.blobFromImages([cv2.flip(im, 1) for im in x], SCALE, size, mean255, swapRB=False, crop=False)
        out /= _STD_CHW
        return out

    return blob_old, (
        "cv2.dnn.blobFromImage covers resize + mean + scalar scale + CHW; per-channel std is a NumPy "
        "division after it and the flip a cv2.flip before it"
    )


def opencv_impls(threads: Threads) -> list[Impl]:
    blob, blob_note = _blob_fn()
    return [
        Impl(
            "opencv-1t",
            "OpenCV+NumPy, cv2 1 thread",
            "opencv",
            opencv_task,
            "1",
            {"cv2": 1},
            note="cv2.resize + cv2.flip per image, NumPy normalize/transpose over the batch",
        ),
        Impl(
            "opencv-all",
            f"OpenCV+NumPy, cv2 {threads.cv2_default} threads",
            "opencv",
            opencv_task,
            "all",
            {"cv2": threads.cv2_default},
            baseline="goprep-all",
        ),
        Impl(
            "opencv-blob-1t",
            "cv2.flip + cv2.dnn blob, 1 thread",
            "opencv",
            blob,
            "1",
            {"cv2": 1},
            note=blob_note,
        ),
        Impl(
            "cv2-resize-1t",
            "cv2.resize alone (partial), 1 thread",
            "opencv",
            opencv_resize_only,
            "1",
            {"cv2": 1},
            reference=REF_RESIZE,
            tolerance=1.0,
            tolerance_unit="uint8",
            partial=True,
            note="resize only (no flip/normalize), checked against goprep.resize",
        ),
    ]


# --------------------------------------------------------------------------------------------------
# Pillow


def _pillow_fns() -> tuple[Fn, Fn]:
    from PIL import Image

    bilinear = Image.Resampling.BILINEAR
    affine = Image.Transform.AFFINE
    flip_lr = Image.Transpose.FLIP_LEFT_RIGHT

    def task(x: np.ndarray) -> np.ndarray:
        """Image.transform(AFFINE, BILINEAR): plain half-pixel bilinear sampling (Image.resize cannot
        switch its antialiasing off), float arithmetic rounded to uint8."""
        xb, single = _as_batch(x)
        n, h, w, _ = xb.shape
        coeffs = (w / OUT_W, 0.0, 0.0, 0.0, h / OUT_H, 0.0)  # output pixel centre -> input position
        u8 = np.empty((n, OUT_H, OUT_W, 3), np.uint8)
        for i in range(n):
            im = Image.fromarray(xb[i]).transform((OUT_W, OUT_H), affine, coeffs, resample=bilinear)
            u8[i] = np.asarray(im.transpose(flip_lr))
        out = _normalize_chw(u8)
        return out[0] if single else out

    def task_antialias(x: np.ndarray) -> np.ndarray:
        """Image.resize(BILINEAR): what most Pillow code calls; antialiased, so a different task."""
        xb, single = _as_batch(x)
        u8 = np.empty((xb.shape[0], OUT_H, OUT_W, 3), np.uint8)
        for i in range(xb.shape[0]):
            im = Image.fromarray(xb[i]).resize((OUT_W, OUT_H), bilinear)
            u8[i] = np.asarray(im.transpose(flip_lr))
        out = _normalize_chw(u8)
        return out[0] if single else out

    return task, task_antialias


def pillow_impls(threads: Threads, *, antialias: bool) -> list[Impl]:
    task, task_aa = _pillow_fns()
    rows = [
        Impl(
            "pillow",
            "Pillow+NumPy (transform)",
            "pillow",
            task,
            "1",
            {},
            tolerance=ROUNDING_TOL,
            note="Image.transform(AFFINE, BILINEAR) = non-antialiased bilinear; float math rounded to uint8",
        )
    ]
    if antialias:
        rows.append(
            Impl(
                "pillow-aa",
                "Pillow+NumPy Image.resize (antialias)",
                "pillow",
                task_aa,
                "1",
                {},
                reference=REF_TASK_AA,
                baseline="goprep-aa-1t",
                note="antialiased resize: compared with goprep antialias=True, not with the task",
            )
        )
    return rows


# --------------------------------------------------------------------------------------------------
# torchvision (optional)


def torchvision_impls(threads: Threads) -> tuple[list[Impl], str | None]:
    """torchvision.transforms.v2 rows, or ([], why they are skipped)."""
    try:
        import torch
        from torchvision.transforms import v2
    except Exception as exc:  # noqa: BLE001 - any import failure means "skip"
        return [], f"torchvision rows skipped: torch/torchvision not importable ({type(exc).__name__}: {exc})"

    threads.torch_default = torch.get_num_threads()
    # uint8 bilinear without antialiasing (v2's default is antialias=True, a different task).
    transform = v2.Compose(
        [
            v2.Resize((OUT_H, OUT_W), interpolation=v2.InterpolationMode.BILINEAR, antialias=False),
            v2.RandomHorizontalFlip(p=1.0),
            v2.ToDtype(torch.float32, scale=True),
            v2.Normalize(mean=list(MEAN), std=list(STD)),
        ]
    )
    # The inputs are read-only NumPy arrays; torch warns once that it cannot make them read-only too.
    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

    def task(x: np.ndarray) -> np.ndarray:
        t = torch.from_numpy(x)
        t = t.permute(2, 0, 1) if x.ndim == 3 else t.permute(0, 3, 1, 2)  # HWC -> CHW views
        with torch.inference_mode():
            return transform(t).contiguous().numpy()

    def aa_task(interp: Any) -> Fn:
        # torchvision's default: antialiased resize on uint8 tensors (its AVX2 uint8 kernel)
        t_aa = v2.Compose(
            [
                v2.Resize((OUT_H, OUT_W), interpolation=interp, antialias=True),
                v2.RandomHorizontalFlip(p=1.0),
                v2.ToDtype(torch.float32, scale=True),
                v2.Normalize(mean=list(MEAN), std=list(STD)),
            ]
        )

        def run(x: np.ndarray) -> np.ndarray:
            t = torch.from_numpy(x)
            t = t.permute(2, 0, 1) if x.ndim == 3 else t.permute(0, 3, 1, 2)
            with torch.inference_mode():
                return t_aa(t).contiguous().numpy()

        return run

    default = threads.torch_default or threads.all
    aa_rows = [
        Impl(
            "torchvision-aa-1t",
            "torchvision v2 antialias=True, torch 1 thread",
            "torchvision",
            aa_task(v2.InterpolationMode.BILINEAR),
            "1",
            {"torch": 1},
            reference=REF_TASK_AA,
            tolerance=ROUNDING_TOL,
            baseline="goprep-aa-1t",
            note="v2.Resize(antialias=True) bilinear on uint8 tensors + flip + ToDtype + Normalize",
        ),
        Impl(
            "torchvision-aacubic-1t",
            "torchvision v2 bicubic antialias=True, torch 1 thread",
            "torchvision",
            aa_task(v2.InterpolationMode.BICUBIC),
            "1",
            {"torch": 1},
            reference=REF_TASK_AA_CUBIC,
            tolerance=ROUNDING_TOL,
            baseline="goprep-aacubic-1t",
            note="v2.Resize(BICUBIC, antialias=True) on uint8 tensors + flip + ToDtype + Normalize",
        ),
    ]
    return aa_rows + [
        Impl(
            "torchvision-1t",
            "torchvision v2, torch 1 thread",
            "torchvision",
            task,
            "1",
            {"torch": 1},
            tolerance=ROUNDING_TOL,
            note="v2.Resize(antialias=False) on uint8 tensors + RandomHorizontalFlip(p=1) + ToDtype + Normalize",
        ),
        Impl(
            "torchvision-all",
            f"torchvision v2, torch {default} threads",
            "torchvision",
            task,
            "all",
            {"torch": default},
            tolerance=ROUNDING_TOL,
            baseline="goprep-all",
        ),
    ], None


# --------------------------------------------------------------------------------------------------
# Serving and overhead probes


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


def finite_max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| in float64; inf when either holds a NaN/inf where the other does not."""
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    m = float(d.max()) if d.size else 0.0
    return m if math.isfinite(m) else math.inf
