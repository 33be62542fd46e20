"""The Ray Serve deployment's request handling without a cluster: PipelineReplica called directly with
a stand-in request. Bad bodies answer 400 with the reason; a header claiming a huge shape is refused
before anything of that size is allocated."""

import asyncio
import io
import tracemalloc

import numpy as np
import pytest

import goprep

pytest.importorskip("ray")
pytest.importorskip("starlette")


@goprep.pipeline
def prep(img):
    return goprep.normalize(goprep.resize(img, (16, 16)), mean=(0.5,) * 3, std=(0.25,) * 3)


class _Request:
    def __init__(self, body):
        self._body = body

    async def body(self):
        return self._body


def _call(body):
    return asyncio.run(goprep.ray.PipelineReplica(prep)(_Request(body)))


def _npy(a):
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_good_body_answers_the_tensor():
    img = np.random.default_rng(0).integers(0, 256, (40, 30, 3), np.uint8)
    r = _call(_npy(img))
    assert r.status_code == 200
    np.testing.assert_array_equal(np.load(io.BytesIO(r.body)), prep(img))
    fortran = np.asfortranarray(img)  # a Fortran-order .npy reads as the same image
    np.testing.assert_array_equal(np.load(io.BytesIO(_call(_npy(fortran)).body)), prep(img))


def test_header_claiming_a_huge_shape_is_400_without_allocating_it():
    small = _npy(np.zeros((2, 2, 3), np.uint8))
    bomb = small.replace(b"(2, 2, 3)", b"(60000, 60000, 3)")  # 10.8 GB claimed, 12 bytes sent
    assert bomb != small
    tracemalloc.start()
    try:
        r = _call(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.status_code == 400, r.body
    assert b"claims shape (60000, 60000, 3)" in r.body
    assert peak < 10 * 2**20, peak


@pytest.mark.parametrize("body", [b"", b"not npy at all", _npy(np.zeros((2, 2, 3), np.uint8))[:-3],
                                  _npy(np.array([None, 1], dtype=object))])
def test_bad_bodies_are_400(body):
    r = _call(body)
    assert r.status_code == 400, (body[:20], r.body)


def test_goprep_input_errors_are_400():
    r = _call(_npy(np.zeros((4, 4, 3), np.complex64)))
    assert r.status_code == 400 and b"DTypeError" in r.body
