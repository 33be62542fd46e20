"""The preprocessing task every benchmark row performs, the row type and the thread settings.

The task: uint8 RGB ``(H, W, 3)`` image, or ``(N, H, W, 3)`` batch
    -> bilinear resize to 224x224 (half-pixel centres, no antialiasing, rounded to uint8)
    -> horizontal flip
    -> ``(x / 255 - mean) / std`` with the ImageNet mean/std, in float32
    -> float32 CHW: ``(3, 224, 224)`` or ``(N, 3, 224, 224)``, C-contiguous.

Every implementation returns exactly that shape, dtype and layout, so outputs can be compared with
goprep's element for element before any time is counted (see ``scenarios.check_output``).

goprep's rows are in ``impls_goprep``, the other libraries' (NumPy, OpenCV, Pillow, torchvision)
in ``impls_peers``. Each competitor is written the way a careful user would write it (preallocated
batch buffers, in-place NumPy arithmetic), not as a straw man: the comparison is only worth
something if the competitors are reasonable.
"""

from __future__ import annotations

import math
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
STD_CHW = np.asarray(STD, np.float32).reshape(3, 1, 1)
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


def normalize_chw(u8: np.ndarray) -> np.ndarray:
    """(N, 224, 224, 3) uint8 -> (N, 3, 224, 224) float32, ``(x * scale - mean) / std`` in float32.

    Three in-place passes over a preallocated CHW output, reading the HWC input through a transposed
    view: about 3.5x faster than the textbook ``((x.astype(np.float32) / 255 - mean) / std)
    .transpose(...)`` plus ``ascontiguousarray`` (measured while writing this suite).
    """
    out = np.empty((u8.shape[0], 3, u8.shape[1], u8.shape[2]), np.float32)
    np.multiply(u8.transpose(0, 3, 1, 2), _SCALE32, out=out)
    out -= _MEAN_CHW
    out /= STD_CHW
    return out


def as_batch(x: np.ndarray) -> tuple[np.ndarray, bool]:
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


def finite_max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| in float64; inf when either holds a NaN/inf where the other does not."""
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    m = float(d.max()) if d.size else 0.0
    return m if math.isfinite(m) else math.inf
