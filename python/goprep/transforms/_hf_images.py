"""The images of one call of a Hugging Face layout pipeline (``_hf_layout``, ``_hf_patches``, ``_hf_canvas``,
``_hf_tiles``, ``_hf_seg``, ``_hf_nougat``): the source flattened as transformers flattens it, each image's
size, and its encoded images (JPEG/PNG bytes and paths, ``_inputs.is_encoded_item``) opened as one batch.

An encoded image's size is its header's, so a batch's layout (its canvas, its groups of one resized size)
is known before any pixel is decoded; ``Images.run`` then hands the opened images to the class's goprep
pipeline, whose one engine call (``Execute``, GIL released) decodes, resizes, pads and normalises them:
the run path's encoded kind, the same decode as every goprep pipeline on bytes (``_decode``). Classes that
need the pixels in Python between engine passes (the tiling ones, Nougat's margin crop) decode the batch
first with one ``goprep.decode`` call instead (``Images(..., decode=True)``)."""

from __future__ import annotations

import os
import re
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .. import _decode, _ops
from .._errors import GoprepError, PipelineError
from .._inputs import is_encoded_item, is_pil, is_tensor
from ._rgb import to_rgb

Size = Tuple[int, int]
_ITEM = re.compile(r"(?:src|data)\[(\d+)\]")


def flat_images(src: Any, name: str = "src") -> Any:
    """transformers' ``make_flat_list_of_images`` (what every processor's ``__call__`` runs unless its class
    nests samples itself): a list of lists of images flattened in order, a list of ``(N, C, H, W)`` tensors
    into their images; anything else as it is. A list of lists of lists is refused, as there (``name``: the
    argument errors name)."""
    if isinstance(src, (list, tuple)) and src and all(isinstance(x, (list, tuple)) for x in src):
        flat = [x for s in src for x in s]
        if not flat:
            raise PipelineError("a list of empty lists: nothing to process", argument=name)
        if any(isinstance(x, (list, tuple)) for x in flat):
            raise PipelineError("a list of lists of lists: the processor takes an image, a list of images or a list "
                                "of lists of images (one per sample)", argument=name)
        return flat
    if isinstance(src, (list, tuple)) and src and all(is_tensor(x) and x.ndim == 4 for x in src):
        return [y for x in src for y in x]
    return src


def decoded_size(x: Any, name: str = "src") -> Size:
    """A decoded image's ``(h, w)``: a PIL image, an ``(H, W[, C])`` array, a ``(C, H, W)`` tensor."""
    if is_pil(x):
        h, w = x.height, x.width
    elif is_tensor(x) and x.ndim in (2, 3):
        h, w = int(x.shape[-2]), int(x.shape[-1])
    elif getattr(x, "ndim", 0) in (2, 3) and not is_tensor(x):
        h, w = int(x.shape[0]), int(x.shape[1])
    else:
        raise PipelineError(f"takes PIL images, (H, W[, C]) arrays, (C, H, W) / (N, C, H, W) tensors, JPEG/PNG bytes "
                            f"or paths, or a list of them; got {type(x).__name__} of {getattr(x, 'ndim', '?')} "
                            "dimensions", argument=name)
    if h < 1 or w < 1:
        raise PipelineError(f"an image of {h}x{w} pixels: nothing to resize", argument=name)
    return h, w


def _renamed(e: GoprepError, index: Sequence[int], one: bool) -> GoprepError:
    """``e``, raised by a call on some of a call's images (``index``: their positions in it), naming the
    image by its position in the caller's source (``src[i]``, or ``src`` for one image)."""
    m = _ITEM.fullmatch(e.argument or "")
    if m is None:
        return e if e.argument != "data" else type(e)(e.detail, argument="src", code=e.code)
    k = int(m.group(1))
    name = "src" if one else f"src[{index[k]}]"
    detail = re.sub(rf"(?:src|data)\[{k}\]", lambda _: name, e.detail)
    return type(e)(detail, argument=name, code=e.code)


def _rotated_path(raw: Any, e: Any, name: str) -> Optional[PipelineError]:
    """The refusal of path ``raw`` (opened as ``e``) if its header has an EXIF orientation other than 1:
    transformers' processor given a path loads it rotated (``load_image``'s ``exif_transpose``), goprep
    decodes the stored pixels. None for bytes (decoded as Image.open reads them) and unrotated files."""
    o = e.header.orientation
    if not isinstance(raw, (str, os.PathLike)) or o in (0, 1):
        return None
    return PipelineError(f"{os.fsdecode(raw)!r} has EXIF orientation {o}: transformers' processor loads a path "
                         "rotated (load_image's exif_transpose) and goprep decodes the stored pixels; pass the "
                         "rotated image (PIL.ImageOps.exif_transpose(Image.open(path))) or the file's bytes "
                         "(decoded as Image.open reads them)", argument=name)


def refuse_rotated_paths(items: Sequence[Any], index: Optional[Sequence[int]] = None, one: bool = False) -> None:
    """Raise ``_rotated_path``'s refusal for the first rotated path among ``items`` (``index``: their
    positions in the caller's source, default 0, 1, ...; ``one``: the source is a single image), after
    reading the paths' headers in one batch (which the decode that follows reads again)."""
    index = list(range(len(items))) if index is None else list(index)
    paths = [k for k, x in enumerate(items) if isinstance(x, (str, os.PathLike))]
    if not paths:
        return
    try:
        opened, batch = _decode.open_items([items[k] for k in paths], "src")
    except GoprepError as e:
        raise _renamed(e, [index[k] for k in paths], one) from None
    batch.close()
    for k, e in zip(paths, opened):
        err = _rotated_path(items[k], e, "src" if one else f"src[{index[k]}]")
        if err is not None:
            raise err


