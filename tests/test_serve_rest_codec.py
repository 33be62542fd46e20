"""The KServe v2 REST request and reply codec of ``goprep serve --http-port`` in process (issue 41):
tritonclient.http's own request bodies decoded, replies read by its own reader, every malformed
field named, Triton's HTTP status mapping, the JSON of the protocol's messages, and --http-port's
checks. The server itself: tests/test_serve_rest.py."""

import json

import numpy as np
import pytest

pytest.importorskip("aiohttp")  # the serve extra: never skipped in CI
hc = pytest.importorskip("tritonclient.http")

from test_serve_rest import FRAME1, _frame_input, _image_input  # noqa: E402

from goprep._serve import logfilter, protocol, rest, rest_codec, server  # noqa: E402
from goprep._serve.errors import BadRequest  # noqa: E402


def test_tritonclient_binary_request_decodes_to_the_tensors_it_sent():
    f = np.arange(2 * 5 * 4 * 3, dtype=np.uint8).reshape(2, 5, 4, 3)
    for binary in (True, False):
        body, n = hc.InferenceServerClient.generate_request_body(
            [_frame_input(f, binary)], outputs=[hc.InferRequestedOutput("TENSOR", binary_data=not binary)],
            request_id="r1")
        req = rest_codec.decode_request(body, None if n is None else str(n), "goprep", "")
        (t,) = req.inputs
        assert (t.name, t.datatype, t.shape, req.id) == ("FRAME", "UINT8", [2, 5, 4, 3], "r1")
        assert bytes(req.raw_input_contents[0]) == f.tobytes()
        assert req.binary == {"TENSOR": not binary} and [o.name for o in req.outputs] == ["TENSOR"]
    files = [b"\xff\xd8jpeg", b"\x89PNG"]
    body, n = hc.InferenceServerClient.generate_request_body([_image_input(files)])
    req = rest_codec.decode_request(body, str(n), "goprep", "1")
    assert [bytes(b) for b in protocol.unpack_bytes(req.raw_input_contents[0], 2)] == files
    assert req.binary_default  # no outputs named: tritonclient asks for binary_data_output


def test_reply_encodes_as_tritonclient_reads_it():
    pb = protocol.pb()
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[7], [9]], np.int32)
    rep = pb.ModelInferResponse(model_name="goprep", model_version="1", id="x")
    for name, arr in (("A", a), ("B", b)):
        rep.outputs.add(name=name, datatype=protocol.datatype(arr.dtype), shape=list(arr.shape))
        rep.raw_output_contents.append(arr.tobytes())
    req = rest_codec.RestRequest("goprep", "", "x", [], [], [], {"B": False}, True)  # A binary, B as JSON
    body, n = rest_codec.encode_reply(rep, req)
    head = json.loads(body[:n])
    assert head["id"] == "x" and head["outputs"][0]["parameters"] == {"binary_data_size": a.nbytes}
    assert head["outputs"][1]["data"] == [7, 9] and len(body) == n + a.nbytes
    r = hc.InferResult.from_response_body(body, header_length=n)
    np.testing.assert_array_equal(r.as_numpy("A"), a)
    np.testing.assert_array_equal(r.as_numpy("B"), b)
    body, n = rest_codec.encode_reply(rep, rest_codec.RestRequest("goprep", "", "", [], [], [], {}, False))
    assert n is None  # JSON alone
    np.testing.assert_array_equal(hc.InferResult.from_response_body(body).as_numpy("A"), a)


