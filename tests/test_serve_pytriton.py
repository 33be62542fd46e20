"""goprep inside Triton Inference Server (docs/TRITON.md, "goprep inside Triton").

goprep.triton's functions in this process (requests as Triton hands them to a model: one call, each
request its rows, errors naming the request and the image), then goprep inside a real Triton
Inference Server (slow), answering tritonclient over gRPC on loopback with the in-process pipeline's
tensors:

- PyTriton: examples/pytriton_server.py, its requests batched by Triton, each execution's files
  through goprep.triton.infer_func's one pipeline call;
- Triton's Python backend: the docs' model.py template and config.pbtxt, as written, served by the
  tritonserver binary PyTriton bundles (Triton Inference Server 2.51), a bad file failing only its
  own request in an execution it shares with good ones.

nvidia-pytriton stays out of the test extra: 0.7 requires numpy<2, so it would hold the whole
suite to NumPy 1. The servers run from an overlay venv over a cached venv holding PyTriton, which sees
the goprep package this test imports (goprep._serve.pytriton_env, shared with serve-bench's PyTriton
variants: why and how, and why LD_LIBRARY_PATH points at this interpreter's libpython).
"""

import concurrent.futures
import contextlib
import io
import os
import pathlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import PHOTOS
from PIL import Image

import goprep
import goprep.triton
from goprep import InvalidArgumentError
from goprep._serve import pytriton_env
from goprep._serve.bench_triton import free_ports

grpcclient = pytest.importorskip("tritonclient.grpc", reason="the test extra's tritonclient[grpc] is needed")

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "pytriton_server.py"
SERVING = ROOT / "docs" / "TRITON.md"
START_TIMEOUT_S = 180  # the server up and its model loaded (6-10 s measured on the 2-core machine)
CALL_TIMEOUT_S = 60
STOP_TIMEOUT_S = 60
TOKEN = "goprep-test-token"  # the example's GOPREP_TRITON_TOKEN: Triton's admin endpoints need it
GRPC_TOKEN_HEADER = pytriton_env.GRPC_TOKEN_HEADER
HTTP_TOKEN_HEADER = pytriton_env.HTTP_TOKEN_HEADER


def _encode(img, fmt, **kw):
    b = io.BytesIO()
    Image.fromarray(img if img.shape[-1] == 3 else img[..., 0]).save(b, fmt, **kw)
    return b.getvalue()


FILES = [_encode(PHOTOS[name], fmt, **kw) for name, fmt, kw in (
    ("astronaut", "JPEG", {"quality": 90}), ("chelsea", "JPEG", {"quality": 75}), ("coffee", "PNG", {}),
    ("camera", "JPEG", {"quality": 85}))]


@goprep.pipeline
def small(img):
    x = goprep.resize(img, (32, 48), interpolation="bilinear")
    return goprep.normalize(x, mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3), dtype="float32", layout="CHW")


def _tensor(files):
    """A request's IMAGE as Triton hands it to a model: an object array of bytes, [N, 1]."""
    return np.array(files, dtype=np.object_).reshape(-1, 1)


def test_infer_func_one_call_per_execution():
    """Three requests of one execution: one pipeline call for their six files, each request its own
    rows of it, equal to the pipeline on the same files."""
    infer = goprep.triton.infer_func(small)
    groups = [FILES[:1], FILES[1:4], FILES[:2]]
    goprep.stats(reset=True)
    goprep.set_profiling(True)
    try:
        out = infer([{"IMAGE": _tensor(g)} for g in groups])
        calls = goprep.stats(reset=True)["small"]["calls"]
    finally:
        goprep.set_profiling(False)
    assert calls == 1
    assert [sorted(o) for o in out] == [["TENSOR"]] * 3
    for g, o in zip(groups, out):
        np.testing.assert_array_equal(o["TENSOR"], np.asarray(small(g)))
    # other names, and the input as [N]
    out = goprep.triton.infer_func(small, input="JPEG", output="X")([{"JPEG": np.array(FILES[:2], dtype=object)}])
    np.testing.assert_array_equal(out[0]["X"], np.asarray(small(FILES[:2])))