class Images:
    """One call's images (``src``: an image, a list, a list of lists, an ``(N, C, H, W)`` tensor):
    ``items`` (each a decoded image or, for an encoded one, its opened ``_decode.Encoded``), ``sizes`` (each
    ``(h, w)``, an encoded image's from its header), ``one`` (a single image, not a list). ``rgb``: the
    class's backend when it converts to RGB (do_convert_rgb): an encoded PNG that is not RGB is opened by
    Pillow and composited as transformers does (``_rgb.to_rgb``, as goprep's other converted pipelines do);
    JPEGs and RGB PNGs stay encoded. ``decode``: decode the encoded images now, in one ``goprep.decode``
    call, into ``(H, W, 3)`` arrays. ``flatten``: flatten a list of lists (False: the caller's samples were
    flattened already). A context manager: it closes the opened batch.

    Paths are refused where their header has an EXIF orientation other than 1: transformers' processor
    given a path loads it rotated (``load_image``'s ``exif_transpose``), goprep decodes the stored pixels."""

    def __init__(self, src: Any, rgb: Optional[str] = None, decode: bool = False, flatten: bool = True) -> None:
        src = flat_images(src) if flatten else src
        self.src = src
        self.one = not isinstance(src, (list, tuple)) and not (is_tensor(src) and src.ndim == 4)
        items = [src] if self.one else list(src)
        if not items:
            raise PipelineError("an empty list: nothing to process", argument="src")
        self._batch: Any = None
        enc = [i for i, x in enumerate(items) if is_encoded_item(x)]
        if enc and rgb is not None:
            for i in enc:
                items[i] = to_rgb(items[i], rgb)
            enc = [i for i in enc if is_encoded_item(items[i])]
        self.encoded = enc  # the positions of the images still encoded (opened, or decoded by decode=True)
        self.items = items
        if enc:
            self._open(enc, decode)
        self.sizes: List[Size] = [
            self._encoded_size(x, i) if type(x) is _decode.Encoded else decoded_size(x, self.name(i))
            for i, x in enumerate(items)]

    def name(self, i: int) -> str:
        """How errors name image ``i``."""
        return "src" if self.one else f"src[{i}]"

    def _open(self, enc: List[int], decode: bool) -> None:
        """The encoded images opened as one batch (their headers read, files read, by Go), or decoded."""
        raw = [self.items[i] for i in enc]
        try:
            if decode:
                refuse_rotated_paths(raw, enc, self.one)  # the files read once more by decode
                arrays = _ops.decode(raw[0] if self.one else raw)
                for i, a in zip(enc, [arrays] if self.one else arrays):
                    self.items[i] = a
                return
            opened, self._batch = _decode.open_items(raw[0] if self.one else raw, "src")
        except GoprepError as e:
            raise _renamed(e, enc, self.one) from None
        for i, e in zip(enc, opened):
            self._check_orientation(e, i, raw[enc.index(i)])
            self.items[i] = e

    def _check_orientation(self, e: Any, i: int, raw: Any) -> None:
        err = _rotated_path(raw, e, self.name(i))
        if err is not None:
            self.close()
            raise err

    def _encoded_size(self, e: Any, i: int) -> Size:
        h, w = e.header.decoded_size("RGB")[:2]
        return h, w

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
            self._batch = None

    def __enter__(self) -> "Images":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self, call: Callable[[Any], Any], index: Optional[Sequence[int]] = None) -> Any:
        """``call`` (a goprep pipeline of the class: a source -> its ``(N, ...)`` result) on the images
        ``index`` (all by default), as one ``(len(index), ...)`` tensor in that order: the source as given
        when nothing is encoded, else one call for the opened encoded images (decoded in it) and one for the
        others, errors naming each image by its place in the caller's source."""
        n = len(self.items)
        idx = list(range(n)) if index is None else list(index)
        opened = [i for i in idx if type(self.items[i]) is _decode.Encoded]
        if not opened:
            if len(idx) == n:
                res = call(self.src)
                return res[None] if self.one else res
            return self._call(call, idx, idx)
        rest = [i for i in idx if type(self.items[i]) is not _decode.Encoded]
        a = self._call(call, opened, self.encoded)  # its items' errors name their place in the opened batch
        if not rest:
            return a
        b = self._call(call, rest, rest)
        import torch

        a, b = torch.as_tensor(a), torch.as_tensor(b)
        out = torch.empty((len(idx),) + tuple(a.shape[1:]), dtype=a.dtype, device=a.device)
        pos = {i: k for k, i in enumerate(idx)}
        out[[pos[i] for i in opened]] = a
        out[[pos[i] for i in rest]] = b
        return out

    def call(self, call: Callable[[Any], Any], items: List[Any]) -> Any:
        """``call`` on ``items``, the list of all the images in order (``self.items`` or their converted
        versions), errors naming each image by its place in the caller's source."""
        try:
            return call(items)
        except GoprepError as e:
            raise _renamed(e, range(len(items)), self.one) from None

    def _call(self, call: Callable[[Any], Any], idx: List[int], names: List[int]) -> Any:
        """``call`` on the images ``idx``; an error naming ``src[k]`` is about image ``names[k]``."""
        try:
            return call([self.items[i] for i in idx])
        except GoprepError as e:
            raise _renamed(e, names, self.one) from None
