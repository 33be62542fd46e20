"""Triton's extensions of the Open Inference Protocol that clients and tools call before a run
(``perf_analyzer`` calls ModelMetadata, ModelConfig, ServerMetadata and, when ServerMetadata lists
``statistics``, ModelStatistics around each measurement window): the served model's configuration
(ModelConfig), its statistics (ModelStatistics) and the repository's index (RepositoryIndex), as
Triton's ``model_config.proto`` and ``grpc_service.proto`` define them (tritonclient's generated
``model_config_pb2`` and ``service_pb2``).

The model's tensors are described once (``TensorSpec``): ModelMetadata's shapes are the config's
dims with the batch dimension (-1) in front, as Triton reports them.

Statistics, as Triton defines them (docs/protocol/extension_statistics.md of the server):

- ``success`` / ``fail``: one count per request answered, OK or not, of this model; the duration
  from its body's arrival to its reply;
- ``queue``: from arrival until a worker starts on it; ``compute_input``: reading the request's
  tensors (the protobuf parsed into arrays, BYTES unpacked, shapes checked); ``compute_infer``: what
  the model does, here the decode, the preprocessing and the ONNX model (the served model is the
  whole pipeline, as a Triton Python backend running goprep would be); ``compute_output``: building
  the reply. Counted for successful requests only, each request with its execution's durations;
- ``inference_count``: images of successful requests; ``execution_count``: executions (without
  dynamic batching, one per request; with it, one per batch); ``batch_stats``: per executed batch
  size (images in one execution), how many executions and their compute durations. With dynamic
  batching (batching.py) every request of a batch counts its success with the batch's compute
  durations, and its queue time from its own arrival to the batch's start, as Triton counts them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from . import protocol

# The extensions served (ServerMetadata lists these and only these). RepositoryIndex is answered too,
# but "model_repository" also means RepositoryModelLoad and Unload, which this server does not serve.
EXTENSIONS = ("model_configuration", "statistics")


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of the served model: dims without the batch dimension (-1: variable),
    ``reshape``: the model's own dims when they differ (None: the same), ``optional``: a request
    may leave it out."""

    name: str
    datatype: str  # the protocol's name: BYTES, UINT8, FP32, ...
    dims: Sequence[int]
    reshape: Optional[Sequence[int]] = None
    optional: bool = False

    def metadata_shape(self) -> List[int]:
        """The shape ModelMetadata reports: the batch dimension, then the dims (Triton's rule for a
        model with max_batch_size > 0)."""
        return [-1, *self.dims]


# A request carries exactly one of the two inputs, so both are optional. IMAGE is one encoded file
# per batch item: dims [1] reshaped to [] (Triton's way of writing a batch-only tensor), so a client
# may send [N] or [N, 1]. FRAME is [N, H, W, 3] ([H, W, 3] is taken as one frame).
INPUTS = (TensorSpec(protocol.IMAGE, "BYTES", (1,), reshape=(), optional=True),
          TensorSpec(protocol.FRAME, "UINT8", (-1, -1, 3), optional=True))


def data_type(datatype: str) -> Any:
    """model_config.proto's DataType of a protocol datatype name (BYTES is TYPE_STRING)."""
    from tritonclient.grpc import model_config_pb2 as mc

    return mc.DataType.Value("TYPE_STRING" if datatype == "BYTES" else f"TYPE_{datatype}")


def model_config(name: str, platform: str, max_batch_size: int, outputs: Sequence[TensorSpec],
                 batching: Optional[Dict[str, Any]] = None) -> Any:
    """The ModelConfig message of the served model. ``batching`` (None: off) holds the dynamic
    batcher's ``preferred_batch_size`` (list) and ``max_queue_delay_microseconds``."""
    from tritonclient.grpc import model_config_pb2 as mc

    cfg = mc.ModelConfig(name=name, platform=platform, max_batch_size=max_batch_size)
    for t in INPUTS:
        i = cfg.input.add(name=t.name, data_type=data_type(t.datatype), dims=list(t.dims), optional=t.optional)
        if t.reshape is not None:
            i.reshape.shape.extend(t.reshape)
    for t in outputs:
        cfg.output.add(name=t.name, data_type=data_type(t.datatype), dims=list(t.dims))
    if batching is not None:
        cfg.dynamic_batching.preferred_batch_size.extend(batching.get("preferred_batch_size", ()))
        cfg.dynamic_batching.max_queue_delay_microseconds = int(batching.get("max_queue_delay_microseconds", 0))
    return cfg


@dataclass
class _Duration:
    count: int = 0
    ns: int = 0

    def add(self, ns: int) -> None:
        self.count += 1
        self.ns += max(0, ns)