@pytest.mark.parametrize("bad, match", [
    ([FILES[0], b"not an image"], r"^request 1: image\[1\] is not a readable JPEG or PNG file"),
    ([FILES[0], FILES[1][:200]], r"^request 1: image\[1\] is not a readable JPEG or PNG file"),
    ([FILES[0], 7], r"^request 1: IMAGE\[1\] must be bytes"),
    ([], r"^request 1: IMAGE holds no image"),
])
def test_infer_func_bad_file_names_request_and_image(bad, match):
    infer = goprep.triton.infer_func(small)
    with pytest.raises(ValueError, match=match):
        infer([{"IMAGE": _tensor(FILES[:1])}, {"IMAGE": np.array(bad, dtype=object)}])


def test_infer_func_pixel_limit():
    with pytest.raises(ValueError, match=r"^request 0: image\[0\] of 512x512 pixels is larger than .* 1000 pixels"):
        goprep.triton.infer_func(small, max_pixels=1000)([{"IMAGE": _tensor(FILES[:1])}])


def test_run_requests_fails_only_the_bad_requests():
    """Per request, its rows or its own error; the good ones equal the pipeline on their files."""
    reqs = [_tensor(FILES[:2]), [FILES[2], b"\xff\xd8\xff truncated"], None, FILES[3:4], [],
            _tensor([FILES[1][:300]]), _tensor(FILES[1:2])]
    good = {0: FILES[:2], 3: FILES[3:4], 6: FILES[1:2]}
    out = goprep.triton.run_requests(small, reqs)
    assert len(out) == len(reqs)
    for k, files in good.items():
        np.testing.assert_array_equal(out[k], np.asarray(small(files)))
    msgs = {k: str(out[k]) for k in (1, 2, 4, 5)}
    assert all(isinstance(out[k], ValueError) for k in msgs), out
    assert msgs[1].startswith("image[1] is not a readable JPEG or PNG file"), msgs[1]
    assert msgs[2] == "IMAGE is missing" and msgs[4] == "IMAGE holds no image"
    assert msgs[5].startswith("image[0] is not a readable JPEG or PNG file"), msgs[5]
    over = goprep.triton.run_requests(small, [FILES[:1], FILES[1:2]], max_pixels=300 * 451)
    assert isinstance(over[0], ValueError) and "512x512 pixels is larger than" in str(over[0]), over[0]
    np.testing.assert_array_equal(over[1], np.asarray(small(FILES[1:2])))


def test_not_a_pipeline():
    with pytest.raises(InvalidArgumentError) as e:
        goprep.triton.infer_func("resize")
    assert e.value.argument == "pipeline"


@pytest.fixture(scope="module")
def triton_env(tmp_path_factory):
    """(the python to run, the servers' environment, PyTriton's package folder): pytriton_env.overlay."""
    reason = pytriton_env.skip_reason()
    if reason:
        pytest.skip(reason)
    t0 = time.monotonic()
    python, env, pkg = pytriton_env.overlay(tmp_path_factory.mktemp("pytriton"), TOKEN)
    print(f"venv ready in {time.monotonic() - t0:.1f} s: {python}")
    return python, env, pkg


