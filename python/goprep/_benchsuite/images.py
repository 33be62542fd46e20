"""The inputs: real photographs, not noise.

Resize kernels are data independent, but normalisation, caches and (for some libraries) fast paths
are not, and output checks on noise hide interpolation mistakes that are obvious on photographs.
The photographs are scikit-image's bundled images, brought to each benchmark size with
``cv2.INTER_AREA`` (the usual way to make a good-looking downscale; the 1920x1080 versions are
upscales, which INTER_AREA does bilinearly).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

# skimage.data images that ship inside the wheel (no download needed), all uint8 RGB.
PHOTOS: tuple[str, ...] = ("astronaut", "chelsea", "coffee")


@dataclass(frozen=True)
class Size:
    """An input size; ``name`` is what the report and ``--sizes`` use."""

    name: str
    height: int
    width: int
    # batch 1 cycles through this many images, each its own copy in memory: 3 photographs stay in
    # cache (the headline rows); many distinct copies make every call read cold memory, as a data
    # loader's stream of fresh images does.
    distinct: int = 3

    @property
    def label(self) -> str:
        cold = f", {self.distinct} distinct images" if self.distinct > len(PHOTOS) else ""
        return f"{self.width}x{self.height}{cold}"


SIZES: dict[str, Size] = {
    "256": Size("256", 256, 256),
    "512": Size("512", 512, 512),
    "1080p": Size("1080p", 1080, 1920),
    "512cold": Size("512cold", 512, 512, distinct=64),  # 64 distinct images, 50 MB: cold caches
}


@cache
def _photo(name: str) -> np.ndarray:
    import skimage.data

    img = np.asarray(getattr(skimage.data, name)())
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise RuntimeError(f"skimage.data.{name}() is not a uint8 RGB image: {img.shape} {img.dtype}")
    return img


@cache
def photos(size: Size) -> tuple[np.ndarray, ...]:
    """The photographs at ``size``, each a C-contiguous (H, W, 3) uint8 array (read-only)."""
    import cv2

    out = []
    for name in PHOTOS:
        img = np.ascontiguousarray(cv2.resize(_photo(name), (size.width, size.height), interpolation=cv2.INTER_AREA))
        img.setflags(write=False)
        out.append(img)
    return tuple(out)


def batch(size: Size, n: int) -> np.ndarray:
    """An (n, H, W, 3) batch cycling through the photographs; every image is its own copy in memory,
    so a large batch streams from DRAM as a real one would (no stride-0 tricks)."""
    src = photos(size)
    out = np.empty((n, size.height, size.width, 3), np.uint8)
    for i in range(n):
        out[i] = src[i % len(src)]
    out.setflags(write=False)
    return out


def workload(size: Size, n: int) -> list[np.ndarray]:
    """What one timed call receives, cycled over a sample: for batch 1 the single (H, W, 3) photographs
    in turn (a call per image, as a data loader does), else one (n, H, W, 3) batch."""
    if n == 1:
        if size.distinct <= len(PHOTOS):
            return list(photos(size))
        return list(batch(size, size.distinct))  # views of distinct copies, one per call
    return [batch(size, n)]
