"""goprep.ray: the Preprocessor on its own, then Ray Data and Ray Serve on a real 2-node Ray cluster
on loopback (started here, always stopped, leftover processes checked)."""

import json
import os
import sys
import time

import numpy as np
import pytest

import goprep
from conftest import assert_array_identical, run_python
from scale_funcs import image, prep

ray = pytest.importorskip("ray")  # the test extra installs it; skipped runs are reported as skipped
pd = pytest.importorskip("pandas")  # the ray extra
import goprep.ray  # noqa: E402
from goprep._benchsuite.cluster import LocalRayCluster, free_port  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
IMAGES = [image(i) for i in range(12)]


@pytest.mark.slow
def test_import_goprep_does_not_import_ray():
    r = run_python("import sys, goprep, goprep.dask; assert 'ray' not in sys.modules; print('OK')")
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


def test_goprep_ray_is_not_shadowing_ray():
    assert goprep.ray.__name__ == "goprep.ray" and ray.__name__ == "ray" and ray is not goprep.ray
    assert hasattr(ray, "data") and hasattr(goprep.ray, "Preprocessor")


def test_numpy_batch_variable_shapes_one_fused_call():
    p = goprep.ray.Preprocessor(prep)
    col = np.empty(len(IMAGES), dtype=object)  # what Ray hands over for a variable-shaped column
    col[:] = IMAGES
    out = p({"image": col, "id": np.arange(len(IMAGES))})
    assert sorted(out) == ["id", "pixel_values"]  # the raw image column is dropped by default
    assert_array_identical(out["pixel_values"], prep(IMAGES))
    assert out["pixel_values"].flags.c_contiguous
    assert_array_identical(p({"image": list(IMAGES)})["pixel_values"], prep(IMAGES))  # plain lists too


def test_numpy_batch_fixed_shape_and_keep_input():
    # (the fixed-shape column of ray.data.from_numpy arrives like this; bench --scale runs it on a cluster)
    batch = np.stack([image(i, 40, 50) for i in range(5)])
    out = goprep.ray.Preprocessor(prep, output_column="x", keep_input=True)({"image": batch})
    assert out["image"] is batch
    assert_array_identical(out["x"], prep(batch))


def test_pandas_batch():
    df = pd.DataFrame({"image": pd.Series(IMAGES, dtype=object), "label": np.arange(len(IMAGES))})
    out = goprep.ray.Preprocessor(prep)(df)
    assert list(out.columns) == ["label", "pixel_values"]
    assert_array_identical(np.asarray(out["pixel_values"].to_numpy()), prep(IMAGES))


def test_letterbox_info_columns():
    lb = goprep.pipeline(lambda x: goprep.letterbox(x, (40, 40)))
    out = goprep.ray.Preprocessor(lb)({"image": list(IMAGES[:4])})
    want, infos = lb(list(IMAGES[:4]))
    assert_array_identical(out["pixel_values"], want)
    assert out["letterbox_scale"].tolist() == [i.scale for i in infos]
    assert out["letterbox_top"].tolist() == [i.top for i in infos]
    # a fixed-shape batch shares one info: it becomes one value per row
    out = goprep.ray.Preprocessor(lb)({"image": np.stack([IMAGES[0]] * 3)})
    assert out["letterbox_left"].tolist() == [lb(IMAGES[0])[1].left] * 3


@pytest.mark.parametrize("fmt", ["numpy", "pandas"])
def test_output_goes_into_arrow_without_a_copy(fmt):
    from ray.data.block import BlockAccessor

    p = goprep.ray.Preprocessor(prep)
    if fmt == "numpy":
        out = p({"image": list(IMAGES)})
        arr = out["pixel_values"]
    else:
        out = p(pd.DataFrame({"image": pd.Series(IMAGES, dtype=object)}))
        arr = out["pixel_values"].array._tensor
    table = BlockAccessor.batch_to_block(out)
    col = table.column("pixel_values")
    assert col.num_chunks == 1
    data_buf = col.chunk(0).storage.values.buffers()[1]
    assert data_buf.address == arr.ctypes.data, "the tensor column was copied"


