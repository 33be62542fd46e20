"""What the vision-language processors of ``_hf_pixtral``, ``_hf_naflex`` and ``_hf_mllama`` share: a
chain whose resize follows a class's own sizing rule, and ``CanvasBatch``, which runs a batch of images of
different sizes as one engine call (each image resized by the rule, padded with zeros at the bottom and
right to the batch's common canvas, rescaled and normalised in the fused pass) and hands the padded
float result to the class's layout step (a slice, a patch sequence or tiles: PyTorch reshapes of the
engine's output, not fused into the engine yet)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from .._errors import PipelineError
from .._inputs import is_encoded_item, is_pil
from ._chain import Chain
from ._hf_images import Images
from ._hf_layout import PaddedBatch
from ._hf_pixels import hf_chain
from ._steps import Resize

Size = Tuple[int, int]


def resized_chain(cfg: Dict[str, Any], kind: str, sizer: Callable[[int, int], Size]) -> Chain:
    """The chain of a complete config whose resize (when ``do_resize``) is ``sizer`` ``(h, w) -> (h, w)``:
    transformers' resize with the config's ``resample`` (torchvision's v2 numerics with antialias on
    tensors, Pillow's on PIL images and arrays), then rescale and normalise as ``hf_chain`` reads them.
    The resize is built by ``hf_chain`` for a placeholder size (so that ``resample`` is read in one place)
    and then given the sizing rule. These classes never center-crop (``do_center_crop`` is refused or
    ignored by the caller)."""
    resize = bool(cfg.get("do_resize", True))
    chain = hf_chain({**cfg, "do_resize": resize, "size": {"height": 1, "width": 1}, "do_center_crop": False},
                     kind, "")
    if resize:
        op = chain.ops[0]
        if not isinstance(op, Resize) or len(chain.ops) != 1:
            raise PipelineError(f"internal: {kind}'s chain starts with {type(op).__name__}")
        op.size = sizer
    return chain


def is_image(x: Any) -> bool:
    """Whether ``x`` is one image as the processors take it (a PIL image, an (H, W[, C]) array, a (C, H, W)
    tensor), or one encoded image (JPEG/PNG bytes, a path: decoded by the pipeline)."""
    return is_pil(x) or is_encoded_item(x) or (getattr(x, "ndim", 0) in (2, 3) and not isinstance(x, (list, tuple)))


class CanvasBatch(PaddedBatch):
    """A processor whose batch runs as one engine call: every image resized by the chain's rule, padded
    with zeros (uint8, before the normalisation) at the bottom and right to one canvas, then rescaled
    and normalised. ``canvas(src)`` gives the ``(N, 3, H, W)`` float32 result and each image's resized
    size; the subclass's ``__call__`` lays it out as its class does."""

    def __init__(self, chain: Chain, source: str, flavor: Optional[str], device: str, convert_rgb: bool) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb, True, None, mask=False, sizes=False)

    def resized(self, h: int, w: int) -> Size:
        """The size the chain gives an ``h x w`` image (its resize; the image's own size without one)."""
        return self._target(h, w)[1]

    def canvas(self, im: Images, pad: Optional[Size] = None) -> Tuple[Any, List[Size]]:
        """``(pixel values (N, 3, H, W) float32, [each image's resized (h, w)])`` of a call's images ``im``:
        one engine call (two for a list that mixes encoded and decoded images), every image padded to
        ``pad`` (at least the largest resized size; by default that size)."""
        final = [self.resized(h, w) for h, w in im.sizes]
        ph, pw = max(h for h, _ in final), max(w for _, w in final)
        if pad is not None:
            if pad[0] < ph or pad[1] < pw:
                raise PipelineError(f"internal: a canvas of {pad} below the resized size {(ph, pw)}")
            ph, pw = pad
        if all(s == (ph, pw) for s in final):
            pv = im.run(super(PaddedBatch, self).__call__)  # Converted's: no padding needed
        else:
            pv = im.run(self._padder((ph, pw)))
        return pv, final


def as_torch(v: Any, dtype: Any) -> Any:
    """``v`` (nested lists of ints) as a torch tensor of ``dtype`` (BatchFeature's conversion)."""
    import torch

    return torch.tensor(v, dtype=dtype)


def check_no_out(out: Any) -> None:
    """These processors return a dict of outputs: ``out=`` is refused."""
    if out is not None:
        raise PipelineError("is not supported by a processor that returns several outputs", argument="out")

