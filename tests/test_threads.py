import threading
import time

import numpy as np
import pytest

import goprep
from conftest import (
    IMAGENET_MEAN,
    IMAGENET_STD,
    PHOTOS,
    assert_array_identical,
    assert_goprep_error,
    rand_u8,
    run_concurrently,
    run_python,
)

MEAN, STD = IMAGENET_MEAN, IMAGENET_STD


# ------------------------------------------------------------------------------- thread count


def test_set_get_num_threads_roundtrip(restore_threads):
    for n in (1, 2, 3, 7, 1):
        goprep.set_num_threads(n)
        assert goprep.get_num_threads() == n
        assert goprep.info()["threads"] == n


def test_default_num_threads_positive():
    n = goprep.get_num_threads()
    assert isinstance(n, int) and n >= 1


@pytest.mark.parametrize("n", [0, -1, -100])
def test_set_num_threads_invalid(n, restore_threads):
    before = goprep.get_num_threads()
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.set_num_threads(n)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="n", builtin=ValueError)
    assert goprep.get_num_threads() == before


def test_results_independent_of_thread_count(restore_threads):
    batch = np.stack([PHOTOS["astronaut"], PHOTOS["astronaut"][::-1]])
    results = []
    for n in (1, 2, 5):
        goprep.set_num_threads(n)
        results.append(
            (
                goprep.resize(batch, (123, 457)),
                goprep.resize(batch, (100, 77), antialias=True),
                goprep.normalize(batch, mean=MEAN, std=STD),
            )
        )
    for r in results[1:]:
        for a, b in zip(results[0], r):
            assert_array_identical(a, b)


@pytest.mark.slow
def test_env_num_threads():
    p = run_python(
        "import goprep; print(goprep.get_num_threads(), goprep.info()['threads'])",
        env={"GOPREP_NUM_THREADS": "3"},
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["3", "3"]


# ------------------------------------------------------------------------------- GIL release


def test_gil_released_during_long_call(restore_threads):
    goprep.set_num_threads(1)
    tile = rand_u8((1080, 1920, 3), seed=1)
    batch = np.empty((64, 1080, 1920, 3), np.uint8)
    batch[:] = tile
    goprep.resize(batch[:1], (224, 224), antialias=True)  # warm-up / lazy load

    state = {"done": False}
    stats = {"count_in_call": 0, "max_gap": 0.0}

    def counter():
        last = time.perf_counter()
        n = 0
        max_gap = 0.0
        while not state["done"]:
            now = time.perf_counter()
            gap = now - last
            if gap > max_gap:
                max_gap = gap
            last = now
            if "t0" in state and "t1" not in state:
                n += 1
        stats["count_in_call"] = n
        stats["max_gap"] = max_gap

    def worker():
        state["t0"] = time.perf_counter()
        state["result"] = goprep.resize(batch, (224, 224), antialias=True)
        state["t1"] = time.perf_counter()

    tc = threading.Thread(target=counter)
    tw = threading.Thread(target=worker)
    tc.start()
    time.sleep(0.02)
    tw.start()
    tw.join(timeout=120)
    assert not tw.is_alive(), "goprep call did not finish in 120 s"
    state["done"] = True
    tc.join()

    duration = state["t1"] - state["t0"]
    assert state["result"].shape == (64, 224, 224, 3)
    # If the GIL were held for the whole call, the counter thread would stall for ~duration.
    assert stats["max_gap"] < max(0.5 * duration, 0.05), (
        f"counter thread stalled {stats['max_gap']:.3f}s during a {duration:.3f}s call: GIL not released"
    )
    assert stats["count_in_call"] > 500, f"only {stats['count_in_call']} increments during a {duration:.3f}s call"


# ------------------------------------------------------------------------------- concurrency


def _chain(img):
    img = goprep.resize(img, (96, 128))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD, dtype="float16")


def test_concurrent_calls_equal_serial():
    pipe = goprep.pipeline(_chain)
    inputs = [rand_u8((150 + 13 * i, 200 + 7 * i, 3), seed=i) for i in range(8)]
    jobs = {
        "resize": lambda x: goprep.resize(x, (111, 77)),
        "antialias": lambda x: goprep.resize(x, (64, 64), antialias=True),
        "nearest": lambda x: goprep.resize(x, (300, 301), interpolation="nearest"),
        "letterbox": lambda x: goprep.letterbox(x, (160, 160))[0],
        "normalize": lambda x: goprep.normalize(x, mean=MEAN, std=STD),
        "pipeline": lambda x: pipe(x),
        "pipeline_batch": lambda x: pipe(np.stack([x, x[::-1]])),
        "pipeline_list": lambda x: pipe([x, x[:100, :120]]),
    }
    serial = {(name, i): fn(inputs[i]) for name, fn in jobs.items() for i in range(8)}

    mismatches = []

    def run(i):
        for rep in range(3):
            for name, fn in jobs.items():
                r = fn(inputs[i])
                if not np.array_equal(r, serial[(name, i)]):
                    mismatches.append((name, i, rep))

    run_concurrently(run)
    assert not mismatches, f"concurrent results differ from serial: {mismatches[:10]}"


def test_concurrent_first_use_of_one_pipeline():
    # many threads racing to build the same plan for the first time
    pipe = goprep.pipeline(_chain)
    x = PHOTOS["coffee"]
    want = _chain(x)
    results = [None] * 8

    def run(i):
        results[i] = pipe(x)

    run_concurrently(run, timeout=60)
    for r in results:
        assert_array_identical(r, want)
