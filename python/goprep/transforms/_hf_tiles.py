"""The tiling processors of vision-language models, both of transformers' backends. LLaVA-NeXT and
LLaVA-OneVision (``AnyRes``): each image resized to fit the grid pinpoint that
``select_best_resolution`` picks, padded to it (centred, zeros), cut into ``patch_size`` tiles, each
tile and a global image (the original resized to ``size``, first) run through the class's resize /
center crop / rescale / normalize. Idefics3 and SmolVLM (``SplitImages``): resized by the longest edge,
then up to multiples of the tile side, cut into tiles followed by a global image, or left whole.
Idefics2 (``SplitQuadrants``): the image's four quadrants and the image, each resized on its own,
padded bottom-right to the batch's largest frame.
Tiles are stacked per image (per sample), the batch padded with zero tiles to its largest count.

Every resize, pad and normalisation runs in goprep's engine. LLaVA's pieces, where the per-tile chain
leaves their sizes as they are (both classes' defaults) and the pinpoint divides into tiles, are fused
(_hf_anyres.py): each piece one plan over the source image (the resize, the centred pad and the
tile's window, then the normalisation), every piece of the batch in one engine call written at its
place in the stacked result. Otherwise (and for Idefics and SmolVLM): one pass per resize the
processor makes (uint8 out, rounded as the processor rounds between its resizes; LLaVA's canvas
resized and padded in one), then one call per run of tiles of one shape for the per-tile chain,
written in place into the stacked result, the tiles cut in Python: a NumPy tile-major copy of the
uint8 canvas where the tile divides it, views of it otherwise. LANCZOS (Idefics3's and SmolVLM's default) is the
engine's "lanczos": Pillow's on the PIL class, PyTorch's uint8 lanczos (antialias="torch") on the
torchvision class (as tvF.resize runs it on CPU with torchvision >= 0.27), in LLaVA's per-tile chain
too (_steps.Resize); tensors outside the CPU are refused with it (refuse_device_lanczos)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from .. import _ops, _validate
from .._errors import PipelineError
from .._inputs import is_pil, is_tensor, pil_as_hwc
from .._pipeline import pipeline
from ._chain import Chain, mean_std
from . import _hf_anyres
from ._converted import Converted
from ._hf_images import Images
from ._rgb import to_rgb
from ._steps import Resize, _torchvision_lanczos, lanczos_argument, refuse_device_lanczos

# Keys each tiling class reads beyond the generic ones (by transformers' base name).
_LLAVA_KEYS = frozenset({"image_grid_pinpoints", "do_pad"})
_SPLIT_KEYS = frozenset({"do_pad", "do_image_splitting", "max_image_size", "return_row_col_info"})
TILE_KEYS = {"LlavaNext": _LLAVA_KEYS, "LlavaOnevision": _LLAVA_KEYS, "Idefics3": _SPLIT_KEYS, "SmolVLM": _SPLIT_KEYS,
             "Idefics2": frozenset({"do_pad", "do_image_splitting"})}
_SPLITTERS = ("Idefics2", "Idefics3", "SmolVLM")  # the image-splitting classes (their chain only rescales and normalises)
# Idefics3's MAX_IMAGE_SIZE: the longest side after its resize, at most (4k)
_MAX_IMAGE_SIZE = 4096


def select_best_resolution(h: int, w: int, pinpoints: Sequence[Tuple[int, int]]) -> Tuple[int, int]:
    """transformers' ``select_best_resolution``: the ``(height, width)`` pinpoint keeping the most of
    the image's pixels when it is scaled to fit (``int`` of each side, at most the original count),
    ties broken by the least padding (a thin image that keeps 0 pixels anywhere: the least padded),
    the first pinpoint winning a full tie."""
    best, most, waste = None, 0, float("inf")
    for ph, pw in pinpoints:
        scale = min(pw / w, ph / h)
        eff = min(int(w * scale) * int(h * scale), w * h)
        wasted = pw * ph - eff
        if eff > most or (eff == most and wasted < waste):
            best, most, waste = (ph, pw), eff, wasted
    assert best is not None  # pinpoints is not empty (_pinpoints), and the first one always sets it
    return best


def patch_output_size(h: int, w: int, target: Tuple[int, int]) -> Tuple[int, int]:
    """transformers' ``get_patch_output_size``: ``(h, w)`` scaled to fit ``target``, the side of the
    smaller scale set to the target's, the other ``ceil``-ed and capped at the target's."""
    th, tw = target
    sw, sh = tw / w, th / h
    if sw < sh:
        return min(math.ceil(h * sw), th), tw
    return th, min(math.ceil(w * sh), tw)


def _pinpoints(v: Any) -> List[Tuple[int, int]]:
    """``image_grid_pinpoints`` as a list of ``(height, width)`` positive ints."""
    if not isinstance(v, (list, tuple)) or not v:
        raise PipelineError(f"must be a non-empty list of [height, width] pairs, got {v!r}",
                            argument="image_grid_pinpoints")
    out = []
    for p in v:
        if not isinstance(p, (list, tuple)) or len(p) != 2:
            raise PipelineError(f"must be a list of [height, width] pairs, got {p!r} in it",
                                argument="image_grid_pinpoints")
        out.append((_validate.as_positive_int("image_grid_pinpoints", p[0]),
                    _validate.as_positive_int("image_grid_pinpoints", p[1])))
    return out


class _Fit:
    """The size (a Resize's callable) that fits an image into ``target`` (patch_output_size)."""

    def __init__(self, target: Tuple[int, int]) -> None:
        self.target = target

    def __call__(self, h: int, w: int) -> Tuple[int, int]:
        return patch_output_size(h, w, self.target)


class _Lanczos(Resize):
    """Resize's numerics with LANCZOS (PIL's code 1): Pillow's on PIL images, PyTorch's
    mode="lanczos" on tensors (uint8: its int16 weights, antialias="torch"; float32: its float
    kernel), as Resize reads the other filters (the steps' own modes do not list it)."""

    def __init__(self, name: str, size: Any, interp: Any, antialias: Any, max_size: Any, api: str) -> None:
        super().__init__(name, size, "bicubic", antialias, max_size, api)
        self.mode = "lanczos"

    def _tensor_kernel(self, dtype: str) -> Tuple[str, Any]:
        return "lanczos", "torch" if dtype == "u8" else True


class _Tiled(Converted):
    """What the tiling processors share: do_convert_rgb and the first resizes (``_first``), the tiles
    of a canvas the tile size divides (``_grid``), and the per-tile chain run into the stacked result
    (``_write``). The chain is the class's per-tile steps (any resize and crop, rescale, normalise)."""

    def __init__(self, chain: Chain, source: str, flavor: str, device: str, convert_rgb: bool, interp: Any) -> None:
        super().__init__(chain, source, flavor=flavor, device=device)
        self._rgb, self._interp = convert_rgb, interp
        self._stage: Dict[str, Any] = {}

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["_stage"] = {}
        return state

    def _first(self) -> Any:
        """The resizes before the tiles' chain (memoised): an image resized with the class's resample
        and numerics to ``target``, or with ``fit`` to fit it (patch_output_size) and padded centred
        with zeros to it, as uint8 NumPy ``(H, W, C)`` (rounded, as the processor rounds between its
        resizes); with ``target`` None padded centred to a square with the colour ``fit``."""
        p = self._stage.get("first")
        if p is None:
            flavor = self._flavor or "tensor"

            def resize_pad(img: Any, target: Any, fit: Any) -> Any:
                return self._resize_pad(img, target, fit, flavor)

            p = self._stage["first"] = pipeline(resize_pad, device="cpu", output="numpy")
        return p

    def _resize_pad(self, img: Any, target: Any, fit: Any, flavor: str) -> Any:
        """_first's resize of a traced image (its arguments): resized to ``target``, or to fit it and
        padded centred with zeros; with ``target`` None padded to a square with the colour ``fit``."""
        if target is None:  # OneVision's pad_to_square, with the colour ``fit``
            side = max(img.height, img.width)
            return _ops.pad(img, size=(side, side), value=list(fit), center=True)
        interp = self._interp
        img = (_Lanczos if interp == "lanczos" else Resize)("resize", _Fit(target) if fit else target, interp,
                                                             True, None, "v2")(img, flavor)
        return _ops.pad(img, size=target, value=0, center=True) if fit else img

    def _rgb_how(self) -> Any:
        """How Images converts an encoded PNG that is not RGB (None: the class does not convert)."""
        return (self._flavor or "tensor") if self._rgb else None

    def _items(self, items: List[Any]) -> List[Any]:
        """The images as the passes read them: do_convert_rgb applied, an RGB PIL image read once
        (each pass would copy it out of Pillow again), packed by the engine (pil_as_hwc: no tobytes).
        Tensors outside the CPU are refused when a resize is LANCZOS (refuse_device_lanczos)."""
        refuse_device_lanczos(items, "resample" if self._interp == "lanczos" else lanczos_argument(self._chain.ops))
        if self._rgb:
            items = [to_rgb(x, self._flavor or "tensor") for x in items]
        return [pil_as_hwc(x) if is_pil(x) and x.mode == "RGB" else x for x in items]

    @staticmethod
    def _grid(canvas: np.ndarray, ph: int, pw: int) -> np.ndarray:
        """The ``ph x pw`` tiles of a canvas they divide, row by row, as one ``(n, ph, pw, C)`` array (one
        NumPy copy, which the tile chain reads faster than strided views)."""
        nh, nw = canvas.shape[0] // ph, canvas.shape[1] // pw
        return np.ascontiguousarray(canvas.reshape(nh, ph, nw, pw, -1).swapaxes(1, 2)).reshape(
            nh * nw, ph, pw, canvas.shape[-1])

    def _write(self, dst: Any, runs: List[Any], corner: bool = False) -> int:
        """Each run (a ``(n, H, W, C)`` array or a list of same-shape images) through the tile chain, one
        engine call each, into ``dst[k:k + n]`` in order; returns the count written. ``corner``: the
        chain keeps the runs' sizes (no resize or crop), and a run smaller than dst's frames goes into
        their top-left corner, the rest left as it is."""
        import torch

        tile_chain = self._pipe(self._flavor or "tensor")
        k = 0
        for r in runs:
            h, w = r.shape[-3:-1] if corner else dst.shape[-2:]
            if (h, w) != tuple(dst.shape[-2:]):
                dst[k:k + len(r), :, :h, :w] = tile_chain(r)
            elif dst.dtype == torch.float32 and self._chain.scale is not None:
                tile_chain(r, out=dst[k:k + len(r)])
            else:  # uint8 results (channels-last in memory), or uint8 into a float result: copied into place
                dst[k:k + len(r)] = tile_chain(r)
            k += len(r)
        return k


class AnyRes(_Tiled):
    """LLaVA-NeXT's / LLaVA-OneVision's processor: a call returns the processor's outputs by name, as
    ``processor(images, return_tensors="pt")``: ``pixel_values`` ``(N, tiles, 3, H, W)`` float32 (the
    global image first, then the tiles row by row; with ``do_pad`` the images' tile counts padded with
    zero tiles), ``image_sizes`` ``(N, 2)`` int64 (each image's size), and for OneVision
    ``batch_num_images`` ``(samples,)`` int64 (ones: each image of a flat batch is a sample of its own;
    OneVision's list of lists: each list a sample, whose images, when more than one, are each padded
    to a square with the mean colour and kept whole, one tile).
    The chain is the class's per-tile steps (resize to ``size``, center crop, rescale, normalise)."""

    def __init__(self, chain: Chain, source: str, flavor: str, device: str, convert_rgb: bool, interp: Any,
                 pinpoints: List[Tuple[int, int]], size: Tuple[int, int], patch: int, do_pad: bool,
                 num_images: bool, square_fill: Tuple[int, ...] = ()) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb, interp)
        self._pinpoints, self._size, self._patch = pinpoints, size, patch
        self._do_pad, self._num_images, self._fill = do_pad, num_images, square_fill

    def _check_chain(self, shapes: List[Tuple[int, int]]) -> Tuple[int, int]:
        """The size every piece (of the sizes ``shapes``) has after the tile chain (one size, as the
        processor stacks them)."""
        sizes = set()
        for h, w in set(shapes):
            for op in self._chain.ops:
                h, w = op.out_size(h, w) if hasattr(op, "out_size") else (op.h, op.w)  # type: ignore[attr-defined]
            sizes.add((h, w))
        if len(sizes) != 1:
            raise PipelineError(f"the tiles and the global image come out of the class's resize and crop in sizes "
                                f"{sorted(sizes)}: the processor fails to stack them (set do_center_crop and crop_size, "
                                "or size as height and width)", argument="size")
        return sizes.pop()

    def _anyres(self) -> Any:
        """The pipeline of the fused pieces (_hf_anyres: Place, then the tile chain), or None where the
        chain is not the identity on the pieces' sizes, keeps uint8 or runs a step outside the engine."""
        if "anyres" not in self._stage:
            flavor, ops = self._flavor or "tensor", list(self._chain.ops)
            ok = self._chain.scale is not None and _hf_anyres.fusable(ops, self._patch, self._size) and \
                not any(getattr(op, "host", None) is not None and op.host(flavor) is not None for op in ops)
            self._stage["anyres"] = super()._fused([_hf_anyres.Place(self._resize_pad)] + ops, flavor, True, "numpy",
                                                   "cpu", "<anyres>") if ok else None
        return self._stage["anyres"]

    def _pieces(self, img: Any, h: int, w: int) -> List[Any]:
        """The global image's first resize, then the tiles row by row, uint8 HWC, as runs of one shape:
        a ``(n, H, W, C)`` array (the global image; the tiles of a canvas that the tiles divide) or a
        list of views of the canvas (ragged tiles where the patch size does not divide it)."""
        best = select_best_resolution(h, w, self._pinpoints)
        first = self._first()
        canvas = first(img, best, True)
        runs: List[Any] = [first(img, self._size, False)[None]]
        p = self._patch
        if best[0] % p == 0 and best[1] % p == 0:
            runs.append(self._grid(canvas, p, p))
            return runs
        for i in range(0, best[0], p):
            for j in range(0, best[1], p):
                t = canvas[i:i + p, j:j + p]
                if isinstance(runs[-1], list) and runs[-1][0].shape == t.shape:
                    runs[-1].append(t)
                else:
                    runs.append([t])
        return runs

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise PipelineError("is not supported by a processor that returns several outputs", argument="out")
        import torch

        nested = self._num_images and isinstance(src, (list, tuple)) and bool(src) and \
            isinstance(src[0], (list, tuple))
        if nested:  # OneVision's samples: an image alone in its sample is tiled, the others padded to a square
            if not self._fill:
                raise PipelineError("a list of samples needs image_mean as 3 values (the class pads to a square with "
                                    "its colour)", argument="image_mean")
            samples = [list(x) for x in src if x]
            num = [len(x) for x in samples]
            src = [x for sample in samples for x in sample]
        with Images(src, self._rgb_how(), decode=True, flatten=not nested) as im:
            sizes = im.sizes
        if self._num_images and is_tensor(src) and src.ndim == 4 and len(sizes) > 1:
            raise PipelineError("a (N, C, H, W) tensor: LLaVA-OneVision's processor counts it as one image and fails "
                                "(IndexError); pass a list of images", argument="src")
        if not nested:
            num = [1] * len(sizes)
        items = self._items(im.items)
        alone = [n == 1 for n in num for _ in range(n)]
        fused = self._anyres()
        per_image: List[Any] = []  # per image: runs of uint8 pieces, or None where fused
        places: List[Any] = []  # per image: the fused pieces' Place parameters, or None
        for x, (h, w), a in zip(items, sizes, alone):
            best = select_best_resolution(h, w, self._pinpoints) if a else (1, 1)
            f = fused is not None and a and best[0] % self._patch == 0 and best[1] % self._patch == 0
            places.append(_hf_anyres.pieces(best, self._size, self._patch) if f else None)
            per_image.append(None if f else self._pieces(x, h, w) if a else [self._first()(x, None, self._fill)[None]])
        counts = [len(pl) if runs is None else sum(len(r) for r in runs) for runs, pl in zip(per_image, places)]
        if not self._do_pad and len(set(counts)) > 1:
            raise PipelineError(f"False with images of {sorted(set(counts))} tiles: the processor fails to stack "
                                "them into one tensor", argument="do_pad")
        shapes = [(r[0] if isinstance(r, list) else r).shape[-3:-1] for runs in per_image if runs for r in runs]
        shapes += [self._size, (self._patch, self._patch)] if any(pl is not None for pl in places) else []
        th, tw = self._check_chain(shapes)
        dtype = torch.float32 if self._chain.scale is not None else torch.uint8
        pv = torch.empty((len(items), max(counts), 3, th, tw), dtype=dtype)
        rows = [i for i, pl in enumerate(places) if pl is not None]
        if rows:  # the fused images' pieces, in one engine call
            _hf_anyres.run(fused, [items[i] for i in rows], [places[i] for i in rows], rows, len(self._chain.ops), pv)
        for i, runs in enumerate(per_image):
            k = counts[i] if runs is None else self._write(pv[i], runs)
            pv[i, k:] = 0  # do_pad's zero tiles, after the normalisation
        res = {"pixel_values": pv, "image_sizes": torch.tensor(sizes, dtype=torch.int64)}
        if self._num_images:
            res["batch_num_images"] = torch.tensor(num, dtype=torch.int64)
        return res


