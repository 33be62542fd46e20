"""The reference server's preprocessing, its load generator and serve-bench: real servers and clients in
their own processes on 127.0.0.1, always shut down. Correctness and zero errors only; no timing
asserts. The protocol itself (tritonclient), the limits and the metrics: tests/test_serve_oip.py."""

import json
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
cv2 = pytest.importorskip("cv2")

from goprep._serve import protocol  # noqa: E402
from goprep._serve.bench import RESULT_KEYS, fetch_breakdown, run_load, server_process  # noqa: E402
from goprep._serve.loadgen import frames, payloads  # noqa: E402
from goprep._serve.preprocess import make, reference  # noqa: E402


def _images():
    ims = frames(3, 480, 640) + frames(1, 333, 517, seed=5) + frames(1, 120, 90, seed=6)  # odd, upscaling
    _, decoded = payloads("jpeg", ims[:2])
    return ims + decoded


@pytest.mark.parametrize("impl", ["python", "opencv", "goprep"])
def test_same_tensor(impl):
    # "The same tensor": every implementation within protocol.TOLERANCE of the reference everywhere
    # (full tensors, not only what the checksum samples); goprep and OpenCV agree to float rounding.
    f = make(impl)
    for img in _images():
        img = np.ascontiguousarray(img)
        img.setflags(write=False)  # the server's frames are read-only views of the request bytes
        got, want = f(img), reference(img)
        assert got.shape == (3, 224, 224) and got.dtype == np.float32 and got.flags.c_contiguous
        err = float(np.max(np.abs(got - want)))
        assert err <= (1e-5 if impl != "python" else protocol.TOLERANCE), (impl, img.shape, err)
        assert protocol.tensor_error(got, want) == ""


def test_tensor_check_catches_wrong_tensors():
    img = frames(1, 480, 640)[0]
    want = reference(img)
    assert protocol.tensor_error(want[:, :, ::-1], want) != ""  # not flipped
    assert protocol.tensor_error(want + 0.05, want) != ""  # wrong normalisation
    assert protocol.tensor_error(reference(frames(2, 480, 640)[1]), want) != ""
    assert protocol.tensor_error(want[:, :100], want) != ""  # wrong shape


@pytest.mark.slow
@pytest.mark.parametrize("impl,payloads_", [("goprep", ("raw", "jpeg")), ("python", ("raw", "jpeg")),
                                            ("opencv", ("raw", "jpeg"))])
def test_load_zero_errors(impl, payloads_):
    # JPEG replies are checked against Pillow's decode + the reference; each variant decodes its own way
    with server_process(impl, ("--workers", "4", "--metrics-port", "0")) as srv:
        for payload in payloads_:
            res = run_load(srv["target"], payload, [4], 0.3, 1.5, srv["pid"])
            assert len(res) == 1
            r = res[0]
            assert r["errors"] == 0, r["first_errors"]
            assert r["requests"] > 0 and r["qps"] > 0 and r["p50_ms"] <= r["p99_ms"] <= r["p999_ms"]
            assert r["server_cores"] is not None and r["server_cores"] > 0
        st = fetch_breakdown(srv["metrics"])
        if impl == "goprep":
            (name, entry), = st.items()
            assert name == "imagenet_preprocess" and entry["calls"] >= r["requests"]
        else:
            assert st == {}  # no goprep calls in the other variants
        proc = srv["proc"]
    assert proc.poll() is not None


@pytest.mark.slow
def test_model_topk():
    pytest.importorskip("onnxruntime")
    with server_process("goprep", ("--workers", "2", "--model", "builtin", "--topk", "5")) as srv:
        r = run_load(srv["target"], "raw", [2], 0.3, 1.0, srv["pid"], model=True)[0]
        assert r["errors"] == 0 and r["requests"] > 0, r["first_errors"]


def _scrape(url):
    text_string_to_metric_families = pytest.importorskip("prometheus_client.parser").text_string_to_metric_families
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return {s.name: s.value for fam in text_string_to_metric_families(text) for s in fam.samples if not s.labels}


