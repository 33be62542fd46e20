"""goprep.data's loader and goprep's result pool: the batches a loader keeps alive at once (made
ahead, running, held by the consumer) are recycled pool blocks once its first batch has sized them,
not fresh pages each (docs/perf/2026-12-06-train-speed.md: fresh pages cost the loader up to 2.3 ms
of CPU per image in kernel page zeroing); the room is given back on close() and when the loader is
collected."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import goprep
import goprep.data as gd
from goprep import _outpool

pytestmark = pytest.mark.skipif(not _outpool._ON, reason="the pool is off in this interpreter (free-threaded build)")

BATCH, HW = 8, 256  # a float32 (8, 3, 256, 256) batch: 6.3 MB, pooled (>= MIN_BYTES)
BATCH_BYTES = BATCH * 3 * HW * HW * 4
CAP = 8 << 20  # the pool's own cap in these tests: room for one batch, as 256 MiB is for 256x3x224x224


@pytest.fixture
def pool(monkeypatch):
    _outpool.clear()
    monkeypatch.setattr(_outpool, "_CAP", CAP)
    before = _outpool._reserved
    yield
    assert _outpool._reserved == before  # every test gives its room back
    _outpool.clear()


def big(items):
    """One batch from goprep (its result comes from the pool): ``len(items)`` float32 (3, 256, 256)."""
    return goprep.normalize(np.zeros((len(items), HW, HW, 3), np.uint8), mean=0.5, std=0.25)


def _is_pool_block(x: np.ndarray) -> bool:
    return any(x.base is b for b in _outpool._blocks.get(x.nbytes, []))


@pytest.mark.parametrize("threads,prefetch", [(1, 1), (2, 2), (3, 2)])
def test_loader_batches_are_recycled_pool_blocks(pool, threads, prefetch):
    items = [b"x"] * (6 * BATCH)  # never decoded: the transform makes the batch
    with gd.Loader(items, big, batch_size=BATCH, threads=threads, prefetch=prefetch, output="numpy") as ld:
        assert len(list(ld)) == 6  # the first epoch sizes the room
        assert _outpool.stats()["cap"] == CAP + (prefetch + 2 + min(threads, prefetch)) * BATCH_BYTES
        seen = set()
        for e in (1, 2):
            ld.set_epoch(e)
            for x, _ in ld:
                assert x.shape == (BATCH, 3, HW, HW) and _is_pool_block(x)
                seen.add(id(x.base))
        # at most the batches alive at once: made ahead, and this loop's x, held until the next is handed
        # over (when taking it already let a thread start one more)
        assert len(seen) <= prefetch + 2
    assert _outpool.stats()["cap"] == CAP
    assert _outpool.stats()["bytes"] <= CAP  # the free blocks over the cap were dropped


def test_room_is_given_back_when_the_loader_is_collected(pool):
    ld = gd.Loader([b"x"] * (2 * BATCH), big, batch_size=BATCH, threads=1, prefetch=1, output="numpy")
    assert sum(len(y) for _, y in ld) == 2 * BATCH
    assert _outpool.stats()["cap"] > CAP
    del ld
    gc.collect()
    assert _outpool.stats()["cap"] == CAP


def test_small_batches_reserve_nothing(pool):
    small = lambda items: goprep.normalize(np.zeros((len(items), 8, 8, 3), np.uint8), mean=0.5, std=0.25)  # noqa: E731
    with gd.Loader([b"x"] * 4, small, batch_size=2, output="numpy") as ld:
        assert len(list(ld)) == 2
        assert _outpool.stats()["cap"] == CAP


def test_reserve_and_release(pool, monkeypatch):
    room = _outpool.reserve(3 * BATCH_BYTES)
    assert _outpool.stats()["cap"] == CAP + 3 * BATCH_BYTES
    held = [_outpool.empty((BATCH, 3, HW, HW), np.float32) for _ in range(3)]
    assert all(_is_pool_block(x) for x in held)  # three fit now; one would without the room
    del held[1:]
    room.release()
    room.release()  # once only
    st = _outpool.stats()
    assert st["cap"] == CAP and st["blocks"] == 1  # the free blocks over the cap dropped, the held one kept
    monkeypatch.setattr(_outpool, "_ON", False)
    off = _outpool.reserve(BATCH_BYTES)  # the pool is off: nothing added
    assert off.nbytes == 0 and _outpool._reserved == 0
    off.release()


def test_pool_counts_only_the_blocks_it_holds(pool):
    """A training run's result sizes (uint8 crops, float32 batches, a shorter last batch; some held):
    the pool's byte count is always the sum of the blocks it holds, and a freed size is recycled. (A
    new size larger than the free blocks, allocated when the pool was full, used to be appended to a
    list ``_evict`` had just dropped: counted forever, never handed out again, the pool shrinking for good.)"""
    mib = 1 << 20
    held = []
    for k, size in enumerate([4 * mib, 5 * mib, 4 * mib, 6 * mib, 5 * mib, 7 * mib, 6 * mib, 5 * mib]):
        x = _outpool.empty((size,), np.uint8)
        if k % 3 == 1:
            held = [x]  # one result kept while the next ones are made, as a consumer keeps its batch
        del x
        st = _outpool.stats()
        assert st["bytes"] == sum(n * len(v) for n, v in _outpool._blocks.items()) <= CAP
    held.clear()
    x = _outpool.empty((7 * mib,), np.uint8)
    del x
    y = _outpool.empty((7 * mib,), np.uint8)
    assert _is_pool_block(y)
