"""``python -m goprep serve`` as an Open Inference Protocol v2 server (issue 28): driven with the real
``tritonclient.grpc`` client on 127.0.0.1, servers in their own processes, always shut down. The
protocol, the status codes, the limits (image bombs, batch, message and queue sizes), the metrics,
user models, presets and argument checks. Misbehaving connections and SIGTERM draining:
tests/test_serve_oip_connections.py; both it and tests/test_serve_encoded.py use the helpers here."""

import io
import struct
import threading
import urllib.request
import zlib

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

from goprep._serve import protocol, server  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.decode import decode_image, pil_decode  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402
from goprep._serve.preprocess import reference  # noqa: E402

PATHS = ("/", "\\", "Traceback", ".py", ".cpp", ".h:", "onnxruntime")  # nothing of the server's insides


def _client(srv):
    return tc.InferenceServerClient(srv["target"])


def _image_input(files):
    i = tc.InferInput(protocol.IMAGE, [len(files)], "BYTES")
    i.set_data_from_numpy(np.array(files, dtype=np.object_))
    return i


def _frame_input(a):
    i = tc.InferInput(protocol.FRAME, list(a.shape), "UINT8")
    i.set_data_from_numpy(np.ascontiguousarray(a))
    return i


def _encode(img, fmt="JPEG"):
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, fmt)
    return buf.getvalue()


def _error(fn):
    with pytest.raises(tc.InferenceServerException) as e:
        fn()
    msg = e.value.message()
    for p in PATHS:
        assert p not in msg, (p, msg)
    return e.value.status(), msg


def _rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS")) / 1024


def _scrape(srv):
    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(f"http://{srv['metrics']}/metrics", timeout=10).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for fam in text_string_to_metric_families(text)
            for s in fam.samples}


@pytest.mark.slow
def test_tritonclient_round_trip():
    img = frames(2, 240, 320)
    with server_process("goprep", ("--workers", "2")) as srv:
        c = _client(srv)
        assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("goprep")
        assert not c.is_model_ready("other")
        assert c.get_server_metadata().name == "goprep"
        md = c.get_model_metadata("goprep")
        assert [(i.name, i.datatype) for i in md.inputs] == [("IMAGE", "BYTES"), ("FRAME", "UINT8")]
        assert [(o.name, o.datatype, list(o.shape)) for o in md.outputs] == [("TENSOR", "FP32", [-1, 3, 224, 224])]
        # raw frames, one and a batch of two: the tensor itself comes back
        t = c.infer("goprep", [_frame_input(img[0])]).as_numpy("TENSOR")
        assert t.shape == (1, 3, 224, 224)
        np.testing.assert_allclose(t[0], reference(img[0]), rtol=0, atol=1e-5)
        t = c.infer("goprep", [_frame_input(np.stack(img))]).as_numpy("TENSOR")
        for k in range(2):
            np.testing.assert_allclose(t[k], reference(img[k]), rtol=0, atol=1e-5)
        # encoded files: JPEG and PNG in one request, decoded by the server
        files = [_encode(img[0], "JPEG"), _encode(img[1], "PNG")]
        t = c.infer("goprep", [_image_input(files)]).as_numpy("TENSOR")
        for k, f in enumerate(files):  # goprep's decoder (libjpeg-turbo, libpng) equals Pillow's byte for byte
            np.testing.assert_array_equal(decode_image(f, 1 << 30), pil_decode(f))
            np.testing.assert_allclose(t[k], reference(pil_decode(f)), rtol=0, atol=1e-5)
        np.testing.assert_array_equal(pil_decode(files[1]), img[1])  # PNG is lossless
        code, _ = _error(lambda: c.infer("other", [_frame_input(img[0])]))
        assert code == "StatusCode.NOT_FOUND"
        c.close()


