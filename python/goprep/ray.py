"""goprep in Ray Data and Ray Serve (the ``ray`` extra: ``pip install ".[ray]"`` in a source checkout, or
``pip install "dist/goprep-<version>-<tags>.whl[ray]"`` for a built wheel; see docs/SCALE.md).

``import goprep`` never imports Ray; ``import goprep.ray`` does. All imports here are absolute, so
that the top-level ``ray`` package, not this module, is what ``import ray`` finds.

- :class:`Preprocessor`: the callable class for ``Dataset.map_batches``; built once per actor, it
  sets one goprep thread per CPU the actor holds, uses the GPU when the actor holds one, and turns a
  batch's image column (fixed-shape, or differently sized images) into one fused goprep call.
- :func:`preprocess`: ``ds.map_batches(Preprocessor, ...)`` with the right defaults.
- :func:`deployment`: a Ray Serve application that keeps one compiled pipeline per replica and
  answers ``.npy`` request bodies over HTTP (or ``handle.preprocess.remote(image)`` calls).
"""

from __future__ import annotations

import dataclasses
import io
import os
from typing import Any, Dict, List, Optional, Union

import numpy as np

import goprep
from goprep import _validate
from goprep._errors import InvalidArgumentError
from goprep._optional import require

require("ray", "goprep.ray")  # checked without importing Ray: that happens on first use

__all__ = ["Preprocessor", "preprocess", "deployment", "actor_threads", "NPY_MEDIA_TYPE"]

NPY_MEDIA_TYPE = "application/x-npy"


def _check_pipeline(pipeline: Any) -> goprep.Pipeline:
    if not isinstance(pipeline, goprep.Pipeline):
        raise InvalidArgumentError(
            f"must be a goprep.pipeline (a function decorated with @goprep.pipeline), got {type(pipeline).__name__}",
            argument="pipeline",
        )
    if pipeline._output not in (None, "numpy"):  # None: NumPy in, NumPy out
        raise InvalidArgumentError(
            'must return host arrays (output="numpy"): a Ray column or HTTP response cannot hold a '
            "goprep.DeviceArray",
            argument="pipeline",
        )
    return pipeline


def actor_threads() -> Optional[int]:
    """The goprep thread count a Ray actor should use: one per CPU it was given (at least one), or
    None outside a Ray actor. Ray sets ``OMP_NUM_THREADS`` the same way, for the same reason: N
    actors on a node each running all-core kernels would oversubscribe it N times over."""
    import ray

    if not ray.is_initialized():
        return None
    ctx = ray.get_runtime_context()
    if ctx.get_actor_id() is None:
        return None
    cpus = float(ctx.get_assigned_resources().get("CPU", 1.0))
    return max(1, int(cpus))


def _setup_replica(pipeline: goprep.Pipeline, num_threads: Optional[int], device: Optional[str]) -> goprep.Pipeline:
    """What every actor or replica does once: size goprep's thread pool, pick the device."""
    if num_threads is not None:
        goprep.set_num_threads(num_threads)
    elif "GOPREP_NUM_THREADS" not in os.environ:  # an explicit environment setting wins
        n = actor_threads()
        if n is not None:
            goprep.set_num_threads(n)
    if device is None and pipeline._device == "auto" and _holds_gpu() and goprep.devices():
        # The actor reserved a GPU (num_gpus=...): use it for every batch, not only for batches above
        # the "auto" size threshold. Ray sets CUDA_VISIBLE_DEVICES, so "cuda" is the reserved one.
        device = "cuda"
    if device is not None and device != pipeline._device:
        pipeline = goprep.pipeline(pipeline._fn, device=device, output=pipeline._output)
    return pipeline


def _holds_gpu() -> bool:
    import ray

    return ray.is_initialized() and bool(ray.get_runtime_context().get_accelerator_ids().get("GPU"))


