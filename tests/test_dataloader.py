"""Converted and hand-written pipelines in a real torch DataLoader with 2 "spawn" workers (the start
method goprep's ForkError recommends): the pipeline is pickled into each worker as its chain and
options, and the batches equal what the same pipeline gives in this process."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from conftest import PHOTOS

pytestmark = pytest.mark.slow  # spawned DataLoader workers

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
Image = pytest.importorskip("PIL.Image")


@goprep.pipeline
def hand_written(img):
    """ResNet50_Weights.IMAGENET1K_V1's preset written with goprep's ops (torchvision >= 0.17's
    antialias default; V2's preset resizes to 232 instead)."""
    img = goprep.resize(img, 256, antialias=True)
    img = goprep.center_crop(img, 224)
    return goprep.normalize(img, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))


class Images(torch.utils.data.Dataset):
    """Items preprocessed by ``prep`` in the worker."""

    def __init__(self, items, prep):
        self.items, self.prep = items, prep

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return torch.as_tensor(self.prep(self.items[i]))


def _jpeg(a):
    import io

    buf = io.BytesIO()
    Image.fromarray(a).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def _items(kind):
    arrays = [np.ascontiguousarray(PHOTOS[n]) for n in ("chelsea", "astronaut", "coffee", "chelsea")]
    if kind == "pil":
        return [Image.fromarray(a) for a in arrays]
    if kind == "jpeg":  # encoded bytes, decoded by goprep in the worker
        return [_jpeg(a) for a in arrays]
    if kind == "tensor":
        return [torch.from_numpy(a.copy()).permute(2, 0, 1).contiguous() for a in arrays]
    return [a.copy() for a in arrays]


def _load(ds):
    dl = torch.utils.data.DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="spawn")
    return torch.cat(list(dl))


@pytest.mark.parametrize("kind", ["pil", "tensor", "jpeg"])
def test_converted_weights_preset_in_spawn_workers(kind):
    from torchvision.models import ResNet50_Weights

    prep = gt.from_torchvision(ResNet50_Weights.IMAGENET1K_V2)
    items = _items(kind)
    here = torch.stack([prep(x) for x in items])  # also compiles prep here: the workers rebuild their own
    got = _load(Images(items, prep))
    assert got.shape == (4, 3, 224, 224)
    assert torch.equal(got, here)
    if kind == "jpeg":
        import io

        if not {"jpeg", "png"} <= set(goprep.info()["codecs"]):
            pytest.skip("goprep was built without its codecs")
        # what a torchvision loader computes from the same bytes: Pillow's decode, then the preset
        want = torch.stack([ResNet50_Weights.IMAGENET1K_V2.transforms()(Image.open(io.BytesIO(x)).convert("RGB")) for x in items])
    else:
        want = torch.stack([ResNet50_Weights.IMAGENET1K_V2.transforms()(x) for x in items])
    bound = 1e-5 if kind in ("pil", "jpeg") else 1.0 / 255 / 0.224 + 1e-5  # PIL exact; tensors within 1 level
    assert float((got - want).abs().max()) <= bound


def test_hand_written_pipeline_in_spawn_workers():
    items = _items("numpy")
    here = torch.stack([torch.as_tensor(hand_written(x)) for x in items])
    got = _load(Images(items, hand_written))
    assert torch.equal(got, here)
    # the same numbers as the weights preset on PIL images (Pillow's antialiased bilinear)
    from torchvision.models import ResNet50_Weights

    want = torch.stack([ResNet50_Weights.IMAGENET1K_V1.transforms()(Image.fromarray(x)) for x in items])
    assert float((got - want).abs().max()) <= 1e-5
