"""What every converter builds, and how it refuses: the ``Chain`` of geometric ops and one affine float
stage, and ``refusals``, which turns goprep._validate's argument errors into the ``PipelineError``
every converter raises for a setting it cannot read."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

from .. import _validate
from .._errors import InvalidArgumentError, PipelineError

# One op of the geometric (uint8) stage: (traced image, "pil" | "tensor") -> traced image. An op may
# also have a ``host(flavor)`` method returning a NumPy function to run outside the engine for that
# flavor (or None): the chain is then split there (see Converted._pipe).
Op = Callable[[Any, str], Any]

# The bound for sizes read at conversion: the engine checks its max_dim when the pipeline is traced
# (reading the limit here would load the engine, before DataLoader workers fork).
NO_DIM_LIMIT = sys.maxsize

F = TypeVar("F", bound=Callable[..., Any])


def refusals(fn: F) -> F:
    """``fn`` raising goprep._validate's ``InvalidArgumentError`` (and ``ShapeError``) as ``PipelineError``
    with the same argument and message: every converter refuses what it cannot read with one error
    class, whichever rule found it."""

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidArgumentError as e:
            raise PipelineError(e.detail, argument=e.argument) from None

    return checked  # type: ignore[return-value]


def mean_std(mean: Any, std: Any, names: Sequence[str] = ("mean", "std"),
             channels: Optional[int] = None) -> Tuple[List[float], List[float]]:
    """A normalisation's ``mean`` and ``std`` read by ``_validate.float32_values`` (``std`` non-zero),
    as many values as given; ``names``: the settings they came from, for errors."""
    return (_validate.float32_values(names[0], mean, channels=channels),
            _validate.float32_values(names[1], std, nonzero=True, channels=channels))


@dataclass
class Chain:
    """A converted chain: geometric ops, then at most one affine float stage
    ``(x * scale - mean) / std`` (None when the result stays uint8)."""

    ops: List[Op] = field(default_factory=list)
    scale: Optional[float] = None  # set by the float conversion (ToTensor, ToDtype, ...)
    # torchvision's conversions scale by the source's dtype (1/255 for uint8, 1 for float32, which
    # they leave as it is); Hugging Face's rescale multiplies whatever it gets by its factor
    scale_by_dtype: bool = False
    mean: Optional[List[float]] = None
    std: Optional[List[float]] = None
    to_tensor: bool = False  # the original returns a tensor
    notes: List[str] = field(default_factory=list)

    def geometric(self, name: str, op: Op) -> None:
        if self.scale is not None:
            raise PipelineError(
                f"{name} after the float conversion (ToTensor/ToDtype) cannot be fused: goprep resamples uint8 "
                f"data before converting it; move {name} before the conversion"
            )
        self.ops.append(op)

    def to_float(self, name: str, scale: float, by_dtype: bool = False) -> None:
        if self.scale is not None:
            raise PipelineError(f"{name}: the image is already float (a second conversion)")
        self.scale, self.scale_by_dtype = scale, by_dtype
        self.to_tensor = True

    def normalize(self, name: str, mean: List[float], std: List[float]) -> None:
        if self.scale is None:
            raise PipelineError(f"{name} needs a float image: put ToTensor/ToDtype(float32, scale=True) before it")
        m, s = list(mean), list(std)
        bad = _mismatch(m, s)
        if bad:
            raise PipelineError(f"{name}: {bad}")
        if self.mean is None or self.std is None:
            self.mean, self.std = m, s
            return
        lengths = {len(self.mean), len(self.std), len(m), len(s)} - {1}
        if len(lengths) > 1:
            raise PipelineError(
                f"{name}: {max(len(m), len(s))} channel values after a Normalize of {max(len(self.mean), len(self.std))} "
                "cannot broadcast (torchvision fails on the first call)"
            )
        # (x - M) / S then (. - m) / s  ==  (x - (M + m*S)) / (S*s)
        n = max(len(self.mean), len(self.std), len(m), len(s))
        M, S = bcast(self.mean, n), bcast(self.std, n)
        m, s = bcast(m, n), bcast(s, n)
        self.mean = [M[i] + m[i] * S[i] for i in range(n)]
        self.std = [S[i] * s[i] for i in range(n)]


def _mismatch(mean: List[float], std: List[float]) -> Optional[str]:
    """Why ``mean`` and ``std`` cannot broadcast (torchvision fails on the first call), or None."""
    if len(mean) != len(std) and 1 not in (len(mean), len(std)):
        return f"mean has {len(mean)} values and std {len(std)}; they cannot broadcast"
    return None


def bcast(v: List[float], n: int) -> List[float]:
    """One value per channel of ``n``: a single value repeated, else ``v`` as it is."""
    return v * n if len(v) == 1 else v