def longest_edge_size(h: int, w: int, longest: int) -> Tuple[int, int]:
    """Idefics3's ``get_resize_output_image_size``: the longer side to ``longest`` (the shorter
    ``int``-scaled, rounded up to even), then both scaled below MAX_IMAGE_SIZE (``int``), each side at
    least 1."""
    ar = w / h
    if w >= h:
        w, h = longest, int(longest / ar)
        h += h % 2
    else:
        h, w = longest, int(longest * ar)
        w += w % 2
    h, w = max(h, 1), max(w, 1)
    ar = w / h
    if w >= h and w > _MAX_IMAGE_SIZE:
        w, h = _MAX_IMAGE_SIZE, int(_MAX_IMAGE_SIZE / ar)
    elif h > w and h > _MAX_IMAGE_SIZE:
        h, w = _MAX_IMAGE_SIZE, int(_MAX_IMAGE_SIZE * ar)
    return max(h, 1), max(w, 1)


def vision_encoder_size(h: int, w: int, m: int) -> Tuple[int, int]:
    """Idefics3's ``resize_for_vision_encoder`` size: the longer side rounded up to a multiple of ``m``,
    the other scaled with it (``int``) and rounded up to a multiple too."""
    ar = w / h
    if w >= h:
        w = math.ceil(w / m) * m
        h = math.ceil(int(w / ar) / m) * m
    else:
        h = math.ceil(h / m) * m
        w = math.ceil(int(h * ar) / m) * m
    return h, w


