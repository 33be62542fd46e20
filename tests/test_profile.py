"""The profiler: goprep.set_profiling / goprep.stats / python -m goprep profile."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import goprep


@pytest.fixture
def profiling():
    goprep.set_profiling(True)
    goprep.stats(reset=True)
    yield
    goprep.set_profiling(False)
    goprep.stats(reset=True)


@goprep.pipeline(device="cpu")
def prof_pipe(img):
    return goprep.normalize(goprep.flip(goprep.resize(img, (64, 64))), mean=0.5, std=0.25)


def _img(h=120, w=160, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), np.uint8)


def test_engine_clock_is_perf_counter_clock():
    # The finish timestamps come from the engine's CLOCK_MONOTONIC reading; the GIL wait is only
    # meaningful if that is the clock time.perf_counter_ns reads.
    from goprep import _native

    mod = _native.get()
    for _ in range(100):
        a = time.perf_counter_ns()
        m = mod.MonotonicNs()
        b = time.perf_counter_ns()
        assert a <= m <= b


def test_off_records_nothing():
    goprep.set_profiling(False)
    goprep.stats(reset=True)
    prof_pipe(_img())
    goprep.resize(_img(), 32)
    assert goprep.stats() == {}
    assert goprep.profiling() is False


def test_keys_parts_and_percentiles(profiling):
    img = _img()
    ref = prof_pipe(img)
    for _ in range(30):
        np.testing.assert_array_equal(prof_pipe(img), ref)  # results unchanged by profiling
    for _ in range(7):
        goprep.resize(img, 32)
    goprep.flip(img)
    st = goprep.stats()
    assert set(st) == {prof_pipe.__qualname__, "resize", "flip"}
    p = st[prof_pipe.__qualname__]
    assert p["calls"] == 31 and st["resize"]["calls"] == 7 and st["flip"]["calls"] == 1
    for r in st.values():
        assert r["engine_s"] > 0 and r["gil_wait_s"] >= 0 and r["python_s"] >= 0
        assert r["engine_s"] + r["gil_wait_s"] + r["python_s"] == pytest.approx(r["total_s"], rel=1e-9, abs=1e-12)
        assert r["gpu_s"] == 0 and r["devices"]["cpu"] == r["calls"]
        assert 0 < r["p50_us"] <= r["p99_us"] <= r["p999_us"] <= r["total_s"] * 1e6 + 1e-6  # one call: p999 = total
    assert p["total_s"] / p["calls"] * 1e6 >= p["p50_us"] * 0.1


def test_reset_and_list_inputs(profiling):
    prof_pipe([_img(), _img(90, 70, 1)])
    assert goprep.stats(reset=True)[prof_pipe.__qualname__]["calls"] == 1
    assert goprep.stats() == {}
    prof_pipe(_img())
    assert goprep.stats()[prof_pipe.__qualname__]["calls"] == 1


def test_errors_counted_not_timed(profiling):
    with pytest.raises(goprep.ShapeError):
        prof_pipe(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(goprep.InvalidArgumentError):
        goprep.resize(_img(), -3)
    st = goprep.stats()
    assert st[prof_pipe.__qualname__]["errors"] == 1 and st[prof_pipe.__qualname__]["calls"] == 0
    assert st["resize"]["errors"] == 1


def test_gil_wait_is_measured(profiling):
    # A thread spinning in Python bytecode takes the GIL whenever the engine releases it; the caller
    # then waits for that thread's switch interval before it can resume. The profiler must see it.
    @goprep.pipeline(device="cpu")
    def slow(img):  # a few ms in the engine, so the spinning thread surely gets a core and the GIL
        return goprep.normalize(goprep.resize(img, 1500, antialias=True), mean=0.5, std=0.25)

    big = _img(1200, 1600)
    slow(big)
    goprep.stats(reset=True)
    stop = threading.Event()

    def spin():
        x = 0
        while not stop.is_set():
            x += 1

    t = threading.Thread(target=spin)
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    t.start()
    try:
        for _ in range(20):
            slow(big)
    finally:
        stop.set()
        t.join(10)
        sys.setswitchinterval(old)
    r = goprep.stats()[slow.__qualname__]
    assert r["gil_wait_s"] > 0.001, r  # ~5 ms per call expected; 1 ms in all is a loose floor
    assert r["engine_s"] + r["gil_wait_s"] + r["python_s"] == pytest.approx(r["total_s"])


def test_concurrent_callers_all_counted(profiling):
    img = _img()
    n, per = 4, 25

    def work():
        for _ in range(per):
            prof_pipe(img)

    ts = [threading.Thread(target=work) for _ in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert goprep.stats()[prof_pipe.__qualname__]["calls"] == n * per


def test_simulated_gpu_time_is_gpu_s(profiling):
    import goprep.testing as gt

    @goprep.pipeline(device="cuda")
    def on_gpu(img):
        return goprep.normalize(goprep.resize(img, 32), mean=0.5, std=0.5)

    gt.simulate_gpu(True)
    try:
        gt.reset_gpu()
        on_gpu(_img())
        on_gpu(_img())
        r = goprep.stats()[on_gpu.__qualname__]
        assert r["devices"].get("cuda") == 2
        assert r["gpu_s"] == pytest.approx(r["engine_s"]) and r["gpu_s"] > 0
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)


@pytest.mark.slow
def test_env_var_and_profile_cli(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, numpy as np, goprep\n"
        "assert goprep.profiling()\n"
        "@goprep.pipeline\n"
        "def my_prep(x):\n"
        "    return goprep.flip(goprep.resize(x, 16))\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    my_prep(np.zeros((40, 30, 3), np.uint8))\n"
    )
    out = tmp_path / "stats.json"
    r = subprocess.run([sys.executable, "-m", "goprep", "profile", "--json", str(out), str(script), "5"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "my_prep" in r.stderr and "GIL wait %" in r.stderr
    import json

    assert json.loads(out.read_text())["my_prep"]["calls"] == 5
    env = dict(os.environ, GOPREP_PROFILE="1")
    r = subprocess.run([sys.executable, "-c", "import goprep; print(goprep.profiling())"], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.strip() == "True"


def test_ended_threads_are_folded_not_lost(profiling):
    from goprep import _profile

    img = _img(40, 40)

    def work():
        for _ in range(3):
            prof_pipe(img)

    for _ in range(5):  # a thread per request, as some servers do
        t = threading.Thread(target=work)
        t.start()
        t.join(60)
    assert goprep.stats()[prof_pipe.__qualname__]["calls"] == 15
    assert len(_profile._states) <= 2  # the ended threads' states were dropped (main + maybe one)
    assert goprep.stats(reset=True)[prof_pipe.__qualname__]["calls"] == 15
    assert goprep.stats() == {}


def test_rows_wrap_and_layout(profiling):
    # More calls than a thread's record buffer holds: the full buffer is aggregated and reused, and
    # every call is still counted once, with its engine fields (written in place by the engine).
    from goprep import _profile

    cols, devs, stride = _profile.layout()
    assert {"start", "finish", "device"} <= set(cols) and devs[0] == "cpu"
    assert max(cols.values()) < stride
    img = _img(8, 8)
    n = _profile.ROWS + 123
    for _ in range(n):
        prof_pipe(img)
    for _ in range(5):
        goprep.flip(img)
    st = goprep.stats()
    p = st[prof_pipe.__qualname__]
    assert p["calls"] == n and st["flip"]["calls"] == 5
    assert p["devices"] == {"cpu": n} and p["engine_s"] > 0
    assert p["engine_s"] + p["gil_wait_s"] + p["python_s"] == pytest.approx(p["total_s"], rel=1e-9)
    assert sum(_profile.lifetime()[prof_pipe.__qualname__].buckets) >= n


def test_tracing_hook_sees_each_call(profiling):
    from goprep import _profile

    seen = []
    _profile.set_hook(lambda *a: seen.append(a))
    try:
        prof_pipe(_img())
        goprep.flip(_img())
    finally:
        _profile.set_hook(None)
    assert [s[0] for s in seen] == [prof_pipe.__qualname__, "flip"]
    for name, t0, total, eng, gil, ran in seen:
        assert total > 0 and 0 < eng <= total and 0 <= gil <= total - eng and ran == "cpu"


def test_fold_arithmetic_on_known_rows():
    # The aggregation on hand-made rows: engine = finish - start, GIL wait = resumed - finish, the
    # rest is Python; a row whose engine fields predate its call (no timed engine call) counts as CPU
    # with no engine time; a finish reading past the resume is clamped; one id for the block or
    # a column of ids give the same entries.
    from goprep import _profile

    cols, devs, stride = _profile.layout()
    a, b = _profile.name_id("fold_a"), _profile.name_id("fold_b")
    # name, t0, resumed, t1, start, finish, device
    rows = [
        (a, 1000, 1700, 1900, 1100, 1600, 0),  # engine 500, gil 100, python 300
        (a, 2000, 2500, 2600, 1500, 1550, 0),  # stale engine fields (start < t0): no engine time
        (a, 3000, 3400, 3500, 3100, 3450, 0),  # finish after resumed: clamped, gil 0, engine 300
        (b, 4000, 4300, 4400, 4100, 4200, devs.index("cuda")),  # a GPU call: engine 100 is gpu_s
    ]
    erows = np.zeros((len(rows), stride), np.int64)
    for k, r in enumerate(rows):
        erows[k, cols["start"]], erows[k, cols["finish"]], erows[k, cols["device"]] = r[4:]
    col = lambda j: np.array([r[j] for r in rows], np.int64)  # noqa: E731
    agg = {}
    _profile._fold(agg, col(0), col(1), col(2), col(3), erows)
    ea, eb = agg["fold_a"], agg["fold_b"]
    assert (ea.calls, ea.total, ea.engine, ea.gil, ea.gpu) == (3, 900 + 600 + 500, 500 + 300, 100, 0)
    assert ea.devices() == {"cpu": 3} and sorted(ea.samples.tolist()) == [500, 600, 900]
    assert (eb.calls, eb.total, eb.engine, eb.gil, eb.gpu) == (1, 400, 100, 100, 100)
    assert eb.devices() == {"cpu": 0, "cuda": 1}
    one = {}
    _profile._fold(one, a, col(1)[:3], col(2)[:3], col(3)[:3], erows[:3])
    e1 = one["fold_a"]
    assert (e1.calls, e1.total, e1.engine, e1.gil, e1.buckets) == (ea.calls, ea.total, ea.engine, ea.gil, ea.buckets)


def test_hook_reaches_existing_thread_states(profiling):
    # set_hook tells every thread's state (its commit threshold), including one created before it.
    from goprep import _profile

    img = _img(16, 16)
    prof_pipe(img)  # this thread's state exists now
    st = _profile.state()
    assert st.last == _profile.ROWS - 1
    seen = []
    _profile.set_hook(lambda *a: seen.append(a[0]))
    try:
        assert st.last == -1
        for _ in range(3):
            prof_pipe(img)
    finally:
        _profile.set_hook(None)
    assert st.last == _profile.ROWS - 1
    prof_pipe(img)
    assert seen == [prof_pipe.__qualname__] * 3
    assert goprep.stats()[prof_pipe.__qualname__]["calls"] == 5


def test_raising_hook_across_a_full_buffer(profiling):
    # A hook that raises on the buffer's last row must not leave the buffer full: the next call would
    # hand the engine a row past its end. Every call still returns or raises the hook's error, and
    # after the hook is gone calls and stats() work and count every call.
    from goprep import _profile

    def bad(*a):
        raise RuntimeError("tracer down")

    img = _img(4, 4)
    st = _profile.state()
    n = _profile.ROWS + 10 - st.i
    _profile.set_hook(bad)
    try:
        for _ in range(n):
            with pytest.raises(RuntimeError, match="tracer down"):
                goprep.flip(img)
            assert st.i < _profile.ROWS
    finally:
        _profile.set_hook(None)
    np.testing.assert_array_equal(goprep.flip(img), img[:, ::-1])
    assert goprep.stats()["flip"]["calls"] >= n + 1


def test_device_output_calls_are_recorded(profiling):
    # output="device" takes the untimed engine call, whose engine fields Python writes into the row.
    import goprep.testing as gt

    @goprep.pipeline(device="cuda", output="device")
    def to_dev(img):
        return goprep.normalize(goprep.resize(img, 32), mean=0.5, std=0.5)

    gt.simulate_gpu(True)
    try:
        gt.reset_gpu()
        for _ in range(3):
            to_dev(_img(40, 40))
        r = goprep.stats()[to_dev.__qualname__]
        assert r["calls"] == 3 and r["devices"] == {"cpu": 0, "cuda": 3}
        assert r["engine_s"] > 0 and r["gil_wait_s"] == 0 and r["gpu_s"] == r["engine_s"]
        assert r["engine_s"] + r["python_s"] == pytest.approx(r["total_s"], rel=1e-9)
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)
