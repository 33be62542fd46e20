"""A training chain's batch as one engine call: each item draws its own parameters (item k the k-th
draws, as torchvision's Compose on each item in turn), gets its own plan, and all items run in one
call, JPEG/PNG bytes and paths decoded inside it (only the crop's window; DCT-scaled with
``reduce="auto"`` where the crop is much larger than its output). The fused call gives the per-item
calls' tensors bit for bit and torchvision's within the converted ops' bounds; an item's error names
it and carries its index and path."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
F = pytest.importorskip("torchvision.transforms.functional")
from PIL import Image  # noqa: E402

import goprep  # noqa: E402
import goprep.transforms as gt  # noqa: E402
from goprep import testing as gtest  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
LEVEL = 1 / 255 / min(STD)  # one uint8 level after the normalisation

pytestmark = pytest.mark.skipif(not goprep.info()["codecs"], reason="built without the JPEG/PNG decoders")


def _crop(photo: np.ndarray, k: int) -> np.ndarray:
    """A different part of a photograph for each ``k``: sizes differ within a batch."""
    h, w = photo.shape[:2]
    return photo[(k * 13) % (h // 4):h - (k * 7) % (h // 5), (k * 17) % (w // 4):w - (k * 5) % (w // 6), :3].copy()


@pytest.fixture(scope="module")
def arrays(photos):
    names = ("astronaut", "chelsea", "coffee")
    return [_crop(photos[names[k % 3]], k) for k in range(6)]


def _encode(a: np.ndarray, fmt: str) -> bytes:
    b = io.BytesIO()
    Image.fromarray(a).save(b, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return b.getvalue()


@pytest.fixture(scope="module")
def encoded(arrays):
    """The images as JPEG (and one PNG) bytes, and as the Pillow images they decode to."""
    data = [_encode(a, "PNG" if k == 4 else "JPEG") for k, a in enumerate(arrays)]
    return data, [Image.open(io.BytesIO(b)).convert("RGB") for b in data]


@pytest.fixture(scope="module")
def paths(encoded, tmp_path_factory):
    d = tmp_path_factory.mktemp("train-batch")
    out = []
    for k, b in enumerate(encoded[0]):
        p = d / f"{k}.{'png' if k == 4 else 'jpg'}"
        p.write_bytes(b)
        out.append(str(p))
    return out


def _chain(size=64, **kw):
    return T.Compose([T.RandomResizedCrop(size, **kw), T.RandomHorizontalFlip(), T.RandomVerticalFlip(0.3),
                      T.ToTensor(), T.Normalize(MEAN, STD)])


def _fused_and_per_item(prep, items, seed):
    """The batch as one call (and how many engine calls it made), and item by item, from one seed;
    the generator's next draw after each must agree too."""
    torch.manual_seed(seed)
    with gtest.count_general_path() as calls:
        fused = prep(items)
        n = calls()
    after = torch.rand(1).item()
    torch.manual_seed(seed)
    per = torch.stack([prep(x) for x in items])
    assert torch.rand(1).item() == after
    return fused, per, n


