"""goprep.dask.map_blocks on the threaded scheduler and on a distributed.LocalCluster with 2 worker
processes on 127.0.0.1 (started here, always closed, worker processes checked gone)."""

import os
import time

import numpy as np
import pytest

import goprep
from conftest import assert_array_identical
from scale_funcs import image, native_loaded, plain_fn, prep

da = pytest.importorskip("dask.array")
import goprep.dask  # noqa: E402

BATCH = np.stack([image(i, 64, 48) for i in range(20)])


@pytest.mark.slow
def test_lazy_graph_has_the_output_shape_without_computing():
    from conftest import run_python

    code = """
import numpy as np, dask.array as da, goprep.dask
from scale_funcs import prep
x = da.zeros((10, 64, 48, 3), dtype=np.uint8, chunks=(3, 64, 48, 3))
y = goprep.dask.map_blocks(prep, x)
assert y.shape == (10, 3, 24, 32) and y.dtype == np.float32 and y.chunks[0] == (3, 3, 3, 1), (y.shape, y.chunks)
print("OK")
"""
    r = run_python(code, timeout=60)
    assert r.returncode == 0 and "OK" in r.stdout, r.stdout + r.stderr


def test_threaded_scheduler_rechunks_h_w_c():
    x = da.from_array(BATCH, chunks=(6, 32, 24, 3))  # chunked along H and W too: rechunked to whole images
    y = goprep.dask.map_blocks(prep, x)
    assert y.chunks == ((6, 6, 6, 2), (3,), (24,), (32,))
    assert_array_identical(y.compute(scheduler="threads"), prep(BATCH))


def test_pass_through_arguments_and_numpy_input():
    f = goprep.pipeline(plain_fn)
    y = goprep.dask.map_blocks(f, BATCH, size=(20, 10))
    assert y.shape == (20, 20, 10, 3)
    assert_array_identical(y.compute(scheduler="threads"), f(BATCH, size=(20, 10)))


def test_errors_name_the_argument():
    x = da.from_array(BATCH, chunks=(5, -1, -1, -1))
    with pytest.raises(goprep.ShapeError, match="^array"):
        goprep.dask.map_blocks(prep, x[0])
    with pytest.raises(goprep.InvalidArgumentError, match="^pipeline"):
        goprep.dask.map_blocks(lambda x: x, x)
    with pytest.raises(goprep.PipelineError, match="tuple"):
        goprep.dask.map_blocks(goprep.pipeline(lambda x: goprep.letterbox(x, (32, 32))), x)
    with pytest.raises(goprep.DTypeError, match="^array"):
        goprep.dask.map_blocks(prep, x.astype(np.int16))


@pytest.fixture(scope="module")
def local_cluster():
    psutil = pytest.importorskip("psutil")
    distributed = pytest.importorskip("distributed")  # dask[distributed]
    Client, LocalCluster = distributed.Client, distributed.LocalCluster

    t0 = time.perf_counter()
    # processes=True: the nanny starts each worker with multiprocessing "spawn" (Dask's default
    # distributed.worker.multiprocessing-method), so workers work even though this process has
    # already run goprep (a forked child of it would raise goprep.ForkError).
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_port=0,
        silence_logs=40,
    )
    client = Client(cluster, timeout=120)
    pids = list(client.run(os.getpid).values())
    try:
        yield client, pids
    finally:
        client.close(timeout=60)
        cluster.close(timeout=60)
        gone, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=30)
        print(f"\ndask LocalCluster: {time.perf_counter() - t0:.1f} s")
        assert not alive, f"dask worker processes left running: {alive}"


@pytest.mark.slow
def test_distributed_two_worker_processes(local_cluster):
    client, pids = local_cluster
    assert len(set(pids)) == 2 and os.getpid() not in pids
    lam = goprep.pipeline(lambda img: goprep.flip(goprep.resize(img, (30, 20)), horizontal=False, vertical=True))
    x = da.from_array(BATCH, chunks=(2, -1, -1, -1))  # 10 blocks over 2 workers
    for pipe in (prep, lam):  # by name, and a lambda (cloudpickle)
        got = client.compute(goprep.dask.map_blocks(pipe, x)).result(timeout=120)
        assert_array_identical(got, pipe(BATCH))
    assert sorted(client.run(native_loaded).values()) == [True, True], "both workers should have run goprep"
