"""Triton's extensions on ``python -m goprep serve`` (issue 41): ModelConfig, ServerMetadata's
extensions, ModelStatistics, RepositoryIndex through the real ``tritonclient.grpc`` client, and
Triton's ``perf_analyzer`` run unchanged against the server. Servers in their own processes on
127.0.0.1, always shut down; perf_analyzer runs a few short windows under a subprocess timeout."""

import io
import json
import os
import subprocess
import threading

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

from goprep._serve import perfanalyzer, protocol, triton  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402


def _jpeg(img):
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, "JPEG")
    return buf.getvalue()


def _frames_input(a):
    i = tc.InferInput(protocol.FRAME, list(a.shape), "UINT8")
    i.set_data_from_numpy(np.ascontiguousarray(a))
    return i


def _images_input(files):
    i = tc.InferInput(protocol.IMAGE, [len(files)], "BYTES")
    i.set_data_from_numpy(np.array(files, dtype=np.object_))
    return i


def _stats(c):
    (st,) = c.get_inference_statistics("goprep").model_stats
    return st


@pytest.mark.slow
def test_model_config_server_metadata_and_repository_index():
    with server_process("goprep", ("--workers", "2", "--max-batch", "8", "--model", "builtin", "--topk", "5")) as srv:
        c = tc.InferenceServerClient(srv["target"])
        assert list(c.get_server_metadata().extensions) == ["model_configuration", "statistics"]
        cfg = c.get_model_config("goprep").config
        assert cfg.name == "goprep" and cfg.max_batch_size == 8 and cfg.platform == "onnxruntime_onnx"
        # the batch dimension is left out of the dims (max_batch_size > 0); -1 where variable
        got = {i.name: (tc.model_config_pb2.DataType.Name(i.data_type), list(i.dims), i.optional) for i in cfg.input}
        assert got == {"IMAGE": ("TYPE_STRING", [1], True), "FRAME": ("TYPE_UINT8", [-1, -1, 3], True)}
        (image,) = [i for i in cfg.input if i.name == "IMAGE"]
        assert image.HasField("reshape") and list(image.reshape.shape) == []  # the model sees [N]
        out = {o.name: (tc.model_config_pb2.DataType.Name(o.data_type), list(o.dims)) for o in cfg.output}
        assert out == {"TOPK_INDEX": ("TYPE_INT32", [5]), "TOPK_SCORE": ("TYPE_FP32", [5])}
        assert not cfg.HasField("dynamic_batching")  # not served: requests run as they come
        # ModelMetadata's shapes are the config's dims behind the batch dimension
        md = c.get_model_metadata("goprep")
        assert {t.name: list(t.shape) for t in md.inputs} == {"IMAGE": [-1, 1], "FRAME": [-1, -1, -1, 3]}
        assert {t.name: list(t.shape) for t in md.outputs} == {"TOPK_INDEX": [-1, 5], "TOPK_SCORE": [-1, 5]}
        # a client may send IMAGE as [N, 1] (what perf_analyzer sends) or [N]
        j = _jpeg(frames(1, 120, 160)[0])
        i = tc.InferInput(protocol.IMAGE, [2, 1], "BYTES")
        i.set_data_from_numpy(np.array([[j], [j]], dtype=np.object_))
        assert c.infer("goprep", [i]).as_numpy("TOPK_INDEX").shape == (2, 5)
        idx = c.get_model_repository_index()
        assert [(m.name, m.version, m.state) for m in idx.models] == [("goprep", "1", "READY")]
        assert len(c.get_model_repository_index().models) == 1
        with pytest.raises(tc.InferenceServerException) as e:
            c.get_model_config("other")
        assert e.value.status() == "StatusCode.NOT_FOUND"
        c.close()


@pytest.mark.slow
def test_statistics_count_exactly_the_requests_sent():
    img = frames(3, 96, 128)
    with server_process("goprep", ("--workers", "2")) as srv:
        c = tc.InferenceServerClient(srv["target"])
        before = _stats(c)
        assert before.inference_count == before.execution_count == 0 and not before.batch_stats
        sizes = [1, 2, 3, 2, 1]  # images per request: FRAME batches
        for n in sizes:
            c.infer("goprep", [_frames_input(np.stack(img[:n]))])
        c.infer("goprep", [_images_input([_jpeg(img[0]), _jpeg(img[1])])])  # a batch of 2 files
        sizes.append(2)
        for bad in ([_images_input([b"not an image"])], [_frames_input(img[0][..., :2])]):
            with pytest.raises(tc.InferenceServerException):
                c.infer("goprep", bad)
        with pytest.raises(tc.InferenceServerException):  # another model's request is not this model's
            c.infer("other", [_frames_input(img[0])])
        st = _stats(c)
        s = st.inference_stats
        assert (st.name, st.version) == ("goprep", "1")
        assert s.success.count == len(sizes) and s.fail.count == 2
        assert st.inference_count == sum(sizes) and st.execution_count == len(sizes)
        for stage in (s.queue, s.compute_input, s.compute_infer, s.compute_output):
            assert stage.count == len(sizes) and stage.ns > 0
        # each request's stages lie within its time from arrival to reply
        assert s.success.ns >= s.queue.ns + s.compute_input.ns + s.compute_infer.ns + s.compute_output.ns
        assert s.fail.ns > 0
        batches = {b.batch_size: b for b in st.batch_stats}
        assert sorted(batches) == [1, 2, 3]
        for size, b in batches.items():
            n = sizes.count(size)
            assert b.compute_input.count == b.compute_infer.count == b.compute_output.count == n, size
        assert sum(b.compute_infer.ns for b in batches.values()) == s.compute_infer.ns  # one execution per request
        assert st.last_inference > 0
        all_models = c.get_inference_statistics().model_stats  # no name: every model's
        assert [m.name for m in all_models] == ["goprep"] and all_models[0].inference_count == sum(sizes)
        c.close()


