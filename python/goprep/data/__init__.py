"""goprep's training input: batches of encoded images (paths or bytes) made by threads, one transform
call a batch (see docs/TRAINING.md).

- ``Loader(source, transform, batch_size=...)``: iterate for one epoch of ``(images, labels)``;
  threads, bounded prefetch, per-epoch shuffle from a seed, DDP shards, corrupt files raised by path
  or skipped and counted; closes its threads on ``break``, exceptions, Ctrl-C and ``close()``.
- ``Dataset`` (imports torch) with ``collate`` and ``Dataset.sampler()``: the same batches through
  ``torch.utils.data.DataLoader`` (its ``__getitems__`` runs a whole batch).
- ``Samples``, ``files``, ``image_folder``: the inputs (ImageFolder's classes and order).
- ``shard_indices``, ``batch_seed``, ``EpochSampler``: the epoch order and the per-batch seed.

Modules: ``_source`` (inputs), ``_order`` (order, shards, seeds), ``_batch`` (one batch: the call,
errors, output), ``_loader`` (threads), ``_dataset`` (DataLoader path).
"""

from __future__ import annotations

from typing import Any

from ._loader import Loader
from ._order import EpochSampler, batch_seed, shard_indices
from ._source import Samples, files, image_folder

__all__ = ["Loader", "Dataset", "Sampler", "collate", "Samples", "files", "image_folder", "shard_indices",
           "batch_seed", "EpochSampler"]

_TORCH_NAMES = ("Dataset", "Sampler", "collate")  # in _dataset, which imports torch: loaded on first use


def __getattr__(name: str) -> Any:
    if name in _TORCH_NAMES:
        from . import _dataset

        return getattr(_dataset, name)
    raise AttributeError(f"module 'goprep.data' has no attribute {name!r}")


for _f in (Loader, EpochSampler, batch_seed, shard_indices, Samples, files, image_folder):
    _f.__module__ = __name__
del _f
