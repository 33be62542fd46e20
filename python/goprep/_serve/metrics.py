"""The server's Prometheus metrics per request, and the HTTP endpoint that serves them next to
goprep's engine metrics (goprep.metrics.register).

The endpoint is a plain ``http.server`` whose connections are handled by a fixed pool of threads:
each connection gets ``IDLE_TIMEOUT`` seconds to send its request, and connections beyond what the
pool and a short queue hold are closed at once, so idle or slow scrapers cost neither a thread each
nor the other scrapers' answers (prometheus_client's own server starts a thread per connection with
no timeout). Nothing here resets anything: the endpoint only reads.
"""

from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import HTTPServer
from typing import Any, Tuple

# Request latency buckets, seconds: 0.25 ms to ~16 s by powers of two.
BUCKETS = tuple(0.00025 * 2**i for i in range(17))
STAGES = ("decode", "preprocess", "model", "total")
IDLE_TIMEOUT = 2.0
THREADS = 4
QUEUE = 8


class Metrics:
    """The request metrics, in ``registry``: ``goprep_serve_requests_total{code}``,
    ``goprep_serve_request_duration_seconds{stage}`` (decode, preprocess, model, total),
    ``goprep_serve_in_flight``, ``goprep_serve_rejected_total{reason}``, ``goprep_serve_batch_queue``
    (with dynamic batching: the requests waiting to join a batch). With dynamic batching the decode,
    preprocess and model stages are observed once per executed batch, total once per request."""

    def __init__(self, registry: Any) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self.requests = Counter("goprep_serve_requests",
                                "inference requests answered (gRPC and REST), by status code (gRPC's names)",
                                ["code"], registry=registry)
        self.duration = Histogram("goprep_serve_request_duration_seconds",
                                  "ModelInfer time by stage (total: from the request's arrival to its reply)",
                                  ["stage"], buckets=BUCKETS, registry=registry)
        self.in_flight = Gauge("goprep_serve_in_flight", "inference requests being handled (gRPC and REST)",
                               registry=registry)
        self.batch_queue = Gauge("goprep_serve_batch_queue", "ModelInfer requests waiting to be batched",
                                 registry=registry)
        self.rejected = Counter("goprep_serve_rejected", "requests refused for a limit, by limit", ["reason"],
                                registry=registry)
        self.stages = {s: self.duration.labels(stage=s) for s in STAGES}


class _Server(HTTPServer):
    """HTTPServer handing each connection to a bounded pool; full pool and queue: closed at once."""

    daemon_threads = True

    def __init__(self, addr: Tuple[str, int], handler: Any, family: int) -> None:
        self.address_family = family
        super().__init__(addr, handler)
        self._pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="goprep-metrics")
        self._slots = threading.BoundedSemaphore(THREADS + QUEUE)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        self._pool.submit(self._handle, request, client_address)

    def _handle(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - a broken connection is the client's problem
            pass
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def serve(host: str, port: int, registry: Any) -> Tuple[HTTPServer, int]:
    """Serve ``registry`` at http://HOST:PORT/metrics from a daemon thread; the server and its port."""
    from prometheus_client.exposition import MetricsHandler

    handler = MetricsHandler.factory(registry)
    handler.timeout = IDLE_TIMEOUT  # socket timeout for reading the request (StreamRequestHandler)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    httpd = _Server((host, port), handler, family)
    threading.Thread(target=httpd.serve_forever, name="goprep-metrics-accept", daemon=True).start()
    return httpd, httpd.server_address[1]