class SplitImages(_Tiled):
    """Idefics3's / SmolVLM's processor: a call returns the processor's outputs by name, as
    ``processor(images, return_tensors="pt")``. Each image is resized by ``size`` (its longest edge, or
    height and width), then with ``do_image_splitting`` resized up to multiples of the tile side ``m``
    and, when larger than one tile, cut into ``m x m`` tiles row by row followed by the global image
    (that canvas resized to ``m x m``); without it resized to ``m x m``; each resize rounds to uint8
    as the processor's does. A single image or a flat list is one sample, a list of lists one sample
    per inner list; ``pixel_values`` ``(samples, frames, 3, m, m)`` (with ``do_pad``: the samples'
    frame counts padded with zero frames, and ``pixel_attention_mask`` ``(samples, frames, m,
    m)`` int64, 1 on every real frame), with ``return_row_col_info`` ``rows`` and ``cols``: each
    image's tile rows and columns (0 for an image left whole), nested by sample, as lists."""

    def __init__(self, chain: Chain, source: str, flavor: str, device: str, convert_rgb: bool, interp: Any,
                 size: Dict[str, int], do_resize: bool, splitting: bool, m: int, do_pad: bool,
                 row_col: bool) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb, interp)
        self._size, self._do_resize, self._splitting, self._m = size, do_resize, splitting, m
        self._do_pad, self._row_col = do_pad, row_col

    def _frames(self, img: Any, h: int, w: int) -> Tuple[List[Any], int, int]:
        """One image's frames (runs of ``(n, m, m, C)`` uint8 arrays, in the processor's order) and its
        tile rows and columns."""
        first, m = self._first(), self._m
        if self._do_resize:
            size = self._size
            target = longest_edge_size(h, w, size["longest_edge"]) if "longest_edge" in size else \
                (size["height"], size["width"])
            img, (h, w) = first(img, target, False), target
        if not self._splitting:
            return [first(img, (m, m), False)[None]], 0, 0
        vh, vw = vision_encoder_size(h, w, m)
        canvas = first(img, (vh, vw), False)
        if vh <= m and vw <= m:
            return [canvas[None]], 0, 0
        return [self._grid(canvas, m, m), first(canvas, (m, m), False)[None]], vh // m, vw // m

    def __call__(self, src: Any, *, out: Any = None) -> Any:
        if out is not None:
            raise PipelineError("is not supported by a processor that returns several outputs", argument="out")
        import torch

        nested = isinstance(src, (list, tuple)) and bool(src) and all(isinstance(x, (list, tuple)) for x in src)
        samples = [list(x) for x in src if x] if nested else [src]
        if not samples:
            raise PipelineError("a list of empty lists: nothing to process", argument="src")
        # every sample's images at once (encoded ones decoded in one call); src[i]: the i-th image, in order
        with Images([x for s in samples for x in s] if nested else src, self._rgb_how(), decode=True,
                    flatten=False) as im:
            items, sizes = self._items(im.items), im.sizes
        frames, rows, cols = [], [], []
        start = 0
        for sample in samples:
            n = len(sample) if nested else len(items)
            runs, r, c = [], [], []
            for x, (h, w) in zip(items[start:start + n], sizes[start:start + n]):
                f, nr, nc = self._frames(x, h, w)
                runs += f
                r.append(nr)
                c.append(nc)
            start += n
            frames.append(runs)
            rows.append(r)
            cols.append(c)
        counts = [sum(len(f) for f in runs) for runs in frames]
        shapes = [f.shape[1:3] for runs in frames for f in runs]
        if not self._do_pad and (len(set(counts)) > 1 or len(set(shapes)) > 1):
            raise PipelineError(f"False with samples of {sorted(set(counts))} frames of sizes {sorted(set(shapes))}: "
                                "the processor fails to stack them into one tensor", argument="do_pad")
        fh, fw = max(s[0] for s in shapes), max(s[1] for s in shapes)  # do_pad's frame size: the largest
        # uint8 frames (no rescale, no normalisation) padded: the torchvision class writes them into float32
        # zeros; the PIL class stacks them as they are unless a sample has zero frames (float32) to add
        float_out = self._chain.scale is not None or self._do_pad and (self._flavor != "pil" or len(set(counts)) > 1)
        dtype = torch.float32 if float_out else torch.uint8
        pv = (torch.zeros if len(set(shapes)) > 1 else torch.empty)((len(samples), max(counts), 3, fh, fw), dtype=dtype)
        for i, runs in enumerate(frames):
            k = self._write(pv[i], runs, corner=True)
            pv[i, k:] = 0
        res: Dict[str, Any] = {"pixel_values": pv}
        if self._do_pad:  # 1 over each frame's own pixels (its top-left corner), 0 on padding and padded frames
            mask = torch.zeros((len(samples), max(counts), fh, fw), dtype=torch.int64)
            for i, runs in enumerate(frames):
                j = 0
                for f in runs:
                    mask[i, j:j + len(f), :f.shape[1], :f.shape[2]] = 1
                    j += len(f)
            res["pixel_attention_mask"] = mask
        if self._row_col:
            res["rows"], res["cols"] = rows, cols
        return res