@pytest.mark.slow
def test_bad_requests_are_invalid_argument_without_internals():
    img = frames(1, 64, 80)[0]
    gif = _encode(img, "GIF")
    with server_process("opencv", ("--workers", "2")) as srv:
        c = _client(srv)
        bad = [
            [_image_input([b"not an image"])],
            [_image_input([gif])],  # a real image, but not JPEG or PNG
            [_image_input([_encode(img, "JPEG")[:200]])],  # truncated
            [_frame_input(img[..., :2])],  # two channels
            [tc.InferInput("OTHER", [1], "BYTES")],
            [_frame_input(img), _image_input([gif])],  # two inputs
        ]
        bad[4][0].set_data_from_numpy(np.array([b"x"], dtype=np.object_))
        for inputs in bad:
            code, msg = _error(lambda: c.infer("goprep", inputs))
            assert code == "StatusCode.INVALID_ARGUMENT", (code, msg)
        code, msg = _error(lambda: c.infer("goprep", [_frame_input(img)], outputs=[tc.InferRequestedOutput("NOPE")]))
        assert code == "StatusCode.INVALID_ARGUMENT" and "NOPE" in msg
        # a FRAME whose bytes do not match its shape (raw request: tritonclient would not send it)
        req = protocol.infer_request("goprep", "raw", img)
        req.raw_input_contents[0] = req.raw_input_contents[0][:-1]
        with grpc.insecure_channel(srv["target"]) as ch:
            call = ch.unary_unary(f"/{protocol.SERVICE}/ModelInfer")
            with pytest.raises(grpc.RpcError) as e:
                call(req.SerializeToString(), timeout=30)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "bytes" in e.value.details()
            for method in ("ModelInfer", "ModelConfig", "ServerReady"):  # bytes that are no protobuf message
                with pytest.raises(grpc.RpcError) as e:
                    ch.unary_unary(f"/{protocol.SERVICE}/{method}")(b"\xff\xff\xff", timeout=30)
                assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "not a valid" in e.value.details()
        t = c.infer("goprep", [_frame_input(img)]).as_numpy("TENSOR")  # still serving
        np.testing.assert_allclose(t[0], reference(img), rtol=0, atol=1e-5)
        c.close()


def _png(width, height, rows):
    """A grayscale PNG of width x height whose image data is ``rows`` rows of zeros, compressed (the
    header may claim more rows than there are)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    z = zlib.compressobj(9)
    row = b"\0" * (width + 1)
    data = b"".join(z.compress(row) for _ in range(rows)) + z.flush()
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", data) + chunk(b"IEND", b""))


@pytest.mark.slow
def test_image_bombs_are_refused_from_the_header():
    claims = _png(60000, 60000, 4)  # a tiny file claiming 3.6 gigapixels
    dense = _png(16384, 16384, 16384)  # 268 MB of pixels in 261 KB: highly compressible
    assert len(claims) < 1000 and len(dense) < 1 << 20
    with server_process("goprep", ("--workers", "4", "--metrics-port", "0")) as srv:
        c = _client(srv)
        img = frames(1, 64, 64)[0]
        c.infer("goprep", [_frame_input(img)])
        c.infer("goprep", [_image_input([_encode(img, "PNG")])])  # the decode path warmed up
        rss0 = _rss_mb(srv["pid"])
        codes = []

        def send(f):
            try:
                c.infer("goprep", [_image_input([f])])
                codes.append("OK")
            except tc.InferenceServerException as e:
                codes.append(e.status())

        ts = [threading.Thread(target=send, args=(f,)) for f in (claims, dense, dense, dense, dense, claims)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        grew = _rss_mb(srv["pid"]) - rss0
        assert codes == ["StatusCode.INVALID_ARGUMENT"] * 6, codes
        assert grew < 100, f"server RSS grew by {grew:.0f} MB"
        # a raw frame over the limit is refused from its shape
        code, msg = _error(lambda: c.infer("goprep", [tc.InferInput(protocol.FRAME, [5000, 5000, 3], "UINT8")]))
        assert code == "StatusCode.INVALID_ARGUMENT" and "limit" in msg
        m = _scrape(srv)
        assert m[("goprep_serve_rejected_total", (("reason", "pixels"),))] == 7
        c.close()


@pytest.mark.slow
def test_batch_and_message_limits_are_resource_exhausted():
    img = frames(1, 32, 32)[0]
    with server_process("goprep", ("--workers", "2", "--max-batch", "2", "--max-request-mb", "1")) as srv:
        c = _client(srv)
        assert c.infer("goprep", [_frame_input(np.stack([img, img]))]).as_numpy("TENSOR").shape[0] == 2
        code, msg = _error(lambda: c.infer("goprep", [_frame_input(np.stack([img] * 3))]))
        assert code == "StatusCode.RESOURCE_EXHAUSTED" and "at most 2" in msg
        big = np.zeros((1024, 1024, 3), np.uint8)  # 3 MiB over the 1 MiB message limit
        code, msg = _error(lambda: c.infer("goprep", [_frame_input(big)]))
        assert code == "StatusCode.RESOURCE_EXHAUSTED", (code, msg)
        c.close()


@pytest.mark.slow
def test_queue_limit_is_resource_exhausted():
    # One worker, no queue, each request 1 s: of three sent at once, one runs, two are refused.
    img = frames(1, 32, 32)[0]
    with server_process("goprep", ("--workers", "1", "--max-queue", "0", "--test-delay", "1", "--metrics-port", "0")) as srv:
        c = _client(srv)
        codes = []

        def send():
            try:
                c.infer("goprep", [_frame_input(img)], client_timeout=30)
                codes.append("OK")
            except tc.InferenceServerException as e:
                codes.append(e.status())

        ts = [threading.Thread(target=send) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        assert sorted(codes) == ["OK", "StatusCode.RESOURCE_EXHAUSTED", "StatusCode.RESOURCE_EXHAUSTED"], codes
        assert _scrape(srv)[("goprep_serve_rejected_total", (("reason", "queue"),))] == 2
        assert c.infer("goprep", [_frame_input(img)]).as_numpy("TENSOR").shape == (1, 3, 224, 224)  # free again
        c.close()


def _reshape_model(path):
    """An ONNX model taking (N, 3, 224, 224) that reshapes to (1, 150528): fine for one image, an
    onnxruntime error for a batch of two."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    shape = numpy_helper.from_array(np.array([1, 3 * 224 * 224], np.int64), "shape")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 224, 224])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3 * 224 * 224])], [shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


