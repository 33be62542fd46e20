"""goprep.metrics: a real prometheus_client HTTP endpoint on loopback, scraped and parsed."""

import urllib.request

import numpy as np
import pytest

import goprep

prometheus_client = pytest.importorskip("prometheus_client")  # in the test extra: never skipped in CI
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from goprep import metrics  # noqa: E402


@pytest.fixture
def endpoint():
    reg = prometheus_client.CollectorRegistry()
    metrics.register(reg)
    httpd, thread = prometheus_client.start_http_server(0, addr="127.0.0.1", registry=reg)
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/metrics"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)
        metrics.unregister(reg)
        goprep.set_profiling(False)


def scrape(url):
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@goprep.pipeline(device="cpu")
def metered(img):
    return goprep.resize(img, 24)


@pytest.mark.slow
def test_scrape_counts_and_split(endpoint):
    assert goprep.profiling()
    before = scrape(endpoint)
    key = (("device", "cpu"), ("pipeline", metered.__qualname__))
    n0 = before.get(("goprep_calls_total", key), 0)
    img = np.zeros((50, 60, 3), np.uint8)
    for _ in range(12):
        metered(img)
    goprep.stats(reset=True)  # must not make counters go down
    metered(img)
    m = scrape(endpoint)
    assert m[("goprep_calls_total", key)] == n0 + 13
    p = (("pipeline", metered.__qualname__),)
    assert m[("goprep_call_duration_seconds_count", p)] == n0 + 13
    assert m[("goprep_call_duration_seconds_bucket", (("le", "+Inf"),) + p)] == n0 + 13
    total = m[("goprep_call_duration_seconds_sum", p)]
    parts = sum(m[(f"goprep_{k}_seconds_total", p)] for k in ("engine", "gil_wait", "python"))
    assert total > 0 and parts == pytest.approx(total)
    for name in ("goprep_cpu_fallbacks_total", "goprep_gpu_failures_total", "goprep_gpu_breaker_open", "goprep_gpu_calls_total"):
        assert (name, ()) in m
    assert ("goprep_gpu_pool_bytes", (("state", "limit"),)) in m


@pytest.mark.slow
def test_breaker_visible(endpoint):
    import goprep.testing as gt

    @goprep.pipeline(device="cuda")
    def g(img):
        return goprep.resize(img, 8)

    gt.simulate_gpu(True)
    try:
        gt.reset_gpu(breaker_cooldown=30)
        img = np.zeros((20, 20, 3), np.uint8)
        g(img)
        gt.inject_gpu_fault("launch", 3)
        for _ in range(3):
            g(img)
        m = scrape(endpoint)
        assert m[("goprep_gpu_breaker_open", ())] == 1
        assert m[("goprep_gpu_failures_total", ())] == 3
        assert m[("goprep_gpu_breaker_trips_total", ())] == 1
        g(img)  # breaker open: straight to the CPU
        m = scrape(endpoint)
        assert m[("goprep_cpu_fallbacks_total", ())] >= 4
        assert m[("goprep_calls_total", (("device", "cpu"), ("pipeline", g.__qualname__)))] >= 4
        gt.reset_gpu(breaker_cooldown=30)
        assert scrape(endpoint)[("goprep_gpu_breaker_open", ())] == 0
    finally:
        gt.reset_gpu()
        gt.simulate_gpu(False)


def test_register_needs_no_engine_and_is_idempotent():
    reg = prometheus_client.CollectorRegistry()
    c1 = metrics.register(reg)
    try:
        assert metrics.register(reg) is c1
        text = prometheus_client.generate_latest(reg).decode()
        assert "goprep_gpu_breaker_open" in text
    finally:
        metrics.unregister(reg)
        goprep.set_profiling(False)


def test_opentelemetry_spans():
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exp = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    metrics.enable_tracing(provider.get_tracer("test"))
    try:
        metered(np.zeros((30, 30, 3), np.uint8))
    finally:
        metrics.disable_tracing()
        goprep.set_profiling(False)
    spans = exp.get_finished_spans()
    assert len(spans) == 1
    s = spans[0]
    assert s.name == f"goprep {metered.__qualname__}"
    a = s.attributes
    assert a["goprep.device"] == "cpu" and a["goprep.engine_s"] > 0 and a["goprep.gil_wait_s"] >= 0
    dur = (s.end_time - s.start_time) / 1e9
    assert a["goprep.engine_s"] + a["goprep.gil_wait_s"] + a["goprep.python_s"] == pytest.approx(dur, abs=2e-6)
