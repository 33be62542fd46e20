"""Dynamic batching in ``python -m goprep serve`` (``--max-queue-delay``, issue 41): requests that
arrive within the delay run as one preprocessing call and one model call, the replies split back;
a bad request fails alone; a full queue is RESOURCE_EXHAUSTED; a cancelled request leaves its batch;
ModelConfig and ModelStatistics show it. The batcher and the engine's batch run in-process (fast);
the server tests start their own process on 127.0.0.1, always shut down. Synchronisation is by
barriers, the statistics and the queue gauge, with a queue delay long enough (30 s) that a batch
only closes early when its target is met: no sleeps."""

import asyncio
import os
import signal
import threading
import time
import urllib.request

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

from goprep._serve import batching, protocol  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.decode import pil_decode  # noqa: E402
from goprep._serve.errors import BadRequest, TooLarge  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402
from goprep._serve.oip import Engine, Limits  # noqa: E402
from goprep._serve.preprocess import make, reference  # noqa: E402
from goprep._serve.triton import Timing  # noqa: E402
from test_serve_encoded import _jpeg_bomb  # noqa: E402  (the other serve tests' helpers)
from test_serve_triton import _frames_input, _images_input, _jpeg, _stats  # noqa: E402

LONG = "30s"  # a queue delay no test waits out: batches close on their target, a drain or a failure


def _engine(impl="goprep"):
    eng = Engine("goprep", make(impl), None, 0, Limits(max_batch=16))
    eng.warm()
    return eng


class _Counting:
    """A fused preprocessing that counts its calls (what a bad request costs the others)."""

    def __init__(self, prep):
        self.prep, self.calls = prep, 0
        self.fused, self.decode = prep.fused, prep.decode

    def files(self, *a):
        self.calls += 1
        return self.prep.files(*a)

    def __call__(self, img):
        return self.prep(img)


# -- in-process: the engine's batch run ------------------------------------------------------------

@pytest.mark.parametrize("impl", ["goprep", "opencv"])
def test_a_batch_replies_what_each_request_gets_alone(impl):
    eng = _engine(impl)
    ims = frames(5, 120, 160) + frames(1, 97, 131, seed=3)
    reqs = [protocol.infer_request("goprep", "jpeg", [_jpeg(ims[0]), _jpeg(ims[1])]),
            protocol.infer_request("goprep", "raw", np.stack(ims[2:4])),
            protocol.infer_request("goprep", "jpeg", [_jpeg(ims[5])]),
            protocol.infer_request("goprep", "raw", ims[4])]
    results, t = eng.run_batch(reqs)
    assert t.items == 6 and t.start <= t.inputs <= t.infer <= t.output
    for req, rep in zip(reqs, results):
        got = protocol.outputs(rep)[protocol.TENSOR]
        alone = protocol.outputs(eng.infer(req))[protocol.TENSOR]
        np.testing.assert_array_equal(got, alone)
    # and the reference of each request's own images (JPEG: Pillow's decode, which both decoders equal)
    np.testing.assert_allclose(protocol.outputs(results[0])[protocol.TENSOR][1], reference(pil_decode(_jpeg(ims[1]))),
                               rtol=0, atol=1e-5)
    np.testing.assert_allclose(protocol.outputs(results[1])[protocol.TENSOR][0], reference(ims[2]), rtol=0, atol=1e-5)


