"""Triton's ``perf_analyzer`` run unchanged against one ``python -m goprep serve --http-port`` over
both protocols (issue 41): ``-i http`` (KServe v2 REST, its binary tensor data) and ``-i grpc``, on
JPEG files and raw-frame batches; every request it sent answered OK and seen in the server's
statistics. The server in its own process on 127.0.0.1, always shut down; each perf_analyzer run is
a few short windows under a subprocess timeout. (tests/test_serve_triton.py has the gRPC-only runs.)"""

import pytest

pytest.importorskip("aiohttp")  # the serve extra: never skipped in CI
hc = pytest.importorskip("tritonclient.http")
pytest.importorskip("tritonclient.grpc")

from test_serve_triton import _jpeg, _perf_analyzer, _perf_analyzer_or_fail  # noqa: E402

from goprep._serve import perfanalyzer  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402


@pytest.mark.slow
def test_perf_analyzer_runs_over_http_and_grpc(tmp_path):
    _perf_analyzer_or_fail()
    img = frames(2, 480, 640)
    files = perfanalyzer.input_data(files=[_jpeg(im) for im in img])
    with server_process("goprep", ("--workers", "2", "--http-port", "0")) as srv:
        sent = _perf_analyzer(srv, files, tmp_path, batch=1, protocol="http")
        sent += _perf_analyzer(srv, perfanalyzer.input_data(frames=img), tmp_path, batch=2, protocol="http")
        sent += _perf_analyzer(srv, files, tmp_path, batch=1, protocol="grpc")
        c = hc.InferenceServerClient(srv["http"])
        (st,) = c.get_inference_statistics("goprep")["model_stats"]
        s = st["inference_stats"]
        # every request perf_analyzer sent, over either protocol, was answered OK (its windows count a part)
        assert s["fail"]["count"] == 0 and s["success"]["count"] >= sent
        assert {b["batch_size"] for b in st["batch_stats"]} == {1, 2}
        c.close()


def test_command_names_the_protocol():
    cmd = perfanalyzer.command("127.0.0.1:8000", "in.json", protocol="http")
    assert cmd[cmd.index("-i") + 1] == "http"
    with pytest.raises(ValueError, match="grpc, http"):
        perfanalyzer.command("127.0.0.1:8000", "in.json", protocol="rest")


def test_summary_reads_the_last_report():
    out = ("Request concurrency: 2\n  Client: \n    Request count: 12\n  Server: \n    Inference count: 24\n"
           "    Execution count: 12\n    Successful request count: 12\n")
    assert perfanalyzer.summary("warm-up " + out.replace("12", "3") + out) == {
        "requests": 12, "inferences": 24, "executions": 12, "successes": 12}
    assert perfanalyzer.summary(out.split("  Server")[0])["successes"] is None
    with pytest.raises(ValueError, match="no perf_analyzer report"):
        perfanalyzer.summary("error: failed to get model config")


def test_deb_data_reads_the_data_archive():
    """perfanalyzer._deb_data (the private C runtime's .deb unpacking): the data.tar member of an ar
    archive, after the others, an odd-sized member's padding byte skipped; a file that is not a .deb
    refused."""
    import io
    import tarfile

    def member(name, body):
        return f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode() + body + b"\n" * (len(body) & 1)

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tar:
        info = tarfile.TarInfo("./usr/lib/x86_64-linux-gnu/libx.so.1")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
    deb = b"!<arch>\n" + member("debian-binary", b"2.0\n") + member("control.tar.xz", b"odd") + \
        member("data.tar.xz", data.getvalue())
    with perfanalyzer._deb_data(deb) as tar:
        (m,) = tar.getmembers()
        assert m.name.endswith("libx.so.1") and tar.extractfile(m).read() == b"abc"
    with pytest.raises(ValueError, match="not a .deb"):
        perfanalyzer._deb_data(b"PK\x03\x04")
