"""The segmentation and matting processors (both of transformers' backends, read in transformers 5.25), on
images: MaskFormer and Mask2Former (DETR's sizing, each side then rounded up to a multiple of
``size_divisor``; the batch always padded to its largest image, or ``pad_size``, after the normalisation,
with ``pixel_mask``), OneFormer (the backends' own sizing, the same pad and mask, and ``task_inputs``, the
strings ``"the task is <task>"``) and ViTMatte (no resize; each image's trimap rescaled, not normalised,
as a 4th channel; each image padded at the bottom and right to a multiple of ``size_divisor``). Their
segmentation maps (``mask_labels``, ``class_labels``, ``text_inputs``) are not reproduced: goprep's
pipelines take images only."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _validate
from .._errors import PipelineError
from .._inputs import is_pil, is_tensor
from ._hf_canvas import check_no_out, resized_chain
from ._hf_images import Images, flat_images
from ._hf_layout import PaddedBatch, detr_size
from ._hf_pixels import hf_chain, round_up, _hf_size
from ._steps import tv_size

Size = Tuple[int, int]

# Keys that apply to segmentation maps only (their labels and their padding), or to the class's label
# metadata (OneFormer's, loaded from the hub by name): read, and never change the images' outputs.
# ``do_pad``: MaskFormer's, Mask2Former's and OneFormer's ``_preprocess`` pad whatever it says.
_LABEL_KEYS = frozenset({"do_reduce_labels", "reduce_labels", "ignore_index", "num_labels", "do_pad"})
MASKFORMER_KEYS = _LABEL_KEYS | {"size_divisor", "pad_size", "max_size"}
ONEFORMER_KEYS = _LABEL_KEYS | {"repo_path", "class_info_file", "num_text", "metadata"}
VITMATTE_KEYS = frozenset({"do_pad", "size_divisor", "size_divisibility"})


class CeilSize:
    """MaskFormer's ``resize`` with ``size_divisor``, ``(h, w) -> (h, w)``: the size of ``rule`` (a sizing
    function, or a fixed ``(h, w)``), each side rounded up to a multiple of ``divisor`` (none for 0)."""

    def __init__(self, rule: Any, divisor: int) -> None:
        self.rule, self.divisor = rule, divisor

    def __call__(self, h: int, w: int) -> Size:
        oh, ow = self.rule(h, w) if callable(self.rule) else self.rule
        return round_up(oh, ow, self.divisor)


class ShortSize:
    """The backends' ``shortest_edge`` alone, ``(h, w) -> (h, w)``: the shorter side to ``size``, as
    torchvision's int size."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __call__(self, h: int, w: int) -> Size:
        return tv_size(h, w, self.size)


def backend_size(size: Dict[str, int], raw: Any, kind: str) -> Any:
    """The resize rule of transformers' backends (``TorchvisionBackend.resize``, ``PilBackend.resize``) for
    a ``size`` dict: DETR's (shortest and longest edge, max height and width, height and width), with a
    lone shortest edge tried second, as there."""
    if "shortest_edge" in size and "longest_edge" not in size:
        return ShortSize(size["shortest_edge"])
    return detr_size(size, raw, kind)


def _size_of(cfg: Dict[str, Any], kind: str) -> Dict[str, int]:
    raw = cfg.get("size")
    if raw is None:
        raise PipelineError(f"None ({kind} resizes but sets no size)", argument="size")
    return _hf_size(raw, False)


def _images_only(cfg: Dict[str, Any]) -> Dict[str, Any]:
    """The config as these classes' ``_preprocess`` reads it for images: it takes no center crop."""
    return {**cfg, "do_center_crop": False}


def _maskformer(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> PaddedBatch:
    """MaskFormer's and Mask2Former's processor (their pixel code is one): a PaddedBatch that always pads
    and returns ``pixel_mask``."""
    cfg = _images_only(cfg)
    rule = None
    if cfg.get("do_resize", True):
        size = _size_of(cfg, kind)
        mx = cfg.get("max_size")
        if mx is not None and mx is not False and "shortest_edge" in size and "longest_edge" not in size:
            size["longest_edge"] = _validate.as_positive_int("max_size", mx)  # get_size_dict(size, max_size)
        div = cfg.get("size_divisor")
        if not _validate.is_int(div):  # the class computes ``size_divisor > 0``: None fails there
            raise PipelineError(f"{div!r} ({kind} rounds each side up to a multiple of an int size_divisor, 0 for "
                                "none)", argument="size_divisor")
        rule = CeilSize(detr_size(size, cfg.get("size"), kind), int(div))
    chain = resized_chain(cfg, kind, rule) if rule is not None else hf_chain({**cfg, "do_resize": False}, kind, "")
    from ._hf import _pad_size  # DETR's reading of pad_size (imported here: _hf imports this module)

    return PaddedBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), True,
                       _pad_size(cfg.get("pad_size")), mask=True)


