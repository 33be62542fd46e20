"""goprep over Dask arrays (the ``dask`` extra: ``pip install ".[dask]"`` in a source checkout, or
``pip install "dist/goprep-<version>-<tags>.whl[dask]"`` for a built wheel; see docs/SCALE.md).

``import goprep`` never imports Dask; ``import goprep.dask`` does (absolute imports only, so that
``dask`` here is the top-level package, not this module).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import goprep
from goprep._errors import InvalidArgumentError, PipelineError, ShapeError
from goprep._optional import require
from goprep._outputs import SLOT as _SLOT
from goprep._signature import split_result as _split_result
from goprep._trace import trace_array, tracing

require("dask", "goprep.dask")  # checked without importing Dask: that happens on first use

__all__ = ["map_blocks"]


def _output_spec(pipeline: goprep.Pipeline, shape: tuple, dtype: np.dtype, args: tuple, kwargs: dict) -> Any:
    """The output shape and dtype of ``pipeline`` on an (n, H, W, C) batch, found by tracing the
    function on a zero-stride stand-in: no data is read and no plan is built (tracing does load the
    extension, to read the engine's size limits)."""
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape=shape, strides=(0,) * len(shape))
    with tracing():  # the ops accept a traced image only while a pipeline function is being traced
        traced, template = _split_result(pipeline._fn(trace_array(stand_in, argument="array"), *args, **kwargs))
    if template is not _SLOT:
        raise PipelineError(
            "goprep.dask.map_blocks needs a pipeline that returns only the image (a tuple result, such "
            "as letterbox's (image, info), has no Dask array form); return the image alone",
        )
    return traced.shape, traced.out_dtype


def _run_block(block: np.ndarray, pipeline: goprep.Pipeline, args: tuple, kwargs: dict) -> np.ndarray:
    return pipeline(block, *args, **kwargs)


def map_blocks(pipeline: goprep.Pipeline, array: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``pipeline`` over an ``(N, H, W, C)`` Dask array, one fused goprep call per block.

    The array is rechunked so that each block holds whole images (chunks along N only); the result
    is a lazy Dask array of the pipeline's output, chunked like the input along N, e.g.
    ``(N, 3, 224, 224)`` float32. ``args`` and ``kwargs`` go to the pipeline. Works with every Dask
    scheduler: threads (goprep releases the GIL), processes, ``distributed`` (the pipeline is
    pickled to the workers as its function and options; see docs/SCALE.md for thread counts).
    A NumPy array is accepted too and wrapped with ``dask.array.from_array``.
    """
    import dask.array as da

    if not isinstance(pipeline, goprep.Pipeline):
        raise InvalidArgumentError(f"must be a goprep.pipeline, got {type(pipeline).__name__}", argument="pipeline")
    if pipeline._output not in (None, "numpy"):  # None: NumPy in, NumPy out
        raise InvalidArgumentError('must return host arrays (output="numpy") to fill a Dask array', argument="pipeline")
    if isinstance(array, np.ndarray):
        array = da.from_array(array, chunks=(max(1, min(len(array), 64)), -1, -1, -1))
    if not isinstance(array, da.Array):
        raise InvalidArgumentError(f"must be a dask.array.Array or numpy.ndarray, got {type(array).__name__}", argument="array")
    if array.ndim != 4:
        raise ShapeError(f"must be an (N, H, W, C) batch, got {array.ndim} dimensions {array.shape}", argument="array")
    if any(np.isnan(d) for d in array.shape):
        raise ShapeError(f"must have known dimensions, got {array.shape} (call .compute_chunk_sizes())", argument="array")
    if any(len(c) != 1 for c in array.chunks[1:]):
        array = array.rechunk({1: -1, 2: -1, 3: -1})  # whole images per block; N keeps its chunks
    n, h, w, c = array.shape
    shape, dtype = _output_spec(pipeline, (1, h, w, c), array.dtype, args, kwargs)
    chunks = (array.chunks[0],) + tuple((d,) for d in shape[1:])
    return da.map_blocks(
        _run_block,
        array,
        pipeline,
        args,
        kwargs,
        dtype=dtype,
        chunks=chunks,
        meta=np.empty((0,) * len(shape), dtype),
        name="goprep-" + da.core.tokenize(array.name, pipeline, args, kwargs),
    )
