"""What the reference server speaks and what "the same tensor" means.

The wire protocol is the Open Inference Protocol v2 over gRPC (KServe v2, Triton's
``inference.GRPCInferenceService``), so ``tritonclient.grpc`` and KServe clients work unchanged. The
message classes are the ones ``tritonclient[grpc]`` ships (``tritonclient.grpc.service_pb2``); the
server and the load generator import them from there (no generated code is kept in goprep).

The served model (one, named by ``serve --model-name``, default ``goprep``) takes exactly one of two
inputs per request:

- ``IMAGE``: BYTES, shape ``[N]``: N encoded images (JPEG or PNG files);
- ``FRAME``: UINT8, shape ``[H, W, 3]`` or ``[N, H, W, 3]``: raw RGB frames, row-major;

and replies with the model's output tensors (``serve --model``), or, without a model, the
preprocessed batch as ``TENSOR`` (FP32, ``[N, 3, 224, 224]`` for the default preprocessing), or,
from the calibration variant ``--preprocess none``, only each decoded image's shape as ``SHAPE``
(INT32 ``[N, 3]``). With ``--topk K`` and a model, the first output's top K per image come back as
``TOPK_INDEX`` (INT32 ``[N, K]``) and ``TOPK_SCORE`` (``[N, K]``). Tensors travel in
``raw_input_contents`` / ``raw_output_contents`` (little-endian; BYTES elements each prefixed with
its uint32 length, as Triton does).

The tensor of the built-in preprocessing (python, opencv and goprep alike): the RGB image resized to
224x224 with bilinear interpolation on half-pixel centres and no antialiasing
(``cv2.resize(INTER_LINEAR)`` semantics), mirrored left-right, scaled to [0, 1], normalised with the
ImageNet mean and std, CHW float32. OpenCV and goprep agree exactly; Pillow's affine-transform
bilinear rounds differently and is off by at most one level of 255 on some pixels. After normalising,
one level is 1 / (255 * 0.224) = 0.0175 for the channel with the smallest std, so any two
implementations agree within ``TOLERANCE`` per element: the load generator checks every reply's full
tensor against its own reference within that bound.
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Sequence

import numpy as np

SERVICE = "inference.GRPCInferenceService"
IMAGE, FRAME = "IMAGE", "FRAME"  # the two inputs
TENSOR, SHAPE, TOPK_INDEX, TOPK_SCORE = "TENSOR", "SHAPE", "TOPK_INDEX", "TOPK_SCORE"  # outputs

SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
TOLERANCE = 1.0 / (255 * min(STD)) + 1e-4  # one uint8 level after normalising, plus float32 rounding

# Open Inference Protocol datatype names <-> NumPy dtypes (BYTES is handled apart).
DTYPES: Dict[str, Any] = {
    "BOOL": np.bool_, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "UINT64": np.uint64,
    "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64,
}
DATATYPE = {np.dtype(v).str: k for k, v in DTYPES.items()}


def pb() -> Any:
    """The generated message module (tritonclient.grpc.service_pb2)."""
    from tritonclient.grpc import service_pb2

    return service_pb2


def datatype(dtype: Any) -> str:
    """The protocol's name of a NumPy dtype (ValueError for one it has no name for)."""
    try:
        return DATATYPE[np.dtype(dtype).newbyteorder("<").str]
    except KeyError:
        raise ValueError(f"no Open Inference Protocol datatype for {np.dtype(dtype)}") from None


def pack_bytes(items: Sequence[bytes]) -> bytes:
    """A BYTES tensor's raw contents: each element prefixed with its length (uint32, little-endian)."""
    return b"".join(struct.pack("<I", len(b)) + bytes(b) for b in items)


def unpack_bytes(raw: bytes, count: int) -> List[memoryview]:
    """The ``count`` elements of a BYTES tensor's raw contents, as views; ValueError if malformed."""
    mv, out, off = memoryview(raw), [], 0
    for _ in range(count):
        if off + 4 > len(mv):
            raise ValueError("BYTES contents end inside an element's length prefix")
        (n,) = struct.unpack_from("<I", mv, off)
        off += 4
        if off + n > len(mv):
            raise ValueError("BYTES element runs past the end of the contents")
        out.append(mv[off : off + n])
        off += n
    if off != len(mv):
        raise ValueError(f"BYTES contents have {len(mv) - off} bytes after the {count} elements of the shape")
    return out


def infer_request(model: str, payload: str, data: Any) -> Any:
    """A ModelInferRequest for ``model``: ``payload`` "jpeg" (data: encoded files) or "raw" (data: an
    (H, W, 3) or (N, H, W, 3) uint8 array)."""
    m = pb()
    req = m.ModelInferRequest(model_name=model)
    if payload == "raw":
        a = np.ascontiguousarray(data, np.uint8)
        req.inputs.add(name=FRAME, datatype="UINT8", shape=list(a.shape))
        req.raw_input_contents.append(a.tobytes())
    else:
        files = [data] if isinstance(data, (bytes, bytearray)) else list(data)
        req.inputs.add(name=IMAGE, datatype="BYTES", shape=[len(files)])
        req.raw_input_contents.append(pack_bytes(files))
    return req


def outputs(rep: Any) -> Dict[str, np.ndarray]:
    """A ModelInferResponse's output tensors by name (numeric datatypes)."""
    out = {}
    for o, raw in zip(rep.outputs, rep.raw_output_contents):
        out[o.name] = np.frombuffer(raw, DTYPES[o.datatype]).reshape(tuple(o.shape))
    return out


def tensor_error(got: np.ndarray, want: np.ndarray, tolerance: float = TOLERANCE) -> str:
    """'' when ``got`` equals the reference tensor ``want`` within ``tolerance`` per element, else
    what differs."""
    if got.shape != want.shape:
        return f"tensor of shape {got.shape}, want {want.shape}"
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    return "" if err <= tolerance else f"tensor differs by {err:.4g} > {tolerance:.4g}"


def check_topk(index: np.ndarray, score: np.ndarray, ref_scores: np.ndarray, atol: float = 1e-3) -> str:
    """'' when the top-k scores are the reference model's scores for those classes and no other class
    scores clearly higher (ties within tolerance may order differently)."""
    if index.size == 0 or np.any(index < 0) or np.any(index >= ref_scores.size):
        return f"bad class indices {index.tolist()}"
    if not np.allclose(score, ref_scores[index], atol=atol):
        return f"scores {score.tolist()} differ from the reference {ref_scores[index].tolist()}"
    kth = np.sort(ref_scores)[::-1][index.size - 1]
    if float(score.min()) < float(kth) - atol:
        return "a higher-scoring class is missing from the top-k"
    return ""
