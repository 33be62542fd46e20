"""``Dataset``: the loader's batches through torch's own ``DataLoader``. DataLoader (with
``batch_size`` and auto-collation) calls ``__getitems__`` with each batch's indices; that is one
transform call for the batch, with the generator the threaded ``Loader`` would use for the same
indices, so ``DataLoader(ds, batch_size=B, sampler=ds.sampler(), collate_fn=goprep.data.collate)``
gives the ``Loader``'s batches. Imports torch (it subclasses ``torch.utils.data.Dataset``)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import torch.utils.data

from .._errors import DecodeError
from ._batch import BatchRunner, Reads
from ._order import EpochSampler, nonneg_int
from ._source import as_samples


def collate(batch: Any) -> Any:
    """DataLoader's ``collate_fn`` for a goprep ``Dataset``: ``__getitems__`` already made the batch
    (``(images, labels)``, or None when ``on_error="skip"`` left out every image of it), so it is
    returned as it is."""
    return batch


class Dataset(Reads, torch.utils.data.Dataset):
    """A map-style dataset over encoded images whose ``__getitems__(indices)`` runs the whole batch
    as one ``transform`` call (see ``goprep.data.Loader`` for ``source``, ``transform``, ``labels``,
    ``seed``, ``generator``, ``on_error``, ``output``). ``set_epoch(e)`` sets the epoch the draws
    (and ``sampler()``'s order) use; with DataLoader worker processes, set it before each
    ``iter(dataloader)`` and leave ``persistent_workers`` off, so that the workers get it."""

    def __init__(self, source: Any, transform: Any, *, labels: Optional[Sequence[int]] = None, seed: int = 0,
                 output: str = "torch", generator: str = "numpy", on_error: str = "raise") -> None:
        self.samples = as_samples(source, labels)
        self.seed = nonneg_int("seed", seed)
        self.epoch = 0
        self._runner = BatchRunner(self.samples, transform, output=output, generator=generator, on_error=on_error,
                                   pin_memory=False)  # DataLoader(pin_memory=True) pins

    def set_epoch(self, epoch: int) -> None:
        self.epoch = nonneg_int("epoch", epoch)

    def sampler(self, *, shuffle: bool = True, rank: int = 0, world_size: int = 1, shard: str = "pad") -> "Sampler":
        """The ``Loader``'s order for this dataset, following ``set_epoch``: a DataLoader ``sampler``."""
        return Sampler(self, shuffle=shuffle, rank=rank, world_size=world_size, shard=shard)

    def __len__(self) -> int:
        return len(self.samples)

    def __getitems__(self, indices: Sequence[int]) -> Optional[Tuple[Any, Any]]:
        """The batch of samples ``indices``: ``(images, labels)`` in one transform call; None when
        ``on_error="skip"`` left out every image of it."""
        return self._runner.run(self.seed, self.epoch, indices)

    def __getitem__(self, i: int) -> Tuple[Any, Any]:
        """One sample ``(image, label)``: a batch of one (a corrupt image raises, even with
        ``on_error="skip"``: there is nothing to return)."""
        n = len(self.samples)
        if isinstance(i, bool) or not hasattr(i, "__index__") or not -n <= int(i) < n:
            raise IndexError(f"goprep.data.Dataset index {i!r} out of range for {n} samples")
        i = int(i) % n
        got = self._runner.run(self.seed, self.epoch, [i])
        if got is None:
            raise DecodeError(f"{self.samples.name(i)}: corrupt (skipped)")
        x, y = got
        return x[0], y[0]


class Sampler(EpochSampler):
    """An ``EpochSampler`` whose epoch is its dataset's (``Dataset.set_epoch`` moves both)."""

    def __init__(self, dataset: Dataset, **kw: Any) -> None:
        super().__init__(len(dataset), seed=dataset.seed, **kw)
        self._dataset = dataset

    def set_epoch(self, epoch: int) -> None:
        self._dataset.set_epoch(epoch)

    def indices(self) -> Any:
        self.epoch = self._dataset.epoch
        return super().indices()