def idefics2_size(h: int, w: int, shortest: int, longest: int) -> Tuple[int, int]:
    """Idefics2's ``get_resize_output_image_size``: the longer side down to ``longest`` (the other
    ``int``-scaled) when over it, then each side up to at least ``shortest``."""
    ar = w / h
    if w >= h and w > longest:
        w, h = longest, int(longest / ar)
    elif h > w and h > longest:
        h, w = longest, int(longest * ar)
    return max(h, shortest), max(w, shortest)


class SplitQuadrants(SplitImages):
    """Idefics2's processor: SplitImages' samples and outputs, with Idefics2's frames: each image (with
    ``do_image_splitting`` first its four quadrants, split at ``(h // 2, w // 2)``: top-left, top-right,
    bottom-left, bottom-right, then the image) resized on its own by ``size`` (``idefics2_size``, or
    height and width), rounded to uint8 as the processor's resize is; with ``do_pad`` every frame
    padded bottom-right with zeros to the batch's largest height and width, after the normalisation,
    and ``pixel_attention_mask`` 1 over each frame's own pixels."""

    def _frames(self, img: Any, h: int, w: int) -> Tuple[List[Any], int, int]:
        if self._splitting and (h < 2 or w < 2):
            raise PipelineError(f"True with a {h}x{w} image: its quadrants are empty (the class fails on them, or "
                                "reads the image's layout another way)", argument="do_image_splitting")
        my, mx = h // 2, w // 2
        boxes = [(0, 0, my, mx), (0, mx, my, w - mx), (my, 0, h - my, mx), (my, mx, h - my, w - mx)] \
            if self._splitting else []
        first, size, runs = self._first(), self._size, []
        for top, left, bh, bw in boxes + [(0, 0, h, w)]:
            piece = img if (bh, bw) == (h, w) else _ops.crop(img, top, left, bh, bw)
            target = (bh, bw) if not self._do_resize else (size["height"], size["width"]) if "height" in size else \
                idefics2_size(bh, bw, size["shortest_edge"], size["longest_edge"])
            runs.append(first(piece, target, False)[None])
        return runs, 0, 0


