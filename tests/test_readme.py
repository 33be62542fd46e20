"""The README's first example computes what it says: torchvision's ResNet-50 (IMAGENET1K_V2) preprocessing."""

import pathlib
import re

import numpy as np
import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _first_python_block():
    m = re.search(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)
    assert m, "README.md has no python example"
    return m.group(1)


def test_first_example_is_resnet50_preprocessing_and_matches_torchvision():
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchvision")
    skdata = pytest.importorskip("skimage.data")
    from PIL import Image
    from torchvision.models import ResNet50_Weights

    ns: dict = {}
    exec(compile(_first_python_block(), "README.md", "exec"), ns)
    prep = ns["prep"]
    ref = ResNet50_Weights.IMAGENET1K_V2.transforms()
    # the README says within 1e-6 (float32 rounding), 7.2e-7 measured on these
    photos = [skdata.astronaut(), skdata.chelsea(), skdata.coffee(), skdata.rocket(),
              np.random.default_rng(0).integers(0, 256, (480, 640, 3), np.uint8)]
    photos.append(np.asarray(Image.fromarray(photos[0]).resize((1920, 1080), Image.BICUBIC)))
    for arr in photos:
        pil = Image.fromarray(arr).convert("RGB")
        want = ref(pil)
        assert isinstance(want, torch.Tensor) and tuple(want.shape) == (3, 224, 224)
        for got in (prep(pil), prep(np.asarray(pil))):
            assert got.dtype == np.float32 and got.shape == (3, 224, 224)
            assert float(np.abs(got - want.numpy()).max()) <= 1e-6, arr.shape
    assert "232" in _first_python_block() and "antialias=True" in _first_python_block()
