"""KServe v2 REST on ``python -m goprep serve --http-port`` (issue 41), servers in their own
processes on 127.0.0.1, always shut down: tritonclient.http in JSON and binary mode checked equal
to the in-process pipeline, every endpoint, malformed requests (400 naming the field), the size,
queue, connection and time limits (slowloris with raw sockets), statistics shared with gRPC, the
drain, and docs/SERVING.md's REST examples. The codec in process: tests/test_serve_rest_codec.py."""

import gzip
import http.client
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.importorskip("aiohttp")  # the serve extra: never skipped in CI
hc = pytest.importorskip("tritonclient.http")
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

from test_serve_triton import _jpeg  # noqa: E402

from goprep._serve import protocol, rest, rest_codec  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402
from goprep._serve.preprocess import reference  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATHS = ("Traceback", ".py", "File \"", "onnxruntime")  # nothing of the server's insides in an error
WAIT = 30.0  # seconds any bounded wait below gives a condition


def _frame_input(a, binary=True):
    i = hc.InferInput(protocol.FRAME, list(a.shape), "UINT8")
    i.set_data_from_numpy(np.ascontiguousarray(a), binary_data=binary)
    return i


def _image_input(files):
    i = hc.InferInput(protocol.IMAGE, [len(files)], "BYTES")
    i.set_data_from_numpy(np.array(files, dtype=np.object_))
    return i


def _hostport(srv):
    host, port = srv["http"].rsplit(":", 1)
    return host, int(port)


def _call(srv, method, path, body=None, headers=None, timeout=WAIT):
    """(status, headers, body) of one HTTP request on a connection of its own."""
    c = http.client.HTTPConnection(*_hostport(srv), timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def _error(status_body):
    """The message of an error reply, checked to be Triton's {"error": ...} with no server internals."""
    status, headers, body = status_body
    assert headers.get("Content-Type", "").startswith("application/json"), headers
    doc = json.loads(body)
    assert list(doc) == ["error"], doc
    for p in PATHS:
        assert p not in doc["error"], (p, doc)
    return status, doc["error"]


def _stats(c):
    (st,) = c.get_inference_statistics("goprep")["model_stats"]
    return st


# -- against a server -----------------------------------------------------------------------------

FRAME1 = {"name": "FRAME", "datatype": "UINT8", "shape": [1, 1, 1, 3], "data": [1, 2, 3]}  # one 1x1 frame as JSON


@pytest.mark.slow
def test_tritonclient_http_json_and_binary_equal_the_in_process_pipeline():
    img = frames(2, 240, 320)
    files = [_jpeg(im) for im in img]
    with server_process("goprep", ("--workers", "2", "--http-port", "0")) as srv:
        c = hc.InferenceServerClient(srv["http"])
        g = tc.InferenceServerClient(srv["target"])
        for binary in (True, False):
            out = [hc.InferRequestedOutput(protocol.TENSOR, binary_data=binary)]
            t = c.infer("goprep", [_frame_input(np.stack(img), binary)], outputs=out).as_numpy(protocol.TENSOR)
            assert t.shape == (2, 3, 224, 224) and t.dtype == np.float32
            for k in range(2):
                np.testing.assert_allclose(t[k], reference(img[k]), rtol=0, atol=1e-5)
        # encoded files in binary mode (tritonclient's BYTES cannot go as JSON text), gzip-compressed too
        for compression in (None, "gzip", "deflate"):
            r = c.infer("goprep", [_image_input(files)], request_compression_algorithm=compression)
            t = r.as_numpy(protocol.TENSOR)
            gi = tc.InferInput(protocol.IMAGE, [2], "BYTES")
            gi.set_data_from_numpy(np.array(files, dtype=np.object_))
            # the same server over gRPC: the same bytes
            np.testing.assert_array_equal(t, g.infer("goprep", [gi]).as_numpy(protocol.TENSOR))
            for k, f in enumerate(files):
                from goprep._serve.decode import pil_decode

                np.testing.assert_allclose(t[k], reference(pil_decode(f)), rtol=0, atol=1e-5)
        # a JSON client: files as base64 strings, the reply as JSON
        import base64

        doc = {"id": "j1", "inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1], "data": [
            base64.b64encode(files[0]).decode()], "parameters": {"content_type": "base64"}}]}
        status, headers, body = _call(srv, "POST", "/v2/models/goprep/infer", json.dumps(doc))
        assert status == 200 and headers["Content-Type"].startswith("application/json"), body[:300]
        rep = json.loads(body)
        assert rep["id"] == "j1" and rep["outputs"][0]["shape"] == [1, 3, 224, 224]
        np.testing.assert_array_equal(np.array(rep["outputs"][0]["data"], np.float32).reshape(1, 3, 224, 224), t[:1])
        st = _stats(c)
        assert st["inference_stats"]["success"]["count"] == 2 + 3 + 3 + 1 and st["inference_stats"]["fail"]["count"] == 0
        assert {b["batch_size"]: b["compute_infer"]["count"] for b in st["batch_stats"]} == {2: 8, 1: 1}
        c.close()
        g.close()


