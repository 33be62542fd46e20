"""goprep inside Triton Inference Server (docs/TRITON.md, "goprep inside Triton").

A Triton model that preprocesses images is handed, per execution, the requests Triton batched
together, each with its encoded files in a BYTES tensor. Both functions here send all the files of
an execution through one goprep pipeline call, so the decodes and the preprocessing run in parallel
on goprep's threads with the GIL released, and give each request its own rows back:

- :func:`infer_func`: a PyTriton ``infer_func`` for ``Triton.bind``. PyTriton answers every request
  of an execution with the error when its function raises, so a bad file fails its execution, with
  a message naming the request and the image.
- :func:`run_requests`: the same call for a Triton Python-backend ``model.py``
  (``TritonPythonModel.execute``), which replies to each request on its own: a bad file fails only
  its own request.

Neither imports PyTriton or Triton's ``triton_python_backend_utils``: they take and return NumPy
arrays, so ``import goprep.triton`` needs neither.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from ._errors import InvalidArgumentError
from ._serve.batching import fused_files
from ._serve.errors import BadRequest, OverLimit
from ._serve.preprocess import _Fused

__all__ = ["infer_func", "run_requests", "files_of"]

Files = Union[np.ndarray, Sequence[bytes], None]


def _prep(pipeline: Any) -> _Fused:
    """The pipeline as the server's fused implementation (its ``files`` call: one goprep call for a
    list of files under a pixel limit, errors naming ``image[i]`` and the request)."""
    if not callable(pipeline):
        raise InvalidArgumentError(
            f"must be a goprep.pipeline (or a goprep.transforms conversion), got {type(pipeline).__name__}",
            argument="pipeline")
    return _Fused(pipeline)


def _limit(max_pixels: Optional[int]) -> int:
    """The pixel limit of a call: ``max_pixels``, else goprep's process-wide one (0: none)."""
    import goprep

    return int(max_pixels) if max_pixels is not None else (goprep.get_max_image_pixels() or 0)


def files_of(tensor: Files, name: str = "IMAGE") -> List[bytes]:
    """One request's encoded files: its BYTES tensor (shape ``[N]`` or ``[N, 1]``, an object array of
    bytes, as Triton hands it to a model) or a list of bytes. BadRequest naming ``name`` when it is
    missing, empty, not BYTES, or holds an element that is not bytes."""
    if tensor is None:
        raise BadRequest(f"{name} is missing")
    items = np.asarray(tensor, dtype=object).reshape(-1).tolist() if isinstance(tensor, np.ndarray) else list(tensor)
    if not items:
        raise BadRequest(f"{name} holds no image")
    for i, f in enumerate(items):
        if not isinstance(f, (bytes, bytearray, memoryview)):
            raise BadRequest(f"{name}[{i}] must be bytes (an encoded JPEG or PNG file), got {type(f).__name__}")
    return items


def run_requests(pipeline: Any, requests: Sequence[Files], *, name: str = "IMAGE",
                 max_pixels: Optional[int] = None) -> List[Union[np.ndarray, ValueError]]:
    """Each request's files (its BYTES tensor, or a list of bytes: files_of) through ``pipeline``, all
    as one call: a list with, per request in order, its rows of the batch (one per file) or the
    ValueError that refused it, naming the image by its index within that request (``image[1] is
    not a readable JPEG or PNG file: ...``).

    A bad file fails only its own request: goprep's error names the file, so the call is repeated
    once without that request (one extra call for the others). ``max_pixels`` bounds each image's
    width x height, read from its header before any pixel is decoded (default: goprep's
    ``get_max_image_pixels()``). An error that is not about a request's files (the pipeline itself
    failing) is raised."""
    prep = _prep(pipeline)
    out: List[Any] = [None] * len(requests)
    live, groups = [], []  # the requests with files, and their files
    for k, r in enumerate(requests):
        try:
            groups.append(files_of(r, name))
            live.append(k)
        except BadRequest as e:
            out[k] = e
    if groups:
        batch, ok, failed = fused_files(prep, groups, _limit(max_pixels))
        at = 0
        for j in ok:
            out[live[j]] = batch[at:at + len(groups[j])]
            at += len(groups[j])
        for j, e in failed.items():
            out[live[j]] = e
    return out


def _in_request(e: ValueError, k: Optional[int]) -> ValueError:
    """``e`` (BadRequest or OverLimit, same type), its message prefixed with its request's position."""
    if k is None:
        return e
    msg = f"request {k}: {e}"
    return type(e)(msg, e.reason) if isinstance(e, OverLimit) else type(e)(msg)


def infer_func(pipeline: Any, *, input: str = "IMAGE", output: str = "TENSOR",
               max_pixels: Optional[int] = None) -> Callable[[Sequence[Mapping[str, Any]]], List[Dict[str, np.ndarray]]]:
    """A PyTriton ``infer_func`` (for ``Triton.bind(infer_func=...)``, undecorated: it takes the list
    of requests of one execution) that runs ``pipeline`` on the encoded images of the BYTES input
    ``input`` and replies with its result as ``output``: every file of the execution in one goprep
    call, each request its own rows.

    A bad file raises ValueError naming its request's position in the execution and the image's
    index in that request (``request 2: image[0] is not a readable JPEG or PNG file: ...``); PyTriton
    answers every request of that execution with the error. ``max_pixels``: as in run_requests."""
    prep = _prep(pipeline)

    def infer(requests: Sequence[Mapping[str, Any]]) -> List[Dict[str, np.ndarray]]:
        groups = []
        for k, r in enumerate(requests):
            try:
                groups.append(files_of(r[input], input))
            except BadRequest as e:
                raise _in_request(e, k) from None
        starts, at = [], 0
        for g in groups:
            starts.append(at)
            at += len(g)
        try:
            batch = prep.files([f for g in groups for f in g], _limit(max_pixels), starts)
        except (BadRequest, OverLimit) as e:
            raise _in_request(e, getattr(e, "request", None)) from None
        return [{output: batch[s:s + len(g)]} for s, g in zip(starts, groups)]

    return infer
