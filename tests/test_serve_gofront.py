"""``python -m goprep serve --frontend go`` (issue 41): the gRPC request path in Go (gomod/serve,
python/goprep/_serve/gofront.py), driven with the real ``tritonclient.grpc`` client on 127.0.0.1,
servers in their own processes, always shut down: replies equal to the in-process pipeline, the
metadata, config, statistics and repository index equal to the Python front end's, dynamic batches,
a bad file failing alone, the queue limit, perf_analyzer, the drain and clean exit, and the flags it
refuses."""

import signal
import threading
import time

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

from goprep._serve import protocol, server  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402
from goprep._serve.preprocess import make_goprep  # noqa: E402
from test_serve_batching import _at_once  # noqa: E402
from test_serve_oip import _encode, _frame_input as _frames, _image_input as _images  # noqa: E402

GO = ("--frontend", "go", "--workers", "2")


def _tensor(c, inp):
    return c.infer("goprep", [inp], client_timeout=120).as_numpy(protocol.TENSOR)


def _status(fn):
    with pytest.raises(tc.InferenceServerException) as e:
        fn()
    return e.value.status(), e.value.message()


@pytest.mark.slow
def test_replies_equal_the_in_process_pipeline():
    prep = make_goprep(reuse_output=False)
    ims = frames(2, 480, 640) + frames(1, 240, 320)
    files = [_encode(ims[0]), _encode(ims[1], "PNG"), _encode(ims[2])]
    with server_process("goprep", GO) as srv:
        c = tc.InferenceServerClient(srv["target"])
        got = _tensor(c, _images(files))
        assert got.dtype == np.float32 and got.shape == (3, 3, 224, 224)
        np.testing.assert_array_equal(got, prep.files(files, 1 << 24))  # bit for bit
        batch = np.stack(ims[:2])
        got = _tensor(c, _frames(batch))
        np.testing.assert_array_equal(got, np.stack([prep(im) for im in ims[:2]]))
        np.testing.assert_array_equal(_tensor(c, _frames(ims[2])), prep(ims[2])[None])
        c.close()


@pytest.mark.slow
@pytest.mark.parametrize("topk", [0, 5])
def test_model_outputs_equal_the_in_process_model(topk):
    from goprep._serve.model import builtin

    prep, model = make_goprep(reuse_output=False), builtin()
    ims = frames(3, 240, 320)
    files = [_encode(im) for im in ims]
    extra = ("--model",) + (("--topk", str(topk)) if topk else ())
    with server_process("goprep", (*GO, *extra)) as go, server_process("goprep", ("--workers", "2", *extra)) as py:
        cg, cp = tc.InferenceServerClient(go["target"]), tc.InferenceServerClient(py["target"])
        assert cg.get_model_metadata("goprep") == cp.get_model_metadata("goprep")
        assert cg.get_model_config("goprep") == cp.get_model_config("goprep")
        for inp, tensors in ((_images(files), prep.files(files, 1 << 24)), (_frames(np.stack(ims)), np.stack([prep(im) for im in ims]))):
            rg, rp = cg.infer("goprep", [inp], client_timeout=120), cp.infer("goprep", [inp], client_timeout=120)
            names = [o.name for o in cp.get_model_metadata("goprep").outputs]
            want = model.run(tensors)
            for name in names:
                if topk:  # the same classes and scores as the Python front end's reply
                    np.testing.assert_array_equal(rg.as_numpy(name), rp.as_numpy(name))
                else:
                    np.testing.assert_allclose(rg.as_numpy(name), want[name], rtol=1e-5, atol=1e-6)
        cg.close()
        cp.close()


@pytest.mark.slow
def test_a_model_that_raises_fails_its_batch_internal_and_the_server_goes_on(tmp_path):
    pytest.importorskip("onnxruntime")
    from test_serve_oip import _reshape_model

    path = tmp_path / "reshape.onnx"
    _reshape_model(path)  # fine for one image, an onnxruntime error for two
    img = frames(2, 120, 160)
    with server_process("goprep", (*GO, "--model", str(path))) as srv:
        c = tc.InferenceServerClient(srv["target"])
        code, msg = _status(lambda: c.infer("goprep", [_frames(np.stack(img))], client_timeout=120))
        assert code == "StatusCode.INTERNAL" and msg == "internal error while running the model (see the server's log)"
        y = c.infer("goprep", [_frames(img[0])], client_timeout=120).as_numpy("y")
        np.testing.assert_array_equal(y.reshape(1, 3, 224, 224), make_goprep(reuse_output=False)(img[0])[None])
        (st,) = c.get_inference_statistics("goprep").model_stats
        assert st.inference_stats.fail.count == 1 and st.inference_stats.success.count == 1
        c.close()
        srv["proc"].send_signal(signal.SIGTERM)
        assert srv["proc"].wait(60) == 0