@pytest.mark.parametrize("body,header,field", [
    (b"{nope", None, "not valid JSON"),
    (b"[1, 2]", None, "must be a JSON object, got an array"),
    (b"\xff\xfe", None, "not UTF-8"),
    (b"[" * 100000, None, "the inference request"),
    (json.dumps({"inputs": []}).encode(), None, "inputs must be a non-empty array"),
    (json.dumps({}).encode(), None, "the request has no inputs"),
    (json.dumps({"id": 3, "inputs": [FRAME1]}).encode(), None, "id must be a string"),
    (json.dumps({"inputs": [FRAME1], "parameters": []}).encode(), None, "request.parameters must be an object"),
    (json.dumps({"inputs": [FRAME1], "parameters": {"binary_data_output": "yes"}}).encode(), None,
     "request.parameters.binary_data_output must be true or false"),
    (json.dumps({"inputs": [{**FRAME1, "shape": [1, -1, 1, 3]}]}).encode(), None, "inputs[0].shape"),
    (json.dumps({"inputs": [{**FRAME1, "shape": "1x3"}]}).encode(), None, "inputs[0].shape"),
    (json.dumps({"inputs": [{**FRAME1, "datatype": "UINT7"}]}).encode(), None, "inputs[0].datatype"),
    (json.dumps({"inputs": [{**FRAME1, "name": 5}]}).encode(), None, "inputs[0].name"),
    (json.dumps({"inputs": [FRAME1, 7]}).encode(), None, "inputs[1] must be an object"),
    (json.dumps({"inputs": [{**FRAME1, "data": [1, 2]}]}).encode(), None, "inputs[0].data has 2 elements"),
    (json.dumps({"inputs": [{**FRAME1, "data": [1, 2, 300]}]}).encode(), None, "inputs[0].data holds a value outside"),
    (json.dumps({"inputs": [{**FRAME1, "data": [1, 2, 3.5]}]}).encode(), None, "inputs[0].data must hold integers"),
    (json.dumps({"inputs": [{**FRAME1, "data": [1, 2, "3"]}]}).encode(), None, "inputs[0].data must hold numbers"),
    (json.dumps({"inputs": [{k: v for k, v in FRAME1.items() if k != "data"}]}).encode(), None,
     "inputs[0] has neither data nor parameters.binary_data_size"),
    (json.dumps({"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1], "data": [5]}]}).encode(), None,
     "inputs[0].data[0] must be a string"),
    (json.dumps({"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [1], "data": ["%%"],
                             "parameters": {"content_type": "base64"}}]}).encode(), None, "inputs[0].data[0] is not base64"),
    (json.dumps({"inputs": [{**FRAME1, "parameters": {"binary_data_size": -1}}]}).encode(), None,
     "inputs[0].parameters.binary_data_size must be a non-negative integer"),
    (json.dumps({"inputs": [{"name": "FRAME", "datatype": "UINT8", "shape": [1, 1, 1, 3],
                             "parameters": {"binary_data_size": 3}}]}).encode(), None,
     "inputs[0].parameters.binary_data_size 3 runs past the end of the body"),
    (json.dumps({"inputs": [FRAME1], "outputs": [{"name": ""}]}).encode(), None, "outputs[0].name"),
    (json.dumps({"inputs": [FRAME1], "outputs": [{"name": "T", "parameters": {"binary_data": 1}}]}).encode(), None,
     "outputs[0].parameters.binary_data must be true or false"),
    (json.dumps({"inputs": [FRAME1]}).encode(), "abc", "Inference-Header-Content-Length"),
    (json.dumps({"inputs": [FRAME1]}).encode(), "100000", "Inference-Header-Content-Length"),
    (json.dumps({"inputs": [FRAME1]}).encode() + b"xyz", "JSONLEN", "the body has 3 bytes after the JSON"),
])
def test_malformed_requests_name_the_field(body, header, field):
    if header == "JSONLEN":
        header = str(len(body) - 3)
    with pytest.raises(BadRequest) as e:
        rest_codec.decode_request(body, header, "goprep", "")
    assert field in str(e.value), str(e.value)


def test_base64_and_text_bytes_elements():
    doc = {"inputs": [{"name": "IMAGE", "datatype": "BYTES", "shape": [2], "data": ["aGk=", "/9j/"],
                       "parameters": {"content_type": "base64"}}]}
    req = rest_codec.decode_request(json.dumps(doc).encode(), None, "goprep", "")
    assert req.inputs[0].contents.bytes_contents == [b"hi", b"\xff\xd8\xff"] and req.raw_input_contents == []
    doc["inputs"][0]["parameters"] = {}
    req = rest_codec.decode_request(json.dumps(doc).encode(), None, "goprep", "")
    assert req.inputs[0].contents.bytes_contents == [b"aGk=", b"/9j/"]


def test_http_status_is_tritons_mapping():
    assert rest.http_status("OK") == 200
    assert rest.http_status("INVALID_ARGUMENT") == rest.http_status("INVALID_ARGUMENT", "pixels") == 400
    assert rest.http_status("RESOURCE_EXHAUSTED", "batch") == 400  # Triton: batch over max_batch_size is INVALID_ARG
    assert rest.http_status("RESOURCE_EXHAUSTED", "queue") == 503  # Triton: a full queue is UNAVAILABLE
    assert rest.http_status("RESOURCE_EXHAUSTED", "request_size") == 413
    assert rest.http_status("NOT_FOUND") == 404 and rest.http_status("UNAVAILABLE") == 503
    assert rest.http_status("DEADLINE_EXCEEDED") == 408 and rest.http_status("INTERNAL") == 500


def test_message_json_writes_64_bit_integers_as_numbers():
    pb = protocol.pb()
    st = pb.ModelStatistics(name="m", version="1", inference_count=2**40, execution_count=3)
    st.inference_stats.success.CopyFrom(pb.StatisticDuration(count=1, ns=2**41))
    doc = rest.message_json(st)
    assert doc["inference_count"] == 2**40 and doc["inference_stats"]["success"] == {"count": 1, "ns": 2**41}
    assert doc["batch_stats"] == [] and doc["last_inference"] == 0  # repeated and scalar fields: always there
    # a sub-message only when set (perf_analyzer takes a config's sequence_batching, present, for a sequence model)
    assert "fail" not in doc["inference_stats"]


