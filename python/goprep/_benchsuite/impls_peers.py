"""The benchmark task written with the libraries goprep is compared with: plain NumPy, OpenCV,
Pillow and (optional) torchvision. Each returns the task's exact shape, dtype and layout (see
``task``), so its output is checked against goprep's before it is timed."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .task import (
    MEAN,
    OUT_H,
    OUT_W,
    REF_RESIZE,
    REF_TASK_AA,
    REF_TASK_AA_CUBIC,
    ROUNDING_TOL,
    SCALE,
    STD,
    STD_CHW,
    Fn,
    Impl,
    Threads,
    as_batch,
    normalize_chw,
)


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
    xb, single = as_batch(x)
    n = xb.shape[0]
    out = np.empty((n, 3, OUT_H, OUT_W), np.float32)
    step = 32  # bound the int32 temporaries (a few x 19 MB per 32 images) for large batches
    for i in range(0, n, step):
        u8 = numpy_resize_u8(xb[i : i + step], OUT_H, OUT_W)
        out[i : i + step] = normalize_chw(u8[:, :, ::-1])
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

    xb, _ = as_batch(x)
    u8 = np.empty((xb.shape[0], OUT_H, OUT_W, 3), np.uint8)
    tmp = np.empty((OUT_H, OUT_W, 3), np.uint8)
    for i in range(xb.shape[0]):
        cv2.resize(xb[i], (OUT_W, OUT_H), dst=tmp, interpolation=cv2.INTER_LINEAR)
        cv2.flip(tmp, 1, dst=u8[i])
    return u8


def opencv_task(x: np.ndarray) -> np.ndarray:
    out = normalize_chw(_cv2_resize_flip(x))
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
        out /= STD_CHW
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
        xb, single = as_batch(x)
        n, h, w, _ = xb.shape
        coeffs = (w / OUT_W, 0.0, 0.0, 0.0, h / OUT_H, 0.0)  # output pixel centre -> input position
        u8 = np.empty((n, OUT_H, OUT_W, 3), np.uint8)
        for i in range(n):
            im = Image.fromarray(xb[i]).transform((OUT_W, OUT_H), affine, coeffs, resample=bilinear)
            u8[i] = np.asarray(im.transpose(flip_lr))
        out = normalize_chw(u8)
        return out[0] if single else out

    def task_antialias(x: np.ndarray) -> np.ndarray:
        """Image.resize(BILINEAR): what most Pillow code calls; antialiased, so a different task."""
        xb, single = as_batch(x)
        u8 = np.empty((xb.shape[0], OUT_H, OUT_W, 3), np.uint8)
        for i in range(xb.shape[0]):
            im = Image.fromarray(xb[i]).resize((OUT_W, OUT_H), bilinear)
            u8[i] = np.asarray(im.transpose(flip_lr))
        out = normalize_chw(u8)
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