@pytest.mark.slow
def test_user_onnx_model_outputs_and_internal_errors(tmp_path):
    pytest.importorskip("onnxruntime")
    path = tmp_path / "reshape.onnx"
    _reshape_model(path)
    img = frames(2, 120, 160)
    with server_process("goprep", ("--workers", "2", "--model", str(path), "--metrics-port", "0")) as srv:
        c = _client(srv)
        md = c.get_model_metadata("goprep")
        assert md.platform == "onnxruntime_onnx" and [o.name for o in md.outputs] == ["y"]
        y = c.infer("goprep", [_frame_input(img[0])]).as_numpy("y")
        np.testing.assert_allclose(y.reshape(3, 224, 224), reference(img[0]), rtol=0, atol=1e-5)
        code, msg = _error(lambda: c.infer("goprep", [_frame_input(np.stack(img))]))
        assert code == "StatusCode.INTERNAL" and msg == "internal error while running the model (see the server's log)"
        assert _scrape(srv)[("goprep_serve_requests_total", (("code", "INTERNAL"),))] == 1
        c.close()


@pytest.mark.slow
def test_metrics_per_request():
    img = frames(1, 64, 64)[0]
    with server_process("goprep", ("--workers", "2", "--metrics-port", "0")) as srv:
        c = _client(srv)
        for _ in range(3):
            c.infer("goprep", [_frame_input(img)])
        c.infer("goprep", [_image_input([_encode(img, "JPEG")])])
        _error(lambda: c.infer("goprep", [_image_input([b"junk"])]))
        m = _scrape(srv)
        assert m[("goprep_serve_requests_total", (("code", "OK"),))] == 4
        assert m[("goprep_serve_requests_total", (("code", "INVALID_ARGUMENT"),))] == 1
        for stage in ("decode", "preprocess", "total"):
            assert m[("goprep_serve_request_duration_seconds_count", (("stage", stage),))] == 4, stage
            assert m[("goprep_serve_request_duration_seconds_sum", (("stage", stage),))] > 0
        assert ("goprep_serve_request_duration_seconds_count", (("stage", "model"),)) in m  # declared; no model here
        assert m[("goprep_serve_in_flight", ())] == 0
        assert m[("goprep_calls_total", (("device", "cpu"), ("pipeline", "imagenet_preprocess")))] >= 4  # engine metrics alongside
        c.close()