@pytest.mark.parametrize("argv,words", [
    (["--http-port", "70000"], "--http-port: 70000 is out of range"),
    (["--port", "8001", "--http-port", "8001"], "--http-port must differ from --port"),
    (["--metrics-port", "9000", "--http-port", "9000"], "--http-port must differ from --port and --metrics-port"),
])
def test_http_port_is_checked(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        server.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err


def test_client_side_request_and_reply_round_trip():
    # what serve-bench's load generator sends and reads: a gRPC request as a binary REST body, decoded
    # by the server's codec to the same tensor; a reply, JSON or binary, read back to the same arrays
    f = np.arange(2 * 4 * 5 * 3, dtype=np.uint8).reshape(2, 4, 5, 3)
    body, n = rest_codec.encode_request(protocol.infer_request("goprep", "raw", f))
    req = rest_codec.decode_request(body, str(n), "goprep", "")
    assert req.binary_default and req.inputs[0].shape == [2, 4, 5, 3]
    assert bytes(req.raw_input_contents[0]) == f.tobytes()
    pb = protocol.pb()
    rep = pb.ModelInferResponse(model_name="goprep", model_version="1")
    a = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    rep.outputs.add(name="A", datatype="FP32", shape=[2, 3])
    rep.raw_output_contents.append(a.tobytes())
    for binary in (False, True):
        body, n = rest_codec.encode_reply(rep, rest_codec.RestRequest("goprep", "", "", [], [], [], {}, binary))
        got = rest_codec.decode_reply(body, None if n is None else str(n))
        np.testing.assert_array_equal(got["A"], a)
    with pytest.raises(ValueError, match="runs past the end"):
        rest_codec.decode_reply(body[:-4], str(n))  # the binary reply, cut short


def test_protocol_errors_are_logged_once_a_second_without_traceback():
    # aiohttp logs a malformed HTTP message (its 400) with a traceback: a client sending them must not
    # flood the server's log
    import logging

    f = logfilter.OncePerSecond()

    def record():
        try:
            raise ValueError("400, message:\n  Invalid character in chunk size")
        except ValueError:
            import sys

            return logging.LogRecord("goprep.serve.http", logging.ERROR, __file__, 1, "Error handling request", (),
                                     sys.exc_info())

    first = record()
    assert f.filter(first) and first.exc_info is None and first.levelno == logging.WARNING
    assert "Invalid character in chunk size" in first.getMessage()
    assert not any(f.filter(record()) for _ in range(50))  # within the second: dropped, counted
    assert f.dropped == 50


def test_a_grpc_reply_to_a_call_already_ended_is_one_info_line():
    # grpc.aio logs ExecuteBatchError with a traceback at ERROR when a cancelled call's reply cannot be
    # sent (seen in CI's soak): one INFO line without traceback; grpc's other records pass unchanged
    import logging
    import sys

    f = logfilter.ReplyNotSent()

    def record(msg):
        try:
            raise RuntimeError("Failed \"execute_batch\": (SendInitialMetadataOperation, SendMessageOperation)")
        except RuntimeError:
            return logging.LogRecord("grpc._cython.cygrpc", logging.ERROR, __file__, 1, msg, ("/m/ModelInfer",),
                                     sys.exc_info())

    gone = record(logfilter.REPLY_NOT_SENT + " [%s]")
    assert f.filter(gone) and gone.exc_info is None and gone.levelno == logging.INFO
    assert "client cancelled" in gone.getMessage() and "/m/ModelInfer" in gone.getMessage()
    assert not f.filter(record(logfilter.REPLY_NOT_SENT + " [%s]")) and f.dropped == 1
    other = record("Unexpected [%s] error")
    assert f.filter(other) and other.levelno == logging.ERROR and other.exc_info is not None


def test_a_client_gone_mid_body_is_cancelled_not_a_failure(caplog):
    """A REST client that closes its socket mid-body (aiohttp: ConnectionResetError from the body read)
    is CANCELLED (HTTP 499, read by nobody): not logged as a failed request, not counted as OK."""
    import asyncio
    import logging

    from goprep._serve.oip import Engine, Limits
    from goprep._serve.preprocess import make
    from goprep._serve.service import Service

    svc = Service(Engine("goprep", make("goprep"), None, 0, Limits()), 1)

    async def read():
        raise ConnectionResetError("Connection lost")

    try:
        with caplog.at_level(logging.ERROR):
            out = asyncio.run(svc.infer(read))
    finally:
        svc.pool.shutdown()
    assert (out.code, rest.http_status(out.code)) == ("CANCELLED", 499), out
    assert "closed its connection" in out.message
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
