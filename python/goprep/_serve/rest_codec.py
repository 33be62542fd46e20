"""The KServe v2 REST inference request and reply, JSON and binary (rest.py serves them).

A request body is a JSON object (``id``, ``parameters``, ``inputs``, ``outputs``), optionally
followed by binary tensor data, as Triton's binary tensor data extension defines it
(docs/protocol/extension_binary_data.md of the server):

- the ``Inference-Header-Content-Length`` header gives the JSON's length in bytes; the rest of the
  body is the inputs' data, in the order of ``inputs``, each input that is sent so saying its
  length in ``parameters.binary_data_size``; the lengths add up to the rest of the body exactly;
- binary tensor data is the tensor's elements, little-endian, row-major; a BYTES element is its
  uint32 little-endian length, then its bytes (protocol.pack_bytes);
- an output is returned as binary data when its ``parameters.binary_data`` is true, or, when it
  does not say, when the request's ``parameters.binary_data_output`` is true. A reply with binary
  outputs is ``application/octet-stream``: the JSON, whose length the reply's
  ``Inference-Header-Content-Length`` header gives, then each binary output's data in the order of
  ``outputs``, each saying its length in ``parameters.binary_data_size``.

Inputs sent as JSON carry ``data``, the elements flattened (or nested) in row-major order; a BYTES
element is a string, taken as its UTF-8 bytes, or, with the input's ``parameters.content_type``
``"base64"`` (MLServer's convention), as base64: how a JSON client sends an image file.

``decode_request`` turns a body into a ``RestRequest``, which has the fields of a
ModelInferRequest that oip.Engine reads, so the engine and the batcher take it as they take a gRPC
request (a binary tensor is a view of the body, not a copy). Every malformed field is a BadRequest
naming it (``inputs[0].shape``).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .errors import BadRequest
from .protocol import DTYPES

HEADER_LENGTH = "Inference-Header-Content-Length"


@dataclass
class Contents:
    bytes_contents: List[bytes] = field(default_factory=list)


@dataclass
class Tensor:
    """An input as ModelInferRequest.InferInputTensor has it."""

    name: str
    datatype: str
    shape: List[int]
    contents: Contents = field(default_factory=Contents)


@dataclass
class Requested:
    name: str


@dataclass
class RestRequest:
    """The fields of a ModelInferRequest that the engine reads, and how the reply's outputs are to
    be sent: ``binary[name]`` where an output says, else ``binary_default``."""

    model_name: str
    model_version: str
    id: str
    inputs: List[Tensor]
    raw_input_contents: List[Any]
    outputs: List[Requested]
    binary: Dict[str, bool]
    binary_default: bool


def json_object(body: Any, what: str) -> Dict[str, Any]:
    """``body`` parsed as a JSON object; BadRequest saying where it is malformed."""
    try:
        doc = json.loads(body if isinstance(body, str) else bytes(body).decode("utf-8"))
    except UnicodeDecodeError:
        raise BadRequest(f"{what} is not UTF-8 JSON text") from None
    except json.JSONDecodeError as e:
        raise BadRequest(f"{what} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise BadRequest(f"{what} nests too deeply") from None
    if not isinstance(doc, dict):
        raise BadRequest(f"{what} must be a JSON object, got {_kind(doc)}")
    return doc


def _kind(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _params(d: Dict[str, Any], where: str) -> Dict[str, Any]:
    p = d.get("parameters", {})
    if not isinstance(p, dict):
        raise BadRequest(f"{where}.parameters must be an object, got {_kind(p)}")
    return p


def _flag(p: Dict[str, Any], key: str, where: str) -> Optional[bool]:
    v = p.get(key)
    if v is not None and not isinstance(v, bool):
        raise BadRequest(f"{where}.parameters.{key} must be true or false, got {_kind(v)}")
    return v


def header_length(text: Optional[str], body_size: int) -> int:
    """The JSON's length from the ``Inference-Header-Content-Length`` header (None: the whole body)."""
    if text is None:
        return body_size
    t = text.strip()
    if not t.isdigit() or not 0 < int(t) <= body_size:
        raise BadRequest(f"the {HEADER_LENGTH} header must be the JSON's length in bytes, 1..{body_size} (the "
                         f"body's size), got {text[:40]!r}")
    return int(t)


