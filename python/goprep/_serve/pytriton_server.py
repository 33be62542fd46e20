"""serve-bench's PyTriton variants: Triton Inference Server (PyTriton 0.7, Triton 2.51) serving one
model ``goprep`` whose bound function preprocesses an execution's JPEG or PNG files and runs the ONNX
model on the batch, replying with its first output (the logits).

``--preprocess goprep``: the execution's files as one goprep pipeline call (decoded and preprocessed in
parallel, GIL released; the same pipeline as ``serve --preprocess goprep``); ``--preprocess opencv``:
Pillow's header check, ``cv2.imdecode``, OpenCV resize and flip and NumPy, one file after the other
(preprocess._OpenCV, as the OpenCV server). Both take the input ``IMAGE`` (BYTES, [N, 1]), batched by
Triton's dynamic batcher, and run in pytriton_env's overlay venv (NumPy 1):

    python -m goprep._serve.pytriton_server --preprocess goprep --model PATH.onnx --grpc-port N ...

prints ``ready grpc=PORT http=PORT`` when it serves; SIGTERM or SIGINT stops it, as does the parent's
exit (``--parent-pid``). The access token is read from GOPREP_TRITON_TOKEN (pytriton_env.TOKEN_ENV).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any, Dict, List, Mapping, Sequence

import numpy as np

READY = "ready grpc="
MAX_PIXELS = 4096 * 4096  # serve's default --max-pixels


def make_infer(preprocess: str, model_path: str) -> Any:
    """The bound function: a list of requests in, per request ``{output: logits rows}`` out."""
    from goprep.triton import files_of

    from .model import OnnxModel
    from .preprocess import make

    prep = make(preprocess)
    if prep is None:
        raise ValueError("--preprocess must be goprep or opencv")
    model = OnnxModel(model_path)
    out_name = model.outputs[0].name

    def infer(requests: Sequence[Mapping[str, Any]]) -> List[Dict[str, np.ndarray]]:
        groups = [files_of(r["IMAGE"]) for r in requests]
        files = [f for g in groups for f in g]
        if prep.fused:
            starts, at = [], 0
            for g in groups:
                starts.append(at)
                at += len(g)
            batch = prep.files(files, MAX_PIXELS, starts)
        else:
            batch = np.stack([prep(im) for im in prep.decode(files, MAX_PIXELS)])
        logits = model.run(batch)[out_name]
        out, at = [], 0
        for g in groups:
            out.append({out_name: logits[at:at + len(g)]})
            at += len(g)
        return out

    return infer, out_name, model


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m goprep._serve.pytriton_server", description=__doc__.split("\n\n")[0])
    p.add_argument("--preprocess", choices=["goprep", "opencv"], required=True)
    p.add_argument("--model", required=True, metavar="PATH.onnx")
    p.add_argument("--grpc-port", type=int, required=True)
    p.add_argument("--http-port", type=int, required=True)
    p.add_argument("--metrics-port", type=int, required=True)
    p.add_argument("--max-batch-size", type=int, default=32)
    p.add_argument("--max-queue-delay-us", type=int, default=2000)
    p.add_argument("--instances", type=int, default=1)
    p.add_argument("--parent-pid", type=int, default=0)
    args = p.parse_args(argv)

    from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
    from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

    from .pytriton_env import TOKEN_ENV

    funcs = [make_infer(args.preprocess, args.model) for _ in range(args.instances)]
    out_name, model = funcs[0][1], funcs[0][2]
    warm = np.zeros((1, 3, 224, 224), np.float32)
    n_out = model.run(warm)[out_name].shape[1]
    config = TritonConfig(grpc_address="127.0.0.1", grpc_port=args.grpc_port, http_address="127.0.0.1",
                          http_port=args.http_port, metrics_address="127.0.0.1", metrics_port=args.metrics_port)
    security = TritonSecurityConfig(access_token=os.environ.get(TOKEN_ENV) or None)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with Triton(config=config, security_config=security) as triton:
        triton.bind(
            model_name="goprep",
            infer_func=[f[0] for f in funcs],
            inputs=[Tensor(name="IMAGE", dtype=np.object_, shape=(1,))],
            outputs=[Tensor(name=out_name, dtype=np.float32, shape=(n_out,))],
            config=ModelConfig(max_batch_size=args.max_batch_size,
                               batcher=DynamicBatcher(max_queue_delay_microseconds=args.max_queue_delay_us)),
            strict=True,
        )
        triton.run()
        print(f"{READY}{args.grpc_port} http={args.http_port} pid={os.getpid()}", flush=True)
        while not stop.wait(0.5):
            if not triton.is_alive():
                print("Triton Inference Server stopped", file=sys.stderr)
                return 1
            if args.parent_pid and os.getppid() != args.parent_pid:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