def test_a_bad_request_fails_alone_at_one_extra_call():
    eng = _engine()
    counting = eng.prep = _Counting(eng.prep)
    good = [_jpeg(im) for im in frames(3, 120, 160)]
    reqs = [protocol.infer_request("goprep", "jpeg", good[:2]),
            protocol.infer_request("goprep", "jpeg", [good[2], b"\xff\xd8junk"]),  # its image[1] is corrupt
            protocol.infer_request("goprep", "raw", frames(1, 32, 32)[0][..., :2]),  # wrong shape: fails at parse
            protocol.infer_request("goprep", "jpeg", [good[0]])]
    results, t = eng.run_batch(reqs)
    assert isinstance(results[1], BadRequest) and str(results[1]).startswith("image[1] ")
    assert isinstance(results[2], BadRequest) and "FRAME" in str(results[2])
    assert t.items == 3 and counting.calls == 2  # the batch's call, then one without the bad request
    np.testing.assert_array_equal(protocol.outputs(results[0])[protocol.TENSOR],
                                  protocol.outputs(eng.infer(reqs[0]))[protocol.TENSOR])
    assert protocol.outputs(results[3])[protocol.TENSOR].shape == (1, 3, 224, 224)
    # two bad requests (a bomb header and a corrupt file): each fails alone, naming its own index; the
    # good ones cost at most one call each after the two failed batch calls
    counting.calls = 0
    reqs = [protocol.infer_request("goprep", "jpeg", [good[0], _jpeg_bomb()]),
            protocol.infer_request("goprep", "jpeg", good),
            protocol.infer_request("goprep", "jpeg", [b"\xff\xd8junk"]),
            protocol.infer_request("goprep", "jpeg", [good[1]])]
    results, t = eng.run_batch(reqs)
    assert isinstance(results[0], TooLarge) and str(results[0]).startswith("image[1] ") and "limit" in str(results[0])
    assert isinstance(results[2], BadRequest) and str(results[2]).startswith("image[0] ")
    assert t.items == 4 and counting.calls <= 2 + 2
    assert [protocol.outputs(results[k])[protocol.TENSOR].shape[0] for k in (1, 3)] == [3, 1]


def test_queue_delay_units():
    # (the server's flags around it: tests/test_serve_oip.py's test_arguments_are_checked)
    assert [batching.parse_delay(s) for s in ("500", "500us", "2ms", "0.01s", "0")] == [500, 500, 2000, 10000, 0]
    for bad in ("-1", "fast", "2 min", "61s"):
        with pytest.raises(ValueError):
            batching.parse_delay(bad)


# -- in-process: the batcher on an event loop --------------------------------------------------------

def _batcher(**kw):
    """A Batcher whose executions are recorded: run_batch answers each request (an int) with itself,
    or fails the odd ones when ``fail_odd``."""
    runs, executed = [], []

    def run_batch(reqs):
        runs.append(list(reqs))
        res = [ValueError(f"bad {r}") if kw.get("fail_odd") and r % 2 else r for r in reqs]
        return res, Timing(0, 1, 2, 3, sum(1 for r in res if not isinstance(r, Exception)))

    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(2)
    b = batching.Batcher(run_batch, pool, workers=kw.get("workers", 1), max_batch=kw.get("max_batch", 4),
                         delay_us=kw.get("delay_us", 30_000_000), max_queue=kw.get("max_queue", 16),
                         executed=executed.append, preferred=kw.get("preferred", ()))
    return b, runs, executed, pool


def test_batcher_forms_batches_up_to_the_target_in_arrival_order():
    b, runs, executed, pool = _batcher(max_batch=4, preferred=(3,))

    async def main():
        now = time.perf_counter_ns()
        subs = [asyncio.ensure_future(b.submit(r, n, now)) for r, n in ((0, 1), (1, 1), (2, 1), (3, 2), (4, 2))]
        got = await asyncio.gather(*subs[:3])  # 3 images: the preferred size, run without the delay
        assert [g[0] for g in got] == [0, 1, 2]
        b.flush()  # the rest (4 images) without waiting out the delay
        got = await asyncio.gather(*subs[3:])
        await b.close()
        return got

    got = asyncio.run(main())
    pool.shutdown()
    assert [g[0] for g in got] == [3, 4]
    assert runs == [[0, 1, 2], [3, 4]] and [t.items for t in executed] == [3, 2]
    assert b.config() == {"preferred_batch_size": [3], "max_queue_delay_microseconds": 30_000_000}