class _Server:
    """A server process (its own process group) whose output is read by a thread: ``wait_ready``
    waits, bounded, for the line matching ``ready``, and reports a port another process took."""

    def __init__(self, cmd, env, ready):
        self.lines = []
        self._q = queue.Queue()
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     errors="replace", start_new_session=True, stdin=subprocess.DEVNULL)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready = ready

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            self._q.put(line)
        self._q.put(None)

    def log(self):
        return "".join(self.lines[-80:])

    def wait_ready(self):
        """True when ready; False when a port was taken (the caller retries on others); else fails."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                line = self._q.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"the server was not ready in {START_TIMEOUT_S} s:\n{self.log()}")
            if line is None:
                pytest.fail(f"the server exited ({self.proc.wait()}) before it was ready:\n{self.log()}")
            if "already in use" in line:
                return False
            if re.search(self.ready, line):
                return True

    def stop(self, graceful=True):
        """The exit status after SIGTERM (a graceful stop), or None when it did not exit in time or
        ``graceful`` is false (a server that never came up: PyTriton would wait out its own timeout);
        then whatever is left of its process group is killed."""
        rc = None
        if graceful and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            rc = self.proc.wait(timeout=STOP_TIMEOUT_S if graceful else 0)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # what it started (tritonserver, the stubs), if left
        self.proc.wait(timeout=STOP_TIMEOUT_S)
        self._reader.join(timeout=STOP_TIMEOUT_S)
        return rc


@contextlib.contextmanager
def _serving(make_cmd, env, ready, n_ports):
    """A started server (make_cmd(ports) run until ready, on other free ports if one was taken, three
    tries): its gRPC client and its ports; always stopped, its graceful exit asserted."""
    for _ in range(3):
        ports = free_ports(n_ports)
        srv = _Server(make_cmd(ports), env, ready)
        try:
            up = srv.wait_ready()
        except BaseException:
            srv.stop(graceful=False)
            raise
        if up:
            break
        srv.stop(graceful=False)
    else:
        pytest.fail("three sets of free ports were taken before the server bound them")
    client = grpcclient.InferenceServerClient(f"127.0.0.1:{ports[0]}")
    try:
        yield client, ports
    finally:
        client.close()
        rc = srv.stop()
    assert rc == 0, f"the server did not stop cleanly on SIGTERM (status {rc}):\n{srv.log()}"


def _request(files):
    inp = grpcclient.InferInput("IMAGE", [len(files), 1], "BYTES")
    inp.set_data_from_numpy(np.array(files, dtype=np.object_).reshape(-1, 1))
    return [inp]


def _infer(client, files, model="goprep"):
    return client.infer(model, _request(files), client_timeout=CALL_TIMEOUT_S).as_numpy("TENSOR")


def _load_example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("pytriton_server_example", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # imports goprep only: PyTriton is imported in main()
    return mod


def _concurrently(fn, jobs):
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        futures = [ex.submit(fn, j) for j in jobs]
        return [f.result(timeout=CALL_TIMEOUT_S * 2) for f in futures]


# the requests each test sends at once: several sizes, one file in several requests
JOBS = [FILES[i:i + n] for n in (1, 2, 3) for i in range(len(FILES) - n + 1)]


@pytest.mark.slow
def test_pytriton_replies_equal_in_process(triton_env):
    """examples/pytriton_server.py under PyTriton: every reply equals the pipeline run in this process
    on the same files, over gRPC and HTTP; a bad file's execution fails naming its image; the
    statistics count every request and need the access token."""
    import tritonclient.http as httpclient  # tritonclient[http]: the test extra (tests/test_serve_rest.py)

    python, env, _ = triton_env
    prep = _load_example().preprocess
    t0 = time.monotonic()

    def cmd(ports):
        return [str(python), str(EXAMPLE), "--grpc-port", str(ports[0]), "--http-port", str(ports[1]),
                "--metrics-port", str(ports[2])]

    with _serving(cmd, env, r"^ready grpc=", 3) as (client, ports):
        started = time.monotonic() - t0
        assert client.get_model_config("goprep").config.max_batch_size == 32
        replies = _concurrently(lambda files: _infer(client, files), JOBS)
        for files, got in zip(JOBS, replies):
            want = np.asarray(prep(files))
            assert got.shape == want.shape == (len(files), 3, 224, 224) and got.dtype == np.float32
            np.testing.assert_array_equal(got, want)

        with pytest.raises(Exception, match=r"image\[1\] is not a readable JPEG or PNG file"):
            _infer(client, [FILES[0], b"not an image"])

        # KServe v2 REST too (binary tensor data), and the statistics behind the token on both
        http = httpclient.InferenceServerClient(f"127.0.0.1:{ports[1]}", network_timeout=CALL_TIMEOUT_S)
        try:
            inp = httpclient.InferInput("IMAGE", [2, 1], "BYTES")
            inp.set_data_from_numpy(np.array(FILES[1:3], dtype=np.object_).reshape(-1, 1), binary_data=True)
            got = http.infer("goprep", [inp]).as_numpy("TENSOR")
            np.testing.assert_array_equal(got, np.asarray(prep(FILES[1:3])))
            with pytest.raises(Exception, match="restricted"):
                http.get_inference_statistics("goprep")
            over_http = http.get_inference_statistics("goprep", headers={HTTP_TOKEN_HEADER: TOKEN})
        finally:
            http.close()
        with pytest.raises(Exception, match="restricted"):
            client.get_inference_statistics("goprep")
        stats = client.get_inference_statistics("goprep", headers={GRPC_TOKEN_HEADER: TOKEN}).model_stats[0]
        assert stats.inference_stats.success.count == len(JOBS) + 1
        assert stats.inference_stats.fail.count == 1
        assert stats.inference_count == sum(map(len, JOBS)) + 2
        assert over_http["model_stats"][0]["inference_stats"]["success"]["count"] == len(JOBS) + 1
    print(f"PyTriton: up in {started:.1f} s, whole test {time.monotonic() - t0:.1f} s")


def _docs_block(lang, first_line):
    """The ```lang block of docs/TRITON.md whose first line is ``first_line``."""
    text = SERVING.read_text()
    found = [b for b in re.findall(rf"```{lang}\n(.*?)```", text, re.S) if b.split("\n", 1)[0] == first_line]
    assert len(found) == 1, f"docs/TRITON.md has {len(found)} ```{lang} blocks starting {first_line!r}"
    return found[0]


