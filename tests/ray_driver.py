"""The Ray driver of tests/test_ray.py, run as its own process against a running LocalRayCluster.

A separate process because Ray reads its auth mode once per process (at import) and the cluster
uses a token of its own; it also keeps Ray's driver state out of the pytest process. Each check
records its outcome; the last line is ``RESULTS <json>``.

usage: python ray_driver.py ADDRESS HTTP_PORT
"""

import json
import sys
import time
import traceback
import urllib.error
import urllib.request

import numpy as np
import ray

import goprep
import goprep.ray
from scale_funcs import image, prep

ADDRESS, HTTP_PORT = sys.argv[1], int(sys.argv[2])
results = {}


def check(name):
    def wrap(fn):
        t0 = time.perf_counter()
        try:
            results[name] = {"ok": True, **(fn() or {})}
        except BaseException:  # noqa: BLE001 - reported to the test
            results[name] = {"ok": False, "error": traceback.format_exc()}
        results[name]["seconds"] = round(time.perf_counter() - t0, 2)
        return fn

    return wrap


class Where(goprep.ray.Preprocessor):
    """Records which node/process ran each batch and its goprep thread count."""

    def __call__(self, batch):
        out = super().__call__(batch)
        n = len(out["pixel_values"])
        ctx = ray.get_runtime_context()
        out["node"] = np.array([ctx.get_node_id()] * n)
        out["threads"] = np.full(n, goprep.get_num_threads())
        return out


IMAGES = [image(i) for i in range(36)]  # 36 sizes, 20x30 .. 265x45


def mismatches(rows, pipe, key="pixel_values"):
    bad = []
    for r in rows:
        want = pipe(IMAGES[r["id"]])
        got = r[key]
        if not (got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)):
            bad.append(int(r["id"]))
    return bad


t0 = time.perf_counter()
ray.init(address=ADDRESS, log_to_driver=False)
# start dispatching only once the whole actor pool is up, so that both nodes get batches
ray.data.DataContext.get_current().wait_for_min_actors_s = 180
results["connect_seconds"] = round(time.perf_counter() - t0, 2)


@check("nodes")
def _():
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2, alive
    return {"count": len(alive), "cpus": ray.cluster_resources().get("CPU")}


@check("numpy_variable_shapes")
def _():
    ds = ray.data.from_items([{"image": im, "id": i} for i, im in enumerate(IMAGES)])
    assert "VariableShaped" in str(ds.schema()), ds.schema()
    rows = ds.map_batches(
        Where,
        fn_constructor_kwargs={"pipeline": prep},
        batch_size=6,
        concurrency=2,
        num_cpus=1,
        scheduling_strategy="SPREAD",
    ).take_all()
    assert sorted(r["id"] for r in rows) == list(range(len(IMAGES)))
    assert all("image" not in r for r in rows)
    bad = mismatches(rows, prep)
    assert not bad, f"rows differ from local prep(x): {bad}"
    nodes = sorted({r["node"] for r in rows})
    assert len(nodes) == 2, f"expected batches on both nodes, got {nodes}"
    threads = sorted({int(r["threads"]) for r in rows})
    assert threads == [1], f"one goprep thread per actor CPU, got {threads}"
    return {"rows": len(rows), "nodes": len(nodes), "threads": threads}


@check("pandas_letterbox_lambda")
def _():
    # a lambda (shipped by value with cloudpickle), a tuple result, the pandas batch format
    lb = goprep.pipeline(lambda x: goprep.letterbox(x, (48, 48), pad_value=114), device="cpu")
    ds = ray.data.from_items([{"image": im, "id": i} for i, im in enumerate(IMAGES)])
    rows = goprep.ray.preprocess(ds, lb, output_column="boxed", batch_size=9, concurrency=2, batch_format="pandas").take_all()
    assert len(rows) == len(IMAGES)
    bad = []
    for r in rows:
        want, info = lb(IMAGES[r["id"]])
        if not (np.array_equal(r["boxed"], want) and r["letterbox_scale"] == info.scale and r["letterbox_top"] == info.top):
            bad.append(int(r["id"]))
    assert not bad, bad
    return {"rows": len(rows)}


def _wait_for_route(base: str, prefix: str, timeout: float = 60.0) -> None:
    """Until the HTTP proxy routes ``prefix``: serve.run returns when the application is ready, but
    the proxy learns the route table asynchronously, and a request sent before it has answered 404
    (seen once in CI). The proxy's own ``/-/routes`` lists what it routes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base}/-/routes", timeout=10) as resp:
                if prefix in json.loads(resp.read()):
                    return
        except (urllib.error.URLError, ValueError, OSError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"the HTTP proxy did not route {prefix} within {timeout:.0f} s")
        time.sleep(0.2)


@check("serve_http")
def _():
    from ray import serve

    # one proxy: both of this cluster's nodes run on one machine, and with Serve's default (a proxy on
    # every node, bound with SO_REUSEPORT) the kernel spreads connections over two proxies, one of which
    # may not route /prep yet when the other's /-/routes lists it (a 404 after _wait_for_route, CI)
    serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": HTTP_PORT})
    try:
        app = goprep.ray.deployment(prep, num_replicas=2, ray_actor_options={"num_cpus": 1})
        serve.run(app, name="goprep", route_prefix="/prep")
        _wait_for_route(f"http://127.0.0.1:{HTTP_PORT}", "/prep")
        url = f"http://127.0.0.1:{HTTP_PORT}/prep"
        n = 0
        for i in (0, 5, 11, 17, 23, 35):
            body = goprep.ray._npy_bytes(IMAGES[i])
            req = urllib.request.Request(url, data=body, headers={"content-type": goprep.ray.NPY_MEDIA_TYPE})
            with urllib.request.urlopen(req, timeout=60) as resp:
                assert resp.headers["content-type"] == goprep.ray.NPY_MEDIA_TYPE
                got = np.load(__import__("io").BytesIO(resp.read()), allow_pickle=False)
            want = prep(IMAGES[i])
            assert got.dtype == want.dtype and np.array_equal(got, want), i
            n += 1
        # a bad request gets goprep's error as a 400, and the replica keeps serving
        bad = goprep.ray._npy_bytes(np.zeros((4, 4, 2), np.uint8))  # 2 channels
        try:
            urllib.request.urlopen(urllib.request.Request(url, data=bad), timeout=60)
            raise AssertionError("a 2-channel image was accepted")
        except urllib.error.HTTPError as e:
            msg = e.read().decode()
            assert e.code == 400 and "channels" in msg, (e.code, msg)
        # the handle API, for composing with a model deployment
        handle = serve.get_app_handle("goprep")
        got = handle.preprocess.remote(IMAGES[3]).result(timeout_s=60)
        assert np.array_equal(got, prep(IMAGES[3]))
        return {"requests": n + 2}
    finally:
        serve.shutdown()


ray.shutdown()
print("RESULTS " + json.dumps(results), flush=True)
