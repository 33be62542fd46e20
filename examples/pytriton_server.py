"""goprep inside a real Triton Inference Server, through PyTriton (docs/TRITON.md, "goprep inside
Triton"): Triton batches the requests (its dynamic batcher), and each execution's JPEG or PNG files go
through one goprep pipeline call, decoded and preprocessed in parallel with the GIL released.

    pip install nvidia-pytriton goprep     # in a venv of an interpreter with a shared libpython
    GOPREP_TRITON_TOKEN=secret python examples/pytriton_server.py --grpc-port 8001 --http-port 8000

The model ``goprep`` takes ``IMAGE`` (BYTES, one encoded file per batch item: shape [N] or [N, 1])
and replies ``TENSOR`` (float32, [N, 3, 224, 224]). Triton's admin endpoints (statistics, the model
repository, ...) take the access token in the ``triton-access-token`` header (HTTP) or
``triton-grpc-protocol-triton-access-token`` (gRPC); it is GOPREP_TRITON_TOKEN when set, else one
PyTriton draws at random. When the server is ready a line ``ready grpc=PORT http=PORT`` is printed;
SIGINT or SIGTERM stops it.
"""

import argparse
import os
import signal
import sys
import threading

import numpy as np

import goprep
import goprep.triton

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@goprep.pipeline
def preprocess(img):
    """224x224 bilinear, ImageNet-normalised, CHW float32."""
    x = goprep.resize(img, (224, 224), interpolation="bilinear")
    return goprep.normalize(x, mean=MEAN, std=STD, dtype="float32", layout="CHW")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="address Triton binds (default: loopback only)")
    p.add_argument("--grpc-port", type=int, default=8001)
    p.add_argument("--http-port", type=int, default=8000)
    p.add_argument("--metrics-port", type=int, default=8002)
    p.add_argument("--max-batch-size", type=int, default=32, help="images per execution")
    p.add_argument("--max-queue-delay-us", type=int, default=2000, help="Triton's dynamic batcher delay")
    p.add_argument("--instances", type=int, default=1, help="model instances (each one call at a time)")
    args = p.parse_args(argv)

    try:
        from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
        from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig
    except ImportError as e:
        sys.exit(f"{e}: pip install nvidia-pytriton (in a venv of its own: 0.7 requires numpy<2; "
                 "docs/TRITON.md, \"goprep inside Triton\", says which Pythons its stub accepts)")

    config = TritonConfig(grpc_address=args.host, grpc_port=args.grpc_port, http_address=args.host,
                          http_port=args.http_port, metrics_address=args.host, metrics_port=args.metrics_port)
    security = TritonSecurityConfig(access_token=os.environ.get("GOPREP_TRITON_TOKEN") or None)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with Triton(config=config, security_config=security) as triton:
        triton.bind(
            model_name="goprep",
            infer_func=[goprep.triton.infer_func(preprocess, input="IMAGE", output="TENSOR")] * args.instances,
            inputs=[Tensor(name="IMAGE", dtype=np.object_, shape=(1,))],
            outputs=[Tensor(name="TENSOR", dtype=np.float32, shape=(3, 224, 224))],
            config=ModelConfig(max_batch_size=args.max_batch_size,
                               batcher=DynamicBatcher(max_queue_delay_microseconds=args.max_queue_delay_us)),
            strict=True,
        )
        triton.run()
        print(f"ready grpc={args.grpc_port} http={args.http_port}", flush=True)
        while not stop.wait(1.0):
            if not triton.is_alive():
                sys.exit("Triton Inference Server stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