def test_fused_batch_is_the_per_item_calls_bit_for_bit(arrays, encoded, paths):
    """Every input kind, sizes mixed in one batch: one engine call, the per-item calls' tensors exactly,
    torchvision's (on the Pillow images the data decodes to) within the PIL bound."""
    t = _chain()
    prep = gt.from_torchvision(t)
    data, pils = encoded
    tensors = [torch.from_numpy(a).permute(2, 0, 1) for a in arrays]  # (C, H, W) views, not contiguous
    kinds = {"arrays": arrays, "pil": [Image.fromarray(a) for a in arrays], "tensors": tensors, "bytes": data,
             "paths": paths, "bytearray": [bytearray(b) for b in data]}
    results = {}
    for kind, items in kinds.items():
        fused, per, calls = _fused_and_per_item(prep, items, 3)
        assert calls == 1, kind
        assert fused.shape == (len(items), 3, 64, 64) and fused.dtype == torch.float32
        assert torch.equal(fused, per), kind
        results[kind] = fused
    # the same draws on the same pixels: every kind gives one batch
    assert torch.equal(results["arrays"], results["pil"])
    assert torch.equal(results["bytes"], results["paths"]) and torch.equal(results["bytes"], results["bytearray"])
    torch.manual_seed(3)
    want = torch.stack([t(Image.fromarray(a)) for a in arrays])
    assert float((results["arrays"] - want).abs().max()) <= 1e-5
    torch.manual_seed(3)
    want = torch.stack([t(im) for im in pils])
    assert float((results["bytes"] - want).abs().max()) <= 1e-5
    # tensors: the tensor numerics, within a uint8 level of torchvision's on tensors
    tt = T.Compose([T.RandomResizedCrop(64), T.RandomHorizontalFlip(), T.RandomVerticalFlip(0.3),
                    T.ConvertImageDtype(torch.float32), T.Normalize(MEAN, STD)])
    prep_t = gt.from_torchvision(tt)
    fused, per, calls = _fused_and_per_item(prep_t, tensors, 4)
    assert calls == 1 and torch.equal(fused, per)
    torch.manual_seed(4)
    want = torch.stack([tt(x) for x in tensors])
    assert float((fused - want).abs().max()) <= LEVEL * 1.0001


def test_encoded_items_decode_their_crop_only(encoded):
    """A crop decodes its window, not the image: the decoded pixel count of the fused batch is the
    windows' (smaller than the images'), and the result equals the full decode's, cropped."""
    data, pils = encoded
    prep = gt.from_torchvision(T.Compose([T.RandomResizedCrop(48, scale=(0.05, 0.3)), T.ToTensor()]))
    full = [np.asarray(im) for im in pils]
    torch.manual_seed(8)
    before = gtest.decoded_pixels()
    got = prep(data)
    decoded = gtest.decoded_pixels() - before
    total = sum(a.shape[0] * a.shape[1] for a in full)
    assert 0 < decoded < total * 0.6
    torch.manual_seed(8)
    assert torch.equal(got, prep([goprep.decode(b) for b in data]))


