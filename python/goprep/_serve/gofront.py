"""``goprep serve --frontend go``: the gRPC request path in Go, inside this process (gomod/serve,
started through the binding's ServeStart). grpc-go reads each ModelInfer request, parses it, batches
it (--max-queue-delay), decodes and preprocesses its images with the engine (GIL released throughout)
and writes the reply; no Python runs per request.

Python keeps what it alone defines, one source each:

- the static replies (ServerMetadata, ModelMetadata, ModelConfig, RepositoryIndex, the messages of
  NOT_FOUND, UNAVAILABLE, RESOURCE_EXHAUSTED and INTERNAL, the health service's names), serialized once here by the builders
  the Python front end uses (oip.py, triton.py, service.py, batching.py);
- the preprocessing plan of each image size: one thread (``_answer``) loops on the binding's
  ServeNext, which blocks with the GIL released until Go needs the plan of an H x W x 3 uint8 source
  (Go caches it per size): the goprep pipeline is traced for that size (its own memo) and the plan's
  handle handed back; Go resolves it within ServeReply, while this thread still holds the plan;
- the ModelStatistics message: Go counts (serve.Snapshot), triton.Stats builds the message;
- with --model, the model: Go hands each batch of preprocessed tensors (its memory, read in place
  through a NumPy view; Go keeps it alive until the reply, even past the stop) to an answering
  thread, which runs oip.Engine._model (the model, or its --topk) and hands back each output's
  arrays as "id:nbytes" (checked against the output's size and copied by Go within ServeReplyArrays).

Invariants: a question from Go waits for its answer or for the server's stop (a statistics question
also for its call's end), and every question gets a reply, its error if answering failed, so an
exception here fails the request that needed it (INTERNAL, logged) and never hangs it; SIGTERM/SIGINT drain as the
Python front end does (new requests UNAVAILABLE, waiting ones run at once, running ones get
--grace seconds), then the gRPC server stops and ServeNext returns "" so the thread ends.

What it serves: the goprep preprocessing (--preprocess goprep) on the CPU, replying with TENSOR or,
with --model (and --topk), the model's outputs; not --http-port, --metrics-port, presets or other
implementations, --device other than cpu, nor the test plumbing (server.py refuses each with an
error naming the flag).
"""

from __future__ import annotations

import base64
import ctypes
import json
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List

import numpy as np

from . import protocol
from .batching import batching_config, queue_limit_message
from .service import DRAINING_MESSAGE, INTERNAL_MESSAGE, not_found_message, workers_limit_message
from .triton import Stats, repository_index, server_metadata

log = logging.getLogger("goprep.serve")


def config(args: Any, engine: Any) -> Dict[str, Any]:
    """The Go front end's configuration (gomod/serve Config) for ``args`` and a warmed ``engine``."""
    import goprep

    from .server import HEALTH_LIVE, HEALTH_READY

    delay = args.max_queue_delay
    batching = batching_config(args.preferred_batch_size, delay) if delay is not None else None
    name = engine.name
    static = {
        "ServerMetadata": server_metadata(goprep.__version__),
        "ModelMetadata": engine.metadata(),
        "ModelConfig": engine.config(batching),
        "RepositoryIndex": repository_index(name, True, False),
        "RepositoryIndexDraining": repository_index(name, False, False),
        "RepositoryIndexDrainingReady": repository_index(name, False, True),
    }
    def spec(name: str, dtype: str, shape: Any) -> Dict[str, Any]:
        return {"name": name, "datatype": dtype, "shape": list(shape),
                "itemsize": np.dtype(protocol.DTYPES[dtype]).itemsize}

    return {
        "model_name": name, "max_batch": args.max_batch, "max_queue": args.max_queue, "workers": args.workers,
        "delay_us": -1 if delay is None else delay, "preferred": list(args.preferred_batch_size),
        "max_pixels": args.max_pixels, "max_request_bytes": args.max_request_mb << 20,
        "max_streams": args.max_streams_per_connection, "max_concurrent_rpcs": args.max_concurrent_rpcs,
        "max_connections": args.max_connections, "body_timeout": args.body_timeout,
        "tensor": spec(protocol.TENSOR, protocol.datatype(engine.item_dtype), engine.item_shape),
        "model": engine.model is not None,
        "outputs": [spec(n, d, s[1:]) for n, d, s in engine.out_meta],
        "static": {k: base64.b64encode(v.SerializeToString()).decode() for k, v in static.items()},
        "not_found": not_found_message(name), "draining": DRAINING_MESSAGE, "internal": INTERNAL_MESSAGE,
        "queue_message": queue_limit_message(args.max_queue), "workers_message": workers_limit_message(args.max_queue),
        "health_live": list(HEALTH_LIVE), "health_ready": list(HEALTH_READY),
    }