@pytest.mark.slow
def test_a_1080p_frame_goes_in_one_message():
    # tritonclient sends a 1920x1080 uint8 frame (6.2 MB) in one message; the default limit takes it
    big = np.zeros((1080, 1920, 3), np.uint8)
    big[::7] = 200
    with server_process("goprep", ("--workers", "2")) as srv:
        c = tc.InferenceServerClient(srv["target"])
        t = c.infer("goprep", [_frames_input(big)]).as_numpy("TENSOR")
        assert t.shape == (1, 3, 224, 224) and np.ptp(t) > 0
        assert _stats(c).inference_stats.success.count == 1
        c.close()


def test_stats_are_consistent_under_threads():
    # Stats is updated from the event loop and read by ModelStatistics: totals stay exact.
    st = triton.Stats()
    t = triton.Timing(0, 10, 30, 60, 4)

    def add():
        for _ in range(500):
            st.success(-5, 100, t)

    ts = [threading.Thread(target=add) for _ in range(4)]
    for x in ts:
        x.start()
    for x in ts:
        x.join(30)
    m = st.message("goprep")
    assert m.execution_count == 2000 and m.inference_count == 8000
    s = m.inference_stats
    assert (s.success.ns, s.queue.ns, s.compute_input.ns, s.compute_infer.ns, s.compute_output.ns) == (
        2000 * 105, 2000 * 5, 2000 * 10, 2000 * 20, 2000 * 30)
    (b,) = m.batch_stats
    assert b.batch_size == 4 and b.compute_infer.count == 2000


# -- perf_analyzer ----------------------------------------------------------------------------------

DEPS = "scripts/perf_analyzer_deps.sh"


def _perf_analyzer_or_fail():
    """The perf_analyzer executable, runnable; in CI (CI=true) a failure when it is not, elsewhere a
    skip naming the script that installs what it needs."""
    exe = perfanalyzer.binary()
    why = ""
    if exe is None:
        why = "perf_analyzer is not installed (tritonclient's manylinux wheel up to 2.60: the test extra)"
    else:
        try:  # on a C runtime older than its own: through the private one (perfanalyzer.launcher)
            argv = perfanalyzer.launcher()
        except (OSError, ValueError) as e:
            why = f"perf_analyzer needs a newer C runtime, which could not be fetched: {e}"
        else:
            r = subprocess.run(argv + ["--version"], env=perfanalyzer.env(), capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 0 or "Perf Analyzer" not in r.stdout + r.stderr:
                why = f"perf_analyzer cannot run: {(r.stderr or r.stdout).strip()[-300:]}"
    if why:
        why += f"; run {DEPS} (libb64-0d, libcudart.so.12)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return exe


def _perf_analyzer(srv, data, tmp_path, batch, protocol="grpc"):
    """One bounded perf_analyzer run over ``protocol`` (http: the server's --http-port); the requests
    its client counted, after checking the server's side it printed."""
    path = tmp_path / "input.json"
    path.write_text(json.dumps(data))
    url = srv["target"] if protocol == "grpc" else srv["http"]
    cmd = perfanalyzer.command(url, str(path), batch=batch, concurrency=2, protocol=protocol)
    r = subprocess.run(cmd, env=perfanalyzer.env(), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    got = perfanalyzer.summary(r.stdout)
    assert got["successes"] is not None, r.stdout  # the server's statistics were read (ServerMetadata lists "statistics")
    assert got["requests"] > 0 and got["executions"] == got["successes"] > 0
    assert got["inferences"] == batch * got["successes"]
    return got["requests"]


@pytest.mark.slow
def test_perf_analyzer_runs_unchanged(tmp_path):
    _perf_analyzer_or_fail()
    img = frames(2, 480, 640)
    with server_process("goprep", ("--workers", "2")) as srv:
        c = tc.InferenceServerClient(srv["target"])
        sent = _perf_analyzer(srv, perfanalyzer.input_data(files=[_jpeg(im) for im in img]), tmp_path, batch=1)
        sent += _perf_analyzer(srv, perfanalyzer.input_data(frames=img), tmp_path, batch=2)
        st = _stats(c)
        s = st.inference_stats
        # every request perf_analyzer sent was answered OK (its windows count a part of them)
        assert s.fail.count == 0 and s.success.count >= sent
        assert {b.batch_size for b in st.batch_stats} == {1, 2}
        c.close()


def test_perf_analyzer_input_data_is_the_serialised_tensor():
    files = [b"\xff\xd8abc", b"\x89PNGxy"]
    f = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    doc = perfanalyzer.input_data(files=files, frames=[f])
    import base64

    raws = [base64.b64decode(d["IMAGE"]["content"]["b64"]) for d in doc["data"][:2]]
    assert [protocol.unpack_bytes(r, 1)[0].tobytes() for r in raws] == files
    assert all(d["IMAGE"]["shape"] == [1] for d in doc["data"][:2])
    assert doc["data"][2]["FRAME"]["shape"] == [2, 3, 3]
    assert base64.b64decode(doc["data"][2]["FRAME"]["content"]["b64"]) == f.tobytes()
    with pytest.raises(ValueError, match="H, W, 3"):
        perfanalyzer.input_data(frames=[f[..., :2]])
