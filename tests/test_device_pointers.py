"""Device arrays whose interface lies: a null data pointer, or a shape larger than the memory behind the
pointer, get a goprep error before anything is read; the process never crashes (simulated GPU, whose
device memory is host memory, so a wrong pointer would otherwise be read as host memory)."""

import numpy as np
import pytest

import goprep


class _Cai:
    """A __cuda_array_interface__ producer that says whatever it is told."""

    def __init__(self, ptr, shape, keep=None, typestr="|u1"):
        self._keep = keep
        self.__cuda_array_interface__ = {"shape": shape, "strides": None, "typestr": typestr,
                                         "data": (ptr, False), "version": 3, "stream": None}


def _prep(img):
    return goprep.resize(img, (16, 16))


def test_null_pointer_is_refused(sim_gpu):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.pipeline(_prep)(_Cai(0, (32, 32, 3)))
    assert ei.value.argument == "src" and "null" in str(ei.value)


def test_valid_device_array_still_works(sim_gpu):
    img = np.random.default_rng(3).integers(0, 256, (32, 32, 3), np.uint8)
    dev = goprep.to_device(img)
    got = goprep.pipeline(_prep)(_Cai(dev.ptr, (32, 32, 3), keep=dev))
    np.testing.assert_array_equal(got, goprep.pipeline(device="cpu")(_prep)(img))


def test_shape_larger_than_the_allocation_is_refused(sim_gpu):
    dev = goprep.to_device(np.zeros((32, 32, 3), np.uint8))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.pipeline(_prep)(_Cai(dev.ptr, (256, 256, 3), keep=dev))  # claims 64x the memory
    assert ei.value.argument == "src" and "past the end of its allocation" in str(ei.value)


def test_wild_pointer_is_refused(sim_gpu):
    dev = goprep.to_device(np.zeros((32, 32, 3), np.uint8))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.pipeline(_prep)(_Cai(dev.ptr + (1 << 40), (32, 32, 3), keep=dev))
    assert ei.value.argument == "src" and "not in memory allocated on this GPU" in str(ei.value)