def test_bad_arguments_are_named():
    with pytest.raises(goprep.InvalidArgumentError, match="^pipeline"):
        goprep.ray.Preprocessor(lambda x: x)
    with pytest.raises(goprep.InvalidArgumentError, match="^pipeline.*output=\"numpy\""):
        goprep.ray.Preprocessor(goprep.pipeline(lambda x: x, output="device"))
    with pytest.raises(goprep.InvalidArgumentError, match="^num_threads"):
        goprep.ray.Preprocessor(prep, num_threads=0)
    with pytest.raises(goprep.InvalidArgumentError, match="^column.*'img' is not a column"):
        goprep.ray.Preprocessor(prep, column="img")({"image": list(IMAGES)})
    with pytest.raises(goprep.InvalidArgumentError, match="^column.*row 1"):
        goprep.ray.Preprocessor(prep)({"image": [IMAGES[0], b"jpeg bytes"]})
    with pytest.raises(goprep.InvalidArgumentError, match="^batch_format"):
        goprep.ray.preprocess(None, prep, batch_format="arrow")
    with pytest.raises(goprep.InvalidArgumentError, match="^batch_format"):  # not NumPy's ambiguous truth value
        goprep.ray.preprocess(None, prep, batch_format=np.array(["numpy", "pandas"]))


def test_outside_an_actor_threads_are_left_alone(restore_threads):
    goprep.set_num_threads(2)
    assert goprep.ray.actor_threads() is None
    goprep.ray.Preprocessor(prep)
    assert goprep.get_num_threads() == 2
    goprep.ray.Preprocessor(prep, num_threads=1)
    assert goprep.get_num_threads() == 1


# --------------------------------------------------------------------------------------------------
# a real cluster: 2 nodes (1 CPU each) on 127.0.0.1


@pytest.fixture(scope="module")
def cluster_run():
    t0 = time.perf_counter()
    cluster = LocalRayCluster(nodes=2, cpus_per_node=1, env={"PYTHONPATH": TESTS}, timeout=180)
    out = {"pids_while_running": [], "left": None, "stdout": "", "stderr": ""}
    try:
        cluster.start()
        out["start_seconds"] = round(time.perf_counter() - t0, 1)
        out["pids_while_running"] = cluster.pids()
        import subprocess

        env = dict(cluster.env)
        try:
            p = subprocess.run(
                [sys.executable, os.path.join(TESTS, "ray_driver.py"), cluster.address, str(free_port())],
                env=env,
                cwd=TESTS,
                capture_output=True,
                text=True,
                timeout=480,
            )
            out["stdout"], out["stderr"], out["rc"] = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out["stdout"], out["stderr"], out["rc"] = str(e.stdout), str(e.stderr), "timeout"
    finally:
        out["left"] = cluster.stop()
        out["after_stop"] = cluster.pids()
        out["total_seconds"] = round(time.perf_counter() - t0, 1)
    lines = [l for l in out["stdout"].splitlines() if l.startswith("RESULTS ")]
    out["results"] = json.loads(lines[-1][8:]) if lines else {}
    print(f"\nray cluster run: {out['total_seconds']} s in all (cluster start {out.get('start_seconds')} s, driver connect {out['results'].get('connect_seconds')} s)", {k: v.get("seconds") for k, v in out["results"].items() if isinstance(v, dict)})
    return out


def _result(run, name):
    res = run["results"].get(name)
    assert res is not None, f"the driver did not report {name!r} (rc={run.get('rc')})\n{run['stdout'][-3000:]}\n{run['stderr'][-5000:]}"
    assert res["ok"], res.get("error")
    return res


@pytest.mark.slow
def test_cluster_has_two_nodes(cluster_run):
    assert _result(cluster_run, "nodes")["count"] == 2
    assert cluster_run["rc"] == 0, cluster_run["stderr"][-3000:]