def test_batcher_never_exceeds_max_batch_and_fails_requests_alone():
    b, runs, executed, pool = _batcher(max_batch=4, fail_odd=True)

    async def main():
        now = time.perf_counter_ns()
        subs = [asyncio.ensure_future(b.submit(r, n, now)) for r, n in ((0, 3), (1, 2), (2, 2))]
        b.flush()
        out = await asyncio.gather(*subs, return_exceptions=True)
        await b.close()
        return out

    out = asyncio.run(main())
    pool.shutdown()
    assert runs == [[0], [1, 2]]  # 3 + 2 > 4: the second request waits for the next batch
    assert out[0][0] == 0 and isinstance(out[1], ValueError) and out[2][0] == 2


def test_batcher_queue_limit_and_cancelled_request_leaves_its_batch():
    b, runs, executed, pool = _batcher(max_batch=3, max_queue=2)

    async def main():
        now = time.perf_counter_ns()
        first = asyncio.ensure_future(b.submit(0, 1, now))
        second = asyncio.ensure_future(b.submit(1, 1, now))
        await asyncio.sleep(0)  # yield once: both tasks run to their await, queued (2 images < the target 3)
        assert b.full() and "limit of 2" in b.limit_message() and "--max-queue" in b.limit_message()
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert not b.full() and len(b.queue) == 1
        third = asyncio.ensure_future(b.submit(2, 2, now))  # fills the target of 3: runs without the delay
        got = await asyncio.gather(second, third)
        await b.close()
        return got

    got = asyncio.run(main())
    pool.shutdown()
    assert [g[0] for g in got] == [1, 2] and runs == [[1, 2]]


# -- over gRPC ---------------------------------------------------------------------------------------

