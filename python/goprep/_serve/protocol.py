"""The wire format of the reference server, and what "the same tensor" means.

The service is ``goprep.Preprocess`` with unary methods taking and returning raw bytes (grpcio generic
handlers, no generated stubs):

- ``Infer``: a request is a 16-byte header (``GPR1``, payload kind, height, width, channels as
  little-endian uint32) followed by the payload: ``RAW`` is an (H, W, 3) uint8 RGB frame, row-major;
  ``JPEG`` is a JPEG file (H, W, C are 0). The reply is a checksum of the preprocessed tensor
  (``CHECKSUM``), or the model's top-k classes (``TOPK``) when the server runs a model, or, from the
  calibration variant ``none`` (decode only, no preprocessing), the decoded image's shape (``NONE``).
- ``Stats``: the server's ``goprep.stats()`` (empty for the non-goprep variants) and its GPU counters as
  JSON; a request body of ``reset`` resets them.

The tensor: the RGB image resized to 224x224 with bilinear interpolation on half-pixel centres and no
antialiasing (``cv2.resize(INTER_LINEAR)`` semantics), mirrored left-right, scaled to [0, 1],
normalised with the ImageNet mean and std, CHW float32. The three implementations compute the resized
uint8 image with different code: OpenCV and goprep agree exactly, Pillow's affine-transform bilinear
rounds differently and is off by at most one level of 255 on some pixels. After normalising, one level
is 1 / (255 * 0.224) = 0.0175 for the channel with the smallest std, so any two implementations agree
within ``TOLERANCE`` per element; that is the definition of "same tensor" every reply is checked
against (tests/test_serve.py checks the full tensors, not only the checksum).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, Tuple

import numpy as np

SERVICE = "goprep.Preprocess"
INFER = f"/{SERVICE}/Infer"
STATS = f"/{SERVICE}/Stats"

RAW, JPEG = 0, 1
CHECKSUM, TOPK, NONE = 0, 1, 2
PAYLOADS = {"raw": RAW, "jpeg": JPEG}

SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
TOLERANCE = 1.0 / (255 * min(STD)) + 1e-4  # one uint8 level after normalising, plus float32 rounding

_REQ = struct.Struct("<4sIIII")
_REP = struct.Struct("<4sII")  # magic, kind, count
_MAGIC = b"GPR1"
SUB = 8  # the checksum keeps every SUB-th row and column of each channel: 3 x 28 x 28 values


def encode_request(kind: int, payload: Any, shape: Tuple[int, int, int] = (0, 0, 0)) -> bytes:
    return _REQ.pack(_MAGIC, kind, *shape) + bytes(payload)


def decode_request(req: bytes) -> Tuple[int, Tuple[int, int, int], memoryview]:
    """Header fields and a zero-copy view of the payload; ValueError on a malformed request."""
    if len(req) < _REQ.size:
        raise ValueError(f"request of {len(req)} bytes is shorter than the {_REQ.size}-byte header")
    magic, kind, h, w, c = _REQ.unpack_from(req)
    if magic != _MAGIC:
        raise ValueError(f"bad magic {magic!r}")
    body = memoryview(req)[_REQ.size :]
    if kind == RAW:
        if c != 3 or not 0 < h <= 16384 or not 0 < w <= 16384 or len(body) != h * w * c:
            raise ValueError(f"raw frame header {h}x{w}x{c} does not match {len(body)} payload bytes (need RGB)")
    elif kind != JPEG:
        raise ValueError(f"unknown payload kind {kind}")
    return kind, (h, w, c), body


def checksum(t: np.ndarray) -> bytes:
    """What the server returns without a model: the tensor's sum and a fixed subsample. The sum is
    NumPy's float32 pairwise sum (error ~1e-4 on a 224x224x3 tensor, far inside the check's bound of
    TOLERANCE per element); summing in float64 cost twice as much (97 vs 49 us per request measured),
    the same for every variant."""
    sub = np.ascontiguousarray(t[:, ::SUB, ::SUB], dtype=np.float32)
    return _REP.pack(_MAGIC, CHECKSUM, sub.size) + struct.pack("<d", float(t.sum())) + sub.tobytes()


def topk_reply(scores: np.ndarray, k: int) -> bytes:
    idx = np.argsort(-scores, kind="stable")[:k].astype(np.int32)
    return _REP.pack(_MAGIC, TOPK, k) + idx.tobytes() + scores[idx].astype(np.float32).tobytes()


def none_reply(img: np.ndarray) -> bytes:
    """The calibration variant's reply (no preprocessing): the decoded image's shape."""
    return _REP.pack(_MAGIC, NONE, 3) + struct.pack("<3I", *img.shape)


def decode_reply(rep: bytes) -> Dict[str, Any]:
    magic, kind, n = _REP.unpack_from(rep)
    if magic != _MAGIC:
        raise ValueError(f"bad reply magic {magic!r}")
    body = memoryview(rep)[_REP.size :]
    if kind == CHECKSUM:
        (total,) = struct.unpack_from("<d", body)
        return {"kind": "checksum", "sum": total, "sub": np.frombuffer(body, np.float32, count=n, offset=8)}
    if kind == TOPK:
        return {
            "kind": "topk",
            "index": np.frombuffer(body, np.int32, count=n),
            "score": np.frombuffer(body, np.float32, count=n, offset=4 * n),
        }
    if kind == NONE:
        return {"kind": "none", "shape": struct.unpack_from("<3I", body)}
    raise ValueError(f"unknown reply kind {kind}")


class Expected:
    """What a checksum reply must match for one reference tensor, computed once (the load generator
    checks every reply on the same cores the server runs on)."""

    __slots__ = ("sub", "sum", "bound")

    def __init__(self, ref: np.ndarray) -> None:
        self.sub = np.ascontiguousarray(ref[:, ::SUB, ::SUB], dtype=np.float32).reshape(-1)
        self.sum = float(ref.sum(dtype=np.float64))
        self.bound = TOLERANCE * ref.size


def check_checksum(reply: Dict[str, Any], ref: "np.ndarray | Expected") -> str:
    """'' when a checksum reply matches the reference tensor (or its Expected) within TOLERANCE, else
    what differs."""
    want = ref if isinstance(ref, Expected) else Expected(ref)
    got = reply["sub"]
    if got.shape != want.sub.shape:
        return f"checksum has {got.size} values, want {want.sub.size}"
    err = float(np.max(np.abs(got - want.sub)))
    if not err <= TOLERANCE:
        return f"subsample differs by {err:.4g} > {TOLERANCE:.4g}"
    d = abs(reply["sum"] - want.sum)
    if not d <= want.bound:
        return f"tensor sum differs by {d:.4g} > {want.bound:.4g}"
    return ""


def check_topk(reply: Dict[str, Any], ref_scores: np.ndarray, atol: float = 1e-3) -> str:
    """'' when the top-k scores are the reference model's scores for those classes and no other class
    scores clearly higher (ties within tolerance may order differently)."""
    idx, score = reply["index"], reply["score"]
    if idx.size == 0 or np.any(idx < 0) or np.any(idx >= ref_scores.size):
        return f"bad class indices {idx.tolist()}"
    if not np.allclose(score, ref_scores[idx], atol=atol):
        return f"scores {score.tolist()} differ from the reference {ref_scores[idx].tolist()}"
    kth = np.sort(ref_scores)[::-1][idx.size - 1]
    if float(score.min()) < float(kth) - atol:
        return "a higher-scoring class is missing from the top-k"
    return ""