def _same_statistics(a, b):
    """Two ModelStatistics equal in everything but durations."""
    assert (a.name, a.version, a.inference_count, a.execution_count) == (b.name, b.version, b.inference_count, b.execution_count)
    for s in ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output"):
        assert getattr(a.inference_stats, s).count == getattr(b.inference_stats, s).count, s
    assert [(x.batch_size, x.compute_infer.count) for x in a.batch_stats] == \
        [(x.batch_size, x.compute_infer.count) for x in b.batch_stats]


@pytest.mark.slow
def test_metadata_config_statistics_and_index_equal_the_python_front_end():
    args = ("--workers", "2", "--max-batch", "8", "--max-queue-delay", "2ms", "--preferred-batch-size", "2", "4")
    files = [_encode(im) for im in frames(2, 120, 160)]
    with server_process("goprep", args) as py, server_process("goprep", ("--frontend", "go", *args)) as go:
        cp, cg = tc.InferenceServerClient(py["target"]), tc.InferenceServerClient(go["target"])
        for c in (cp, cg):
            assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("goprep")
            assert not c.is_model_ready("other") and not c.is_model_ready("goprep", "2")
        assert cg.get_server_metadata() == cp.get_server_metadata()
        assert cg.get_model_metadata("goprep") == cp.get_model_metadata("goprep")
        assert cg.get_model_config("goprep") == cp.get_model_config("goprep")
        assert cg.get_model_repository_index() == cp.get_model_repository_index()
        for fn in (lambda c: c.get_model_config("other"), lambda c: c.get_model_metadata("goprep", "2"),
                   lambda c: c.get_inference_statistics("other"), lambda c: c.infer("other", [_images(files[:1])])):
            assert _status(lambda: fn(cg)) == _status(lambda: fn(cp))
        for c in (cp, cg):  # the same calls: one OK request of 2 images, one of 1, one bad one
            _tensor(c, _images(files))
            _tensor(c, _images(files[:1]))
            assert _status(lambda: c.infer("goprep", [_images([b"not a jpeg"])]))[0] == "StatusCode.INVALID_ARGUMENT"
        (sp,), (sg,) = cp.get_inference_statistics("goprep").model_stats, cg.get_inference_statistics("goprep").model_stats
        _same_statistics(sg, sp)
        assert sg.inference_stats.success.ns > 0 and sg.inference_stats.compute_infer.ns > 0 and sg.last_inference > 0
        assert cg.get_inference_statistics("").model_stats[0].name == "goprep"
        cp.close()
        cg.close()