def _draft_scale(h, w, size):
    """Pillow's draft rule with reducing_gap 2, written out: the largest of 8, 4, 2 that keeps the
    crop at least twice ``size`` on each axis."""
    f = min(w // (2 * size), h // (2 * size))
    return next((a for a in (8, 4, 2) if f >= a), 1)


def test_reduce_auto_is_pillows_draft_of_the_crop(encoded, paths):
    """``reduce="auto"``: a JPEG whose crop is at least twice the output (Pillow's reducing_gap 2) is
    decoded DCT-scaled, the box taken to the reduced pixels (each edge divided and rounded); the result
    is Pillow's ``draft`` followed by that crop, the resize and the flips within 1e-5 (the documented
    bound), and decodes fewer pixels than the exact call. PNGs and small crops decode as without it."""
    data, _ = encoded
    size, scale = 40, (0.3, 1.0)
    t = _chain(size, scale=scale)
    prep = gt.from_torchvision(t)
    torch.manual_seed(21)
    p0 = gtest.decoded_pixels()
    exact = prep(data)
    p1 = gtest.decoded_pixels()
    torch.manual_seed(21)
    got = prep(paths, reduce="auto")
    p2 = gtest.decoded_pixels()
    assert p2 - p1 < (p1 - p0) / 2
    torch.manual_seed(21)
    want, scales = [], []
    for b in data:
        im = Image.open(io.BytesIO(b))
        w0, h0 = im.size
        i, j, h, w = T.RandomResizedCrop.get_params(im, scale, (3 / 4, 4 / 3))
        hf, vf = bool(torch.rand(1) < 0.5), bool(torch.rand(1) < 0.3)
        s = _draft_scale(h, w, size) if im.format == "JPEG" else 1
        scales.append(s)
        if s > 1:
            im.draft("RGB", (w0 // s, h0 // s))
            assert im.size == (math.ceil(w0 / s), math.ceil(h0 / s))
            y0, x0 = round(i / s), round(j / s)
            i, j, h, w = y0, x0, round((i + h) / s) - y0, round((j + w) / s) - x0
        r = F.resized_crop(im.convert("RGB"), i, j, h, w, [size, size])
        r = F.vflip(F.hflip(r) if hf else r) if vf else (F.hflip(r) if hf else r)
        want.append(F.normalize(F.to_tensor(r), MEAN, STD))
    assert max(scales) > 1 and scales[4] == 1  # some items reduced; the PNG never
    assert float((got - torch.stack(want)).abs().max()) <= 1e-5
    for k, s in enumerate(scales):
        if s == 1:
            assert torch.equal(got[k], exact[k]), k
    # a large output: no crop of these images is twice as large, so nothing is reduced
    prep = gt.from_torchvision(_chain(224))
    torch.manual_seed(2)
    a = prep(data)
    torch.manual_seed(2)
    assert torch.equal(prep(data, reduce="auto"), a)
    with pytest.raises(goprep.InvalidArgumentError, match="reduce"):
        prep(data, reduce=2)


def test_native_random_resized_crop_takes_encoded_batches(encoded, paths):
    """``goprep.transforms.random_resized_crop`` on bytes and paths: one call, the draws of the same
    generator on the decoded arrays, the same pixels."""
    data, pils = encoded
    arrays = [np.asarray(im) for im in pils]
    want, prm = gt.random_resized_crop(arrays, 32, hflip=0.5, generator=np.random.default_rng(5), return_params=True)
    with gtest.count_general_path() as calls:
        got, prm2 = gt.random_resized_crop(paths, 32, hflip=0.5, generator=np.random.default_rng(5),
                                           return_params=True)
        assert calls() == 1
    assert prm2 == prm and np.array_equal(got, want)
    one = gt.random_resized_crop(data[0], 32, hflip=0.5, generator=np.random.default_rng(5))
    assert np.array_equal(one, want[0])
    # reduce="auto": the drawn params stay in the source's full-size pixels
    red, prm3 = gt.random_resized_crop(data, 16, scale=(0.5, 1.0), generator=np.random.default_rng(6),
                                       return_params=True, reduce="auto")
    _, prm4 = gt.random_resized_crop(arrays, 16, scale=(0.5, 1.0), generator=np.random.default_rng(6),
                                     return_params=True)
    assert prm3 == prm4 and red.shape == (6, 16, 16, 3)


def test_a_corrupt_item_names_its_index_and_path(encoded, paths, tmp_path):
    """A bad item of a batch raises naming it as src[k], with ``index`` k and ``path`` (its path, or
    None for bytes) as attributes, whether it fails its header (before any draw) or its decode (inside
    the engine call)."""
    data, _ = encoded
    prep = gt.from_torchvision(_chain())
    garbage = tmp_path / "garbage.jpg"
    garbage.write_bytes(b"not an image at all")
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(data[1][: len(data[1]) // 2])
    cases = [
        (list(data[:3]) + [data[1][: len(data[1]) // 2]] + list(data[3:]), 3, None),
        (paths[:2] + [str(garbage)] + paths[2:], 2, str(garbage)),
        (paths[:5] + [str(truncated)], 5, str(truncated)),
        (paths[:1] + [str(tmp_path / "missing.jpg")], 1, str(tmp_path / "missing.jpg")),
    ]
    for items, k, path in cases:
        with pytest.raises(goprep.DecodeError) as ei:
            prep(items)
        e = ei.value
        assert e.index == k and e.path == path and e.argument == f"src[{k}]", str(e)
        if path is not None:
            assert path in str(e)
    # an array item whose draws cannot fit (RandomCrop larger than the image): its index too
    prep = gt.from_torchvision(T.Compose([T.RandomCrop(200), T.ToTensor()]))
    items = [np.zeros((240, 240, 3), np.uint8), np.zeros((100, 300, 3), np.uint8)]
    with pytest.raises(goprep.PipelineError, match="larger") as ei:
        prep(items)
    assert ei.value.index == 1 and ei.value.path is None and ei.value.argument == "src[1]"


def test_batch_outputs_and_layouts(arrays):
    """An ``(N, C, H, W)`` tensor batch and an ``(N, H, W, C)`` array batch run as one call, ``out=``
    is filled in place, and the result is the list's."""
    prep = gt.from_torchvision(_chain(32))
    a = np.stack([arrays[0], arrays[0][::-1].copy()])
    torch.manual_seed(1)
    want = prep(list(a))
    torch.manual_seed(1)
    with gtest.count_general_path() as calls:
        got = prep(a)
        assert calls() == 1
    assert torch.equal(got, want)
    tb = torch.from_numpy(a).permute(0, 3, 1, 2)  # tensors: the tensor numerics
    torch.manual_seed(1)
    want = prep(list(tb))
    out = torch.empty_like(want)
    torch.manual_seed(1)
    assert prep(tb, out=out) is out
    assert torch.equal(out, want)


def test_shared_plans_are_the_traced_plans(encoded):
    """A batch traces one item per class (input kind, flips, whether the box is the output's size) and
    builds the others' plans from it: fewer traces than items, and every item exactly as its own call
    (which traces it) gives, for boxes of every shape: the whole image, the output's size (where
    tracing drops the resize), one axis of it, thin, at the far corner."""
    data, pils = encoded
    arrays = [np.asarray(im) for im in pils]
    size = (24, 32)
    rng = np.random.default_rng(4)
    params, items = [], []
    for k in range(40):
        a = arrays[k % len(arrays)]
        h, w = a.shape[:2]
        boxes = [(0, 0, h, w), (3, 5, 24, 32), (h - 24, w - 32, 24, 32), (1, 2, 24, w - 2), (0, 1, 2, 40),
                 (h - 2, w - 3, 2, 3)]
        if k < len(boxes):
            box = boxes[k]
        else:
            bh, bw = int(rng.integers(2, h + 1)), int(rng.integers(2, w + 1))
            box = (int(rng.integers(0, h - bh + 1)), int(rng.integers(0, w - bw + 1)), bh, bw)
        params.append(gt.Params(*box, bool(rng.random() < 0.5), bool(rng.random() < 0.3)))
        items.append(k % len(arrays))
    for kind, srcs in (("arrays", arrays), ("bytes", data)):
        batch_items = [srcs[k] for k in items]
        traces = gtest.trace_count()
        with gtest.count_general_path() as calls:
            got = gt.resized_crop_with(batch_items, params, size)
            assert calls() == 1
        assert gtest.trace_count() - traces < len(items) // 2, kind
        for k, (x, prm) in enumerate(zip(batch_items, params)):
            assert np.array_equal(got[k], gt.resized_crop_with(x, prm, size)), (kind, k, prm)
        # templates evicted while a batch is prepared (memos of 2 entries): the templates of the first
        # half's classes come from the call before (a size of their own: no earlier class), and the
        # second half's new classes (vertical flips) push them out before the variants are built
        flat, size2 = [p._replace(vflip=False) for p in params], (20 + len(kind), 28)
        gt.resized_crop_with(batch_items, flat, size2)
        mixed = flat[:20] + [p._replace(vflip=True) for p in params[20:]]
        with gtest.cache_limits(signatures=2, plans=2):
            got = gt.resized_crop_with(batch_items, mixed, size2)
        for k, (x, prm) in enumerate(zip(batch_items, mixed)):
            assert np.array_equal(got[k], gt.resized_crop_with(x, prm, size2)), (kind, k, prm)


def test_batches_from_threads(encoded):
    """Batches called from several Python threads at once (a threaded loader), sharing one pipeline and
    its plan templates: each gives what it gives alone, with its own generator."""
    import threading

    data, _ = encoded
    items = data * 3
    want = [gt.random_resized_crop(items, 24, hflip=0.5, generator=np.random.default_rng(s)) for s in range(4)]
    got = [None] * 4
    errors = []

    def work(s):
        try:
            for _ in range(3):
                got[s] = gt.random_resized_crop(items, 24, hflip=0.5, generator=np.random.default_rng(s))
        except Exception as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    for s in range(4):
        assert np.array_equal(got[s], want[s]), s