def tile_convert(cfg: Dict[str, Any], kind: str, base: str, flavor: str, device: str) -> Converted:
    """The tiling processor of a complete config of class ``kind`` (``base`` in TILE_KEYS)."""
    from ._hf_pixels import hf_chain

    lanczos = _validate.is_int(cfg.get("resample")) and int(cfg["resample"]) == 1
    if lanczos and flavor != "pil" and not _torchvision_lanczos():
        lanczos, cfg = False, {**cfg, "resample": 3}  # transformers' torchvision backend then resizes with BICUBIC
    # the class's resample as goprep's Resize reads it (the processor's own resizes use it too)
    interp = "lanczos" if lanczos else hf_chain(
        {**cfg, "do_resize": True, "size": {"height": 1, "width": 1}, "do_center_crop": False}, kind, "").ops[0].mode
    if lanczos and base in _SPLITTERS:
        cfg = {**cfg, "resample": 3}  # the chain below only rescales and normalises: its resample is unused
    size = cfg.get("size") or {}
    if not isinstance(size, dict):
        raise PipelineError(f"{size!r} ({kind} needs a dict)", argument="size")
    size = {k: _validate.as_positive_int(f"size[{k!r}]", v) for k, v in size.items() if v is not None}
    if base in _SPLITTERS:
        chain = hf_chain({**cfg, "do_resize": False, "do_center_crop": False}, kind, base)  # rescale, normalise
        if not cfg.get("do_rescale") and not cfg.get("do_normalize"):
            chain = Chain(ops=[], to_tensor=True)
        do_resize = bool(cfg.get("do_resize"))
        if base == "Idefics2":
            if do_resize and not ("shortest_edge" in size and "longest_edge" in size or "height" in size and
                                  "width" in size):
                raise PipelineError(f"{size!r} ({kind}'s resize needs shortest_edge and longest_edge, or height and "
                                    "width)", argument="size")
            return SplitQuadrants(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")),
                                  interp, size, do_resize, bool(cfg.get("do_image_splitting")), 0,
                                  bool(cfg.get("do_pad")), False)
        if do_resize and "longest_edge" not in size and not ("height" in size and "width" in size):
            raise PipelineError(f"{size!r} ({kind}'s resize needs longest_edge, or height and width)", argument="size")
        mx = cfg.get("max_image_size")
        if not isinstance(mx, dict) or mx.get("longest_edge") is None:
            raise PipelineError(f"{mx!r} ({kind} needs longest_edge)", argument="max_image_size")
        return SplitImages(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), interp,
                           size, do_resize, bool(cfg.get("do_image_splitting")),
                           _validate.as_positive_int("max_image_size['longest_edge']", mx["longest_edge"]),
                           bool(cfg.get("do_pad")), bool(cfg.get("return_row_col_info")))
    chain = hf_chain(cfg, kind, base)  # the per-tile steps
    if not cfg.get("do_rescale") and not cfg.get("do_normalize"):  # the processor's tiles stay uint8
        chain = Chain(ops=chain.ops, to_tensor=True)
    if size.get("height") and size.get("width"):
        glob = (size["height"], size["width"])
    elif size.get("shortest_edge"):
        glob = (size["shortest_edge"],) * 2
    else:
        raise PipelineError(f"{size!r} ({kind} needs height and width, or shortest_edge)", argument="size")
    crop = cfg.get("crop_size") or {}
    patch = crop.get("height") if isinstance(crop, dict) and crop.get("height") else size.get("height") or \
        size.get("shortest_edge")
    return AnyRes(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), interp,
                  _pinpoints(cfg.get("image_grid_pinpoints")), glob,
                  _validate.as_positive_int("crop_size['height']", patch), bool(cfg.get("do_pad")),
                  base == "LlavaOnevision", _square_fill(cfg.get("image_mean")))


def _square_fill(mean: Any) -> Tuple[int, ...]:
    """OneVision's pad_to_square colour: ``int(x * 255)`` of each of the class's ``image_mean`` (in
    Python floats, as there; empty where it is not a list, on which the class fails)."""
    if not isinstance(mean, (list, tuple)) or len(mean) != 3:
        return ()
    mean_std(mean, 1.0, ("image_mean", "image_std"), channels=3)  # numbers, or refused by name
    return tuple(int(float(x) * 255) for x in mean)
