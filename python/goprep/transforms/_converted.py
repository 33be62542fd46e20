"""``Converted``, the pipeline every converter returns: its chain compiled per numerics flavor ("pil" or
"tensor") on first use, with the layouts of torchvision's video preset and Hugging Face's video
processors; ``Staged``, a chain split where one step runs outside the engine."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .. import _ops
from .._errors import PipelineError
from .._inputs import is_encoded_item, is_pil, is_tensor
from .._pipeline import pipeline
from ._chain import Chain, Op, bcast
from ._random import chain_reducer, drawing_from, image_hw, is_batch, items_of, run_drawn, stack
from ._random_color import engine_params, finish, finish_all, image_c, item_channels
from ._variants import chain_split
from ._rgb import to_rgb
from ._staged_call import ONE_CALL, OneCall, one_call_ready
from ._steps import lanczos_argument, refuse_device_lanczos


class Converted:
    """A fused goprep pipeline converted from another library's preprocessing (see ``goprep.transforms``).

    Call it like a ``goprep.pipeline``: a PIL image, a NumPy ``(H, W, C)`` array, a CPU tensor
    ``(C, H, W)`` / ``(N, C, H, W)``, or a list of them; ``out=`` as for pipelines. ``notes`` lists
    what the conversion skipped (eval-mode no-ops)."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str] = None, device: str = "auto",
                 clip: bool = False, convert_rgb: bool = False, hf_video: bool = False) -> None:
        self._chain = chain
        self._source = source
        self._flavor = flavor  # fixed numerics ("pil"/"tensor"), or None: follow the input
        self._device = device
        self._clip = clip  # torchvision's VideoClassification layout (see _call_clip)
        self._convert_rgb = convert_rgb  # Hugging Face's do_convert_rgb (see to_rgb)
        self._hf_video = hf_video  # Hugging Face's video layout (Vivit: see _call_hf_video)
        self._pipes: Dict[str, Any] = {}
        self.notes = list(chain.notes)
        # a training chain: each item draws its parameters (see _call_random)
        self._random = any(getattr(op, "random", False) for op in chain.ops)

    def __repr__(self) -> str:
        return f"<goprep.transforms.Converted from {self._source}>"

    def __getstate__(self) -> Dict[str, Any]:
        """Pickled as the converted chain and options; the compiled pipelines are rebuilt on the first
        call in the receiving process (as for ``goprep.pipeline``)."""
        state = dict(self.__dict__)
        state["_pipes"] = {}
        return state

    def _fused(self, ops: List[Op], flavor: str, last: bool, output: Optional[str], device: str, stage: str = "") -> Any:
        c = self._chain

        def fn(img: Any, prm: Optional[Tuple[Any, ...]] = None) -> Any:
            # prm: a random chain's drawn parameters, one per op of this segment (see _call_random)
            for k, op in enumerate(ops):
                img = op(img, flavor) if prm is None else op.apply(img, flavor, prm[k]) if hasattr(op, "apply") \
                    else op(img, flavor)
            if last and c.scale is not None:
                n = img.channels
                mean = bcast(c.mean, n) if c.mean is not None else [0.0] * n
                std = bcast(c.std, n) if c.std is not None else [1.0] * n
                # scale always given: normalize's check for a 0-255 mean is for hand-written calls
                scale = (1 / 255 if img.dtype == "u8" else 1.0) if c.scale_by_dtype else c.scale
                img = self._laid_out(_ops.normalize(img, mean=mean, std=std, scale=scale))
            return img

        fn.__qualname__ = f"converted<{self._source}>{stage}"
        return pipeline(fn, device=device, output=output)

    def _laid_out(self, img: Any) -> Any:
        """The normalised traced image in the converter's output layout (PatchBatch: patch rows)."""
        return img

    def _pipe(self, flavor: str) -> Any:
        p = self._pipes.get(flavor)
        if p is None:
            c = self._chain
            # Split the ops where one runs outside the engine for this flavor (v1's float resize).
            segments: List[List[Op]] = [[]]
            hosts: List[Callable[..., np.ndarray]] = []
            cuts: List[int] = []  # the op index of each host step
            for k, op in enumerate(c.ops):
                host = getattr(op, "host", None)
                h = host(flavor) if host is not None else None
                if h is None:
                    segments[-1].append(op)
                else:
                    hosts.append(h)
                    cuts.append(k)
                    segments.append([])
            if not hosts:
                p = self._fused(segments[0], flavor, True, "torch" if c.to_tensor else None, self._device)
            else:
                p = Staged(self, segments, hosts, flavor, cuts)
            self._pipes[flavor] = p
        return p

    def _call_clip(self, src: Any, out: Any) -> Any:
        """torchvision's ``VideoClassification``: a ``(T, C, H, W)`` or ``(B, T, C, H, W)`` tensor, its
        frames run as one batch, the result viewed as ``(C, T, h, w)`` / ``(B, C, T, h, w)`` (the
        preset's permute: a view, as there)."""
        if out is not None:
            raise PipelineError("is not supported by a VideoClassification preset (its result is a permuted view)",
                                argument="out")
        if not is_tensor(src) or src.ndim not in (4, 5):
            what = f"a {src.ndim}-D tensor" if is_tensor(src) else type(src).__name__
            raise PipelineError(f"VideoClassification takes a (T, C, H, W) or (B, T, C, H, W) video tensor, as "
                                f"torchvision's preset does; got {what}", argument="src")
        vid = src[None] if src.ndim == 4 else src
        n, t, c, h, w = vid.shape
        y = self._pipe("tensor")(vid.reshape(n * t, c, h, w))
        y = y.view(n, t, *y.shape[1:]).permute(0, 2, 1, 3, 4)
        return y[0] if src.ndim == 4 else y

    def _call_hf_video(self, src: Any, out: Any) -> Any:
        """Vivit's ``pixel_values`` layout: one image is a one-frame video ``(1, 1, C, H, W)``, a list of
        images one video ``(1, T, C, H, W)`` (its ``make_batched``); the frames run as one batch."""
        if out is not None:
            raise PipelineError("is not supported by a video processor's pipeline (its result is a view)", argument="out")
        if isinstance(src, (list, tuple)):
            if not src or not all(is_pil(x) or getattr(x, "ndim", 0) == 3 for x in src):
                raise PipelineError("a video processor takes an image or a list of frames (PIL images or 3-D "
                                    "arrays / tensors); a list of videos is not supported", argument="src")
            return self._pipe(self._flavor or "pil")(list(src))[None]
        if not (is_pil(src) or getattr(src, "ndim", 0) == 3):
            raise PipelineError("a video processor takes an image or a list of frames (PIL images or 3-D arrays / "
                                "tensors), as one video", argument="src")
        return self._pipe(self._flavor or "pil")(src)[None, None]

    def __call__(self, src: Any, *, out: Any = None, reduce: Optional[str] = None, generator: Any = None) -> Any:
        """``reduce="auto"`` (training chains on JPEG bytes or paths): see ``_random.run_drawn``.
        ``generator`` (a ``torch.Generator`` or ``numpy.random.Generator``; None: torch's global one
        and Python's ``random``, torchvision's and timm's sources): what a training chain draws from
        in this call (``_random.drawing_from``); an eval chain draws nothing and ignores it."""
        if generator is not None:
            with drawing_from(generator):
                return self._call(src, out, reduce)
        return self._call(src, out, reduce)

    def rgb(self) -> Optional[str]:
        """How ``to_rgb`` converts this processor's inputs (Hugging Face's do_convert_rgb: its backend's
        way, "pil" or "tensor"), or None when it does not convert."""
        return (self._flavor or "tensor") if self._convert_rgb else None

    def _call(self, src: Any, out: Any, reduce: Optional[str]) -> Any:
        if self._clip:
            return self._call_clip(src, out)
        if getattr(self, "_hf_video", False):
            return self._call_hf_video(src, out)
        how = self.rgb()
        if how is not None:
            src = [to_rgb(x, how) for x in src] if isinstance(src, (list, tuple)) else to_rgb(src, how)
        flavor = self._flavor
        if flavor is None:
            first = src[0] if isinstance(src, (list, tuple)) and src else src
            flavor = "tensor" if is_tensor(first) else "pil"
        if flavor == "tensor":
            refuse_device_lanczos(src, lanczos_argument(self._chain.ops))
        if getattr(self, "_random", False):
            return self._call_random(src, flavor, out, reduce)
        if reduce is not None:
            raise PipelineError("applies to training chains (random crops) only; an eval chain takes "
                                "goprep.decode's reduce= in a pipeline", argument="reduce")
        return self._pipe(flavor)(src, out=out)

    def _draw(self, h: int, w: int, c: int = 3) -> Tuple[Any, ...]:
        """One item's parameters for an ``h x w`` image of ``c`` channels: each op's draw in chain order
        (None for an op that draws nothing), the size (and the channel count, for the ops that draw
        with it: RandomErasing) followed through the ops, as torchvision's Compose draws."""
        prm: List[Any] = []
        ops = self._chain.ops
        last = max(k for k, op in enumerate(ops) if hasattr(op, "draw"))
        for k, op in enumerate(ops[:last + 1]):
            v = (op.draw(h, w, c) if getattr(op, "draws_channels", False) else op.draw(h, w)) if hasattr(op, "draw") \
                else None
            prm.append(v)
            c = op.out_channels(c) if hasattr(op, "out_channels") else c
            if k < last:
                size = getattr(op, "out_size", None)
                if size is None:
                    raise PipelineError(f"{type(op).__name__} before a random transform: goprep cannot follow its "
                                        "size to draw the next parameters")
                h, w = size(h, w, v)
        return tuple(prm) + (None,) * (len(ops) - len(prm))

    def _call_random(self, src: Any, flavor: str, out: Any, reduce: Optional[str] = None) -> Any:
        """A training chain: each item (one image, or each of a list or batch, in order) draws its
        parameters as torchvision's Compose would on that item alone and gets its own plan (keyed by
        the parameters: the memo stays bounded, see _signature.Memo); a fused chain runs them all as
        one engine call (run_drawn: encoded items too), a staged one with colour steps as one call per
        segment and step (Staged.run_batch), any other staged one item by item, stacked."""
        p = self._pipe(flavor)
        ops = self._chain.ops
        # ops with a finish (RandomErasing) draw with the channel count and run on each finished item;
        # the engine gets None for them (an identity there, and no tensors in the plan's key)
        post = any(hasattr(op, "finish") for op in ops)
        if not isinstance(p, Staged):
            if not post:
                return run_drawn(p, src, lambda h, w: (self._draw(h, w),), out, reduce, chain_reducer(ops),
                                 chain_split(ops))
            drawn: List[Any] = []
            cs = iter(item_channels(src))

            def draw(h: int, w: int) -> Tuple[Any, ...]:
                drawn.append(self._draw(h, w, next(cs)))
                return (engine_params(ops, drawn[-1]),)

            res = run_drawn(p, src, draw, out, reduce, chain_reducer(ops), chain_split(ops))
            return finish_all(ops, res, drawn, is_batch(src))
        items, batch = items_of(src)
        if batch and p.batched():
            return p.run_batch(items, out, reduce)
        if reduce is not None:
            raise PipelineError("applies to chains that run as one fused pass (not v1's float resize on tensors, not "
                                "colour jitter)", argument="reduce")
        if not batch:
            h, w = image_hw(src)
            prm = self._draw(h, w, image_c(src))
            return finish(ops, p(src, engine_params(ops, prm), out=out), prm)
        return p.run_items(items, [self._draw(*image_hw(x), image_c(x)) for x in items], out)


