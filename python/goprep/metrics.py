"""Prometheus metrics and OpenTelemetry spans for goprep calls.

``goprep.metrics.register()`` adds a ``prometheus_client`` collector (install the ``serve`` extra, or
just ``prometheus-client``) that reports, at each scrape:

- ``goprep_calls_total{pipeline,device}``: calls per pipeline (or eager op) and the backend that ran;
- ``goprep_call_duration_seconds{pipeline}``: a histogram of call latency;
- ``goprep_engine_seconds_total``, ``goprep_gil_wait_seconds_total``, ``goprep_python_seconds_total``,
  ``goprep_gpu_seconds_total`` (by pipeline): the profiler's split of that time (goprep.stats);
- ``goprep_gpu_calls_total``, ``goprep_gpu_failures_total``, ``goprep_cpu_fallbacks_total``,
  ``goprep_gpu_breaker_trips_total``, ``goprep_gpu_breaker_open`` (0/1);
- ``goprep_gpu_pool_bytes{state="cached"|"in_use"|"limit"}``: the device memory pool.

Registering turns the profiler on (the per-call numbers come from it). The counters count from process
start; ``goprep.stats(reset=True)`` does not reset them.

``enable_tracing()`` (needs ``opentelemetry-api``) makes each call a span named ``goprep <pipeline>``
with the split as attributes; it is opt-in because a span costs several microseconds.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator, Optional

from . import _profile
from ._optional import require

__all__ = ["register", "unregister", "enable_tracing", "disable_tracing", "GoprepCollector"]


class GoprepCollector:
    """A prometheus_client custom collector over goprep's profiler and GPU counters."""

    def describe(self) -> list:
        return []  # collected lazily: the label sets are only known at scrape time

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        life = _profile.lifetime()
        calls = CounterMetricFamily("goprep_calls", "goprep calls by pipeline and the backend that ran them", labels=["pipeline", "device"])
        dur = HistogramMetricFamily("goprep_call_duration_seconds", "goprep call latency", labels=["pipeline"])
        parts = {
            "engine": CounterMetricFamily("goprep_engine_seconds", "time inside the goprep engine", labels=["pipeline"]),
            "gil": CounterMetricFamily("goprep_gil_wait_seconds", "time from the engine finishing until the caller held the GIL again", labels=["pipeline"]),
            "python": CounterMetricFamily("goprep_python_seconds", "the rest of goprep calls (Python side)", labels=["pipeline"]),
            "gpu": CounterMetricFamily("goprep_gpu_seconds", "engine time of calls the GPU ran", labels=["pipeline"]),
        }
        for name, e in sorted(life.items()):
            for dev, n in sorted(e.devices().items()):
                calls.add_metric([name, dev], n)
            cum, buckets = 0, []
            for bound, n in zip(_profile.BUCKETS_S + (float("inf"),), e.buckets):
                cum += n
                buckets.append(("+Inf" if bound == float("inf") else repr(bound), cum))
            dur.add_metric([name], buckets, e.total / 1e9)
            parts["engine"].add_metric([name], e.engine / 1e9)
            parts["gil"].add_metric([name], e.gil / 1e9)
            parts["python"].add_metric([name], (e.total - e.engine - e.gil) / 1e9)
            parts["gpu"].add_metric([name], e.gpu / 1e9)
        yield calls
        yield dur
        yield from parts.values()
        yield from _gpu_metrics(CounterMetricFamily, GaugeMetricFamily)


def _gpu_metrics(Counter: Any, Gauge: Any) -> Iterator[Any]:
    from . import _device, _native

    # A scrape must not be what loads the engine (and starts the Go runtime) in a process that has not
    # used goprep yet: report zeros until then.
    g = _device.gpu_stats() if _native.loaded() and not _native._forked_child else {}
    for key, name, doc in (
        ("gpu_calls", "goprep_gpu_calls", "calls sent to a GPU"),
        ("gpu_failures", "goprep_gpu_failures", "GPU calls that failed (each redone on the CPU)"),
        ("cpu_fallbacks", "goprep_cpu_fallbacks", "calls meant for a GPU that the CPU ran"),
        ("breaker_trips", "goprep_gpu_breaker_trips", "times the GPU circuit breaker opened"),
    ):
        yield Counter(name, doc, value=int(g.get(key, 0)))
    yield Gauge("goprep_gpu_breaker_open", "1 while the GPU circuit breaker is open (calls go to the CPU)", value=1 if g.get("breaker_open") else 0)
    pool = Gauge("goprep_gpu_pool_bytes", "goprep's device memory pool", labels=["state"])
    for state in ("cached", "in_use", "limit"):
        pool.add_metric([state], int(g.get(f"pool_{state}_bytes", 0)))
    yield pool


_registered: "dict[int, tuple[Any, GoprepCollector]]" = {}
_registering = threading.Lock()  # register/unregister check then act: one at a time (free-threaded builds too)


def register(registry: Any = None) -> GoprepCollector:
    """Register goprep's collector with ``registry`` (default: prometheus_client's global REGISTRY) and
    turn the profiler on. Registering twice with one registry returns the first collector."""
    require("prometheus_client", "goprep.metrics.register")
    import prometheus_client

    reg = prometheus_client.REGISTRY if registry is None else registry
    with _registering:
        if id(reg) in _registered:
            return _registered[id(reg)][1]
        c = GoprepCollector()
        reg.register(c)
        _registered[id(reg)] = (reg, c)
    _profile.set_profiling(True)
    return c


def unregister(registry: Any = None) -> None:
    """Remove goprep's collector from ``registry`` (the profiler stays as it is)."""
    import prometheus_client

    reg = prometheus_client.REGISTRY if registry is None else registry
    with _registering:
        entry = _registered.pop(id(reg), None)
        if entry is not None:
            reg.unregister(entry[1])


def enable_tracing(tracer: Optional[Any] = None) -> None:
    """Emit an OpenTelemetry span per goprep call (``tracer``: default ``trace.get_tracer("goprep")``),
    with attributes ``goprep.pipeline``, ``goprep.device``, ``goprep.engine_s``, ``goprep.gil_wait_s``,
    ``goprep.python_s``. Turns the profiler on. Needs ``opentelemetry-api``."""
    require("opentelemetry", "goprep.metrics.enable_tracing")
    from opentelemetry import trace

    tr = tracer if tracer is not None else trace.get_tracer("goprep")
    # Spans take wall-clock (epoch) times; the profiler reads perf_counter_ns. Offset measured once.
    offset = time.time_ns() - time.perf_counter_ns()

    def span(name: str, t0: int, total: int, eng: int, gil: int, ran: str) -> None:
        s = tr.start_span(f"goprep {name}", start_time=t0 + offset)
        s.set_attributes({
            "goprep.pipeline": name,
            "goprep.device": ran,
            "goprep.engine_s": eng / 1e9,
            "goprep.gil_wait_s": gil / 1e9,
            "goprep.python_s": (total - eng - gil) / 1e9,
        })
        s.end(end_time=t0 + total + offset)

    _profile.set_hook(span)
    _profile.set_profiling(True)


def disable_tracing() -> None:
    """Stop emitting spans."""
    _profile.set_hook(None)