@dataclass
class _Batch:
    compute_input: _Duration = field(default_factory=_Duration)
    compute_infer: _Duration = field(default_factory=_Duration)
    compute_output: _Duration = field(default_factory=_Duration)


@dataclass(frozen=True)
class Timing:
    """One execution's moments (time.perf_counter_ns): a worker started on it, its inputs were
    read, the model finished, the reply was built; ``items``: images executed."""

    start: int
    inputs: int
    infer: int
    output: int
    items: int


class Stats:
    """The cumulative statistics of one model, safe to update from any thread."""

    STAGES = ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._d = {s: _Duration() for s in self.STAGES}
        self._batches: Dict[int, _Batch] = {}
        self.inference_count = self.execution_count = 0
        self.last_inference_ms = 0

    def success(self, arrived: int, done: int, t: Timing, executed: bool = True) -> None:
        """A request answered OK: it arrived at ``arrived``, its reply was ready at ``done``
        (perf_counter_ns), its execution's moments ``t``. ``executed``: also count ``t`` as one
        execution of ``t.items`` images (False for the second and later requests of a dynamic batch)."""
        with self._lock:
            d = self._d
            d["success"].add(done - arrived)
            d["queue"].add(t.start - arrived)
            d["compute_input"].add(t.inputs - t.start)
            d["compute_infer"].add(t.infer - t.inputs)
            d["compute_output"].add(t.output - t.infer)
            if executed:
                self._execution(t)
            self.last_inference_ms = time.time_ns() // 1_000_000

    def execution(self, t: Timing) -> None:
        """One execution of ``t.items`` images (a dynamic batch: its requests count with
        ``success(..., executed=False)``)."""
        with self._lock:
            self._execution(t)

    def _execution(self, t: Timing) -> None:
        self.inference_count += t.items
        self.execution_count += 1
        b = self._batches.setdefault(t.items, _Batch())
        b.compute_input.add(t.inputs - t.start)
        b.compute_infer.add(t.infer - t.inputs)
        b.compute_output.add(t.output - t.infer)

    @classmethod
    def load(cls, snap: Dict[str, Any]) -> "Stats":
        """Statistics counted elsewhere (the Go front end's serve.Snapshot, as JSON), to build their
        message with ``message``: one builder for both front ends."""
        st = cls()
        for s, v in snap["stages"].items():
            st._d[s] = _Duration(int(v["count"]), int(v["ns"]))
        st.inference_count, st.execution_count = int(snap["inference_count"]), int(snap["execution_count"])
        st.last_inference_ms = int(snap["last_inference_ms"])
        for b in snap["batches"]:
            st._batches[int(b["batch_size"])] = _Batch(*(_Duration(int(b[k]["count"]), int(b[k]["ns"]))
                                                       for k in ("compute_input", "compute_infer", "compute_output")))
        return st

    def fail(self, arrived: int, done: int) -> None:
        """A request of this model answered with an error."""
        with self._lock:
            self._d["fail"].add(done - arrived)
            self.last_inference_ms = time.time_ns() // 1_000_000

    def message(self, name: str) -> Any:
        """The ModelStatistics message (version "1")."""
        m = protocol.pb()
        with self._lock:
            st = m.ModelStatistics(name=name, version="1", last_inference=self.last_inference_ms,
                                   inference_count=self.inference_count, execution_count=self.execution_count)
            for s, v in self._d.items():
                getattr(st.inference_stats, s).CopyFrom(m.StatisticDuration(count=v.count, ns=v.ns))
            for size in sorted(self._batches):
                b = self._batches[size]
                bs = st.batch_stats.add(batch_size=size)
                for s in ("compute_input", "compute_infer", "compute_output"):
                    v = getattr(b, s)
                    getattr(bs, s).CopyFrom(m.StatisticDuration(count=v.count, ns=v.ns))
        return st


def server_metadata(version: str) -> Any:
    """The ServerMetadataResponse: goprep, its version, the extensions served (EXTENSIONS)."""
    return protocol.pb().ServerMetadataResponse(name="goprep", version=version, extensions=list(EXTENSIONS))


def repository_index(name: str, ready: bool, ready_only: bool) -> Any:
    """The RepositoryIndexResponse: the one model, READY, or UNAVAILABLE while the server drains
    (left out when the client asked for ready models only)."""
    m = protocol.pb()
    rep = m.RepositoryIndexResponse()
    if ready or not ready_only:
        rep.models.add(name=name, version="1", state="READY" if ready else "UNAVAILABLE",
                       reason="" if ready else "the server is shutting down")
    return rep
