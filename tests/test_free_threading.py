"""goprep on a free-threaded CPython (3.13t / 3.14t): the GIL stays off, and threads agree with serial.

Skipped on GIL builds. Self-contained (no conftest helpers, no OpenCV), so that it also runs with
``pytest --noconftest`` on an interpreter for which the suite's reference libraries have no wheel.
CI runs it on 3.14t with PYTHON_GIL=0; the import check itself runs in a child with PYTHON_GIL
unset, since PYTHON_GIL=0 would keep the GIL off even for a module that does not declare itself
GIL-free.
"""

import os
import subprocess
import sys
import sysconfig
import textwrap
import threading

import numpy as np
import pytest

import goprep

pytestmark = pytest.mark.skipif(
    not sysconfig.get_config_var("Py_GIL_DISABLED"), reason="needs a free-threaded CPython build (3.13t, 3.14t)"
)

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def _img(shape, seed):
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


def test_import_and_use_keep_the_gil_off():
    # A fresh interpreter, PYTHON_GIL unset: importing a module that does not declare
    # Py_MOD_GIL_NOT_USED would turn the GIL on (with a RuntimeWarning, made an error here).
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import goprep
        x = np.zeros((40, 60, 3), np.uint8)
        goprep.pipeline(lambda im: goprep.normalize(goprep.resize(im, (8, 8)), mean=0, std=1))(x)
        goprep.resize(x, (7, 9))
        goprep.info()
        print("gil", sys._is_gil_enabled())
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_GIL"}
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code], capture_output=True, text=True,
                       env=env, cwd=os.path.dirname(os.path.abspath(__file__)), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["gil", "False"], r.stdout + r.stderr


def test_gil_stays_off_in_this_process():
    x = _img((64, 80, 3), 1)
    goprep.pipeline(lambda im: goprep.normalize(goprep.flip(goprep.resize(im, (32, 32))), mean=MEAN, std=STD))(x)
    goprep.letterbox(x, (48, 48))
    assert not sys._is_gil_enabled()


def _jobs():
    chain = goprep.pipeline(lambda im: goprep.normalize(goprep.flip(goprep.resize(im, (56, 56))), mean=MEAN,
                                                        std=STD, dtype="float16"))
    crop_chain = goprep.pipeline(lambda im: goprep.normalize(goprep.center_crop(goprep.resize(im, 72), 64),
                                                             mean=MEAN, std=STD))
    box = goprep.pipeline(lambda im: goprep.letterbox(im, (96, 96)))
    return {
        "resize": lambda x: goprep.resize(x, (111, 77)),
        "antialias": lambda x: goprep.resize(x, (40, 40), antialias=True),
        "nearest": lambda x: goprep.resize(x, (130, 131), interpolation="nearest"),
        "letterbox": lambda x: goprep.letterbox(x, (80, 80))[0],
        "normalize": lambda x: goprep.normalize(x, mean=MEAN, std=STD),
        "cvt": lambda x: goprep.cvt_color(x, "rgb2bgr"),
        "chain": chain,
        "crop_chain": crop_chain,
        "box": lambda x: box(x)[0],
        "batch": lambda x: chain(np.stack([x, x[::-1]])),
        "list": lambda x: crop_chain([x, x[: x.shape[0] // 2, : x.shape[1] // 2 + 3]]),
    }


@pytest.mark.parametrize("profiling", [False, True])
def test_eight_threads_of_mixed_pipelines_equal_serial(profiling):
    was = goprep.profiling()
    goprep.set_profiling(profiling)
    try:
        jobs = _jobs()
        # Every thread sees every shape: the plan caches, the eager memo and each pipeline's cache are
        # filled and read by all threads at once (the serial pass below runs on fresh pipelines).
        inputs = [_img((70 + 9 * i, 90 + 5 * i, 3), seed=i) for i in range(8)]
        serial = {(n, i): fn(inputs[i]) for n, fn in _jobs().items() for i in range(8)}
        barrier = threading.Barrier(8)
        mismatches, errors = [], []

        def run(t):
            try:
                barrier.wait(timeout=60)
                for rep in range(4):
                    for k in range(8):
                        i = (t + k) % 8
                        for n, fn in jobs.items():
                            if not np.array_equal(fn(inputs[i]), serial[(n, i)]):
                                mismatches.append((n, i, t, rep))
                    if profiling and rep == 1:
                        goprep.stats()  # aggregation from another thread while the others record
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=300)
        assert not any(th.is_alive() for th in threads), "a thread hung"
        assert not errors, errors[:5]
        assert not mismatches, f"threaded results differ from serial: {mismatches[:10]}"
        if profiling:
            calls = sum(e["calls"] for e in goprep.stats().values() if isinstance(e, dict) and "calls" in e)
            assert calls > 0
        assert not sys._is_gil_enabled()
    finally:
        goprep.set_profiling(was)