class Staged:
    """A converted chain that cannot run as one engine pass for its flavor: fused segments with NumPy
    steps between them (``hosts``), each segment's result taken as NumPy HWC. Used for
    ``torchvision.transforms`` (v1) ``Resize(bicubic, antialias=True)`` on tensors, which resizes in
    float and rounds once: no fused uint8 kernel is within 1 level of that (they clamp to [0, 255]
    between the passes; measured up to 14 levels apart), and for the colour ops (ColorJitter,
    RandomGrayscale: _random_color), whose steps have a batch form (one Go call for a batch)."""

    def __init__(self, conv: Converted, segments: List[List[Op]], hosts: List[Callable[..., np.ndarray]], flavor: str,
                 cuts: List[int]):
        self._conv = conv
        self._hosts = hosts
        # a random chain's parameters split by segment: op indices [bounds[i], cuts[i]) are segment i
        self._bounds = [0] + [k + 1 for k in cuts]
        self._cuts = cuts + [len(conv._chain.ops)]
        self._flavor = flavor
        self._inner = [
            conv._fused(ops, flavor, False, "numpy", "cpu", f"[step {i + 1}]") for i, ops in enumerate(segments[:-1])
        ]
        self._last_ops = segments[-1]
        self._last: Dict[Optional[str], Any] = {}
        # each host step's batch form (the colour ops'), or None when one has none
        ops = conv._chain.ops
        batch_hosts = [getattr(ops[k], "host_batch", None) for k in cuts]
        self._batch_hosts = None if None in batch_hosts else [hb(flavor) for hb in batch_hosts]
        # each host step's op and numerics where every one has the Go colour kernels (one call per
        # batch: _staged_call), else None
        colour = [(ops[k], ops[k].numerics(flavor)) for k in cuts if hasattr(ops[k], "numerics")]
        self._colour = colour if self._batch_hosts is not None and len(colour) == len(cuts) else None

    def _seg(self, prm: Optional[Tuple[Any, ...]], i: int) -> Tuple[Any, ...]:
        """Segment ``i``'s parameters (none without ``prm``)."""
        return () if prm is None else (prm[self._bounds[i]:self._cuts[i]],)

    def _head(self, x: Any, prm: Optional[Tuple[Any, ...]] = None) -> np.ndarray:
        a = self._inner[0](x, *self._seg(prm, 0))
        for i, host in enumerate(self._hosts):
            a = host(a) if prm is None or prm[self._cuts[i]] is None else host(a, prm[self._cuts[i]])
            if i + 1 < len(self._inner):
                a = self._inner[i + 1](a, *self._seg(prm, i + 1))
        return a

    def __call__(self, src: Any, prm: Optional[Tuple[Any, ...]] = None, *, out: Any = None) -> Any:
        if isinstance(src, (list, tuple)):
            first = src[0] if src else None
            mid: Any = [self._head(x) for x in src]  # images of different sizes: one by one
        else:
            first, mid = src, self._head(src, prm)
        return self._tail(first)(mid, *self._seg(prm, len(self._inner)), out=out)

    def _tail(self, first: Any) -> Any:
        """The last segment's pipeline for a call whose first item is ``first``: what the fused
        pipeline's output=None gives, tensors for tensors, NumPy otherwise."""
        output = "torch" if self._conv._chain.to_tensor or is_tensor(first) else None
        p = self._last.get(output)
        if p is None:
            p = self._last[output] = self._conv._fused(
                self._last_ops, self._flavor, True, output, self._conv._device, f"[step {len(self._inner) + 1}]"
            )
        return p

    def batched(self) -> bool:
        """Whether a training batch runs as a batch (``run_batch``): every host step has a batch form
        (the colour ops; not v1's float resizes)."""
        return self._batch_hosts is not None

    def run_items(self, items: List[Any], drawn: List[Tuple[Any, ...]], out: Any) -> Any:
        """A training batch item by item (sizes that differ before the first host step, or host
        steps without a batch form), item ``k`` with ``drawn[k]``, stacked."""
        ops = self._conv._chain.ops
        outs = [finish(ops, self(x, engine_params(ops, prm)), prm) for x, prm in zip(items, drawn)]
        return stack(outs, is_tensor(outs[0]), out)

    def run_batch(self, items: List[Any], out: Any, reduce: Optional[str]) -> Any:
        """A training batch as one engine call per segment (run_drawn: the first one decodes encoded
        items, crop-aware, with ``reduce``) and one call per host step over all items (the colour
        ops' one GIL-free Go call), item ``k`` with its k-th draws, drawn in item order as the
        item-by-item path draws; where the Go kernels take every colour step and the items
        (_staged_call.one_call_ready), all of it as ONE engine call of staged jobs instead
        (_staged_call.OneCall: equal bit for bit). Items whose sizes differ before the first host
        step (known from their draws) run item by item instead; encoded items, whose sizes only
        their headers tell, always run here."""
        conv, ops = self._conv, self._conv._chain.ops
        first_ops = ops[:self._cuts[0]]
        encoded = [is_encoded_item(x) for x in items]
        drawn: List[Tuple[Any, ...]] = []
        if not any(encoded):
            drawn = [conv._draw(*image_hw(x), image_c(x)) for x in items]
            sizes = {_size_after(first_ops, *image_hw(x), prm) for x, prm in zip(items, drawn)}
            if len(sizes) != 1 or None in sizes:
                return self.run_items(items, drawn, out)
            draw = self._drawn_seg(drawn, 0)
        else:
            def draw_now(h: int, w: int) -> Tuple[Any, ...]:  # an encoded item's size is its header's
                drawn.append(conv._draw(h, w, 3))
                return self._seg(engine_params(ops, drawn[-1]), 0)

            draw = draw_now

        if ONE_CALL[0] and one_call_ready(self._colour, items, conv._device):
            a = run_drawn(OneCall(self, items[0], drawn), items, draw, None, reduce, chain_reducer(first_ops),
                          chain_split(first_ops), self._inner[0])
            a = finish_all(ops, a, drawn, True)
            return a if out is None else stack(list(a), is_tensor(a), out)
        a = run_drawn(self._inner[0], items, draw, None, reduce, chain_reducer(first_ops), chain_split(first_ops))
        for i, host in enumerate(self._batch_hosts or ()):
            a = host(a, [prm[self._cuts[i]] for prm in drawn])
            last = i + 1 == len(self._inner)
            nxt = self._tail(items[0]) if last else self._inner[i + 1]
            a = run_drawn(nxt, list(a), self._drawn_seg(drawn, i + 1))
        a = finish_all(ops, a, drawn, True)
        # out= as the item-by-item path fills it (stack's): any layout of the batch's shape and dtype
        return a if out is None else stack(list(a), is_tensor(a), out)

    def _drawn_seg(self, drawn: List[Tuple[Any, ...]], i: int) -> Callable[[int, int], Tuple[Any, ...]]:
        """run_drawn's ``draw`` giving segment ``i``'s part of each item's draws, in item order."""
        rows, ops = iter(drawn), self._conv._chain.ops
        return lambda h, w: self._seg(engine_params(ops, next(rows)), i)


def _size_after(ops: List[Op], h: int, w: int, prm: Tuple[Any, ...]) -> Optional[Tuple[int, int]]:
    """An ``h x w`` image's size after ``ops`` (a chain's first ops) with its draws ``prm``, or None
    when an op cannot tell it."""
    for k, op in enumerate(ops):
        size = getattr(op, "out_size", None)
        if size is None:
            return None
        h, w = size(h, w, prm[k])
    return h, w
