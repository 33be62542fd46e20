"""The epoch order and its DDP shards, and the per-batch random seed: pure functions of
``(seed, epoch, rank, world_size)``, so that every process and every thread count agrees.

Sharding follows ``torch.utils.data.DistributedSampler``: the epoch's permutation (NumPy's, from
``SeedSequence([seed, epoch])``; not torch's, so that torch is not needed), made a multiple of
``world_size`` by padding (``shard="pad"``: the first indices repeated, DistributedSampler's
``drop_last=False``) or by dropping the tail (``shard="drop"``, its ``drop_last=True``), then rank
``r`` takes positions ``r, r + world_size, ...``. ``shard="exact"`` pads nothing and drops nothing:
every sample exactly once, ranks differing by at most one sample (DDP then needs ``join()``).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Iterator, List, Sequence

import numpy as np

from .._errors import InvalidArgumentError

SHARDS = ("pad", "drop", "exact")


def nonneg_int(name: str, v: Any) -> int:
    """``v`` as an int in ``[0, 2**63)`` (seeds and epochs are hashed as 64-bit words), else raise."""
    if isinstance(v, bool) or not hasattr(v, "__index__") or not 0 <= int(v) < 1 << 63:
        raise InvalidArgumentError(f"must be an integer in [0, 2**63), got {v!r}", argument=name)
    return int(v)


def check_shard(rank: Any, world_size: Any, shard: Any) -> None:
    """Raise naming the argument unless ``0 <= rank < world_size`` and ``shard`` is a known policy."""
    world = nonneg_int("world_size", world_size)
    if world < 1:
        raise InvalidArgumentError(f"must be at least 1, got {world_size!r}", argument="world_size")
    if nonneg_int("rank", rank) >= world:
        raise InvalidArgumentError(f"must be in [0, world_size={world}), got {rank!r}", argument="rank")
    if shard not in SHARDS:
        raise InvalidArgumentError(f"must be one of {', '.join(map(repr, SHARDS))}, got {shard!r}", argument="shard")


def shard_indices(n: int, *, seed: int, epoch: int, shuffle: bool = True, rank: int = 0, world_size: int = 1,
                  shard: str = "pad") -> np.ndarray:
    """Rank ``rank``'s sample indices for ``epoch``, in the order it reads them (int64)."""
    check_shard(rank, world_size, shard)
    if shuffle:
        rng = np.random.default_rng(np.random.SeedSequence([nonneg_int("seed", seed), nonneg_int("epoch", epoch)]))
        order = rng.permutation(n)
    else:
        order = np.arange(n)
    if shard == "pad":
        total = math.ceil(n / world_size) * world_size
        if total > n:  # DistributedSampler repeats the start, as many times as it takes
            order = np.concatenate([order] * math.ceil(total / n))[:total]
    elif shard == "drop":
        order = order[: (n // world_size) * world_size]
    return np.ascontiguousarray(order[rank::world_size], dtype=np.int64)


def batches(indices: np.ndarray, batch_size: int, drop_last: bool) -> List[np.ndarray]:
    """``indices`` cut into batches of ``batch_size`` in order; the last, shorter one kept unless
    ``drop_last`` (DataLoader's ``drop_last``)."""
    n = len(indices) // batch_size * batch_size if drop_last else len(indices)
    return [indices[i:i + batch_size] for i in range(0, n, batch_size)]


def batch_seed(seed: int, epoch: int, indices: Sequence[int]) -> int:
    """The random seed of one batch: a 64-bit hash (BLAKE2b) of the loader's seed, the epoch and the
    batch's sample indices in order, each as a little-endian int64. Keyed by the indices, not by which
    thread or call runs the batch, so the draws are the same whatever the thread count, and the same
    in the DataLoader path (``Dataset.__getitems__`` gets the indices, never a batch number)."""
    head = np.array([nonneg_int("seed", seed), nonneg_int("epoch", epoch)], dtype="<u8")
    idx = np.asarray(indices, dtype="<i8").reshape(-1)
    digest = hashlib.blake2b(head.tobytes() + idx.tobytes(), digest_size=8, person=b"goprep.data").digest()
    return int.from_bytes(digest, "little")


def make_generator(kind: str, seed: int) -> Any:
    """A fresh generator seeded with ``seed``: ``numpy.random.Generator`` (``"numpy"``) or a CPU
    ``torch.Generator`` (``"torch"``)."""
    if kind == "numpy":
        return np.random.default_rng(seed)
    import torch

    return torch.Generator().manual_seed(seed & ((1 << 63) - 1))


class EpochSampler:
    """The loader's order as a DataLoader sampler: ``DataLoader(ds, batch_size=B, sampler=s)`` reads
    the same samples in the same order as ``goprep.data.Loader`` with the same arguments. Like
    DistributedSampler, call ``set_epoch(e)`` before each epoch."""

    def __init__(self, n: int, *, seed: int = 0, shuffle: bool = True, rank: int = 0, world_size: int = 1,
                 shard: str = "pad") -> None:
        check_shard(rank, world_size, shard)
        self.n, self.seed, self.shuffle = int(n), nonneg_int("seed", seed), bool(shuffle)
        self.rank, self.world_size, self.shard = int(rank), int(world_size), shard
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = nonneg_int("epoch", epoch)

    def indices(self) -> np.ndarray:
        return shard_indices(self.n, seed=self.seed, epoch=self.epoch, shuffle=self.shuffle, rank=self.rank,
                             world_size=self.world_size, shard=self.shard)

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices().tolist())

    def __len__(self) -> int:
        return len(self.indices())