class Answers:
    """What Python answers Go (module doc): plans by image size, the statistics message."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.fn = engine.prep._fn  # the goprep pipeline (preprocess._Fused)

    def plan(self, h: int, w: int) -> Any:
        """The Signature of the pipeline on an (h, w, 3) uint8 image (placed on the CPU, the engine's
        tensor shape); its ``handle`` is the plan."""
        from goprep import _inputs

        fn = self.fn
        items, _, _ = _inputs.adapt(np.zeros((h, w, 3), np.uint8), None, fn._host_only, fn._accepts)
        sig = fn._signature(items[0], (), {}, (), ())
        if not sig.cpu or tuple(sig.shape) != self.engine.item_shape or sig.dtype != self.engine.item_dtype:
            raise ValueError(f"the pipeline's plan for a {w}x{h} image gives {sig.shape} {sig.dtype} "
                             f"(placed on the CPU: {sig.cpu}), not the served {self.engine.item_shape}")
        return sig

    def model(self, addr: int, n: int) -> List[np.ndarray]:
        """The model's outputs (oip.Engine._model: the logits, or --topk's) of the n preprocessed
        images at ``addr`` (Go's batch, read in place during the call), each checked against its
        ModelMetadata shape and datatype, C-contiguous, in ``out_meta``'s order."""
        eng = self.engine
        count = n * int(np.prod(eng.item_shape))
        buf = (ctypes.c_char * (count * np.dtype(eng.item_dtype).itemsize)).from_address(addr)
        batch = np.frombuffer(buf, eng.item_dtype, count).reshape(n, *eng.item_shape)
        outs = eng._model(batch)
        arrays = []
        for name, dtype, shape in eng.out_meta:
            a = np.ascontiguousarray(outs[name])
            if a.shape != (n, *shape[1:]) or protocol.datatype(a.dtype) != dtype:
                raise ValueError(f"output {name} is {protocol.datatype(a.dtype)} {list(a.shape)}, want {dtype} "
                                 f"{[n, *shape[1:]]}")
            arrays.append(a)
        return arrays

    def stats(self, snap: Dict[str, Any]) -> bytes:
        st = Stats.load(snap).message(self.engine.name)
        return protocol.pb().ModelStatisticsResponse(model_stats=[st]).SerializeToString()  # type: ignore[no-any-return]


def answer_loop(mod: Any, answers: Answers) -> None:
    """Answer Go's questions until the front end stops (ServeNext returns ""). Each question is
    answered, with its error if it failed; if the answer itself fails, a fallback error reply is sent,
    so no request waits on a question this thread dropped."""
    while True:
        text = mod.ServeNext()
        if not text:
            return
        job: Any = None
        try:
            job = json.loads(text)
            answer(mod, answers, job)
        except Exception as e:  # noqa: BLE001 - the reply itself failed: answer with an error instead
            log.error("answering the Go front end failed", exc_info=e)
            if isinstance(job, dict) and "id" in job:
                try:
                    mod.ServeReply(int(job["id"]), 0, "", "the answer failed")  # Go drops a duplicate
                except Exception as e2:  # noqa: BLE001 - logged; the request then waits for the stop
                    log.error("the fallback reply to the Go front end failed", exc_info=e2)


def answer(mod: Any, answers: Answers, job: Dict[str, Any]) -> None:
    """Answer one question (a plan, the statistics, a model batch) through the binding."""
    err = ""
    if job["kind"] == "model":
        arrays: List[np.ndarray] = []
        try:
            arrays = answers.model(int(job["addr"]), int(job["n"]))
        except Exception as e:  # noqa: BLE001 - the batch's requests fail INTERNAL
            log.error("the model failed on a batch of %d images", job["n"], exc_info=e)
            err = f"{type(e).__name__}: {str(e)[:300]}"
        mod.ServeReplyArrays(int(job["id"]), ",".join(f"{id(a)}:{a.nbytes}" for a in arrays), err)
        return  # the arrays were held until Go copied them (inside ServeReplyArrays)
    sig, data = None, ""
    try:
        if job["kind"] == "plan":
            sig = answers.plan(int(job["h"]), int(job["w"]))
        else:
            data = base64.b64encode(answers.stats(job["snapshot"])).decode()
    except Exception as e:  # noqa: BLE001 - this question's failure: the requests that asked fail INTERNAL
        log.error("answering the Go front end's %s question failed", job.get("kind"), exc_info=e)
        err = f"{type(e).__name__}: {str(e)[:300]}"
    mod.ServeReply(int(job["id"]), sig.handle if sig is not None else 0, data, err)
    # sig was held until Go resolved the plan handle (inside ServeReply)


def serve(args: Any, engine: Any, addr: str, ready: str) -> int:
    """Run the Go front end until SIGTERM/SIGINT (or the watchdog's parent-pid / max-seconds); 0 once
    it has drained and stopped, 2 when it cannot listen."""
    from goprep import _native

    from .server import _watch

    mod = _native.get()
    cfg = json.dumps(config(args, engine))
    try:
        port = _native.call(mod.ServeStart, addr, cfg)
    except Exception as e:  # noqa: BLE001 - the listen error, one line
        print(f"goprep serve: {e}", file=sys.stderr)
        return 2
    answers = Answers(engine)
    # One answering thread per worker: the model runs on several batches at once, as the Python
    # front end's worker threads run it.
    threads = [threading.Thread(target=answer_loop, args=(mod, answers), name=f"goprep-serve-go-{k}", daemon=True)
               for k in range(args.workers)]
    for t in threads:
        t.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    host = args.host
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    print(f"{ready} {where} preprocess={args.preprocess} model={args.model} frontend=go pid={os.getpid()}", flush=True)
    t_end = time.monotonic() + args.max_seconds if args.max_seconds > 0 else None
    while not stop.wait(0.2):
        if _watch(args.parent_pid, t_end):
            break
    mod.ServeStop(float(args.grace))
    t_join = time.monotonic() + 5.0  # one deadline for all the threads
    for t in threads:
        t.join(max(0.0, t_join - time.monotonic()))
    print("goprep serve: stopped", file=sys.stderr, flush=True)
    return 0
