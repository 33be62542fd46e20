"""Triton's ``perf_analyzer`` run unchanged against one ``python -m goprep serve --http-port`` over
both protocols (issue 41): ``-i http`` (KServe v2 REST, its binary tensor data) and ``-i grpc``, on
JPEG files and raw-frame batches; every request it sent answered OK and seen in the server's
statistics. The server in its own process on 127.0.0.1, always shut down; each perf_analyzer run is
a few short windows under a subprocess timeout. (tests/test_serve_triton.py has the gRPC-only runs.)"""

import io
import json
import re
import subprocess

import pytest

pytest.importorskip("aiohttp")  # the serve extra: never skipped in CI
hc = pytest.importorskip("tritonclient.http")
PIL = pytest.importorskip("PIL.Image")

from goprep._serve import perfanalyzer  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402


def _jpeg(img):
    buf = io.BytesIO()
    PIL.fromarray(img).save(buf, "JPEG")
    return buf.getvalue()


def _run(url, protocol, data, tmp_path, batch):
    """One bounded perf_analyzer run; the requests its client counted, after checking that the
    server's side it printed (read from ModelStatistics over the same protocol) is consistent."""
    path = tmp_path / f"input-{protocol}-{batch}.json"
    path.write_text(json.dumps(data))
    cmd = perfanalyzer.command(url, str(path), batch=batch, concurrency=2, protocol=protocol)
    assert cmd[cmd.index("-i") + 1] == protocol
    r = subprocess.run(cmd, env=perfanalyzer.env(), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    client = int(re.search(r"Client:\s+Request count: (\d+)", r.stdout).group(1))
    server = re.search(r"Server:\s+Inference count: (\d+)\s+Execution count: (\d+)\s+Successful request count: (\d+)",
                       r.stdout)
    assert server, r.stdout  # the statistics were read: ServerMetadata lists "statistics" over this protocol too
    inferences, executions, ok = map(int, server.groups())
    assert client > 0 and executions == ok > 0 and inferences == batch * ok
    return client


@pytest.mark.slow
def test_perf_analyzer_runs_over_http_and_grpc(tmp_path):
    from test_serve_triton import _perf_analyzer_or_fail

    _perf_analyzer_or_fail()
    img = frames(2, 480, 640)
    files = perfanalyzer.input_data(files=[_jpeg(im) for im in img])
    with server_process("goprep", ("--workers", "2", "--http-port", "0")) as srv:
        sent = _run(srv["http"], "http", files, tmp_path, batch=1)
        sent += _run(srv["http"], "http", perfanalyzer.input_data(frames=img), tmp_path, batch=2)
        sent += _run(srv["target"], "grpc", files, tmp_path, batch=1)
        c = hc.InferenceServerClient(srv["http"])
        (st,) = c.get_inference_statistics("goprep")["model_stats"]
        s = st["inference_stats"]
        # every request perf_analyzer sent, over either protocol, was answered OK (its windows count a part)
        assert s["fail"]["count"] == 0 and s["success"]["count"] >= sent
        assert {b["batch_size"] for b in st["batch_stats"]} == {1, 2}
        c.close()


def test_command_names_the_protocol():
    assert "http" in perfanalyzer.command("127.0.0.1:8000", "in.json", protocol="http")
    with pytest.raises(ValueError, match="grpc, http"):
        perfanalyzer.command("127.0.0.1:8000", "in.json", protocol="rest")