def _images(col: Any, column: str) -> Union[np.ndarray, List[np.ndarray]]:
    """A batch's image column as one (N, H, W, C) array or a list of (H, W, C) arrays, read in place.

    Ray hands fixed-shape tensor columns over as one ndarray, variable-shaped ones (and every tensor
    column of a pandas batch) as an object array of ndarrays: that becomes a list, which goprep runs
    as one fused call (each image read where it is, no stacking copy)."""
    if isinstance(col, np.ndarray) and col.dtype != object:
        return col
    if hasattr(col, "to_numpy"):  # a pandas Series (object dtype, or Ray's TensorDtype)
        col = col.to_numpy()
        if col.dtype != object:
            return col
    images = list(col)
    for i, im in enumerate(images):
        if not isinstance(im, np.ndarray):
            raise InvalidArgumentError(
                f"row {i} of column {column!r} holds a {type(im).__name__}, not an image array "
                "(decode images to (H, W, C) uint8/float32 arrays first)",
                argument="column",
            )
    return images


def _extra_columns(prefix_default: str, extras: List[Any], n: int) -> Dict[str, Any]:
    """Per-image extras of a tuple-returning pipeline (e.g. goprep.letterbox's LetterboxInfo) as plain
    columns: one per dataclass field (``letterbox_scale``, ``letterbox_top``, ...)."""
    cols: Dict[str, Any] = {}
    for k, extra in enumerate(extras):
        values = extra if isinstance(extra, list) else [extra] * n  # a batch array shares one value
        first = values[0]
        if dataclasses.is_dataclass(first):
            stem = type(first).__name__.lower().replace("info", "") or prefix_default
            for f in dataclasses.fields(first):
                cols[f"{stem}_{f.name}"] = np.array([getattr(v, f.name) for v in values])
        else:
            cols[f"{prefix_default}_{k + 1}"] = np.array(values)
    return cols


class Preprocessor:
    """A callable class for ``Dataset.map_batches``: runs a goprep pipeline over one image column.

    ``ds.map_batches(goprep.ray.Preprocessor, fn_constructor_kwargs={"pipeline": prep}, concurrency=N)``
    builds one per actor. Each batch's ``column`` (a fixed-shape tensor column or differently sized
    images) goes through the pipeline in one fused call, the result becomes the tensor column
    ``output_column`` (a C-contiguous array, which Ray wraps into Arrow without a copy), and the input
    column is dropped unless ``keep_input``. A pipeline returning ``(image, LetterboxInfo)`` adds the
    info's fields as columns (``letterbox_scale``, ``letterbox_top``, ...). Batches may be in the
    ``"numpy"`` (dict of arrays) or ``"pandas"`` format.

    ``num_threads``: goprep threads in this actor; default one per CPU the actor holds
    (``num_cpus=``), unless ``GOPREP_NUM_THREADS`` is set. ``device``: overrides the pipeline's; by
    default an actor that holds a GPU (``num_gpus=``) runs a ``device="auto"`` pipeline on it.
    """

    def __init__(
        self,
        pipeline: goprep.Pipeline,
        column: str = "image",
        output_column: str = "pixel_values",
        *,
        keep_input: bool = False,
        num_threads: Optional[int] = None,
        device: Optional[str] = None,
    ) -> None:
        _check_pipeline(pipeline)
        for name, v in (("column", column), ("output_column", output_column)):
            if not isinstance(v, str) or not v:
                raise InvalidArgumentError(f"must be a non-empty str, got {v!r}", argument=name)
        if num_threads is not None and (not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1):
            raise InvalidArgumentError(f"must be a positive int or None, got {num_threads!r}", argument="num_threads")
        if device is not None:
            goprep._device.check_device(device)
        self.column = column
        self.output_column = output_column
        self.keep_input = bool(keep_input)
        self.pipeline = _setup_replica(pipeline, num_threads, device)

    def __repr__(self) -> str:
        return f"goprep.ray.Preprocessor({self.pipeline!r}, column={self.column!r}, output_column={self.output_column!r})"

    def run(self, images: Any) -> Dict[str, Any]:
        """The output columns for one batch's image column."""
        res = self.pipeline(_images(images, self.column))
        if isinstance(res, tuple):
            image = next(x for x in res if isinstance(x, np.ndarray))
            extras = [x for x in res if x is not image]
            cols = {self.output_column: image}
            cols.update(_extra_columns(self.output_column, extras, len(image)))
            return cols
        return {self.output_column: res}

    def __call__(self, batch: Any) -> Any:
        if isinstance(batch, dict):
            if self.column not in batch:
                raise InvalidArgumentError(f"{self.column!r} is not a column of the batch (columns: {sorted(batch)})", argument="column")
            out = {k: v for k, v in batch.items() if self.keep_input or k != self.column}
            out.update(self.run(batch[self.column]))
            return out
        if hasattr(batch, "columns") and hasattr(batch, "assign"):  # pandas.DataFrame
            from ray.data.extensions import TensorArray

            if self.column not in batch.columns:
                raise InvalidArgumentError(
                    f"{self.column!r} is not a column of the batch (columns: {list(batch.columns)})", argument="column"
                )
            cols = self.run(batch[self.column])
            df = batch if self.keep_input else batch.drop(columns=[self.column])
            # TensorArray wraps the ndarray as is; Ray turns it into an Arrow tensor column without a copy.
            return df.assign(**{k: TensorArray(v) if v.ndim > 1 else v for k, v in cols.items()})
        raise InvalidArgumentError(
            f'batch must be a dict of arrays (batch_format="numpy") or a pandas.DataFrame, got {type(batch).__name__}',
            argument="batch",
        )


