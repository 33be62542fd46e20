"""LLaVA-NeXT's and LLaVA-OneVision's any-resolution tiles fused into one engine call per batch
(AnyRes, _hf_tiles.py). Where the class's per-tile chain leaves the size of a tile and of the global
image as it is (its resize to ``size`` and center crop: the defaults of both classes, whose tiles are
``size``), a piece is one plan over the source image: the global image resized to ``size``, and each
tile the image resized to fit the pinpoint, padded centred with zeros to it and cut to the tile's
window, then rescaled and normalised, written at its place in the stacked result. One engine call
runs every piece of the batch, each its own plan (per-item arguments, as ``Pipeline._call``'s
``each``) written at its byte offset (``Pipeline._at``), with no uint8 canvas or tile copy between.

Why it is exact: the classes round to uint8 between their resize and the per-tile chain, and every
uint8 resize a LLaVA class makes here runs on Pillow's fixed-point arithmetic (kPillow: Pillow's
filters on PIL images, PyTorch's uint8 kernels on tensors), whose rows the engine rounds to uint8
before the normalisation; nearest resizes copy pixels. Float32 sources are resized in float32 by
both paths, unrounded. A plan computes only its output window of the resize (the engine folds the
canvas and the crop into its axes), so the tiles together resize the canvas once, as before."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from .. import _ops


class Place:
    """The geometry before the per-tile chain, an op with per-item parameters (``apply``; see
    Converted._fused): ``(target, fit, window)``: the image resized to ``target`` with the class's
    resize (``resize``: _Tiled._first's, rounding as it does), or with ``fit`` to fit it and padded
    centred with zeros to it; then cut to ``window`` ``(top, left, h, w)`` when it is not None."""

    random = False

    def __init__(self, resize: Any) -> None:
        self._resize = resize

    def __call__(self, img: Any, flavor: str) -> Any:  # pragma: no cover - called with parameters only
        raise TypeError("Place runs with per-item parameters (apply)")

    def apply(self, img: Any, flavor: str, prm: Tuple[Any, ...]) -> Any:
        target, fit, window = prm
        img = self._resize(img, target, fit, flavor)
        if window is not None:
            img = _ops.crop(img, *window)
        return img


def fusable(ops: Sequence[Any], patch: int, size: Tuple[int, int]) -> bool:
    """Whether the per-tile chain ``ops`` leaves a ``patch`` tile and the ``size`` global image as they
    are (each op's output size its input's), so that the pieces fuse with the first resize."""
    for h, w in ((patch, patch), size):
        for op in ops:
            if not hasattr(op, "out_size") or op.out_size(h, w) != (h, w):
                return False
    return True


def pieces(best: Tuple[int, int], size: Tuple[int, int], patch: int) -> List[Tuple[Any, ...]]:
    """One image's pieces as Place parameters, in the processor's order: the global image (resized to
    ``size``), then the ``patch`` tiles of the ``best`` pinpoint's canvas row by row (the last row and
    column cut short where the patch does not divide it)."""
    res: List[Tuple[Any, ...]] = [(size, False, None)]
    for i in range(0, best[0], patch):
        for j in range(0, best[1], patch):
            res.append((best, True, (i, j, min(patch, best[0] - i), min(patch, best[1] - j))))
    return res


def run(pipe: Any, items: List[Any], prms: List[List[Tuple[Any, ...]]], rows: List[int], n_ops: int,
        dst: Any) -> None:
    """Images ``items``' pieces (Place parameters ``prms``) through ``pipe`` (the fused Place + chain
    pipeline) into ``dst`` (the stacked ``(N, tiles, C, H, W)`` float32 tensor, C-contiguous): image
    ``k``'s pieces at ``dst[rows[k], :len(prms[k])]``, in one engine call (Pipeline._at: each piece at
    its byte offset; the padding tiles are left to the caller)."""
    rest = (None,) * n_ops
    src, ps, offs = [], [], []
    piece = dst[0, 0].numel() * dst.element_size()
    for i, x, p in zip(rows, items, prms):
        src += [x] * len(p)
        ps += p
        offs += [(i * dst.shape[1] + k) * piece for k in range(len(p))]
    pipe._at(src, dst.numpy(), offs, lambda k, it: (it, ((ps[k],) + rest,)))