@pytest.mark.slow
def test_every_endpoint():
    with server_process("goprep", ("--workers", "2", "--http-port", "0", "--model", "builtin", "--topk", "5",
                                    "--max-batch", "8")) as srv:
        c = hc.InferenceServerClient(srv["http"])
        g = tc.InferenceServerClient(srv["target"])
        assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("goprep")
        assert c.is_model_ready("goprep", "1") and not c.is_model_ready("other") and not c.is_model_ready("goprep", "2")
        md = c.get_server_metadata()
        assert md["name"] == "goprep" and md["extensions"] == ["model_configuration", "statistics", "binary_tensor_data"]
        # model metadata and config: the gRPC server's messages, as JSON with numbers for the 64-bit fields
        for path in ("/v2/models/goprep", "/v2/models/goprep/versions/1"):
            status, _, body = _call(srv, "GET", path)
            assert status == 200 and json.loads(body) == {
                "name": "goprep", "versions": ["1"], "platform": "onnxruntime_onnx",
                "inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [-1, 1]},
                           {"name": "FRAME", "datatype": "UINT8", "shape": [-1, -1, -1, 3]}],
                "outputs": [{"name": "TOPK_INDEX", "datatype": "INT32", "shape": [-1, 5]},
                            {"name": "TOPK_SCORE", "datatype": "FP32", "shape": [-1, 5]}]}
            assert json.loads(body) == rest.message_json(g.get_model_metadata("goprep"))
        cfg = c.get_model_config("goprep")
        grpc_cfg = g.get_model_config("goprep").config
        assert cfg["max_batch_size"] == grpc_cfg.max_batch_size == 8
        assert [(i["name"], i["data_type"], i["dims"]) for i in cfg["input"]] == [
            ("IMAGE", "TYPE_STRING", [1]), ("FRAME", "TYPE_UINT8", [-1, -1, 3])]
        assert [(o["name"], o["dims"]) for o in cfg["output"]] == [("TOPK_INDEX", [5]), ("TOPK_SCORE", [5])]
        assert "dynamic_batching" not in cfg
        assert c.get_model_repository_index() == [{"name": "goprep", "version": "1", "state": "READY", "reason": ""}]
        status, _, body = _call(srv, "POST", "/v2/repository/index", json.dumps({"ready": True}))
        assert status == 200 and len(json.loads(body)) == 1
        assert _error(_call(srv, "POST", "/v2/repository/index", '{"ready": 1}'))[0] == 400
        assert [m["name"] for m in c.get_inference_statistics()["model_stats"]] == ["goprep"]  # /v2/models/stats
        for path in ("/v2/models/other", "/v2/models/other/config", "/v2/models/goprep/versions/2/stats",
                     "/v2/models/other/ready"):
            status, msg = _error(_call(srv, "GET", path))
            assert status == 404 and "serves model 'goprep'" in msg, (path, msg)
        status, msg = _error(_call(srv, "GET", "/v3/anything"))
        assert status == 404 and "no endpoint" in msg
        status, headers, body = _call(srv, "GET", "/v2/models/goprep/infer")
        assert status == 405 and headers["Allow"] == "POST", body
        status, msg = _error(_call(srv, "POST", "/v2/models/other/infer", json.dumps({"inputs": [FRAME1]})))
        assert status == 404 and "other" in msg
        # the model's reply, with and without named outputs, equals gRPC's for the same frame
        f = frames(1, 64, 80)[0]
        gi = tc.InferInput(protocol.FRAME, list(f.shape), "UINT8")
        gi.set_data_from_numpy(f)
        want = g.infer("goprep", [gi])
        r = c.infer("goprep", [_frame_input(f)], outputs=[hc.InferRequestedOutput("TOPK_SCORE", binary_data=False)])
        assert [o["name"] for o in r.get_response()["outputs"]] == ["TOPK_SCORE"]
        np.testing.assert_array_equal(r.as_numpy("TOPK_SCORE"), want.as_numpy("TOPK_SCORE"))
        np.testing.assert_array_equal(c.infer("goprep", [_frame_input(f)]).as_numpy("TOPK_INDEX"),
                                      want.as_numpy("TOPK_INDEX"))
        c.close()
        g.close()