def preprocess(
    ds: Any,
    pipeline: goprep.Pipeline,
    column: str = "image",
    output_column: str = "pixel_values",
    *,
    batch_size: Optional[int] = 64,
    concurrency: Any = 1,
    num_cpus: float = 1,
    num_gpus: Optional[float] = None,
    batch_format: str = "numpy",
    keep_input: bool = False,
    num_threads: Optional[int] = None,
    device: Optional[str] = None,
    **map_batches_kwargs: Any,
) -> Any:
    """``ds.map_batches(Preprocessor, ...)``: the dataset with ``output_column`` added by ``pipeline``.

    ``concurrency`` actors (an int, or ``(min, max)`` for an autoscaling pool), each holding
    ``num_cpus`` CPUs (one goprep thread per CPU) and ``num_gpus`` GPUs. Other keyword arguments go to
    ``map_batches`` unchanged (``scheduling_strategy``, ``memory``, ...).
    """
    _check_pipeline(pipeline)
    _validate.as_choice("batch_format", batch_format, ("numpy", "pandas"))
    kwargs: Dict[str, Any] = dict(
        fn_constructor_kwargs=dict(
            pipeline=pipeline,
            column=column,
            output_column=output_column,
            keep_input=keep_input,
            num_threads=num_threads,
            device=device,
        ),
        batch_size=batch_size,
        batch_format=batch_format,
        num_cpus=num_cpus,
        zero_copy_batch=True,  # goprep only reads its input: no defensive copy of each batch
    )
    if "compute" not in map_batches_kwargs:
        import ray

        # an actor pool (Ray 2.51+ spells it compute=, and deprecates concurrency=)
        if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency >= 1:
            kwargs["compute"] = ray.data.ActorPoolStrategy(size=concurrency)
        elif isinstance(concurrency, tuple) and len(concurrency) == 2:
            kwargs["compute"] = ray.data.ActorPoolStrategy(min_size=concurrency[0], max_size=concurrency[1])
        else:
            raise InvalidArgumentError(
                f"must be a positive int or a (min, max) tuple of actors, got {concurrency!r}", argument="concurrency"
            )
    if num_gpus:
        kwargs["num_gpus"] = num_gpus
    kwargs.update(map_batches_kwargs)
    return ds.map_batches(Preprocessor, **kwargs)