class OneFormerBatch(PaddedBatch):
    """OneFormer's processor on images: ``{"pixel_values": (N, 3, H, W) float32, "pixel_mask": (N, H, W)
    int64, "task_inputs": ["the task is <task>", ...]}`` as ``processor(images, task_inputs,
    return_tensors="pt")``. ``task_inputs``: a list of task names (``"panoptic"``, ``"instance"``,
    ``"semantic"``; the class formats any string), one string per entry and not per image, as there;
    None is ``["panoptic"]``. The text is the image processor's; OneFormerProcessor's tokens of it are
    the tokenizer's, not goprep's."""

    def __call__(self, src: Any, task_inputs: Optional[Sequence[str]] = None, *, out: Any = None) -> Any:
        check_no_out(out)
        if task_inputs is None:
            task_inputs = ["panoptic"]
        if isinstance(task_inputs, (str, bytes)) or not isinstance(task_inputs, (list, tuple)) or \
                not all(isinstance(t, str) for t in task_inputs):
            raise PipelineError(f"must be a list of task names such as ['panoptic'], got {task_inputs!r}",
                                argument="task_inputs")
        res = super().__call__(src)
        res["task_inputs"] = [f"the task is {t}" for t in task_inputs]
        return res


def _oneformer(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> OneFormerBatch:
    cfg = _images_only(cfg)
    if cfg.get("do_resize", True):
        chain = resized_chain(cfg, kind, backend_size(_size_of(cfg, kind), cfg.get("size"), kind))
    else:
        chain = hf_chain({**cfg, "do_resize": False}, kind, "")
    return OneFormerBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), True, None,
                          mask=True)


class TrimapBatch(PaddedBatch):
    """ViTMatte's processor: ``conv(images, trimaps)`` returns ``{"pixel_values": (N, 4, H, W) float32}`` as
    ``processor(images, trimaps, return_tensors="pt")``: channels 0-2 the image rescaled and normalised,
    channel 3 its trimap rescaled only (``rescale_factor``, the backend's float arithmetic), each image with
    ``do_pad`` padded with zeros at the bottom and right to a multiple of ``size_divisor``. ``trimaps``:
    one 2-D uint8 trimap per image, of its size (a PIL ``L`` image, an ``(H, W)`` array or tensor),
    a list of them for a list, or an ``(N, H, W)`` array or tensor for a batch. The padded images of a batch must have one size: the class
    cannot stack them otherwise."""

    def __init__(self, chain: Any, source: str, flavor: Optional[str], device: str, convert_rgb: bool,
                 divisor: Optional[int], rescale: Optional[float]) -> None:
        super().__init__(chain, source, flavor, device, convert_rgb, True, None, mask=False)
        self._divisor, self._rescale = divisor, rescale

    def __call__(self, src: Any, trimaps: Any = None, *, out: Any = None) -> Any:
        check_no_out(out)
        if trimaps is None:
            raise PipelineError("ViTMatte's processor takes a trimap for each image (conv(images, trimaps))",
                                argument="trimaps")
        with Images(src, self.rgb()) as im:
            sizes, one = im.sizes, im.one
            maps = _trimaps(flat_images(trimaps, "trimaps"), one, len(sizes))  # flattened as the images are
            for i, (m, s) in enumerate(zip(maps, sizes)):
                if m.shape != s:
                    raise PipelineError(f"trimap {i} is {m.shape[0]}x{m.shape[1]}, its image {s[0]}x{s[1]}: the "
                                        "class needs them of one size", argument="trimaps")
            padded = {round_up(h, w, self._divisor or 0) for h, w in sizes}
            if len(padded) > 1:
                raise PipelineError(f"images padded to {sorted(padded)}: the processor cannot stack pixel_values of "
                                    "several sizes; call it once per size", argument="src")
            (ph, pw), = padded
            pv = im.run(super(PaddedBatch, self).__call__ if all(x == (ph, pw) for x in sizes) else
                        self._padder((ph, pw)))
        import torch

        res = torch.zeros((len(sizes), 4, ph, pw), dtype=torch.float32)
        res[:, :3] = pv
        for i, ((h, w), m) in enumerate(zip(sizes, maps)):
            res[i, :3, h:, :] = 0  # zeros after the normalisation, as the class pads
            res[i, :3, :h, w:] = 0
            res[i, 3, :h, :w] = torch.from_numpy(self._rescaled(m))
        return {"pixel_values": res}

    def _rescaled(self, m: np.ndarray) -> np.ndarray:
        """A trimap as the class's backend rescales it: float32 ``x * f`` (torchvision: a uint8 tensor
        times the factor; PilBackend: in float64, then float32), or float32 ``x`` without ``do_rescale``."""
        if self._rescale is None:
            return m.astype(np.float32)
        if self._flavor == "pil":
            return (m.astype(np.float64) * self._rescale).astype(np.float32)
        import torch

        return (torch.from_numpy(np.array(m)) * self._rescale).numpy()