def decode_request(body: bytes, header: Optional[str], model: str, version: str) -> RestRequest:
    """The inference request of ``body`` sent to model ``model``, version ``version`` ("" if the path
    names none); ``header``: the Inference-Header-Content-Length header's value (None: absent)."""
    n = header_length(header, len(body))
    doc = json_object(body[:n] if n < len(body) else body, "the inference request")
    tail = memoryview(body)[n:]
    rid = doc.get("id", "")
    if not isinstance(rid, str):
        raise BadRequest(f"id must be a string, got {_kind(rid)}")
    default = _flag(_params(doc, "request"), "binary_data_output", "request") or False
    inputs = doc.get("inputs")
    if not isinstance(inputs, list) or not inputs:
        raise BadRequest("inputs must be a non-empty array of input tensors" if inputs is not None
                         else "the request has no inputs")
    tensors, raws, at = [], [], 0
    for i, d in enumerate(inputs):
        t, raw, at = _input(d, f"inputs[{i}]", tail, at, header is not None)
        tensors.append(t)
        if raw is not None:
            raws.append(raw)
    if at != len(tail):
        raise BadRequest(f"the body has {len(tail)} bytes after the JSON ({HEADER_LENGTH}: {n}), the inputs' "
                         f"parameters.binary_data_size add up to {at}")
    outputs, binary = [], {}
    wanted = doc.get("outputs", [])
    if not isinstance(wanted, list):
        raise BadRequest(f"outputs must be an array, got {_kind(wanted)}")
    for j, o in enumerate(wanted):
        where = f"outputs[{j}]"
        if not isinstance(o, dict):
            raise BadRequest(f"{where} must be an object, got {_kind(o)}")
        name = o.get("name")
        if not isinstance(name, str) or not name:
            raise BadRequest(f"{where}.name must be a non-empty string")
        p = _params(o, where)
        if "classification" in p:
            raise BadRequest(f"{where}.parameters.classification: the classification extension is not served")
        b = _flag(p, "binary_data", where)
        if b is not None:
            binary[name] = b
        outputs.append(Requested(name))
    return RestRequest(model, version, rid, tensors, raws, outputs, binary, default)


def _input(d: Any, where: str, tail: memoryview, at: int, has_header: bool) -> Tuple[Tensor, Any, int]:
    """One input tensor: (its Tensor, its raw contents or None for BYTES sent as JSON, the offset in
    ``tail`` after its binary data)."""
    if not isinstance(d, dict):
        raise BadRequest(f"{where} must be an object, got {_kind(d)}")
    name, dt, shape = d.get("name"), d.get("datatype"), d.get("shape")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"{where}.name must be a non-empty string")
    if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
        raise BadRequest(f"{where}.shape must be an array of non-negative integers, got {json.dumps(shape)[:80]}")
    if dt != "BYTES" and dt not in DTYPES:
        raise BadRequest(f"{where}.datatype must be one of {', '.join([*DTYPES, 'BYTES'])}, got {json.dumps(dt)[:40]}")
    t = Tensor(name, dt, shape)
    p = _params(d, where)
    size = p.get("binary_data_size")
    if size is not None:
        if not _is_int(size) or size < 0:
            raise BadRequest(f"{where}.parameters.binary_data_size must be a non-negative integer, "
                             f"got {json.dumps(size)[:40]}")
        if "data" in d:
            raise BadRequest(f"{where} has both data and parameters.binary_data_size")
        if at + size > len(tail):
            hint = "" if has_header else f" (send the JSON's length in the {HEADER_LENGTH} header)"
            raise BadRequest(f"{where}.parameters.binary_data_size {size} runs past the end of the body: "
                             f"{len(tail) - at} bytes of binary data are left{hint}")
        return t, tail[at : at + size], at + size
    if "data" not in d:
        raise BadRequest(f"{where} has neither data nor parameters.binary_data_size")
    count = math.prod(shape)
    if dt == "BYTES":
        t.contents.bytes_contents = _bytes_data(d["data"], p, where, count)
        return t, None, at
    return t, _numeric_data(d["data"], dt, where, count).tobytes(), at


def _flat(v: Any, out: List[Any], depth: int = 0) -> None:
    if isinstance(v, list):
        if depth > 32:
            raise ValueError("nested more than 32 deep")
        for x in v:
            _flat(x, out, depth + 1)
    else:
        out.append(v)


def _elements(data: Any, where: str, count: int) -> List[Any]:
    if not isinstance(data, list):
        raise BadRequest(f"{where}.data must be an array, got {_kind(data)}")
    flat: List[Any] = []
    try:
        _flat(data, flat)
    except ValueError as e:
        raise BadRequest(f"{where}.data is {e}") from None
    if len(flat) != count:
        raise BadRequest(f"{where}.data has {len(flat)} elements, but its shape has {count}")
    return flat