@pytest.mark.parametrize("argv,words", [
    (["--topk", "-1"], "--topk: -1 is out of range"),
    (["--port", "99999"], "--port: 99999 is out of range (0..65535"),
    (["--metrics-port", "99999"], "--metrics-port: 99999 is out of range"),
    (["--port", "http"], "--port: 'http' is not an integer"),
    (["--host", "not a host"], "--host: 'not a host' is not an IP address or host name"),
    (["--topk", "5"], "--topk needs --model"),
    (["--workers", "0"], "--workers: 0 is out of range"),
    (["--body-timeout", "0"], "--body-timeout: 0 must be a positive number"),
    (["--max-pixels", "0"], "--max-pixels: 0 is out of range"),
    (["--model-name", "a/b"], "--model-name must be"),
    (["--device", "gpu7"], "--device: 'gpu7' is not cpu, auto, cuda or cuda:N"),
    (["--grace", "nan"], "--grace: nan is out of range"),
    (["--model", "builtin", "--preprocess", "none"], "--model needs preprocessing"),
    # dynamic batching (tests/test_serve_batching.py)
    (["--max-queue-delay", "soon"], "--max-queue-delay: 'soon' is not a delay"),
    (["--max-queue-delay", "2min"], "is not a delay"),
    (["--max-queue-delay", "90s"], "over the largest delay"),
    (["--preferred-batch-size", "4"], "--preferred-batch-size needs --max-queue-delay"),
    (["--max-queue-delay", "1ms", "--max-queue", "0"], "--max-queue-delay needs --max-queue >= 1"),
    (["--max-queue-delay", "1ms", "--max-batch", "8", "--preferred-batch-size", "4", "16"],
     "--preferred-batch-size 16 is over --max-batch 8"),
    (["--max-batch-size", "0"], "--max-batch-size: 0 is out of range"),
])
def test_arguments_are_checked(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        server.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


@pytest.mark.parametrize("argv,words", [
    (["--preprocess", "nope"], "--preprocess must be one of python, opencv, goprep, none"),
    (["--preprocess", "NoSuch_Weights.X"], "torchvision has no weights called"),
    (["--model", "/nonexistent/m.onnx"], "--model /nonexistent/m.onnx: no such file"),
    (["--model", "builtin", "--topk", "2000"], "--topk 2000: the model's first output has shape [1, 1000]"),
])
def test_configuration_is_checked(argv, words, capsys):
    assert server.main(["--port", "0", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


@pytest.mark.parametrize("spec", ["ResNet50_Weights.IMAGENET1K_V2", "timm:resnet50"])
def test_preset_preprocessing(spec):
    # --preprocess with a preset: the converted pipeline's tensor, and for torchvision the weights' own
    # transforms() on the PIL image within float rounding.
    from goprep._serve.oip import Engine, Limits
    from goprep._serve.preprocess import make

    tv = pytest.importorskip("torchvision")
    eng = Engine("goprep", make(spec), None, 0, Limits())
    eng.warm()
    img = frames(1, 300, 400)[0]
    t = protocol.outputs(eng.infer(protocol.infer_request("goprep", "raw", img)))[protocol.TENSOR]
    if spec.startswith("timm:"):
        timm = pytest.importorskip("timm")
        import timm.data

        from goprep import transforms

        cfg = timm.data.resolve_data_config({}, pretrained_cfg=timm.models.get_pretrained_cfg("resnet50").to_dict())
        want = transforms.from_timm(cfg)(img)
        assert t.shape == (1, *cfg["input_size"])
        np.testing.assert_array_equal(t[0], want)
    else:
        want = tv.models.get_weight(spec).transforms()(PIL.fromarray(img)).numpy()
        assert t.shape == (1, 3, 224, 224)
        np.testing.assert_allclose(t[0], want, rtol=0, atol=1e-5)
    assert [m[0] for m in eng.out_meta] == [protocol.TENSOR]


@pytest.mark.slow
def test_serving_doc_client_example_runs(tmp_path):
    # docs/SERVING.md's tritonclient example, as written, against a server on a free port.
    import pathlib
    import re

    doc = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "SERVING.md").read_text()
    code = re.search(r"## A client with tritonclient\n\n<!-- no-run:[^\n]*-->\n```python\n(.*?)```", doc, re.S).group(1)
    jpg = tmp_path / "cat.jpg"
    jpg.write_bytes(_encode(frames(1, 200, 300)[0], "JPEG"))
    with server_process("goprep", ("--workers", "2", "--model", "builtin")) as srv:
        ns: dict = {}
        exec(compile(code.replace("127.0.0.1:8001", srv["target"]).replace('"cat.jpg"', repr(str(jpg))),
                     "SERVING.md", "exec"), ns)
        assert ns["result"].as_numpy("prob").shape == (1, 1000)
        ns["client"].close()


def test_hf_preset_from_a_config_file(tmp_path, capsys):
    # --preprocess hf:PATH: a Hugging Face preprocessor_config.json (or its folder) through from_hf.
    import json

    from goprep import transforms
    from goprep._serve.oip import Engine, Limits
    from goprep._serve.preprocess import make

    cfg = {"image_processor_type": "ViTImageProcessor", "do_resize": True, "size": {"height": 224, "width": 224},
           "resample": 2, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
           "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(cfg))
    eng = Engine("goprep", make(f"hf:{tmp_path}"), None, 0, Limits())
    eng.warm()
    img = frames(1, 300, 400)[0]
    t = protocol.outputs(eng.infer(protocol.infer_request("goprep", "raw", img)))[protocol.TENSOR]
    np.testing.assert_array_equal(t[0], transforms.from_hf(cfg)(img))
    assert server.main(["--port", "0", "--preprocess", f"hf:{tmp_path}/missing.json"]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "Traceback" not in err, err
