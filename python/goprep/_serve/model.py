"""A small image classifier built in code with onnx.helper (no model file), run with onnxruntime.

Three strided 3x3 convolutions with ReLU, global average pooling and a 1000-way linear layer with
softmax: ~25 MFLOP per 224x224 image, a stand-in for a real model's cost and interface, with fixed
random weights (seeded), so every process builds the same model and the load generator can check the
server's top-k against its own run of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CLASSES = 1000


def build(seed: int = 0, softmax: bool = True) -> bytes:
    """The serialised ONNX model: input "image" (N, 3, 224, 224) float32, output "prob" (N, 1000), or
    without ``softmax`` "logits" (N, 1000) (serve-bench's setting (a): logits as the reply)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    chans = [3, 16, 32, 64]
    x = "image"
    for i in range(3):
        cin, cout = chans[i], chans[i + 1]
        w = (rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2 / (cin * 9))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        x = f"r{i}"
    fc = (rng.standard_normal((chans[-1], CLASSES)) * 0.5).astype(np.float32)
    inits.append(numpy_helper.from_array(fc, "fc"))
    nodes += [
        helper.make_node("GlobalAveragePool", [x], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("MatMul", ["flat", "fc"], ["logits"]),
    ] + ([helper.make_node("Softmax", ["logits"], ["prob"], axis=1)] if softmax else [])
    graph = helper.make_graph(
        nodes,
        "goprep_reference_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("prob" if softmax else "logits", TensorProto.FLOAT, ["N", CLASSES])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="goprep")
    model.ir_version = 8  # readable by every onnxruntime since 1.10
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


class OnnxModel:
    """An onnxruntime session serving one ONNX model: its first input takes the preprocessed batch
    ``(N, ...)``; ``run(batch)`` returns every output by name.

    ``source`` is a path to a .onnx file or the serialised model (bytes). CUDA's execution provider
    is used when onnxruntime has it and a GPU is there, else the CPU's."""

    def __init__(self, source: "str | bytes", threads: int = 1, name: str = "") -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        # Request-level concurrency comes from the server's worker threads; one intra-op thread per
        # call keeps N concurrent calls from each starting a pool sized to all cores.
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        # onnxruntime would log every failed run itself; the server logs failures, rate-limited (oip.py)
        opts.log_severity_level = 4
        avail = ort.get_available_providers()
        providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in avail]
        self._sess = ort.InferenceSession(source, sess_options=opts, providers=providers)
        self.providers = self._sess.get_providers()
        inp = self._sess.get_inputs()
        if len(inp) != 1:
            raise ValueError(f"the model has {len(inp)} inputs; goprep serve feeds exactly one (the preprocessed image batch)")
        self.input = inp[0]
        self.outputs = self._sess.get_outputs()
        self.name = name
        self.dtype = _ORT_DTYPES.get(self.input.type)
        if self.dtype is None:
            raise ValueError(f"the model's input {self.input.name!r} is {self.input.type}; goprep serve feeds float32 or float16")

    def check_shape(self, item_shape: tuple) -> None:
        """ValueError unless the model's input takes a batch of items of ``item_shape``."""
        want = self.input.shape
        if len(want) != len(item_shape) + 1 or any(
                isinstance(w, int) and w != g for w, g in zip(want[1:], item_shape)):
            raise ValueError(f"the model's input {self.input.name!r} has shape {want}; the preprocessing gives "
                             f"batches of {list(item_shape)}")

    def run(self, batch: np.ndarray) -> "dict[str, np.ndarray]":
        first = self.input.shape[0]
        x = np.asarray(batch, self.dtype)
        if isinstance(first, int) and first != x.shape[0]:  # a fixed batch size: run the items one by one
            parts = [self._sess.run(None, {self.input.name: x[i : i + 1]}) for i in range(x.shape[0])]
            res = [np.concatenate([p[k] for p in parts]) for k in range(len(self.outputs))]
        else:
            res = self._sess.run(None, {self.input.name: x})
        return {o.name: np.ascontiguousarray(r) for o, r in zip(self.outputs, res)}


_ORT_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16}


def builtin(threads: int = 1) -> OnnxModel:
    """The demo and test model (``serve --model builtin``): ``build()`` in an OnnxModel."""
    return OnnxModel(build(), threads, "builtin")


class Classifier:
    """An onnxruntime session of ``build()``; ``scores(chw)`` returns the 1000 class probabilities."""

    def __init__(self, threads: int = 1, seed: int = 0) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        # Request-level concurrency comes from the server's worker threads; one intra-op thread per
        # call keeps N concurrent calls from each starting a pool sized to all cores.
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self._sess = ort.InferenceSession(build(seed), sess_options=opts, providers=["CPUExecutionProvider"])

    def scores(self, chw: Any) -> np.ndarray:
        out = self._sess.run(["prob"], {"image": np.asarray(chw, np.float32)[None]})[0]
        return np.asarray(out[0])


# serve-bench's model settings (--model NAME): the file each server loads and the load generator runs.
BENCH_MODELS = {
    "tiny": "the built-in tiny classifier (build(), logits): the stand-in for a model on an accelerator",
    "mobilenet": "torchvision's MobileNetV3-Small, random weights, exported to ONNX: a real model on this CPU",
}


def _cache_dir() -> str:
    import os

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "goprep", "models")


