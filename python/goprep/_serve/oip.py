"""The Open Inference Protocol v2 over gRPC (``inference.GRPCInferenceService``) for one model:
ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata and ModelInfer (protocol.py says
what the model takes and returns), and Triton's ModelConfig, ModelStatistics and RepositoryIndex
(triton.py). The other methods of the service answer UNIMPLEMENTED.

Two halves: ``Engine.run_batch`` is the synchronous work of one execution (parse, decode,
preprocess, run the model, build the replies) of one request, or of several with dynamic batching
(batching.Batcher gathers them on the event loop), run on a bounded pool of worker threads; ``Servicer`` is the grpc.aio side,
which reads requests on the event loop (through service.Service, whose request lifecycle, limits
and statistics the KServe v2 REST front end, rest.py, shares), so a client that opens a call and never sends its body holds a
coroutine, not a worker thread, and is cut off after ``body_timeout`` seconds. ModelInfer is
registered as a stream-unary method for that: on the wire it is the same unary call, but the handler
reads the request message itself, with a deadline.

Status codes: INVALID_ARGUMENT for malformed requests, NOT_FOUND for another model's name,
RESOURCE_EXHAUSTED for limits (pixels, batch, queue), DEADLINE_EXCEEDED for a body that did not
arrive in time, UNAVAILABLE while draining, INTERNAL with a generic message for anything else (the
details go to the server's log, never to the client).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import protocol
from .decode import decode_images
from .errors import BadRequest, NotFound, OverLimit, TooLarge, detached
from .batching import fused_files
from .triton import INPUTS, TensorSpec, Timing, model_config, repository_index, server_metadata

__all__ = ["Engine", "Limits", "NotFound", "Servicer"]


@dataclass
class Limits:
    max_pixels: int = 4096 * 4096  # per image, checked from the header (encoded) or the shape (raw)
    max_batch: int = 64  # images per request
    body_timeout: float = 10.0  # seconds for a request's body to arrive once its call has started
    max_queue: int = 64  # ModelInfer requests waiting for a worker thread beyond those running


@dataclass
class Parsed:
    """One request read (Engine.parse): encoded files (``encoded``) or frames, and the outputs asked for."""

    req: Any
    encoded: bool
    images: List[Any]
    want: List[str]


class Engine:
    """One request's work, synchronous: ``infer(ModelInferRequest) -> ModelInferResponse``.

    ``prep`` (preprocess.Preprocess) maps an (H, W, 3) uint8 image to its tensor and decodes a
    request's files its own way, or takes them in one fused call (None: decode with goprep and reply
    with the decoded shapes); ``model`` (model.OnnxModel or None) runs on the stacked tensors; ``topk`` > 0 replaces the
    model's first output by its top K per image."""

    def __init__(self, name: str, prep: Any, model: Any, topk: int,
                 limits: Limits, metrics: Any = None, fault: Optional[Callable[[], None]] = None,
                 delay: float = 0.0) -> None:
        self.name, self.prep, self.model, self.topk, self.limits = name, prep, model, topk, limits
        self.metrics, self.fault, self.delay = metrics, fault, delay
        self.item_shape: tuple = ()
        self.item_dtype: Any = np.float32
        self.out_meta: List[Any] = []

    # -- start-up -------------------------------------------------------------------------------------

    def warm(self) -> None:
        """Run one zero frame through (traces goprep's plan, loads the model) and derive the output
        metadata; ValueError when the preprocessing's tensor does not fit the model or --topk does not
        fit its output."""
        frame = np.zeros((480, 640, 3), np.uint8)
        if self.prep is None:
            self.out_meta = [(protocol.SHAPE, "INT32", [-1, 3])]
            return
        t = np.asarray(self.prep(frame))
        self.item_shape, self.item_dtype = tuple(t.shape), t.dtype
        if self.model is None:
            self.out_meta = [(protocol.TENSOR, protocol.datatype(t.dtype), [-1, *t.shape])]
            return
        self.model.check_shape(self.item_shape)
        outs = self.model.run(t[None])
        first = next(iter(outs.values()))
        if self.topk:
            if first.ndim != 2 or self.topk > first.shape[1]:
                raise ValueError(f"--topk {self.topk}: the model's first output has shape {list(first.shape)} for one "
                                 f"image; --topk needs a 2-D output with at least K columns")
            self.out_meta = [(protocol.TOPK_INDEX, "INT32", [-1, self.topk]),
                             (protocol.TOPK_SCORE, protocol.datatype(first.dtype), [-1, self.topk])]
        else:
            self.out_meta = [(k, protocol.datatype(v.dtype), [-1, *v.shape[1:]]) for k, v in outs.items()]

    # -- one request ----------------------------------------------------------------------------------

    def _images(self, req: Any) -> Tuple[bool, List[Any]]:
        """The request's images: (True, the IMAGE files as bytes) or (False, FRAME's (H, W, 3) uint8
        views)."""
        if req.model_name != self.name:
            raise NotFound(f"this server serves model {self.name!r}, not {req.model_name!r}")
        if req.model_version not in ("", "1"):
            raise NotFound(f"model {self.name!r} has version 1 only, not {req.model_version!r}")
        if len(req.inputs) != 1:
            raise BadRequest(f"send exactly one input ({protocol.IMAGE} or {protocol.FRAME}), got {len(req.inputs)}")
        inp = req.inputs[0]
        shape = list(inp.shape)
        if any(d < 0 for d in shape):
            raise BadRequest(f"input {inp.name} has a negative dimension in shape {shape}")
        if req.raw_input_contents:
            if len(req.raw_input_contents) != 1:
                raise BadRequest(f"raw_input_contents has {len(req.raw_input_contents)} entries for 1 input")
            raw = req.raw_input_contents[0]
        else:
            raw = None
        lim = self.limits
        if inp.name == protocol.IMAGE:
            if inp.datatype != "BYTES" or len(shape) not in (1, 2) or (len(shape) == 2 and shape[1] != 1):
                raise BadRequest(f"input {protocol.IMAGE} must be BYTES of shape [N] (encoded images), "
                                 f"got {inp.datatype} {shape}")
            n = shape[0]
            if not 1 <= n <= lim.max_batch:
                self._over(n, "batch")
            if raw is not None:
                try:
                    files = protocol.unpack_bytes(raw, n)
                except ValueError as e:
                    raise BadRequest(f"input {protocol.IMAGE}: {e}") from None
            elif len(inp.contents.bytes_contents) == n:
                files = list(inp.contents.bytes_contents)
            else:
                raise BadRequest(f"input {protocol.IMAGE} has no data for its {n} elements")
            return True, files
        if inp.name == protocol.FRAME:
            if inp.datatype != "UINT8" or len(shape) not in (3, 4) or shape[-1] != 3:
                raise BadRequest(f"input {protocol.FRAME} must be UINT8 of shape [H, W, 3] or [N, H, W, 3] (RGB), "
                                 f"got {inp.datatype} {shape}")
            n, (h, w) = (shape[0] if len(shape) == 4 else 1), shape[-3:-1]
            if not 1 <= n <= lim.max_batch:
                self._over(n, "batch")
            if h < 1 or w < 1:
                raise BadRequest(f"input {protocol.FRAME} has no pixels: shape {shape}")
            if h * w > lim.max_pixels:
                raise TooLarge(f"frame of {w}x{h} pixels is larger than the server's limit of {lim.max_pixels} pixels",
                                "pixels")
            if raw is None:
                raise BadRequest(f"send input {protocol.FRAME} in raw_input_contents")
            if len(raw) != n * h * w * 3:
                raise BadRequest(f"input {protocol.FRAME} of shape {shape} needs {n * h * w * 3} bytes, got {len(raw)}")
            a = np.frombuffer(raw, np.uint8).reshape(n, h, w, 3)  # read-only views of the request's bytes
            return False, [a[i] for i in range(n)]
        raise BadRequest(f"unknown input {inp.name!r}: this model takes {protocol.IMAGE} (BYTES) or {protocol.FRAME} (UINT8)")

    def _over(self, n: int, what: str) -> None:
        if n < 1:
            raise BadRequest(f"a request needs at least one image, got {n}")
        raise OverLimit(f"a request may carry at most {self.limits.max_batch} images, got {n}", what)

    def items(self, req: Any) -> int:
        """The images ``req`` carries as its shape says, within [1, max_batch]: what the dynamic
        batcher counts before the request is parsed (a malformed one fails at parse, alone)."""
        if len(req.inputs) != 1:
            return 1
        shape = list(req.inputs[0].shape)
        n = shape[0] if len(shape) in (1, 2, 4) else 1
        return min(max(n, 1), self.limits.max_batch)

    def parse(self, req: Any) -> "Parsed":
        """One request read: its images and the outputs it asks for; raises its BadRequest,
        OverLimit or NotFound."""
        encoded, images = self._images(req)
        want = [o.name for o in req.outputs]
        known = [m[0] for m in self.out_meta]
        for o in want:
            if o not in known:
                raise BadRequest(f"unknown output {o!r}: this model returns {', '.join(known)}")
        return Parsed(req, encoded, images, want)

    def infer(self, req: Any) -> Any:
        """The reply to one ModelInferRequest (run's reply)."""
        return self.run(req)[0]

    def run(self, req: Any) -> Tuple[Any, Timing]:
        """The reply to one ModelInferRequest and its execution's moments (run_batch of one); raises
        BadRequest, OverLimit, NotFound, or anything the preprocessing or model raised."""
        (res,), timing = self.run_batch([req])
        if isinstance(res, BaseException):
            try:
                raise res
            finally:
                res = None  # this frame, in the error's traceback, must not hold it (a reference cycle)
        return res, timing

    def run_batch(self, reqs: Sequence[Any]) -> Tuple[List[Any], Timing]:
        """One execution of several requests (a dynamic batch, batching.py; or one request): each
        request's reply or its exception, in order, and the execution's moments (triton.Timing:
        inputs read after parsing, infer after decode, preprocessing and the model, output once the
        replies are built; ``items``: the images executed, those of the requests answered OK).

        Each request is parsed, and decoded where the implementation decodes apart, on its own, so a
        malformed request or bad image fails only its request; a fused implementation's files go in
        as one call (batching.fused_files says what a bad file costs the others). The tensors of
        every request run through the model as one batch, and each reply takes its own rows. What
        fails for the whole batch (the model, an injected fault) fails every request in it.

        Stages (metrics.py): ``decode`` is reading the requests' images: parsing, and decoding where
        the implementation decodes apart (python, opencv, none); for a fused implementation (goprep,
        the presets) the files' decode runs inside ``preprocess`` (one call: decode and preprocessing
        cannot be told apart), and ``decode`` is the parsing alone."""
        st = self.metrics.stages if self.metrics is not None else None
        results: List[Any] = [None] * len(reqs)
        t0 = time.perf_counter_ns()
        live: List[Tuple[int, Parsed]] = []
        for k, req in enumerate(reqs):
            try:
                live.append((k, self.parse(req)))
            except Exception as e:  # noqa: BLE001 - this request's error, answered to it alone
                results[k] = detached(e)
        parsed = time.perf_counter_ns()  # Triton's compute_input ends here
        prep = self.prep
        fused = prep is not None and prep.fused
        decode = prep.decode if prep is not None else decode_images
        kept = []
        for k, p in live:
            if p.encoded and not fused:
                try:
                    p.images = decode(p.images, self.limits.max_pixels)
                except Exception as e:  # noqa: BLE001 - as above
                    results[k] = detached(e)
                    continue
            kept.append((k, p))
        live = kept
        t1 = t2 = t3 = time.perf_counter_ns()
        try:
            if live and self.fault is not None:
                self.fault()
            if live and self.delay:
                time.sleep(self.delay)
            outs: Dict[str, np.ndarray] = {}
            if live and prep is None:
                outs = {protocol.SHAPE: np.array([im.shape for _, p in live for im in p.images], np.int32)}
            elif live:
                tensors: Dict[int, np.ndarray] = {}  # the fused files' tensors, by request
                enc = [(k, p) for k, p in live if p.encoded and fused]
                if enc:
                    batch, ok, failed = fused_files(prep, [p.images for _, p in enc], self.limits.max_pixels)
                    for j, e in failed.items():
                        results[enc[j][0]] = e  # detached by fused_files
                    at = 0
                    for j in ok:
                        n = len(enc[j][1].images)
                        tensors[enc[j][0]] = batch[at : at + n]
                        at += n
                    live = [(k, p) for k, p in live if not (p.encoded and fused) or k in tensors]
                if len(live) == 1 and live[0][0] in tensors:
                    batch = tensors[live[0][0]]  # one request's call: its batch as it is
                elif live and len(tensors) == len(live) and list(tensors) == [k for k, _ in live]:
                    batch = np.concatenate([tensors[k] for k, _ in live])  # fused requests only, in order
                elif live:
                    batch = self._assemble(live, tensors)
                t2 = time.perf_counter_ns()
                if live:
                    outs = self._model(batch)
            t3 = time.perf_counter_ns()
        except Exception as e:  # noqa: BLE001 - the whole execution failed: every request in it
            err = detached(e)
            for k, _ in live:
                results[k] = err
            live, outs = [], {}
        if st is not None and live:
            st["decode"].observe((t1 - t0) / 1e9)
            if prep is not None:
                st["preprocess"].observe((t2 - t1) / 1e9)
            if self.model is not None:
                st["model"].observe((t3 - t2) / 1e9)
        at = 0
        for k, p in live:
            n = len(p.images)
            results[k] = self._reply(p, {name: a[at : at + n] for name, a in outs.items()})
            at += n
        return results, Timing(t0, parsed, t3, time.perf_counter_ns(), at)

    def _assemble(self, live: List[Tuple[int, "Parsed"]], tensors: Dict[int, np.ndarray]) -> np.ndarray:
        """The batch of every live request's tensors, in order: the fused files' rows from
        ``tensors``, the frames (or decoded images) preprocessed one by one. Each tensor is copied
        into the batch before the next call: goprep's variant writes every frame's call into the same
        buffer of its thread (preprocess.make_goprep)."""
        prep = self.prep
        batch = np.empty((sum(len(p.images) for _, p in live), *self.item_shape), self.item_dtype)
        at = 0
        for k, p in live:
            if k in tensors:
                batch[at : at + len(p.images)] = tensors[k]
                at += len(p.images)
                continue
            for im in p.images:
                batch[at] = prep(im)
                at += 1
        return batch

    def _model(self, batch: np.ndarray) -> Dict[str, np.ndarray]:
        """The outputs of a preprocessed batch: the tensor itself, the model's outputs, or their top K."""
        if self.model is None:
            return {protocol.TENSOR: batch}
        outs = self.model.run(batch)
        if self.topk:
            first = next(iter(outs.values()))
            idx = np.argsort(-first, axis=1, kind="stable")[:, : self.topk].astype(np.int32)
            outs = {protocol.TOPK_INDEX: idx, protocol.TOPK_SCORE: np.take_along_axis(first, idx, 1)}
        return outs

    def _reply(self, p: "Parsed", outs: Dict[str, np.ndarray]) -> Any:
        """The ModelInferResponse of one request: its rows of the outputs it asked for (all if none)."""
        m = protocol.pb()
        rep = m.ModelInferResponse(model_name=self.name, model_version="1", id=p.req.id)
        for name, a in outs.items():
            if p.want and name not in p.want:
                continue
            a = np.ascontiguousarray(a)
            rep.outputs.add(name=name, datatype=protocol.datatype(a.dtype), shape=list(a.shape))
            rep.raw_output_contents.append(a.tobytes())
        return rep

    @property
    def platform(self) -> str:
        return "onnxruntime_onnx" if self.model is not None else "goprep"

    def outputs(self) -> List[TensorSpec]:
        """The outputs (warm derived them), dims without the batch dimension."""
        return [TensorSpec(n, d, tuple(s[1:])) for n, d, s in self.out_meta]

    def metadata(self) -> Any:
        """ModelMetadataResponse: the config's tensors, each shape with the batch dimension (-1) first."""
        m = protocol.pb()
        TM = m.ModelMetadataResponse.TensorMetadata
        return m.ModelMetadataResponse(
            name=self.name, versions=["1"], platform=self.platform,
            inputs=[TM(name=t.name, datatype=t.datatype, shape=t.metadata_shape()) for t in INPUTS],
            outputs=[TM(name=t.name, datatype=t.datatype, shape=t.metadata_shape()) for t in self.outputs()])

    def config(self, batching: Optional[Dict[str, Any]] = None) -> Any:
        """ModelConfigResponse (triton.model_config): max_batch_size is the images a request (and a
        dynamic batch) may carry; ``batching``: the dynamic batcher's settings (None: off)."""
        return protocol.pb().ModelConfigResponse(
            config=model_config(self.name, self.platform, self.limits.max_batch, self.outputs(), batching))