def _bytes_data(data: Any, p: Dict[str, Any], where: str, count: int) -> List[bytes]:
    """A BYTES input's JSON elements: strings, UTF-8, or base64 with content_type "base64"."""
    ctype = p.get("content_type")
    if ctype not in (None, "str", "base64"):
        raise BadRequest(f"{where}.parameters.content_type must be \"base64\" or \"str\", got {json.dumps(ctype)[:40]}")
    out = []
    for k, s in enumerate(_elements(data, where, count)):
        if not isinstance(s, str):
            raise BadRequest(f"{where}.data[{k}] must be a string (a BYTES element), got {_kind(s)}")
        if ctype == "base64":
            try:
                out.append(base64.b64decode(s, validate=True))
            except (binascii.Error, ValueError):
                raise BadRequest(f"{where}.data[{k}] is not base64 (parameters.content_type is \"base64\")") from None
        else:
            out.append(s.encode("utf-8", "surrogatepass"))
    return out


def _numeric_data(data: Any, dt: str, where: str, count: int) -> np.ndarray:
    """A numeric input's JSON elements as its datatype, each checked to be of that type and in range."""
    flat = _elements(data, where, count)
    want = np.dtype(DTYPES[dt])
    if want.kind == "b":
        if not all(isinstance(x, bool) for x in flat):
            raise BadRequest(f"{where}.data must hold true or false (BOOL)")
        return np.array(flat, want)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in flat):
        raise BadRequest(f"{where}.data must hold numbers ({dt})")
    if want.kind in "iu":
        if not all(_is_int(x) for x in flat):
            raise BadRequest(f"{where}.data must hold integers ({dt})")
        info = np.iinfo(want)
        if flat and (min(flat) < info.min or max(flat) > info.max):
            raise BadRequest(f"{where}.data holds a value outside {dt}'s range {info.min}..{info.max}")
    return np.array(flat, want)


def encode_reply(rep: Any, req: RestRequest) -> Tuple[bytes, Optional[int]]:
    """The reply body of ModelInferResponse ``rep`` for ``req``, and the JSON's length when binary
    outputs follow it (None: the body is JSON alone)."""
    outs, blobs = [], []
    for o, raw in zip(rep.outputs, rep.raw_output_contents):
        t: Dict[str, Any] = {"name": o.name, "datatype": o.datatype, "shape": list(o.shape)}
        if req.binary.get(o.name, req.binary_default):
            t["parameters"] = {"binary_data_size": len(raw)}
            blobs.append(raw)
        else:
            t["data"] = np.frombuffer(raw, DTYPES[o.datatype]).tolist()
        outs.append(t)
    head: Dict[str, Any] = {"model_name": rep.model_name, "model_version": rep.model_version}
    if rep.id:
        head["id"] = rep.id
    head["outputs"] = outs
    js = json.dumps(head, separators=(",", ":")).encode()
    if not blobs:
        return js, None
    return b"".join([js, *blobs]), len(js)


# -- the client's side (serve-bench's load generator, tests) ----------------------------------------

def encode_request(req: Any) -> Tuple[bytes, int]:
    """ModelInferRequest ``req`` (inputs in raw_input_contents) as a binary REST request body that
    asks for every output as binary data, and the length of its JSON (the request's
    Inference-Header-Content-Length)."""
    inputs = [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape),
               "parameters": {"binary_data_size": len(raw)}} for t, raw in zip(req.inputs, req.raw_input_contents)]
    doc: Dict[str, Any] = {"inputs": inputs, "parameters": {"binary_data_output": True}}
    if req.id:
        doc["id"] = req.id
    head = json.dumps(doc, separators=(",", ":")).encode()
    return b"".join([head, *req.raw_input_contents]), len(head)


def decode_reply(body: bytes, header: Optional[str]) -> Dict[str, np.ndarray]:
    """A REST inference reply's output tensors by name (numeric datatypes; JSON or binary data);
    ``header``: the reply's Inference-Header-Content-Length (None: JSON alone). ValueError (or
    KeyError) for a malformed reply."""
    n = header_length(header, len(body))
    doc = json_object(body[:n], "the reply")
    out, at = {}, n
    for o in doc.get("outputs", []):
        dt = np.dtype(DTYPES[o["datatype"]])
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            a = np.array(o["data"], dt)
        else:
            if at + size > len(body):
                raise ValueError(f"output {o['name']}: binary_data_size {size} runs past the end of the reply")
            a = np.frombuffer(body, dt, count=size // dt.itemsize, offset=at)
            at += size
        out[o["name"]] = a.reshape(o["shape"])
    return out