def _frame_body(h=8, w=8, n=1):
    """A binary inference request of n zero frames: (body, headers)."""
    a = np.zeros((n, h, w, 3), np.uint8)
    head = json.dumps({"inputs": [{"name": "FRAME", "datatype": "UINT8", "shape": list(a.shape),
                                   "parameters": {"binary_data_size": a.nbytes}}]}).encode()
    return head + a.tobytes(), {rest_codec.HEADER_LENGTH: str(len(head))}


@pytest.mark.slow
def test_bad_requests_limits_and_status_codes():
    j = _jpeg(frames(1, 32, 32)[0])
    with server_process("goprep", ("--workers", "1", "--http-port", "0", "--max-request-mb", "1", "--max-batch", "4",
                                   "--max-pixels", "10000", "--metrics-port", "0")) as srv:
        url = "/v2/models/goprep/infer"
        # malformed JSON and binary headers: 400 naming the field
        for body, headers, words in [
            (b'{"inputs": [', {}, "not valid JSON"),
            (json.dumps({"inputs": [{"name": "FRAME", "shape": [1], "datatype": "UINT8", "data": [1, 2]}]}), {},
             "inputs[0].data has 2 elements"),
            (_frame_body()[0], {rest_codec.HEADER_LENGTH: "-5"}, "Inference-Header-Content-Length"),
            (_frame_body()[0], {}, "not valid JSON"),  # binary data without the header
            (_frame_body()[0][:-1], _frame_body()[1], "inputs[0].parameters.binary_data_size 192 runs past"),
            (json.dumps({"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1], "data": ["not a jpeg"]}]}), {},
             "image[0]"),
            (json.dumps({"inputs": [{"name": "FRAME", "datatype": "UINT8", "shape": [2, 2, 2], "data": [0] * 8}]}), {},
             "input FRAME must be UINT8 of shape"),
            (b"not gzip at all", {"Content-Encoding": "gzip"}, "the request body cannot be read as sent"),
            (b"{}", {"Content-Encoding": "br"}, "Content-Encoding 'br' is not taken"),
        ]:
            status, msg = _error(_call(srv, "POST", url, body, headers))
            assert status == 400 and words in msg, (status, msg)
        # limits: pixels 400 (INVALID_ARGUMENT, as gRPC), batch 400 (Triton's), body size 413
        status, msg = _error(_call(srv, "POST", url, *_frame_body(200, 200)))
        assert status == 400 and "limit of 10000 pixels" in msg
        status, msg = _error(_call(srv, "POST", url, *_frame_body(n=5)))
        assert status == 400 and "at most 4 images" in msg
        big = b"{" + b" " * (1 << 20) + b"}"
        status, msg = _error(_call(srv, "POST", url, big))
        assert status == 413 and "--max-request-mb 1" in msg
        status, msg = _error(_call(srv, "POST", url, iter([big[:1000], big[1000:]])))  # chunked: no Content-Length
        assert status == 413
        bomb = gzip.compress(b" " * (8 << 20))  # 8 MiB of JSON whitespace in 8 KiB
        status, msg = _error(_call(srv, "POST", url, bomb, {"Content-Encoding": "gzip"}))
        assert status == 413 and len(bomb) < 1 << 20
        # a good request still works on the same server, JPEG files as base64 JSON
        import base64

        doc = {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1], "data": [base64.b64encode(j).decode()],
                           "parameters": {"content_type": "base64"}}], "parameters": {"binary_data_output": True}}
        status, headers, body = _call(srv, "POST", url, json.dumps(doc))
        assert status == 200 and headers["Content-Type"] == "application/octet-stream"
        n = int(headers[rest_codec.HEADER_LENGTH])
        head = json.loads(body[:n])
        assert head["outputs"][0]["parameters"]["binary_data_size"] == len(body) - n == 3 * 224 * 224 * 4
        # the requests of this model that failed are counted; the malformed ones never became requests
        st = _stats(hc.InferenceServerClient(srv["http"]))
        assert st["inference_stats"]["success"]["count"] == 1 and st["inference_stats"]["fail"]["count"] == 4
        m = _scrape(srv)
        assert m[("goprep_serve_requests_total", (("code", "INVALID_ARGUMENT"),))] == 10  # 7 unreadable, 3 bad
        assert m[("goprep_serve_requests_total", (("code", "RESOURCE_EXHAUSTED"),))] == 4
        assert m[("goprep_serve_rejected_total", (("reason", "request_size"),))] == 3


