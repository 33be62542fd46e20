"""Hugging Face's ``do_convert_rgb``, run before a converted processor's pipeline: non-RGB images made
RGB as the processor's backend does it (transparency composited onto white)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._errors import PipelineError
from .._inputs import is_encoded_item, is_pil, is_tensor


def is_png(x: Any) -> bool:
    """Whether ``x`` is an encoded PNG source (bytes, a 1-D uint8 array or a path) for goprep.decode."""
    if not is_encoded_item(x):
        return False
    if isinstance(x, (str, os.PathLike)):
        try:
            with open(x, "rb") as f:
                head = f.read(8)
        except OSError:
            return False  # goprep.decode reports it
    else:
        head = bytes(memoryview(x)[:8]) if not isinstance(x, np.ndarray) else x[:8].tobytes()
    return head == b"\x89PNG\r\n\x1a\n"


def to_rgb(img: Any, backend: str = "pil") -> Any:
    """Hugging Face's ``do_convert_rgb``. A PIL image that is not RGB: transparency (an alpha band, or a
    palette's ``transparency``) composited onto white, then ``convert("RGB")``. A NumPy ``(H, W)`` /
    ``(H, W, 1)`` array or a tensor with 1 channel: the channel repeated; with 4 channels (uint8): the
    colour composited onto white by its alpha, as the class's backend does it (``backend``: ``"pil"``,
    transformers' NumPy ``convert_to_rgb``, rounded; ``"tensor"``, the torchvision backend's, in float32
    and truncated by ``to_dtype``). Anything else as it is."""
    if is_png(img):
        # An encoded PNG whose mode is not RGB (alpha, palette, gray) is what Hugging Face composites onto
        # white after opening it with Pillow: the same here, through Pillow. JPEGs stay encoded: goprep
        # decodes them equal to Pillow's convert("RGB"), which is convert_to_rgb for them.
        import io

        from PIL import Image

        with Image.open(img if isinstance(img, (str, os.PathLike)) else io.BytesIO(bytes(img))) as im:
            if im.mode == "RGB":
                return img  # convert_to_rgb leaves RGB as it is: goprep decodes it, equal to Pillow
            im.load()
            return to_rgb(im, backend)  # a new image: the composite
    if is_tensor(img):
        if img.ndim == 2:
            img = img[None]
        if img.ndim >= 3 and img.shape[-3] in (1, 4):
            a = to_rgb(img.movedim(-3, -1).cpu().numpy(), backend)
            import torch

            return torch.from_numpy(np.ascontiguousarray(a)).movedim(-1, -3).to(img.device)
        return img
    if isinstance(img, np.ndarray):
        if img.ndim == 2:
            img = img[:, :, None]
        if img.ndim < 3 or img.shape[-1] not in (1, 4):
            return img
        if img.shape[-1] == 1:
            return np.repeat(img, 3, axis=-1)
        if img.dtype != np.uint8:
            raise PipelineError(f"do_convert_rgb on a 4-channel {img.dtype} image: goprep composites uint8 RGBA only",
                                argument="src")
        if backend == "pil":  # transformers.image_transforms.convert_to_rgb (float64, np.round)
            alpha = img[..., 3:4] / 255
            return np.round(alpha * img[..., :3] + (1 - alpha) * 255).astype(np.uint8)
        # TorchvisionBackend.convert_to_rgb: tvF.to_dtype(float32, scale=True) multiplies by 1/255 in float32
        # (a division differs by an ulp, which the truncation below turns into a level: bit for bit now,
        # checked over every value and alpha)
        f = img.astype(np.float32) * np.float32(1 / 255)
        rgb = f[..., :3] * f[..., 3:] + (np.float32(1) - f[..., 3:])
        return (rgb * np.float32(255 + 1 - 1e-3)).astype(np.uint8)  # tvF.to_dtype(uint8, scale=True)
    if not (is_pil(img) and img.mode != "RGB"):
        return img
    from PIL import Image

    if "A" in img.getbands() or img.info.get("transparency") is not None:
        rgba = img.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, (255, 255, 255, 255)), rgba).convert("RGB")
    return img.convert("RGB")


