"""The result pool (goprep/_outpool.py): large fresh results reuse memory only once nothing references
it: correct values, no aliasing of live arrays (views, memoryviews, tensors, .base), bounded, thread-
and fork-safe."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import goprep
from goprep import _outpool

pytestmark = pytest.mark.skipif(not _outpool._ON, reason="the pool is off in this interpreter (free-threaded build)")

SHAPE = (24, 3, 224, 224)  # float32: 14.5 MB, pooled


@goprep.pipeline(device="cpu")
def prep(img):
    return goprep.normalize(goprep.flip(goprep.resize(img, (224, 224))), mean=(0.5, 0.4, 0.3), std=(0.2, 0.3, 0.25))


def _batch(seed):
    return np.random.default_rng(seed).integers(0, 256, (SHAPE[0], 96, 128, 3), dtype=np.uint8)


def _addr(a):
    return a.__array_interface__["data"][0]


def test_fresh_results_are_correct_and_recycled_only_when_dead():
    a_in, b_in = _batch(1), _batch(2)
    want_a, want_b = prep(a_in).copy(), prep(b_in).copy()
    r1 = prep(a_in)
    r2 = prep(b_in)
    assert r1.shape == SHAPE and r1.dtype == np.float32 and r1.flags.c_contiguous and r1.flags.writeable
    assert not np.shares_memory(r1, r2)  # both alive: two blocks
    np.testing.assert_array_equal(r1, want_a)
    np.testing.assert_array_equal(r2, want_b)
    old = _addr(r1)
    del r1
    r3 = prep(b_in)  # r1's block is free again: reused, and rewritten whole
    assert _addr(r3) == old
    np.testing.assert_array_equal(r3, want_b)
    np.testing.assert_array_equal(r2, want_b)  # the live result was not touched


@pytest.mark.parametrize("keep", ["view", "memoryview", "base", "torch", "list"])
def test_anything_referencing_a_result_keeps_its_memory(keep):
    x = _batch(3)
    want = prep(x).copy()
    r = prep(x)
    addr = _addr(r)
    if keep == "view":
        held = r[5, 1]
    elif keep == "memoryview":
        held = memoryview(r)
    elif keep == "base":
        held = r.base
    elif keep == "torch":
        torch = pytest.importorskip("torch")
        held = torch.from_numpy(r)
    else:
        held = [r]
    del r
    others = [prep(_batch(4)) for _ in range(3)]
    assert all(_addr(o) != addr for o in others)
    back = np.asarray(held if keep != "list" else held[0])
    if keep == "view":
        np.testing.assert_array_equal(back, want[5, 1])
    elif keep != "base":
        np.testing.assert_array_equal(back.reshape(want.shape), want)


def test_out_and_small_results_bypass_the_pool():
    x = _batch(5)
    before = _outpool.stats()
    out = np.empty(SHAPE, np.float32)
    assert prep(x, out=out) is out
    small = prep(x[0])  # 602 KB: malloc reuses that memory by itself
    assert small.flags.owndata
    assert _outpool.stats()["bytes"] <= max(before["bytes"], before["bytes"] + 2 * out.nbytes)


def test_bounded(monkeypatch):
    monkeypatch.setattr(_outpool, "_CAP", 40 << 20)
    _outpool.clear()
    held = [_outpool.empty(SHAPE, np.float32) for _ in range(5)]  # 5 x 14.5 MB > 40 MiB
    assert _outpool.stats()["bytes"] <= 40 << 20
    assert len({_addr(h) for h in held}) == 5  # past the cap: plain NumPy arrays, still distinct
    del held
    big = _outpool.empty((8, 3, 512, 512), np.float32)  # 25 MB: free blocks of another size make room
    assert _outpool.stats()["bytes"] <= 40 << 20 and big.nbytes == 8 * 3 * 512 * 512 * 4
    _outpool.clear()



@pytest.mark.parametrize(
    "value,cap",
    [
        ("512", 512 << 20),
        ("0", 0),
        ("-5", 0),  # negative: off, as 0
        ("-inf", 256 << 20),  # not a finite number: ignored, as an unparseable value is
        ("abc", 256 << 20),
        ("nan", 256 << 20),
        ("inf", 256 << 20),
        ("1e400", 256 << 20),  # float() gives inf
        ("1e305", 1 << 60),  # finite, but mb * 2**20 is not: capped at 2**40 MiB
    ],
)
def test_pool_env_values(monkeypatch, value, cap):
    monkeypatch.setenv("GOPREP_RESULT_POOL_MB", value)
    assert _outpool._cap_bytes() == cap


@pytest.mark.slow
@pytest.mark.parametrize("value", ["inf", "nan", "1e400"])
def test_import_never_fails_on_the_pool_env(value):
    # The bound is read when goprep is imported: a bad value once made `import goprep` raise.
    env = dict(os.environ, GOPREP_RESULT_POOL_MB=value)
    code = "import goprep, goprep._outpool as p; print(p._CAP)"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd="/")
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout) == 256 << 20

def test_threads_never_share_a_live_block():
    inputs = [_batch(10 + i) for i in range(4)]
    wants = [prep(x).copy() for x in inputs]
    errors = []
    live = {}
    lock = threading.Lock()

    def worker(i):
        try:
            for _ in range(6):
                r = prep(inputs[i])
                with lock:
                    a = _addr(r)
                    if a in live.values():
                        errors.append(f"thread {i}: block {a:#x} is live in another thread")
                    live[i] = a
                if not np.array_equal(r, wants[i]):
                    errors.append(f"thread {i}: wrong values")
                with lock:
                    del live[i]
                del r
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors[:3]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_starts_with_an_empty_pool():
    keep = _outpool.empty(SHAPE, np.float32)
    assert _outpool.stats()["blocks"] >= 1
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child touches only the pool (goprep's engine cannot run after a fork)
        try:
            ok = _outpool.stats()["blocks"] == 0
            a = _outpool.empty(SHAPE, np.float32)
            ok = ok and a.shape == SHAPE and _outpool.stats()["blocks"] == 1
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.waitpid(pid, 0)
    os.close(r)
    assert got == b"1"
    del keep


def test_free_threaded_builds_turn_it_off():
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    assert _outpool._ON == (gil and _outpool._CAP >= _outpool.MIN_BYTES)