@pytest.mark.slow
def test_batches_form_and_a_corrupt_file_fails_alone():
    prep = make_goprep(reuse_output=False)
    files = [_encode(im) for im in frames(4, 120, 160)]
    bad = files[2][: len(files[2]) // 2]  # a truncated JPEG: its header reads, its data does not
    sent = [files[0], files[1], bad, files[3]]
    args = (*GO, "--max-batch", "8", "--max-queue-delay", "30s", "--preferred-batch-size", "4")
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        out = _at_once(c, [[_images([f])] for f in sent])
        for k, f in enumerate(sent):
            if f is bad:
                assert out[k][0] == "StatusCode.INVALID_ARGUMENT" and "image[0]" in out[k][1], out[k]
            else:
                np.testing.assert_array_equal(out[k], prep.files([f], 1 << 24))
        (st,) = c.get_inference_statistics("goprep").model_stats
        assert st.inference_stats.success.count == 3 and st.inference_stats.fail.count == 1
        assert st.execution_count == 1 and [b.batch_size for b in st.batch_stats] == [3]
        c.close()


def _health(target, service):
    """grpc.health.v1 Health/Check, as a Kubernetes gRPC probe calls it: the status's name, or the
    call's error code."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(target) as ch:
        try:
            rep = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        except grpc.RpcError as e:
            return str(e.code())
    return health_pb2.HealthCheckResponse.ServingStatus.Name(rep.status)


@pytest.mark.slow
def test_queue_limit_is_resource_exhausted_and_sigterm_drains_and_exits():
    files = [_encode(im) for im in frames(1, 120, 160)]
    args = (*GO, "--max-queue", "1", "--max-queue-delay", "30s")
    with server_process("goprep", args) as srv:
        c = tc.InferenceServerClient(srv["target"])
        out, lock = [], threading.Lock()

        def send():
            try:
                r = _tensor(c, _images(files))
            except tc.InferenceServerException as e:
                r = (e.status(), e.message())
            with lock:
                out.append(r)

        ts = [threading.Thread(target=send) for _ in range(3)]
        for t in ts:  # one waits out its delay in the queue, the others are over the limit
            t.start()
        end = time.monotonic() + 60
        while len(out) < 2:
            assert time.monotonic() < end, out
            threading.Event().wait(0.05)
        for code, msg in out:
            assert code == "StatusCode.RESOURCE_EXHAUSTED" and "--max-queue" in msg, (code, msg)
        assert [_health(srv["target"], s) for s in ("live", "ready", "", protocol.SERVICE)] == ["SERVING"] * 4
        assert _health(srv["target"], "other") == "StatusCode.NOT_FOUND"
        srv["proc"].send_signal(signal.SIGTERM)  # the drain runs what waits at once
        for t in ts:
            t.join(60)
        assert out[2].shape == (1, 3, 224, 224)
        assert srv["proc"].wait(60) == 0
        assert "goprep serve: stopped" in srv["proc"].stderr.read()
        c.close()


@pytest.mark.slow
def test_perf_analyzer_runs_against_it(tmp_path):
    from test_serve_triton import _jpeg, _perf_analyzer, _perf_analyzer_or_fail

    from goprep._serve import perfanalyzer

    _perf_analyzer_or_fail()
    img = frames(2, 480, 640)
    with server_process("goprep", GO) as srv:
        sent = _perf_analyzer(srv, perfanalyzer.input_data(files=[_jpeg(im) for im in img]), tmp_path, batch=1)
        sent += _perf_analyzer(srv, perfanalyzer.input_data(frames=img), tmp_path, batch=2)
        c = tc.InferenceServerClient(srv["target"])
        (st,) = c.get_inference_statistics("goprep").model_stats
        assert st.inference_stats.fail.count == 0 and st.inference_stats.success.count >= sent
        c.close()


@pytest.mark.parametrize("argv, words", [
    (["--http-port", "0"], "--http-port"), (["--metrics-port", "0"], "--metrics-port"),
    (["--preprocess", "opencv"], "--preprocess goprep"), (["--device", "auto"], "--device"),
])
def test_unserved_flags_are_refused(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        server.main(["--frontend", "go", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "--frontend" in err


def test_a_failed_answer_gets_a_fallback_error_reply():
    """answer_loop: when answering a question raises (here the reply call itself), the question still
    gets an error reply, so the request that asked it fails instead of waiting for the stop."""
    from goprep._serve import gofront

    class Mod:
        def __init__(self):
            self.questions = ['{"id": 7, "kind": "stats", "snapshot": {}}', ""]
            self.replies = []

        def ServeNext(self):
            return self.questions.pop(0)

        def ServeReply(self, id_, plan, data, err):
            self.replies.append((id_, err))
            if len(self.replies) == 1:
                raise RuntimeError("the reply failed")

    class Answers:
        def stats(self, snap):
            return b""

    mod = Mod()
    gofront.answer_loop(mod, Answers())
    assert mod.replies == [(7, ""), (7, "the answer failed")]


def _until(what, fn, want, timeout=60.0):
    """fn()'s first value for which want(value) holds, polled (at most ``timeout`` s)."""
    end = time.monotonic() + timeout
    while not want(v := fn()):
        assert time.monotonic() < end, f"{what}: still {v!r} after {timeout} s"
        threading.Event().wait(0.05)
    return v


def _probe(live):
    """ServerLive's outcome: "OK", or the error's (code, details)."""
    try:
        live(b"", timeout=5)
        return "OK"
    except grpc.RpcError as e:
        return (e.code(), e.details())


def _stalled(ch, stall):
    """A ModelInfer call whose headers go out and whose message never does (until ``stall`` is set)."""
    def never():
        stall.wait(120)
        return
        yield

    return ch.stream_stream(f"/{protocol.SERVICE}/ModelInfer")(never(), timeout=120)


@pytest.mark.slow
def test_concurrent_rpcs_and_body_timeout_apply():
    """--max-concurrent-rpcs and --body-timeout reach the Go front end. With one slot and a long body
    timeout, a call whose message never comes holds the slot: probes meet RESOURCE_EXHAUSTED (grpcio's
    message) until it is cancelled, then are served again. With a 1 s body timeout, such a call ends
    DEADLINE_EXCEEDED. No step waits on a guessed time: each polls until what it waits for holds."""
    stall = threading.Event()
    try:
        args = (*GO, "--max-concurrent-rpcs", "1", "--body-timeout", "600")
        with server_process("goprep", args) as srv, grpc.insecure_channel(srv["target"]) as ch:
            live = ch.unary_unary(f"/{protocol.SERVICE}/ServerLive")
            _until("the server", lambda: _probe(live), lambda v: v == "OK")
            calls = []

            def holder_or_probe():  # a probe's outcome while an open call lives; a new open call when the
                if not calls or calls[-1].done():  # last one ended (it met the slot of a probe just answered)
                    calls.append(_stalled(ch, stall))
                    return "opened"
                return _probe(live)

            got = _until("an open call holding the slot", holder_or_probe, lambda v: v not in ("OK", "opened"))
            assert got == (grpc.StatusCode.RESOURCE_EXHAUSTED, "Concurrent RPC limit exceeded!"), got
            for c in calls:
                c.cancel()
            _until("a probe after the open call's cancel", lambda: _probe(live), lambda v: v == "OK")
        args = (*GO, "--body-timeout", "1")
        with server_process("goprep", args) as srv, grpc.insecure_channel(srv["target"]) as ch:
            with pytest.raises(grpc.RpcError) as ei:
                next(_stalled(ch, stall))
            assert ei.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, ei.value
    finally:
        stall.set()