def _trimaps(v: Any, one: bool, n: int) -> List[np.ndarray]:
    """``n`` trimaps as ``(H, W)`` uint8 arrays: for one image one 2-D map (a PIL ``L`` image, an array, a
    tensor), for a batch a list of them or an ``(N, H, W)`` array or tensor (see TrimapBatch)."""
    if one:
        items = [v]
    elif isinstance(v, (list, tuple)) or (getattr(v, "ndim", 0) == 3 and (is_tensor(v) or isinstance(v, np.ndarray))):
        items = list(v)
    else:
        raise PipelineError(f"a batch of images takes a list of trimaps or an (N, H, W) array, got "
                            f"{type(v).__name__} of {getattr(v, 'ndim', '?')} dimensions", argument="trimaps")
    if len(items) != n:
        raise PipelineError(f"{len(items)} trimaps for {n} images", argument="trimaps")
    out = []
    for x in items:
        if is_pil(x):
            if x.mode != "L":
                raise PipelineError(f"a trimap is a one-channel (mode 'L') image, got mode {x.mode!r}",
                                    argument="trimaps")
            a = np.asarray(x)
        elif is_tensor(x):
            a = x.detach().cpu().numpy()
        elif isinstance(x, np.ndarray):
            a = x
        else:
            raise PipelineError(f"a trimap is a PIL image, an array or a tensor, got {type(x).__name__}",
                                argument="trimaps")
        if a.ndim != 2 or a.dtype != np.uint8:
            raise PipelineError(f"a trimap is a 2-D uint8 map of its image's size, got {a.dtype} of shape "
                                f"{tuple(a.shape)}", argument="trimaps")
        out.append(a)
    return out


def _vitmatte(cfg: Dict[str, Any], kind: str, flavor: Optional[str], device: str) -> TrimapBatch:
    """ViTMatte's processor: its ``_preprocess`` never resizes nor crops (those keys change nothing)."""
    if cfg.get("do_resize") and (cfg.get("size") is None or cfg.get("resample") is None):
        raise PipelineError(f"True without size and resample ({kind}'s argument check raises: '`size` and `resample` "
                            "must be specified if `do_resize` is `True`')", argument="do_resize")
    cfg = {**cfg, "do_resize": False, "do_center_crop": False}
    div: Optional[int] = None
    if cfg.get("do_pad"):
        d = cfg.get("size_divisor")
        if d is None:
            d = cfg.get("size_divisibility")  # the old name, read by the class's constructor
        div = _validate.as_positive_int("size_divisor", d)
    rf = cfg.get("rescale_factor")
    rescale = (1 / 255 if rf is None else float(rf)) if cfg.get("do_rescale", True) else None
    if rescale is None and not cfg.get("do_normalize", True):
        raise PipelineError(f"False with do_normalize False ({kind} then returns uint8 pixel_values; goprep's are "
                            "float32)", argument="do_rescale")
    chain = hf_chain(cfg, kind, "")
    return TrimapBatch(chain, f"Hugging Face {kind}", flavor, device, bool(cfg.get("do_convert_rgb")), div, rescale)


# base name -> (the keys its class reads beyond the generic ones, the builder)
SEG = {"MaskFormer": (MASKFORMER_KEYS, _maskformer), "Mask2Former": (MASKFORMER_KEYS, _maskformer),
       "OneFormer": (ONEFORMER_KEYS, _oneformer), "VitMatte": (VITMATTE_KEYS, _vitmatte)}