def _at_once(c, inputs):
    """Send each request from its own thread, released together by a barrier; each one's TENSOR or
    its (status, message)."""
    out = [None] * len(inputs)
    go = threading.Barrier(len(inputs))

    def send(k):
        go.wait(60)
        try:
            out[k] = c.infer("goprep", inputs[k], client_timeout=120).as_numpy(protocol.TENSOR)
        except tc.InferenceServerException as e:
            out[k] = (e.status(), e.message())

    ts = [threading.Thread(target=send, args=(k,)) for k in range(len(inputs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(180)
    assert not any(t.is_alive() for t in ts)
    return out


def _until(what, cond, timeout=60.0):
    """Wait until ``cond()`` holds (the server's statistics or gauge; bounded)."""
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting until {what}"
        threading.Event().wait(0.02)


def _queued(srv):
    text = urllib.request.urlopen(f"http://{srv['metrics']}/metrics", timeout=10).read().decode()
    return next(float(ln.split()[1]) for ln in text.splitlines() if ln.startswith("goprep_serve_batch_queue "))


def _raw_call(srv, req):
    """ModelInfer as a grpc future (cancellable); its channel."""
    m = protocol.pb()
    ch = grpc.insecure_channel(srv["target"])
    call = ch.unary_unary(f"/{protocol.SERVICE}/ModelInfer", request_serializer=m.ModelInferRequest.SerializeToString,
                          response_deserializer=m.ModelInferResponse.FromString)
    return call.future(req, timeout=120), ch


@pytest.mark.slow
def test_concurrent_requests_run_as_one_batch():
    ims = frames(8, 120, 160)
    files = [_jpeg(im) for im in ims]
    args = ("--workers", "2", "--max-batch", "8", "--max-queue-delay", LONG, "--preferred-batch-size", "8")
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        cfg = c.get_model_config("goprep").config
        assert cfg.max_batch_size == 8 and cfg.HasField("dynamic_batching")
        assert cfg.dynamic_batching.max_queue_delay_microseconds == 30_000_000
        assert list(cfg.dynamic_batching.preferred_batch_size) == [8]
        out = _at_once(c, [[_images_input(files[2 * k : 2 * k + 2])] for k in range(4)])  # 4 requests of 2
        for k, t in enumerate(out):
            assert isinstance(t, np.ndarray) and t.shape == (2, 3, 224, 224), t
            for j in range(2):  # each reply is its own images' tensors
                np.testing.assert_allclose(t[j], reference(pil_decode(files[2 * k + j])), rtol=0, atol=1e-5)
        st = _stats(c)
        s = st.inference_stats
        # one execution of 8 images (it closed on its target, not the 30 s delay); 4 requests answered
        assert st.execution_count == 1 and st.inference_count == 8
        assert [(b.batch_size, b.compute_infer.count) for b in st.batch_stats] == [(8, 1)]
        assert s.success.count == s.queue.count == s.compute_infer.count == 4 and s.fail.count == 0
        assert s.compute_infer.ns == 4 * st.batch_stats[0].compute_infer.ns  # each request: its batch's time
        assert s.success.ns >= s.queue.ns + s.compute_input.ns + s.compute_infer.ns + s.compute_output.ns
        c.close()


@pytest.mark.slow
def test_bad_requests_in_a_batch_fail_alone():
    ims = frames(3, 120, 160)
    good = [_jpeg(im) for im in ims]
    wrong = np.zeros((16, 16, 2), np.uint8)  # FRAME with 2 channels: refused at parse
    args = ("--workers", "2", "--max-batch", "7", "--max-queue-delay", LONG)
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        out = _at_once(c, [[_images_input(good[:2])], [_images_input([good[2], b"\xff\xd8junk"])],
                           [_frames_input(wrong)], [_frames_input(ims[2])], [_images_input([_jpeg_bomb()])]])
        assert out[1][0] == "StatusCode.INVALID_ARGUMENT" and "image[1]" in out[1][1], out[1]
        assert out[2][0] == "StatusCode.INVALID_ARGUMENT" and "FRAME" in out[2][1], out[2]
        assert out[4][0] == "StatusCode.INVALID_ARGUMENT" and "image[0]" in out[4][1] and "limit" in out[4][1], out[4]
        for k in (0, 1):
            np.testing.assert_allclose(out[0][k], reference(pil_decode(good[k])), rtol=0, atol=1e-5)
        np.testing.assert_allclose(out[3][0], reference(ims[2]), rtol=0, atol=1e-5)
        st = _stats(c)
        assert st.inference_stats.success.count == 2 and st.inference_stats.fail.count == 3
        assert [(b.batch_size, b.compute_infer.count) for b in st.batch_stats] == [(3, 1)]  # the good ones' batch
        c.close()


@pytest.mark.slow
def test_a_request_cancelled_while_queued_leaves_its_batch():
    img = frames(1, 64, 64)[0]
    args = ("--workers", "2", "--max-batch", "4", "--max-queue-delay", LONG, "--metrics-port", "0")
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        fut, ch = _raw_call(srv, protocol.infer_request("goprep", "raw", img))
        _until("the request is queued", lambda: _queued(srv) == 1)
        fut.cancel()
        _until("the server dropped it", lambda: _stats(c).inference_stats.fail.count == 1 and _queued(srv) == 0)
        out = _at_once(c, [[_frames_input(img)]] * 4)  # four more fill the batch of 4 without it
        for t in out:
            assert isinstance(t, np.ndarray), t
            np.testing.assert_allclose(t[0], reference(img), rtol=0, atol=1e-5)
        st = _stats(c)
        assert [(b.batch_size, b.compute_infer.count) for b in st.batch_stats] == [(4, 1)]
        assert st.inference_stats.success.count == 4 and st.inference_stats.fail.count == 1
        ch.close()
        c.close()


@pytest.mark.slow
def test_full_queue_is_resource_exhausted_and_the_drain_runs_what_waits():
    img = frames(1, 64, 64)[0]
    args = ("--workers", "2", "--max-batch", "4", "--max-queue", "1", "--max-queue-delay", LONG, "--metrics-port", "0")
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        fut, ch = _raw_call(srv, protocol.infer_request("goprep", "raw", img))
        _until("the request is queued", lambda: _queued(srv) == 1)
        with pytest.raises(tc.InferenceServerException) as e:
            c.infer("goprep", [_frames_input(img)], client_timeout=60)
        assert e.value.status() == "StatusCode.RESOURCE_EXHAUSTED" and "limit of 1" in e.value.message()
        assert "--max-queue" in e.value.message()
        os.kill(srv["pid"], signal.SIGTERM)  # the drain runs the waiting request at once
        t = protocol.outputs(fut.result(timeout=60))[protocol.TENSOR]
        np.testing.assert_allclose(t[0], reference(img), rtol=0, atol=1e-5)
        assert srv["proc"].wait(30) == 0
        ch.close()
        c.close()


@pytest.mark.slow
def test_serve_bench_runs_the_batched_variant(tmp_path):
    import json
    import subprocess
    import sys

    out = tmp_path / "b.json"
    cmd = [sys.executable, "-m", "goprep", "serve-bench", "--preprocess", "goprep,goprep-batched", "--payloads", "jpeg",
           "--concurrency", "4", "--duration", "0.5", "--warmup", "0.2", "--workers", "2", "--rounds", "2",
           "--max-queue-delay", "5ms", "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert [(x["preprocess"], x["errors"]) for x in doc["results"]] == [("goprep", 0), ("goprep-batched", 0)]
    sizes = {int(k): n for k, n in doc["batch_sizes"]["goprep-batched"].items()}
    assert sizes and all(1 <= k <= 64 and n > 0 for k, n in sizes.items())
    assert doc["machine"]["settings"]["max_queue_delay"] == "5ms"
    assert "goprep-batched" in r.stdout and "mean batch" in r.stdout
    bad = subprocess.run(cmd[:-2] + ["--max-queue-delay", "soon"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--max-queue-delay" in bad.stderr


@pytest.mark.slow
def test_perf_analyzer_sees_the_batches(tmp_path):
    # Triton's load tester against the batching server: 4 synchronous clients, batches of up to 4
    # (closing on 4 waiting or after 200 ms): fewer executions than requests, every image counted.
    import json
    import re
    import subprocess

    from test_serve_triton import _perf_analyzer_or_fail

    from goprep._serve import perfanalyzer

    _perf_analyzer_or_fail()
    path = tmp_path / "input.json"
    path.write_text(json.dumps(perfanalyzer.input_data(files=[_jpeg(im) for im in frames(2, 480, 640)])))
    with server_process("goprep", ("--workers", "2", "--max-batch", "4", "--max-queue-delay", "200ms")) as srv:
        r = subprocess.run(perfanalyzer.command(srv["target"], str(path), concurrency=4), env=perfanalyzer.env(),
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
        m = re.search(r"Server:\s+Inference count: (\d+)\s+Execution count: (\d+)\s+Successful request count: (\d+)",
                      r.stdout)
        assert m, r.stdout
        inferences, executions, ok = map(int, m.groups())
        # perf_analyzer's figures are differences of two statistics snapshots taken while requests are
        # in flight: a batch counts its images when it has run, each of its requests its success when
        # its handler resumes, so a window edge can fall between the two (1248 images against 1244
        # requests, seen under load). Fewer executions than requests is what batching shows.
        assert inferences >= ok > executions > 0, m.group(0)
        c = tc.InferenceServerClient(srv["target"])
        st = _stats(c)  # every request answered: the totals agree exactly (one image a request)
        assert st.inference_count == st.inference_stats.success.count > st.execution_count > 0
        assert st.inference_stats.fail.count == 0
        assert max(b.batch_size for b in st.batch_stats) > 1 and all(b.batch_size <= 4 for b in st.batch_stats)
        c.close()