@pytest.mark.slow
def test_faults_under_load():
    # The simulated GPU fails 3 calls in a row every 50 requests: the breaker opens (calls go to the
    # CPU) and closes after 0.2 s. Clients must not notice: zero errors, right tensors.
    args = ("--workers", "4", "--device", "cuda", "--simulate-gpu", "--fault-every", "50", "--fault-count", "3",
            "--breaker-cooldown", "0.2", "--metrics-port", "0")
    with server_process("goprep", args) as srv:
        url = f"http://{srv['metrics']}/metrics"
        out = {}
        load = threading.Thread(target=lambda: out.update(r=run_load(srv["target"], "raw", [4], 0.2, 4.0, srv["pid"])[0]))
        load.start()
        seen = []
        t_end = time.monotonic() + 60
        while load.is_alive() and time.monotonic() < t_end:
            seen.append(_scrape(url))
            time.sleep(0.05)
        load.join(60)
        time.sleep(0.5)  # past the cool-down, with no more faults coming
        final = _scrape(url)
    r = out["r"]
    assert r["errors"] == 0, r["first_errors"]
    assert r["requests"] > 100
    assert any(m["goprep_gpu_breaker_open"] == 1 for m in seen), "the breaker was never seen open"
    # The breaker only trips while closed (an open one sends calls straight to the CPU), so two trips
    # mean it closed in between; and with the faults over it reads closed.
    assert final["goprep_gpu_breaker_trips_total"] >= 2
    assert final["goprep_gpu_breaker_open"] == 0
    assert final["goprep_gpu_failures_total"] >= 6 and final["goprep_cpu_fallbacks_total"] > 0
    assert final["goprep_gpu_calls_total"] > final["goprep_gpu_failures_total"]  # the GPU served most calls