def _scrape(srv):
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(f"http://{srv['metrics']}/metrics", timeout=10).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for fam in text_string_to_metric_families(text)
            for s in fam.samples}


def _until(cond, what, limit=WAIT):
    """Poll ``cond()`` until true, at most ``limit`` seconds (a condition, not a sleep, synchronises)."""
    t_end = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < t_end, f"{what} did not happen within {limit} s"
        time.sleep(0.05)


@pytest.mark.slow
def test_queue_limit_is_503_and_drain():
    # One worker, no queue, each request 5 s: of three sent at once, one runs, two get 503 with
    # Retry-After (Triton's answer to a full queue); then SIGTERM: the running one finishes, new
    # ones get 503, readiness fails, liveness holds, and the server exits 0.
    img = frames(1, 32, 32)[0]
    with server_process("goprep", ("--workers", "1", "--max-queue", "0", "--test-delay", "5", "--http-port", "0",
                                   "--metrics-port", "0", "--grace", "20")) as srv:
        body, headers = _frame_body(32, 32)
        got = []

        def send():
            got.append(_call(srv, "POST", "/v2/models/goprep/infer", body, headers))

        ts = [threading.Thread(target=send) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(WAIT)
        codes = sorted(s for s, _, _ in got)
        assert codes == [200, 503, 503], codes
        assert all(h.get("Retry-After") == "1" and b"--max-queue" in b for s, h, b in got if s == 503)
        assert _scrape(srv)[("goprep_serve_rejected_total", (("reason", "queue"),))] == 2
        # drain
        t = threading.Thread(target=send)
        got.clear()
        t.start()
        _until(lambda: _scrape(srv)[("goprep_serve_in_flight", ())] == 1, "the request reaching the server")
        os.kill(srv["pid"], signal.SIGTERM)
        _until(lambda: _call(srv, "GET", "/v2/health/ready")[0] == 400, "readiness failing")
        assert _call(srv, "GET", "/v2/health/live")[0] == 200
        status, msg = _error(_call(srv, "POST", "/v2/models/goprep/infer", body, headers))
        assert status == 503 and "shutting down" in msg
        t.join(WAIT)
        (first,) = got
        assert first[0] == 200, first
        r = hc.InferResult.from_response_body(first[2])  # JSON: the request asked for no binary output
        np.testing.assert_allclose(r.as_numpy("TENSOR")[0], reference(np.zeros((32, 32, 3), np.uint8)), atol=1e-5)
        assert srv["proc"].wait(WAIT) == 0


def _open(srv):
    return socket.create_connection(_hostport(srv), timeout=WAIT)


_RECEIVED = {}


def _received(s):
    """(whether the server closed ``s``, everything it sent on ``s`` so far), without blocking."""
    got = _RECEIVED.setdefault(s.fileno(), [False, b""])
    s.settimeout(0)
    try:
        while not got[0]:
            chunk = s.recv(65536)
            got[1] += chunk
            got[0] = not chunk
    except BlockingIOError:
        pass
    except ConnectionResetError:
        got[0] = True
    return got[0], got[1]


@pytest.mark.slow
def test_slowloris_stalled_headers_and_bodies_do_not_block_others():
    # 20 connections stall in their headers, 5 trickle a header byte at a time, 5 send headers and a
    # part of their body; meanwhile other clients are served, and each stalled connection is cut off
    # once --body-timeout has passed (a stalled body with 408).
    timeout = 8.0
    _RECEIVED.clear()
    with server_process("goprep", ("--workers", "2", "--http-port", "0", "--body-timeout", str(timeout),
                                   "--metrics-port", "0")) as srv:
        body, headers = _frame_body(16, 16)
        heads, bodies = [], []
        for _ in range(20):
            s = _open(srv)
            s.sendall(b"POST /v2/models/goprep/infer HTTP/1.1\r\nHost: x\r\n")
            heads.append(s)
        for _ in range(5):
            s = _open(srv)
            s.sendall(b"POST /v2/models/goprep/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"in")
            bodies.append(s)
        t0 = time.monotonic()
        trickles = [_open(srv) for _ in range(5)]
        stop = threading.Event()
        cut = {}

        def trickle():
            line = b"POST /v2/models/goprep/infer HTTP/1.1\r\nX-Slow: " + b"a" * 4000
            for k in range(len(line)):
                for i, s in enumerate(trickles):
                    if i in cut:
                        continue
                    try:
                        s.sendall(line[k : k + 1])
                    except OSError:
                        cut[i] = time.monotonic()
                if len(cut) == len(trickles) or stop.wait(0.05):
                    return

        th = threading.Thread(target=trickle)
        th.start()
        try:
            _until(lambda: _scrape(srv)[("goprep_serve_in_flight", ())] == 5, "the stalled bodies reaching the server")
            c = hc.InferenceServerClient(srv["http"], connection_timeout=WAIT, network_timeout=WAIT)
            for _ in range(5):
                assert c.infer("goprep", [_frame_input(np.zeros((16, 16, 3), np.uint8))]).as_numpy("TENSOR").shape == (
                    1, 3, 224, 224)
            assert _call(srv, "POST", "/v2/models/goprep/infer", body, headers)[0] == 200
            # those were served while every stalled connection was still open
            assert not any(_received(s)[0] for s in heads + bodies) and not cut, time.monotonic() - t0
            _until(lambda: all(_received(s)[0] for s in heads + bodies) and len(cut) == len(trickles),
                   "the stalled connections being cut off", timeout + WAIT)
            assert all(v - t0 >= timeout * 0.9 for v in cut.values()), cut  # cut by the timeout, not sooner
            assert not any(_received(s)[1] for s in heads)  # stalled headers: closed without a reply
            for s in bodies:
                reply = _received(s)[1]
                assert reply.startswith(b"HTTP/1.1 408") and f"did not arrive within {timeout:g} s".encode() in reply
            m = _scrape(srv)
            assert m[("goprep_serve_rejected_total", (("reason", "body_timeout"),))] == 5
            assert m[("goprep_serve_in_flight", ())] == 0
            assert c.is_server_ready()
            c.close()
        finally:
            stop.set()
            th.join(WAIT)
            for s in heads + bodies + trickles:
                s.close()


def _served(srv):
    """Whether a new connection is served (False while the server refuses it)."""
    try:
        return _call(srv, "GET", "/v2", timeout=5)[0] == 200
    except (ConnectionError, http.client.HTTPException):
        return False


@pytest.mark.slow
def test_open_request_cap():
    # two requests stalled in their bodies hold the two open-request slots: a third gets 503 at once,
    # the health probes still answer; once the stalled clients go, requests are served again
    with server_process("goprep", ("--workers", "2", "--http-port", "0", "--max-concurrent-rpcs", "2",
                                   "--body-timeout", "60", "--metrics-port", "0")) as srv:
        stalled = []
        for _ in range(2):
            s = _open(srv)
            s.sendall(b"POST /v2/models/goprep/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            stalled.append(s)
        _until(lambda: _scrape(srv)[("goprep_serve_in_flight", ())] == 2, "the stalled requests reaching the server")
        status, headers, body = _call(srv, "GET", "/v2")
        assert status == 503 and headers["Retry-After"] == "1" and b"--max-concurrent-rpcs" in body, (status, body)
        assert _call(srv, "GET", "/v2/health/live")[0] == _call(srv, "GET", "/v2/health/ready")[0] == 200  # probes
        assert _scrape(srv)[("goprep_serve_rejected_total", (("reason", "concurrency"),))] == 1
        for s in stalled:
            s.close()
        _until(lambda: _served(srv), "the slots being free once the stalled clients left")


@pytest.mark.slow
def test_connection_cap():
    # three keep-alive connections, each having been served, hold the connection slots: a fourth is
    # closed at once, and a new one is served again once one of the three has gone
    with server_process("goprep", ("--workers", "2", "--http-port", "0", "--max-connections", "3",
                                   "--body-timeout", "60")) as srv:
        conns = [http.client.HTTPConnection(*_hostport(srv), timeout=WAIT) for _ in range(3)]
        for c in conns:
            c.request("GET", "/v2/health/live")
            assert c.getresponse().read() == b""
        s = _open(srv)
        _until(lambda: _received(s)[0], "the fourth connection being closed")
        assert _received(s)[1] == b""
        s.close()
        conns[0].close()
        _until(lambda: _served(srv), "a new connection being served once one closed")
        for c in conns[1:]:
            c.close()


@pytest.mark.slow
def test_batches_mix_protocols_and_stats_show_them():
    # Dynamic batching over both protocols at once: two gRPC and two REST requests of one frame each
    # form one batch of 4 (the preferred size; the 10 s delay is never waited out), one execution.
    img = frames(4, 48, 64)
    with server_process("goprep", ("--workers", "1", "--http-port", "0", "--max-queue-delay", "10s",
                                   "--max-batch", "8", "--preferred-batch-size", "4")) as srv:
        c = hc.InferenceServerClient(srv["http"], concurrency=2)
        g = tc.InferenceServerClient(srv["target"])
        cfg = c.get_model_config("goprep")
        db = cfg["dynamic_batching"]
        assert db["preferred_batch_size"] == [4] and db["max_queue_delay_microseconds"] == 10_000_000
        results = {}

        def grpc_call(k):
            gi = tc.InferInput(protocol.FRAME, list(img[k].shape), "UINT8")
            gi.set_data_from_numpy(img[k])
            results[k] = g.infer("goprep", [gi], client_timeout=WAIT).as_numpy("TENSOR")

        ts = [threading.Thread(target=grpc_call, args=(k,)) for k in (0, 1)]
        for t in ts:
            t.start()
        pending = [c.async_infer("goprep", [_frame_input(img[k])]) for k in (2, 3)]
        for k, p in zip((2, 3), pending):
            results[k] = p.get_result(timeout=WAIT).as_numpy("TENSOR")
        for t in ts:
            t.join(WAIT)
        for k in range(4):
            np.testing.assert_allclose(results[k][0], reference(img[k]), rtol=0, atol=1e-5)
        st = _stats(c)
        assert st["execution_count"] == 1 and st["inference_count"] == 4
        assert st["inference_stats"]["success"]["count"] == 4
        assert [(b["batch_size"], b["compute_infer"]["count"]) for b in st["batch_stats"]] == [(4, 1)]
        c.close()
        g.close()


def _doc_block(title, lang):
    doc = (ROOT / "docs" / "SERVING.md").read_text()
    section = doc.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


@pytest.mark.slow
def test_serving_doc_rest_examples_run(tmp_path):
    # docs/SERVING.md's curl commands and tritonclient.http example, as written, against a server on
    # a free port (the doc's 8000), with cat.jpg a real JPEG.
    (tmp_path / "cat.jpg").write_bytes(_jpeg(frames(1, 200, 300)[0]))
    with server_process("goprep", ("--workers", "2", "--http-port", "0", "--model", "builtin")) as srv:
        (sh,) = _doc_block("REST (KServe v2)", "text")[1:2]
        script = sh.replace("127.0.0.1:8000", srv["http"]).replace("localhost:8000", srv["http"])
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        replies = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        assert replies and replies[-1]["outputs"][0]["shape"] == [1, 1000], r.stdout[:2000]
        (code,) = _doc_block("REST (KServe v2)", "python")
        ns: dict = {}
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            exec(compile(code.replace("127.0.0.1:8000", srv["http"]), "SERVING.md", "exec"), ns)
        finally:
            os.chdir(cwd)
        assert ns["result"].as_numpy("prob").shape == (1, 1000)
        ns["client"].close()


@pytest.mark.slow
def test_serve_bench_over_rest(tmp_path):
    # serve-bench --protocol http: every server also on --http-port, the load generator's aiohttp
    # client sending binary tensor data, every reply checked (the model's top-k too), over REST only.
    import sys

    out = tmp_path / "serve.json"
    cmd = [sys.executable, "-m", "goprep", "serve-bench", "--preprocess", "none,goprep", "--payloads", "jpeg",
           "--concurrency", "2", "--duration", "0.5", "--warmup", "0.3", "--workers", "2", "--rounds", "2",
           "--model", "--protocol", "http", "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "server floor, jpeg (REST + decoding" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["machine"]["settings"]["protocol"] == "http" and "aiohttp" in doc["machine"]["settings"]["client"]
    assert [(x["preprocess"], x["errors"]) for x in doc["results"]] == [("none", 0), ("goprep", 0)]
    assert all(x["qps"] > 0 for x in doc["results"])
    r = subprocess.run(cmd[:-2] + ["--client", "threads"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--protocol http needs --client aio" in r.stderr
