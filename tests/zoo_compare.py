"""The zoo tests' comparisons of goprep's converted pipelines with the library's own output, and their
inputs (shared by tests/test_zoo.py and the per-family tests/test_zoo_*.py).

Bounds: on PIL numerics 1e-5, relative to the value where it is larger than 1 (VGG16's
IMAGENET1K_FEATURES normalises with std = 1/255, so its values reach ~150); on uint8 tensors one uint8
level before normalisation (``|got - want| * 255 * std <= 1``)."""

import numpy as np
import torch


def as_kind(kind, a):
    """An HWC uint8 array as the input kind ``kind``: "pil", "numpy" or "tensor" ((C, H, W))."""
    if kind == "pil":
        from PIL import Image

        return Image.fromarray(a)
    if kind == "tensor":
        return torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1).contiguous()
    return a


def hf_processor(kind, **kwargs):
    """transformers' image processor class ``kind`` built from its defaults and ``kwargs`` (nothing
    can be downloaded here), its warnings silenced."""
    import transformers

    transformers.logging.set_verbosity_error()
    return getattr(transformers, kind)(**kwargs)


def close_pil(got, want):
    """max |got - want| / max(1, |want|): 1e-5 is the PIL bound."""
    got, want = got.double(), want.double()
    return float(((got - want).abs() / want.abs().clamp(min=1)).max())


def levels(got, want, std, channel_dim):
    """max |got - want| in uint8 levels before normalisation (one level = 1 / 255 / std)."""
    shape = [1] * want.ndim
    shape[channel_dim] = -1
    s = torch.as_tensor(std, dtype=torch.float64).reshape(shape)
    return float(((got.double() - want.double()).abs() * 255 * s).max())


def hf_pixel_bound_ok(proc, got, want, channel_dim):
    """Whether ``got`` is within the sweep's bound of a Hugging Face processor's ``pixel_values``
    ``want``: 1e-5 for classes off the torchvision backend (PilBackend, NumPy code), else 1 uint8 level
    before the normalisation (std 1 where the class does not normalise)."""
    if "TorchvisionBackend" not in {c.__name__ for c in type(proc).__mro__}:
        return close_pil(got, want) <= 1e-5
    std = proc.image_std if getattr(proc, "do_normalize", False) else [1.0] * 3
    if isinstance(std, (list, tuple)) and got.shape[channel_dim] > len(std):  # ViTMatte's trimap: rescaled only
        std = [*std, *[1.0] * (got.shape[channel_dim] - len(std))]
    return levels(got, want, std, channel_dim) <= 1 + 1e-3


def assert_hf_outputs(proc, got, want, what):
    """goprep's dict of outputs ``got`` against the processor's BatchFeature ``want``: the same names,
    shapes and dtypes; ``pixel_values`` within the bound (hf_pixel_bound_ok), every other output equal."""
    assert isinstance(got, dict), (what, type(got))
    assert set(got) == set(want.keys()), (what, sorted(got), sorted(want.keys()))
    for k in want.keys():
        g, w = got[k], want[k]
        if isinstance(w, list):  # an output the processor returns as Python lists (Mllama's num_tiles)
            assert g == w, (what, k, g, w)
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (what, k, g.shape, w.shape, g.dtype, w.dtype)
        if k in ("pixel_values", "image_pixel_values"):  # (Phi-4 multimodal names its pixels image_pixel_values)
            if g.ndim == 2:  # patch rows (patches, C * T * P * P): the channel is the row's outer axis
                g, w = g.reshape(g.shape[0], 3, -1), w.reshape(w.shape[0], 3, -1)
            elif g.ndim == 3:  # NaFlex patch sequences (N, patches, P * P * C): the channel is the innermost axis
                g, w = g.reshape(-1, 3), w.reshape(-1, 3)
            elif g.ndim == 6:  # tiles (N, images, tiles, C, H, W): the channel is axis 1 of (N * images * tiles, ...)
                g, w = g.flatten(0, 2), w.flatten(0, 2)
            # the channel axis: 1 for (N, C, H, W) and patch rows, third from the end for stacked tiles
            # ((N, tiles, C, H, W) included)
            assert hf_pixel_bound_ok(proc, g, w, 1 if g.ndim <= 4 else g.ndim - 3), (what, k)
        else:
            assert torch.equal(g, w), (what, k)