class Malformed:
    """A request message that did not parse as its protobuf type: the handlers answer it
    INVALID_ARGUMENT (grpc's own deserializer failure is UNKNOWN, with a traceback in the log)."""

    def __init__(self, name: str, err: Exception) -> None:
        self.message = f"the request is not a valid {name} message: {str(err)[:200]}"


def parser(cls: Any) -> Callable[[bytes], Any]:
    """``cls.FromString`` for a handler's request_deserializer, a Malformed for bytes that do not parse."""
    from google.protobuf.message import DecodeError

    def parse(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except DecodeError as e:
            return Malformed(cls.__name__, e)

    return parse


class Servicer:
    """The grpc.aio handlers of a service.Service; ``handler()`` is the generic handler to add to a
    grpc.aio server."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.engine = service.engine

    def handler(self) -> Any:
        import grpc

        m = protocol.pb()

        def unary(fn: Any, req: Any, rep: Any) -> Any:
            async def call(msg: Any, ctx: Any) -> Any:
                if isinstance(msg, Malformed):
                    await ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, msg.message)
                return await fn(msg, ctx)

            return grpc.unary_unary_rpc_method_handler(call, request_deserializer=parser(req),
                                                       response_serializer=rep.SerializeToString)

        return grpc.method_handlers_generic_handler(protocol.SERVICE, {
            "ServerLive": unary(self.server_live, m.ServerLiveRequest, m.ServerLiveResponse),
            "ServerReady": unary(self.server_ready, m.ServerReadyRequest, m.ServerReadyResponse),
            "ModelReady": unary(self.model_ready, m.ModelReadyRequest, m.ModelReadyResponse),
            "ServerMetadata": unary(self.server_metadata, m.ServerMetadataRequest, m.ServerMetadataResponse),
            "ModelMetadata": unary(self.model_metadata, m.ModelMetadataRequest, m.ModelMetadataResponse),
            "ModelConfig": unary(self.model_config, m.ModelConfigRequest, m.ModelConfigResponse),
            "ModelStatistics": unary(self.model_statistics, m.ModelStatisticsRequest, m.ModelStatisticsResponse),
            "RepositoryIndex": unary(self.repository_index, m.RepositoryIndexRequest, m.RepositoryIndexResponse),
            "ModelInfer": grpc.stream_unary_rpc_method_handler(
                self.model_infer, request_deserializer=parser(m.ModelInferRequest),
                response_serializer=m.ModelInferResponse.SerializeToString),
        })

    async def server_live(self, req: Any, ctx: Any) -> Any:
        return protocol.pb().ServerLiveResponse(live=True)

    async def server_ready(self, req: Any, ctx: Any) -> Any:
        return protocol.pb().ServerReadyResponse(ready=not self.service.state.draining)

    async def model_ready(self, req: Any, ctx: Any) -> Any:
        svc = self.service
        return protocol.pb().ModelReadyResponse(ready=svc.serves(req.name, req.version) and not svc.state.draining)

    async def server_metadata(self, req: Any, ctx: Any) -> Any:
        return server_metadata(self.service.version)

    async def _served(self, name: str, version: str, ctx: Any) -> None:
        """Abort the call with NOT_FOUND unless it names the served model (version "" or "1")."""
        import grpc

        if not self.service.serves(name, version):
            await ctx.abort(grpc.StatusCode.NOT_FOUND, self.service.not_found())

    async def model_metadata(self, req: Any, ctx: Any) -> Any:
        await self._served(req.name, req.version, ctx)
        return self.engine.metadata()

    async def model_config(self, req: Any, ctx: Any) -> Any:
        await self._served(req.name, req.version, ctx)
        return self.service.config()

    async def model_statistics(self, req: Any, ctx: Any) -> Any:
        """The served model's statistics; an empty name asks for every model's (the one)."""
        if req.name or req.version:
            await self._served(req.name, req.version, ctx)
        return protocol.pb().ModelStatisticsResponse(model_stats=[self.service.stats.message(self.engine.name)])

    async def repository_index(self, req: Any, ctx: Any) -> Any:
        import grpc

        if req.repository_name:
            await ctx.abort(grpc.StatusCode.NOT_FOUND, f"this server has one unnamed repository, not {req.repository_name!r}")
        return repository_index(self.engine.name, not self.service.state.draining, req.ready)

    async def model_infer(self, requests: Any, ctx: Any) -> Any:
        """ModelInfer (service.Service.infer): the request message read with the body timeout, the
        outcome's code as the call's status."""
        import grpc

        async def read() -> Any:
            req = await ctx.read()
            if req is grpc.aio.EOF:
                raise BadRequest("the call carried no request message")
            if isinstance(req, Malformed):
                raise BadRequest(req.message)
            return req

        out = await self.service.infer(read)
        if out.code != "OK":
            # The status set and no reply (grpc.aio sends none for a non-OK code) rather than
            # ctx.abort, whose AbortError grpc.aio keeps in a reference cycle with the call's state:
            # garbage for the collector's next pass, per failed call.
            ctx.set_code(grpc.StatusCode[out.code])
            ctx.set_details(out.message)
            return None
        return out.reply