@pytest.mark.slow
def test_map_batches_variable_shapes_on_both_nodes_bit_exact(cluster_run):
    r = _result(cluster_run, "numpy_variable_shapes")
    assert r["rows"] == 36 and r["nodes"] == 2 and r["threads"] == [1]


@pytest.mark.slow
def test_preprocess_pandas_letterbox_lambda(cluster_run):
    assert _result(cluster_run, "pandas_letterbox_lambda")["rows"] == 36


@pytest.mark.slow
def test_serve_through_http_proxy(cluster_run):
    assert _result(cluster_run, "serve_http")["requests"] == 8


@pytest.mark.slow
def test_cluster_stopped_without_leftovers(cluster_run):
    assert len(cluster_run["pids_while_running"]) >= 6  # 2 raylets, GCS, ... really ran
    assert cluster_run["left"] == [] and cluster_run["after_stop"] == []


def test_gpu_actor_runs_auto_pipeline_on_its_gpu(monkeypatch):
    """An actor holding a GPU (num_gpus=) runs a device="auto" pipeline on it for every batch, even
    small ones. Here the GPU is goprep's simulated one and "holds a GPU" is patched in: this checks
    goprep's side; Ray's GPU assignment itself needs a GPU machine."""
    import goprep.testing as gt

    gt.simulate_gpu(True)
    gt.reset_gpu()
    try:
        auto = goprep.pipeline(prep.__wrapped__)  # device="auto": small batches would stay on the CPU
        cpu_result = prep(IMAGES[:4])
        monkeypatch.setattr(goprep.ray, "_holds_gpu", lambda: False)
        p = goprep.ray.Preprocessor(auto)
        assert p.pipeline._device == "auto"
        p({"image": list(IMAGES[:4])})
        assert goprep.info()["gpu"]["gpu_calls"] == 0  # under the 4 MiB threshold: CPU
        monkeypatch.setattr(goprep.ray, "_holds_gpu", lambda: True)
        p = goprep.ray.Preprocessor(auto)
        assert p.pipeline._device == "cuda"
        out = p({"image": list(IMAGES[:4])})
        assert goprep.info()["gpu"]["gpu_calls"] >= 1
        assert_array_identical(out["pixel_values"], cpu_result)  # same results on both
        assert goprep.ray.Preprocessor(prep).pipeline._device == "cpu"  # an explicit device is kept
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)


@pytest.mark.slow
def test_bench_scale_command_line():
    r = run_python("from goprep.__main__ import main; import sys; sys.exit(main(['bench', '--scale', '--images', '4']))")
    assert r.returncode == 2 and "--images must be at least 2 batches" in r.stderr, r.stderr
    r = run_python("from goprep.__main__ import main; import sys; sys.exit(main(['bench', '--help']))")
    assert r.returncode == 0 and "--scale" in r.stdout


@pytest.mark.parametrize("fmt", ["numpy", "pandas"])
@pytest.mark.parametrize("shapes", ["variable", "fixed"])
def test_batches_as_ray_converts_them(fmt, shapes):
    """Ray's own Arrow -> batch conversion (what map_batches hands the actor), without a cluster."""
    from ray.data.block import BlockAccessor

    images = list(IMAGES) if shapes == "variable" else [image(i, 40, 50) for i in range(6)]
    col = np.empty(len(images), dtype=object)
    col[:] = images
    table = BlockAccessor.batch_to_block({"image": col if shapes == "variable" else np.stack(images), "id": np.arange(len(images))})
    assert ("VariableShaped" in str(table.schema)) == (shapes == "variable"), table.schema
    batch = BlockAccessor.for_block(table).to_batch_format(fmt)
    out = goprep.ray.Preprocessor(prep)(batch)
    got = out["pixel_values"] if fmt == "numpy" else np.asarray(out["pixel_values"].to_numpy())
    assert_array_identical(got, prep(images))
    assert list(out["id"]) == list(range(len(images)))