# ---------------------------------------------------------------------------------------------------
# Ray Serve


def _npy_array(body: bytes) -> np.ndarray:
    """The array of an ``.npy`` request body, read in place (``np.frombuffer``, no copy) once the
    header's dtype and shape are checked against the body's length: a header that claims more data
    than the body holds (or an object dtype) is a ValueError (HTTP 400), never an allocation of the
    claimed size, which is what ``np.load`` would attempt first."""
    from numpy.lib import format as npf

    f = io.BytesIO(body)
    version = npf.read_magic(f)  # ValueError on anything that is not .npy
    if version == (1, 0):
        shape, fortran, dtype = npf.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = npf.read_array_header_2_0(f)
    else:
        raise ValueError(f".npy format version {version} is not supported (1.0 and 2.0 are)")
    if dtype.hasobject:
        raise ValueError("an .npy body with an object dtype is not accepted")
    count = 1
    for n in shape:
        count *= int(n)  # Python ints: a huge claimed shape cannot overflow
    need, have = count * dtype.itemsize, len(body) - f.tell()
    if need != have:
        raise ValueError(f"the .npy header claims shape {tuple(shape)} of {dtype} ({need} bytes), the body holds {have}")
    a = np.frombuffer(body, dtype=dtype, count=count, offset=f.tell())
    return a.reshape(shape, order="F" if fortran else "C")


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


class PipelineReplica:
    """One Serve replica: one goprep pipeline, compiled per input signature on first use and kept for
    the replica's lifetime, with one goprep thread per replica CPU. Requests run on the event loop's
    thread pool (goprep releases the GIL), so concurrent requests overlap and the loop keeps accepting
    while a kernel runs."""

    def __init__(self, pipeline: goprep.Pipeline, num_threads: Optional[int] = None, device: Optional[str] = None) -> None:
        self.pipeline = _setup_replica(_check_pipeline(pipeline), num_threads, device)

    async def preprocess(self, image: Any) -> Any:
        """For ``DeploymentHandle`` calls from another deployment (e.g. the model's)."""
        import asyncio

        return await asyncio.get_running_loop().run_in_executor(None, self.pipeline, image)

    async def __call__(self, request: Any) -> Any:
        """HTTP: the body is one image (or a batch) in ``.npy`` format; the answer is the result in
        ``.npy`` format, or status 400 with goprep's error message."""
        from starlette.responses import Response

        body = await request.body()
        try:
            image = _npy_array(body)
            res = await self.preprocess(image)
        except (ValueError, TypeError, EOFError) as e:  # goprep's input errors are ValueError/TypeError
            return Response(f"{type(e).__name__}: {e}", status_code=400, media_type="text/plain")
        if isinstance(res, tuple):  # e.g. letterbox: send the image; the geometry goes in a header
            image_out = next(x for x in res if isinstance(x, np.ndarray))
            extras = [dataclasses.asdict(x) for x in res if dataclasses.is_dataclass(x)]
            import json

            return Response(_npy_bytes(image_out), media_type=NPY_MEDIA_TYPE, headers={"x-goprep-info": json.dumps(extras)})
        return Response(_npy_bytes(res), media_type=NPY_MEDIA_TYPE)


def deployment(pipeline: goprep.Pipeline, *, num_threads: Optional[int] = None, device: Optional[str] = None, **options: Any) -> Any:
    """A Ray Serve application serving ``pipeline``: ``serve.run(goprep.ray.deployment(prep,
    num_replicas=2, ray_actor_options={"num_cpus": 1}), route_prefix="/prep")``. ``options`` go to
    ``serve.deployment`` (``name`` defaults to ``"goprep"``). POST an ``.npy`` body, get ``.npy`` back."""
    from ray import serve

    _check_pipeline(pipeline)
    options.setdefault("name", "goprep")
    return serve.deployment(PipelineReplica, **options).bind(pipeline, num_threads=num_threads, device=device)
