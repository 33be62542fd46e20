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


def build(seed: int = 0) -> bytes:
    """The serialised ONNX model: input "image" (N, 3, 224, 224) float32, output "prob" (N, 1000)."""
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
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "goprep_reference_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", CLASSES])],
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
