"""Pipelines pickle as their function and options (pickle, cloudpickle, process pools)."""

import concurrent.futures
import multiprocessing as mp
import pickle

import numpy as np
import pytest

import goprep
from conftest import assert_array_identical, run_python
from scale_funcs import call, image, plain_fn, prep

# local functions and lambdas pickle through cloudpickle (the ray and dask extras): a machine without it
# skips this file
cloudpickle = pytest.importorskip("cloudpickle")

DUMPS = {"pickle": pickle.dumps, "cloudpickle": cloudpickle.dumps}


def _local_fn(img):
    return goprep.normalize(goprep.resize(img, (12, 20)), mean=(0.5,) * 3, std=(0.25,) * 3, layout="HWC")


def make_pipelines():
    def local(img, size=(10, 14)):  # a local function, with a pass-through argument
        return goprep.flip(goprep.resize(img, size), horizontal=False, vertical=True)

    return {
        "lambda": goprep.pipeline(lambda x: goprep.resize(x, (9, 11)), device="cpu"),
        "local": goprep.pipeline(local),
        "module_fn": goprep.pipeline(device="cpu")(plain_fn),
        "module_pipeline": prep,
        "letterbox": goprep.pipeline(lambda x: goprep.letterbox(x, (32, 32))),
        "test_module_fn": goprep.pipeline(_local_fn),
    }


PIPES = make_pipelines()


def _same(a, b):
    if isinstance(a, tuple):
        assert type(b) is tuple and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert_array_identical(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("dumps", list(DUMPS), ids=list(DUMPS))
@pytest.mark.parametrize("name", list(PIPES))
def test_round_trip_after_use(name, dumps):
    p = PIPES[name]
    img = image(3)
    want = p(img)  # used first: the cache holds a plan and there is a lock
    data = DUMPS[dumps](p)
    q = pickle.loads(data)
    assert isinstance(q, goprep.Pipeline)
    assert repr(q) == repr(p)
    assert q._device == p._device and q._output == p._output
    _same(q(img), want)
    _same(q([img, image(5)]), p([img, image(5)]))
    if name == "module_pipeline":
        assert q is p  # by name, like a module-level function
    else:
        assert q is not p and q._cache is not p._cache and q._lock is not p._lock


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol(protocol):
    for name, p in PIPES.items():
        q = pickle.loads(pickle.dumps(p, protocol=protocol))
        _same(q(image(1)), p(image(1)))


def test_pickle_carries_no_plans_or_caches():
    p = goprep.pipeline(lambda x: goprep.resize(x, (9, 11)), device="cpu")
    empty = len(pickle.dumps(p))
    for i in range(20):
        p(image(i))  # 20 input shapes: 20 compiled plans in the cache
    assert len(p._cache) == 20
    assert len(pickle.dumps(p)) == empty
    assert pickle.loads(pickle.dumps(p))._cache == {}


def test_options_travel():
    q = pickle.loads(pickle.dumps(goprep.pipeline(lambda x: x, device="cuda:1", output="device")))
    assert (q._device, q._output) == ("cuda:1", "device")  # no GPU needed to pickle or unpickle
    f = pickle.loads(pickle.dumps(goprep.pipeline(device="cpu")(plain_fn)))
    assert f.__wrapped__ is plain_fn and f._device == "cpu"  # a module-level function by reference


@pytest.mark.slow
def test_unpickling_does_not_start_go_and_child_can_fork():
    data = pickle.dumps(goprep.pipeline(lambda x: goprep.resize(x, (16, 8))))
    code = f"""
import os, pickle, sys
import numpy as np
from scale_funcs import image, native_loaded
p = pickle.loads({data!r})
assert not native_loaded(), "unpickling loaded the Go extension"
pid = os.fork()
if pid == 0:  # a fork after unpickling only is safe: the child starts Go on its first call
    r = p(image(2))
    os._exit(0 if r.shape == (16, 8, 3) else 2)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
assert not native_loaded()
r = p(image(2))  # the first call in this process starts Go
assert native_loaded() and r.shape == (16, 8, 3)
print("OK")
"""
    r = run_python(code, timeout=60)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
def test_lambda_without_cloudpickle_says_what_to_do():
    code = """
import pickle, sys
sys.modules["cloudpickle"] = None  # as if not installed
import goprep
from scale_funcs import prep, plain_fn
pickle.loads(pickle.dumps(prep))  # module level: plain pickle, no cloudpickle needed
pickle.loads(pickle.dumps(goprep.pipeline(plain_fn)))
try:
    pickle.dumps(goprep.pipeline(lambda x: x))
except pickle.PicklingError as e:
    print("ERR", e)
"""
    r = run_python(code, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "ERR" in r.stdout and "pip install cloudpickle" in r.stdout and "<lambda>" in r.stdout, r.stdout


@pytest.mark.slow
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing_pool(method):
    # The parent has run goprep (Go runtime up), so only spawn/forkserver workers can work.
    jobs = [(PIPES[name], image(i)) for i, name in enumerate(["lambda", "local", "module_fn", "module_pipeline"])]
    want = [p(img) for p, img in jobs]
    with mp.get_context(method).Pool(2) as pool:
        got = pool.map_async(call, jobs).get(timeout=120)
    for g, w in zip(got, want):
        assert_array_identical(g, w)


@pytest.mark.slow
def test_process_pool_executor():
    jobs = [(PIPES["local"], image(i)) for i in range(6)]
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        got = list(ex.map(call, jobs, timeout=120))
    for g, (p, img) in zip(got, jobs):
        assert_array_identical(g, p(img))