@pytest.mark.slow
def test_python_backend_template_isolates_bad_files(triton_env, tmp_path):
    """The docs' model.py and config.pbtxt in a model repository of tritonserver (PyTriton's binary,
    Triton 2.51): replies equal the docs' pipeline in this process; four requests sent at once run as
    one execution (its batch size in the statistics), and the one with a bad file fails alone."""
    python, env, pkg = triton_env
    model_py = _docs_block("python", "# models/goprep/1/model.py")
    config = _docs_block("text", "# models/goprep/config.pbtxt")
    # The docs' model as written, and a twin "goprep4" whose batcher waits for four images (up to
    # 10 s) so that four requests sent at once, a bad one among them, surely share an execution.
    config4, n = re.subn(r"max_queue_delay_microseconds: \d+",
                         "max_queue_delay_microseconds: 10000000 preferred_batch_size: [ 4 ]", config)
    config4, m = re.subn(r'name: "goprep"', 'name: "goprep4"', config4)
    assert n == m == 1
    for name, text in (("goprep", config), ("goprep4", config4)):
        (tmp_path / "models" / name / "1").mkdir(parents=True)
        (tmp_path / "models" / name / "config.pbtxt").write_text(text)
        (tmp_path / "models" / name / "1" / "model.py").write_text(model_py)
    backend = tmp_path / "backends" / "python"
    backend.mkdir(parents=True)
    dist = pkg / "tritonserver"
    for f in ("libtriton_python.so", "triton_python_backend_utils.py"):
        (backend / f).symlink_to(dist / "backends" / "python" / f)
    v = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (backend / "triton_python_backend_stub").symlink_to(dist / "python_backend_stubs" / v / "triton_python_backend_stub")

    ns = {}
    exec(compile(model_py.replace("import triton_python_backend_utils as pb_utils\n", ""), "model.py", "exec"), ns)
    prep = ns["preprocess"]
    t0 = time.monotonic()

    def cmd(ports):
        return [str(dist / "bin" / "tritonserver"), f"--model-repository={tmp_path / 'models'}",
                f"--backend-directory={tmp_path / 'backends'}", "--allow-http=false", "--allow-metrics=false",
                "--grpc-address=127.0.0.1", f"--grpc-port={ports[0]}", "--exit-timeout-secs=10"]

    with _serving(cmd, env, r"Started GRPCInferenceService at 127\.0\.0\.1", 1) as (client, _):
        started = time.monotonic() - t0
        replies = _concurrently(lambda files: _infer(client, files), JOBS)
        for files, got in zip(JOBS, replies):
            np.testing.assert_array_equal(got, np.asarray(prep(files)))

        def one(files):
            try:
                return _infer(client, files, "goprep4")
            except Exception as e:  # noqa: BLE001 - the bad request's error is the result checked
                return e

        mixed = [[FILES[0]], [FILES[1]], [b"\xff\xd8 truncated"], [FILES[2]]]
        got = _concurrently(one, mixed)
        assert isinstance(got[2], Exception) and "image[0] is not a readable JPEG or PNG file" in str(got[2]), got[2]
        for k in (0, 1, 3):
            np.testing.assert_array_equal(got[k], np.asarray(prep(mixed[k])))
        batches = {b.batch_size: b.compute_infer.count
                   for b in client.get_inference_statistics("goprep4").model_stats[0].batch_stats}
        assert batches == {4: 1}, batches
    print(f"Python backend: up in {started:.1f} s, whole test {time.monotonic() - t0:.1f} s")