def _write_once(path: str, make: Any) -> str:
    """``path``, written by ``make()`` (bytes) if missing: under a lock, through a temporary file and a
    rename, so concurrent processes see a whole file or none."""
    import fcntl
    import os

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(path):
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(make())
            os.replace(tmp, path)
    return path


def mobilenet_onnx(seed: int = 0) -> bytes:
    """MobileNetV3-Small (torchvision, ``weights=None``: nothing is downloaded) with seeded random
    weights, as ONNX: input "image" (N, 3, 224, 224), output "logits" (N, 1000). Its batch-norm
    statistics are set by four training-mode passes over seeded noise (else, at their initial mean 0
    and variance 1, the activations shrink layer by layer to logits of ~1e-9, which any tolerance
    would pass); the weights stay random."""
    import io

    import torch
    import torchvision

    torch.manual_seed(seed)
    net = torchvision.models.mobilenet_v3_small(weights=None)
    for mod in net.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            mod.momentum = None  # a cumulative average over the calibration passes
            mod.reset_running_stats()
    gen = torch.Generator().manual_seed(seed + 1)
    net.train()
    with torch.no_grad():
        for _ in range(4):
            net(torch.randn(8, 3, 224, 224, generator=gen))
    net.eval()
    buf = io.BytesIO()
    # the TorchScript exporter: the dynamo one needs onnxscript, which the test extra does not hold
    torch.onnx.export(net, torch.zeros(1, 3, 224, 224), buf, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}}, opset_version=17, dynamo=False)
    return buf.getvalue()


def bench_model(name: str, seed: int = 0) -> str:
    """The ONNX file of serve-bench's model setting ``name`` (BENCH_MODELS), made once and cached under
    ~/.cache/goprep/models, keyed by what makes it (MobileNet: the torch and torchvision versions);
    ValueError for an unknown name."""
    import os

    if name == "tiny":
        import onnx

        path = os.path.join(_cache_dir(), f"tiny-logits-onnx{onnx.__version__}-seed{seed}.onnx")
        return _write_once(path, lambda: build(seed, softmax=False))
    if name == "mobilenet":
        from importlib.metadata import PackageNotFoundError, version

        try:  # the installed versions, without importing torch (seconds) when the file is cached
            torch_v, tv_v = version("torch"), version("torchvision")
        except PackageNotFoundError:
            raise ValueError("--model mobilenet needs torch and torchvision (pip install torchvision)") from None
        path = os.path.join(_cache_dir(), f"mobilenet_v3_small-torch{torch_v}-tv{tv_v}-seed{seed}.onnx".replace("+", "_"))
        return _write_once(path, lambda: mobilenet_onnx(seed))
    raise ValueError(f"--model must be one of {', '.join(BENCH_MODELS)}, got {name!r}")


# How far a server's logits may be from the load generator's run of the same ONNX file on the same
# tensor: relative to the largest logit. Both run onnxruntime's CPU kernels in float32; only the batch
# a server runs (dynamic batching) and the build (the PyTriton venv's onnxruntime, the same version)
# can change the summation order, by float32 rounding over the ~1e3-term dot products (~1e-6
# relative). Measured (onnxruntime 1.32, this CPU): 0.0 between batch 1 and batches of 2, 5, 8 and 16,
# both models; two different noise images' logits differ by 0.046 (tiny) and 0.47 (MobileNet) of the
# largest. 1e-4 leaves a wide margin for rounding and still catches another image's reply.
LOGITS_RTOL = 1e-4


def logits_error(got: np.ndarray, want: np.ndarray, rtol: float = LOGITS_RTOL) -> str:
    """'' when ``got`` equals ``want`` within ``rtol`` times want's largest magnitude, else what differs."""
    if got.shape != want.shape:
        return f"logits of shape {got.shape}, want {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
    return "" if err <= rtol * scale else f"logits differ by {err:.3g} > {rtol:g} x {scale:.3g}"
