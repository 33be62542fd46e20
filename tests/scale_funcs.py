"""Module-level functions and pipelines for the pickling / scale-out tests (a worker process imports
this module by name, the way it imports a user's package)."""

import numpy as np

import goprep

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


@goprep.pipeline(device="cpu")
def prep(img):
    img = goprep.resize(img, (24, 32))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD)


def plain_fn(img, size=(16, 16)):
    return goprep.cvt_color(goprep.resize(img, size), "rgb2bgr")


def image(i, h=None, w=None):
    """A deterministic test image; differently sized for different i unless h, w are given."""
    h = h or 20 + 7 * i
    w = w or 30 + 5 * (i % 4)
    return np.random.default_rng(i).integers(0, 256, (h, w, 3), dtype=np.uint8)


def call(pipe_and_img):
    """Worker task: run a pipeline (shipped pickled) on an image, return the result."""
    pipe, img = pipe_and_img
    return pipe(img)


def native_loaded():
    with open("/proc/self/maps") as f:
        return any("_native" in line and ".so" in line for line in f)