@pytest.mark.slow
@pytest.mark.parametrize("rounds", ["2", "0"])  # the servers interleaved (the default), or one after the other
def test_serve_bench_cli_json(tmp_path, rounds):
    out = tmp_path / "serve.json"
    cmd = [sys.executable, "-m", "goprep", "serve-bench", "--preprocess", "none,python,goprep", "--payloads", "raw",
           "--concurrency", "1,2", "--duration", "0.4", "--warmup", "0.2", "--workers", "2", "--rounds", rounds,
           "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "metric" in r.stdout and "pure Python" in r.stdout and "goprep" in r.stdout and "change" in r.stdout
    doc = json.loads(out.read_text())
    assert set(doc) == {"machine", "results", "breakdown"}
    assert "server floor, raw" in r.stdout
    assert [(x["preprocess"], x["payload"], x["concurrency"]) for x in doc["results"]] == [
        (v, "raw", c) for v in ("none", "python", "goprep") for c in (1, 2)]
    for x in doc["results"]:
        assert tuple(x) == RESULT_KEYS and x["errors"] == 0 and x["qps"] > 0
    assert doc["breakdown"]["imagenet_preprocess"]["calls"] > 0
    assert doc["machine"]["profiler"]["call_us_profiling_on"] > 0
    assert doc["machine"]["settings"]["interleaved_rounds"] == int(rounds)


@pytest.mark.slow
def test_serve_bench_one_variant_one_round(tmp_path):
    """One variant in one round takes the load generator's single-target path, whose rows must read as
    the interleaved ones do (it failed with KeyError: 'target')."""
    out = tmp_path / "serve.json"
    cmd = [sys.executable, "-m", "goprep", "serve-bench", "--preprocess", "goprep", "--payloads", "raw",
           "--concurrency", "2", "--duration", "0.4", "--warmup", "0.2", "--workers", "2", "--rounds", "1",
           "--json", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert [(x["preprocess"], x["concurrency"], x["errors"]) for x in doc["results"]] == [("goprep", 2, 0)]
    assert doc["results"][0]["qps"] > 0


@pytest.mark.slow
def test_malloc_tuning_applies_on_glibc():
    # The servers and the load generator keep ~1 MB buffers in glibc's heap (malloc.py); mallopt must
    # have accepted all three settings where glibc is the C library (CI and this machine).
    import platform

    from goprep._serve import malloc

    r = subprocess.run([sys.executable, "-c", "from goprep._serve.malloc import tune; print(tune())"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    want = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert r.stdout.strip() == str(want)
    assert malloc.SETTINGS["mmap_threshold"] <= 32 << 20  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_interleaved_orders_are_balanced(n):
    from goprep._serve.loadgen import balanced_orders

    rows = balanced_orders(n)
    assert all(sorted(r) == list(range(n)) for r in rows)
    # every server in every position equally often, and after every other one equally often
    positions = {(r[i], i) for r in rows for i in range(n)}
    assert len(positions) == n * n
    from collections import Counter

    per_position = Counter((r[i], i) for r in rows for i in range(n))
    assert len(set(per_position.values())) == 1
    follows = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) <= 1


@pytest.mark.slow
def test_loadgen_rounds_need_aio():
    r = subprocess.run([sys.executable, "-m", "goprep._serve.loadgen", "--target", "127.0.0.1:1", "--rounds", "3",
                        "--client", "threads"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--rounds above 1" in r.stderr


@pytest.mark.slow
def test_serve_bench_model_checks_each_variant_against_its_own_preprocessing():
    # issue 41: with --model, the pure-Python server's top-k was held to goprep's scores and failed every
    # reply (Pillow's resample is one level off in places), then printed an absurd CPU per request. Each
    # server's model is now checked on its own preprocessing's tensors: zero errors, a finite CPU per request.
    pytest.importorskip("onnxruntime")
    cmd = [sys.executable, "-m", "goprep", "serve-bench", "--model", "--preprocess", "python,goprep", "--payloads", "jpeg",
           "--concurrency", "2", "--duration", "0.6", "--warmup", "0.2", "--workers", "2", "--rounds", "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
    assert "errors 0" in r.stderr and "differ from the reference" not in r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("server CPU per request, jpeg"))
    cells = [c.strip() for c in line.split("|")]
    py_ms, gp_ms = (float(c.removesuffix(" ms")) for c in cells[1:3])
    assert 0 < py_ms < 1000 and 0 < gp_ms < 1000, line  # per request on 2 cores: milliseconds, not 1e12
    assert float(cells[3].removesuffix("x")) == pytest.approx(gp_ms / py_ms, abs=0.01)


def test_model_check_uses_the_servers_own_tensors():
    pytest.importorskip("onnxruntime")
    from goprep._serve.loadgen import Checker
    from goprep._serve.model import Classifier

    ims = payloads("jpeg", frames(3, 480, 640))[1]
    refs = [reference(im) for im in ims]
    own = [make("python")(im) for im in ims]
    checker = Checker(refs, True, own=own)
    clf = Classifier()
    for i, t in enumerate(own):  # a reply made from the python variant's tensor, as its server would send
        s = clf.scores(t)
        idx = np.argsort(-s, kind="stable")[:5].astype(np.int32)
        rep = protocol.pb().ModelInferResponse(model_name="goprep")
        for name, a in ((protocol.TOPK_INDEX, idx[None]), (protocol.TOPK_SCORE, s[idx][None].astype(np.float32))):
            rep.outputs.add(name=name, datatype=protocol.datatype(a.dtype), shape=list(a.shape))
            rep.raw_output_contents.append(a.tobytes())
        assert checker.check(i, rep.SerializeToString()) == ""
        wrong = rep.SerializeToString().replace(s[idx][None].astype(np.float32).tobytes(),
                                                (s[idx][None] + 0.01).astype(np.float32).tobytes())
        assert checker.check(i, wrong) != ""  # scores off by 0.01 are caught


def test_cpu_per_request_counts_every_reply():
    from goprep._serve.bench import table
    from goprep._serve.loadgen import _figures

    f = _figures(16, [], ["bad"] * 400, 2.0, 10.0, 11.0)  # every reply failed its check: 1 s of CPU, 400 replies
    assert f["qps"] == 0 and f["server_ms_per_request"] == pytest.approx(2.5)
    assert _figures(16, [0.01] * 100, [], 2.0, None, None)["server_ms_per_request"] is None
    assert _figures(16, [], [], 2.0, 0.0, 1.0)["server_ms_per_request"] is None  # no replies: no figure
    rows = []
    for v, ms in (("python", 5.0), ("goprep", 2.0)):
        g = _figures(16, [0.01] * 200, [], 1.0, 0.0, ms * 0.2)
        rows.append({"preprocess": v, "payload": "jpeg", **g})
    line = next(ln for ln in table(rows, 16).splitlines() if ln.startswith("server CPU per request, jpeg"))
    assert [c.strip() for c in line.split("|")][1:] == ["5.00 ms", "2.00 ms", "0.40x"]
