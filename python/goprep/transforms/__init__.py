"""Converters from torchvision, Hugging Face and timm preprocessing to fused goprep pipelines.

``from_torchvision(t)``, ``from_hf(processor_or_config)`` and ``from_timm(data_config)`` return a
``Converted`` pipeline that computes what the original computes, in one pass where goprep can:

- the torchvision chain is read into goprep ops (resize with torchvision's sizing, center_crop with
  its rounding, pad, the dtype conversion and Normalize folded into one ``normalize``);
- the resampling follows the numerics the original uses for the input it gets: on PIL images (and
  NumPy arrays) Pillow's (always antialiased, bilinear/bicubic; ``nearest-pil``), on tensors
  torchvision's tensor kernels, which differ between ``torchvision.transforms`` (v1: the uint8 image
  is resized in float and rounded) and ``torchvision.transforms.v2`` (PyTorch's native uint8
  kernels, goprep's ``antialias="torch"`` / ``"torch-noaa"`` and ``nearest-torch``), with
  ``antialias=None`` meaning False on tensors as in torchvision; v1's antialiased bicubic on tensors
  runs as three steps (float32 resize, rounding, then the rest fused). Hugging Face's default
  (torchvision-backed) processors work on tensors, so their pipelines always use the tensor
  numerics; their ``*Pil`` processors the PIL ones.

Training chains convert too (``_random_ops``: RandomResizedCrop, RandomCrop, random flips;
``_random_color``: ColorJitter, RandomGrayscale, RandomErasing, over ``_color_kernels``' NumPy
numerics): each item draws its parameters as torchvision (or timm) does, from the same generators
(``_random``), then runs its own fused plan; ``draw_resized_crop``, ``random_resized_crop``,
``color_jitter``, ``random_grayscale``, ``random_erasing`` (``_random_color_api``) are the native
random ops, with an explicit ``generator=``.

Importing this package imports none of torch, torchvision, transformers or timm: transform objects
are read by their attributes, and a config dict needs no library at all.

The package holds one module a converter (``_torchvision``, ``_timm``, ``_hf`` with ``_hf_pixels``,
and Hugging Face's layout processors: ``_hf_layout`` (DETR's family and SAM: padded batches and
their masks, DPT, LayoutLMv3), ``_hf_patches`` (Qwen2-VL's patch rows), ``_hf_donut``) over what they
share: the chain they build and how they refuse (``_chain``), the ops (``_steps``, the
random ones ``_random_ops`` over ``_random``'s draws), the
pipeline they return (``_converted``) and Hugging Face's RGB conversion (``_rgb``).
"""

from __future__ import annotations

from ._chain import Op  # noqa: F401  (the type of a converted op, as goprep.transforms.Op)
from ._converted import Converted
from ._hf import from_hf
from ._random import Params, draw_resized_crop, random_resized_crop, resized_crop_with
from ._random_color import ErasingParams, JitterParams
from ._random_color_api import color_jitter, draw_color_jitter, draw_erasing, random_erasing, random_grayscale
from ._timm import from_timm
from ._torchvision import from_torchvision

__all__ = ["Converted", "from_torchvision", "from_hf", "from_timm", "Params", "draw_resized_crop",
           "random_resized_crop", "resized_crop_with", "JitterParams", "ErasingParams", "draw_color_jitter",
           "color_jitter", "random_grayscale", "draw_erasing", "random_erasing"]

# Reprs, docs and pickles name these where users import them from (goprep.transforms.Converted), as
# the single module this package replaced did; pickle finds them here.
for _f in (Converted, from_hf, from_timm, from_torchvision, Params, draw_resized_crop, random_resized_crop,
           resized_crop_with, JitterParams, ErasingParams, draw_color_jitter, color_jitter, random_grayscale,
           draw_erasing, random_erasing):
    _f.__module__ = __name__
del _f
