"""from_hf on the tiling processors (goprep.transforms._hf_tiles): LLaVA-NeXT and LLaVA-OneVision
(any-resolution tiles), Idefics3 and SmolVLM (image splitting), each class (torchvision and PIL
backends) against the processor itself on odd sizes (tall, wide, tiny, thin), gray and RGBA inputs (the
classes convert them), batches of mixed sizes, and their common arguments; every output by its name,
shape and dtype (tests/zoo_compare.py's bounds)."""

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from zoo_compare import as_kind, assert_hf_outputs, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(23)
# (h, w): a photo's shape, tall, wide, tiny, odd sides, thin
_SHAPES = [(480, 640), (1500, 300), (60, 1900), (7, 9), (333, 517), (2, 700)]
_IMGS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}

LLAVA = [f"Llava{m}ImageProcessor{b}" for m in ("Next", "Onevision") for b in ("", "Pil")]


def _check(proc, src, what):
    got, want = gt.from_hf(proc)(src), proc(src, return_tensors="pt")
    assert got["pixel_values"].ndim == 5, (what, got["pixel_values"].shape)
    assert_hf_outputs(proc, got, want, what)


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", LLAVA)
def test_llava_defaults_odd_sizes_and_mixed_batches(kind, input_kind):
    """The class defaults: each odd size alone (its tile count from its best pinpoint), then a mixed
    batch (padded with zero tiles to the largest count) and a batch of two."""
    proc = hf_processor(kind)
    imgs = [as_kind(input_kind, a) for a in _IMGS.values()]
    for shape, x in zip(_SHAPES, imgs):
        _check(proc, x, (kind, input_kind, shape))
    _check(proc, imgs, (kind, input_kind, "all"))
    _check(proc, imgs[2:4], (kind, input_kind, "wide + tiny"))


_ARGS = [
    # llava-v1.6's own config: 336 tiles, the global image 336 x 336, pinpoints multiples of 336
    ("LlavaNextImageProcessor", {"size": {"shortest_edge": 336}, "crop_size": {"height": 336, "width": 336},
                                 "image_grid_pinpoints": [[336, 672], [672, 336], [672, 672], [1008, 336],
                                                          [336, 1008]]}),
    ("LlavaNextImageProcessorPil", {"size": {"shortest_edge": 336}, "crop_size": {"height": 336, "width": 336},
                                    "image_grid_pinpoints": [[336, 672], [672, 336], [672, 672]]}),
    # tiles that are not squares of the crop (the default's 224 cut from 336 pinpoints): resized, cropped
    ("LlavaNextImageProcessor", {"image_grid_pinpoints": [[300, 500], [500, 300]], "resample": 2}),
    ("LlavaNextImageProcessorPil", {"image_grid_pinpoints": [[300, 500], [500, 300]], "resample": 2}),
    ("LlavaNextImageProcessor", {"do_center_crop": False, "size": {"height": 200, "width": 200},
                                 "image_grid_pinpoints": [[400, 600], [600, 400]]}),
    ("LlavaNextImageProcessorPil", {"do_normalize": False, "do_rescale": False}),
    ("LlavaOnevisionImageProcessor", {"size": {"height": 192, "width": 192},
                                      "image_grid_pinpoints": [[192, 384], [384, 192], [384, 384], [576, 576]]}),
    ("LlavaOnevisionImageProcessorPil", {"size": {"height": 192, "width": 192},
                                         "image_grid_pinpoints": [[192, 384], [384, 192], [384, 384]]}),
    ("LlavaOnevisionImageProcessor", {"resample": 0, "image_mean": [0.5, 0.4, 0.3], "image_std": [0.2, 0.3, 0.4]}),
    ("LlavaOnevisionImageProcessorPil", {"resample": 2, "do_pad": False}),
]


@pytest.mark.parametrize("kind,kwargs", _ARGS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(_ARGS)])
def test_llava_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, kwargs))
    if kwargs.get("do_pad") is False:  # tile counts differ: the processor cannot stack them, nor goprep
        with pytest.raises(ValueError):
            proc(imgs, return_tensors="pt")
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(proc)(imgs)
        assert ei.value.argument == "do_pad"
        _check(proc, [imgs[0], imgs[0]], (kind, kwargs, "same counts"))
    else:
        _check(proc, imgs, (kind, kwargs, "batch"))


@pytest.mark.parametrize("kind", LLAVA)
@pytest.mark.parametrize("mode", ["L", "RGBA", "P", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"])
def test_llava_gray_and_rgba(kind, mode):
    """do_convert_rgb (on by default): gray repeated, transparency composited onto white, as the class's
    backend does, alone and in a batch with an RGB image."""
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    if mode in ("L", "RGBA"):
        img = Image.fromarray(rgba, "RGBA").convert(mode)
    elif mode == "P":
        img = Image.fromarray(rgba[..., :3]).quantize(16)
    else:
        img = as_kind(mode.split("-")[1], rgba[..., :1].copy() if mode.startswith("gray") else rgba)
    proc = hf_processor(kind)
    _check(proc, img, (kind, mode))
    other = _IMGS[(333, 517)]
    _check(proc, [img, Image.fromarray(other) if mode in ("L", "RGBA", "P") else as_kind(mode.split("-")[1], other)],
           (kind, mode, "batch"))


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", LLAVA[2:])
def test_onevision_samples(kind, input_kind):
    """OneVision's list of lists: each list a sample (batch_num_images); an image alone in its sample is
    tiled, the images of a larger sample padded to a square with the mean colour and kept whole."""
    proc = hf_processor(kind, image_mean=[0.2, 0.5, 0.7])
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (60, 1900)]]
    for src in ([[imgs[0]], [imgs[1], imgs[2]]], [imgs[1:]], [[imgs[2]], [imgs[3]]], [[imgs[0]], [], [imgs[3]]]):
        _check(proc, src, (kind, input_kind, len(src)))


@pytest.mark.parametrize("kind", ["LlavaNextImageProcessor", "LlavaOnevisionImageProcessor"])
def test_llava_batched_tensor_and_config_dict(kind):
    """A (N, C, H, W) uint8 tensor is a batch of N images; the config dict gives the same pipeline."""
    proc = hf_processor(kind)
    batch = torch.stack([as_kind("tensor", _IMGS[(480, 640)])] * 2)
    if "Onevision" in kind:  # the processor takes the batch for one image and fails; goprep refuses it
        with pytest.raises(IndexError):
            proc(batch, return_tensors="pt")
        with pytest.raises(goprep.PipelineError, match="one image"):
            gt.from_hf(proc)(batch)
        _check(proc, batch[:1], kind)
    else:
        _check(proc, batch, kind)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(1500, 300), (7, 9)]]
    got, got_d = gt.from_hf(proc)(imgs), gt.from_hf(proc.to_dict())(imgs)
    assert set(got) == set(got_d) and all(torch.equal(got[k], got_d[k]) for k in got)


def test_llava_pipelines_pickle():
    import pickle

    conv = gt.from_hf(hf_processor("LlavaOnevisionImageProcessorPil"))
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (7, 9)]]
    before = conv(imgs)
    again = pickle.loads(pickle.dumps(conv))(imgs)
    assert set(before) == set(again) and all(torch.equal(before[k], again[k]) for k in before)


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", LLAVA)
def test_llava_lanczos(kind, input_kind):
    """resample=1 (LANCZOS) in both of the class's resizes: the canvas's and (NeXt's default 224 tiles cut
    from 336 pinpoints) the per-tile chain's; Pillow's on the PIL class, PyTorch's uint8 lanczos on the
    torchvision class (torchvision >= 0.27; before it the class resizes with BICUBIC, and so does goprep).
    OneVision's tiles need no per-tile resize (its fused path); NeXt's go through the two passes."""
    proc = hf_processor(kind, resample=1)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (7, 9), (333, 517)]]
    for x in imgs:
        _check(proc, x, (kind, input_kind, "lanczos"))
    _check(proc, imgs, (kind, input_kind, "lanczos batch"))
    bicubic = gt.from_hf(hf_processor(kind, resample=3))(imgs[0])["pixel_values"]
    assert not torch.equal(gt.from_hf(proc)(imgs[0])["pixel_values"], bicubic)  # the mode reached the engine
    if input_kind == "tensor":  # no lanczos outside the CPU (the class falls back to BICUBIC there)
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(proc)(torch.zeros(3, 40, 50, dtype=torch.uint8, device="meta"))
        assert ei.value.argument == "resample"


@pytest.mark.parametrize("kind", LLAVA)
def test_llava_refusals(kind):
    for kwargs, key in [({"image_grid_pinpoints": []}, "image_grid_pinpoints"),
                        ({"image_grid_pinpoints": [[336, 0]]}, "image_grid_pinpoints"),
                        ({"image_grid_pinpoints": [336, 672]}, "image_grid_pinpoints"),
                        ({"size": {"longest_edge": 300}}, "size")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, **kwargs))
        assert ei.value.argument == key and kind in str(ei.value), (kwargs, ei.value)
    conv = gt.from_hf(hf_processor(kind))
    with pytest.raises(goprep.PipelineError, match="out"):
        conv(as_kind("pil", _IMGS[(7, 9)]), out=torch.empty(1))
    for bad, what in [([], "empty list"), (np.zeros((0, 5, 3), np.uint8), "0x5")]:
        with pytest.raises(goprep.PipelineError, match=what):
            conv(bad)
    with pytest.raises(goprep.DecodeError, match="x.jpg"):  # decoded by the pipeline: an unreadable path named
        conv("x.jpg")
    # a 1 x 5000 image: every pinpoint keeps 0 of its pixels; the least padded wins, as there
    _check(hf_processor(kind), as_kind("pil", _RNG.integers(0, 256, (1, 5000, 3), dtype=np.uint8)), (kind, "1x5000"))
    if "Next" in kind:  # ragged 224 tiles cut from 336 pinpoints, without the crop: sizes differ
        proc = hf_processor(kind, do_center_crop=False)
        with pytest.raises(Exception):
            proc(as_kind("pil", _IMGS[(1500, 300)]), return_tensors="pt")
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(proc)(as_kind("pil", _IMGS[(1500, 300)]))
        assert ei.value.argument == "size"


# Idefics3 / SmolVLM: their default resample is LANCZOS (the engine's "lanczos": Pillow's on the PIL class,
# PyTorch's uint8 lanczos on the torchvision class); the cases below set others too.
SPLIT = [f"{m}ImageProcessor{b}" for m in ("Idefics3", "SmolVLM") for b in ("", "Pil")]


def _check_split(proc, src, what):
    """All outputs; rows and cols (lists, with return_row_col_info) equal as lists."""
    got, want = gt.from_hf(proc)(src), proc(src, return_tensors="pt")
    for k in ("rows", "cols"):
        assert (k in got) == (k in want), (what, k)
        if k in want:
            assert got.pop(k) == want.pop(k), (what, k)
    assert_hf_outputs(proc, got, want, what)


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", SPLIT)
def test_split_odd_sizes_and_samples(kind, input_kind):
    """Each odd size alone (tiles then the global image; a small one left whole), a flat list (one
    sample), and a list of lists (one sample each, padded with zero frames and masked)."""
    proc = hf_processor(kind, resample=3, return_row_col_info=True)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(480, 640), (1500, 300), (60, 1900), (7, 9), (2, 700)]]
    for x in imgs:
        _check_split(proc, x, (kind, input_kind))
    _check_split(proc, imgs[:3], (kind, input_kind, "one sample"))
    _check_split(proc, [[imgs[0]], [imgs[3], imgs[1]]], (kind, input_kind, "two samples"))


@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", SPLIT)
def test_split_defaults_lanczos(kind, input_kind):
    """The class defaults (LANCZOS, longest edge 4 x 364, 364 tiles): odd sizes alone (tall, wide, tiny,
    thin, one larger than the longest edge), a flat list and a list of lists of mixed sizes."""
    proc = hf_processor(kind)
    assert int(proc.resample) == 1  # the default this test is about
    big = _RNG.integers(0, 256, (1700, 2100, 3), dtype=np.uint8)  # shrunk to 1456 first, then split
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(1500, 300), (60, 1900), (7, 9), (333, 517), (2, 700)]]
    for x in imgs + [as_kind(input_kind, big)]:
        _check_split(proc, x, (kind, input_kind))
    _check_split(proc, imgs[:3], (kind, input_kind, "one sample"))
    _check_split(proc, [[imgs[2]], [imgs[3], imgs[0]]], (kind, input_kind, "two samples"))


@pytest.mark.parametrize("kind", SPLIT)
def test_split_lanczos_differs_from_bicubic(kind):
    """The default's frames are LANCZOS's: the same processor with BICUBIC gives other pixel values."""
    x = as_kind("pil", _IMGS[(333, 517)])
    a = gt.from_hf(hf_processor(kind))(x)["pixel_values"]
    b = gt.from_hf(hf_processor(kind, resample=3))(x)["pixel_values"]
    assert a.shape == b.shape and not torch.equal(a, b)
    # no lanczos outside the CPU (the torchvision class falls back to BICUBIC there): refused by name
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind))([torch.zeros(3, 40, 50, dtype=torch.uint8, device="meta")])
    assert ei.value.argument == "resample"


_SPLIT_ARGS = [
    {"resample": 2, "do_image_splitting": False},
    {"resample": 3, "size": {"longest_edge": 500}, "max_image_size": {"longest_edge": 200}},
    {"resample": 3, "size": {"height": 400, "width": 300}, "max_image_size": {"longest_edge": 128}},
    {"resample": 0, "do_resize": False, "max_image_size": {"longest_edge": 256}},
    {"resample": 3, "do_normalize": False, "do_rescale": False},  # uint8 frames padded into float32
    {"resample": 3, "do_normalize": False, "do_rescale": False, "do_pad": False},  # uint8
    {"resample": 2, "image_mean": [0.1, 0.2, 0.3], "image_std": [0.3, 0.2, 0.1], "do_pad": False},
]


@pytest.mark.parametrize("kind", SPLIT)
@pytest.mark.parametrize("kwargs", _SPLIT_ARGS, ids=lambda kw: "-".join(f"{k}" for k in kw))
def test_split_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (333, 517), (7, 9)]]
    for x in imgs:
        _check_split(proc, x, (kind, kwargs))
    if kwargs.get("do_pad") is False:
        _check_split(proc, [[imgs[0]], [imgs[0]]], (kind, kwargs, "same counts"))
        if kwargs.get("do_image_splitting", True):  # frame counts differ: neither can stack them
            with pytest.raises((ValueError, RuntimeError)):  # the PIL class's, the torchvision class's
                proc([[imgs[0]], [imgs[2], imgs[1]]], return_tensors="pt")
            with pytest.raises(goprep.PipelineError) as ei:
                gt.from_hf(proc)([[imgs[0]], [imgs[2], imgs[1]]])
            assert ei.value.argument == "do_pad"
    else:
        _check_split(proc, [[imgs[0]], [imgs[1], imgs[2]]], (kind, kwargs, "samples"))


GRAY_RGBA = ["L", "RGBA", "gray-array", "rgba-array", "gray-tensor", "rgba-tensor"]


def _gray_or_rgba(mode):
    """A random 90 x 420 image as a PIL "L" / "RGBA" image, or a 1- / 4-channel array or tensor."""
    rgba = _RNG.integers(0, 256, (90, 420, 4), dtype=np.uint8)
    if mode in ("L", "RGBA"):
        return Image.fromarray(rgba, "RGBA").convert(mode)
    return as_kind(mode.split("-")[1], rgba[..., :1].copy() if mode.startswith("gray") else rgba)


@pytest.mark.parametrize("resample", [1, 3])  # 1: LANCZOS, the class default
@pytest.mark.parametrize("kind", SPLIT)
@pytest.mark.parametrize("mode", GRAY_RGBA)
def test_split_gray_and_rgba(kind, mode, resample):
    img = _gray_or_rgba(mode)
    _check_split(hf_processor(kind, resample=resample, max_image_size={"longest_edge": 128}), img, (kind, mode))


@pytest.mark.parametrize("kind", SPLIT)
def test_split_refusals_and_config_dict(kind):
    for kwargs, key in [({"resample": 3, "size": {"shortest_edge": 300}}, "size"),
                        ({"resample": 3, "max_image_size": {"height": 300}}, "max_image_size")]:
        with pytest.raises(goprep.PipelineError) as ei:
            gt.from_hf(hf_processor(kind, **kwargs))
        assert ei.value.argument == key and kind in str(ei.value), (kwargs, ei.value)
    proc = hf_processor(kind, resample=3)
    conv = gt.from_hf(proc)
    for bad, what in [([], "empty"), ([[], []], "empty lists")]:
        with pytest.raises(goprep.PipelineError, match=what):
            conv(bad)
    with pytest.raises(goprep.DecodeError, match="x.jpg"):  # decoded by the pipeline: an unreadable path named
        conv("x.jpg")
    with pytest.raises(goprep.PipelineError, match="out"):
        conv(as_kind("pil", _IMGS[(7, 9)]), out=torch.empty(1))
    if not kind.endswith("Pil"):  # to_dict() names the torchvision class
        imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (7, 9)]]
        got, got_d = conv(imgs), gt.from_hf(proc.to_dict())(imgs)
        assert set(got) == set(got_d) and all(torch.equal(got[k], got_d[k]) for k in got)


# Idefics2: each image (with do_image_splitting its four quadrants first) resized on its own by
# shortest_edge / longest_edge, every frame padded bottom-right to the batch's largest, pixel_attention_mask
# over each frame's own pixels (_hf_tiles.SplitQuadrants).
IDEFICS2 = ["Idefics2ImageProcessor", "Idefics2ImageProcessorPil"]


@pytest.mark.parametrize("splitting", [False, True])
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
@pytest.mark.parametrize("kind", IDEFICS2)
def test_idefics2_odd_sizes_and_samples(kind, input_kind, splitting):
    """The class defaults (BILINEAR, 378 / 980) with and without splitting: odd sizes alone (tall and
    larger than longest_edge, wide, tiny, thin, odd sides), a flat list and a list of lists of mixed sizes."""
    proc = hf_processor(kind, do_image_splitting=splitting)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in [(1500, 300), (60, 1900), (7, 9), (333, 517), (2, 700)]]
    for x in imgs:
        _check_split(proc, x, (kind, input_kind, splitting))
    _check_split(proc, imgs[:3], (kind, input_kind, "one sample"))
    _check_split(proc, [[imgs[2]], [imgs[3], imgs[0]]], (kind, input_kind, "two samples"))


_IDEFICS2_ARGS = [
    {"resample": 1, "do_image_splitting": True},  # LANCZOS: the engine's lanczos
    {"resample": 3, "size": {"shortest_edge": 100, "longest_edge": 300}},
    {"size": {"height": 200, "width": 150}, "do_image_splitting": True, "do_pad": False},  # one frame size: stacked
    {"do_normalize": False, "do_rescale": False},  # uint8 frames padded into float32 (or stacked as uint8)
    {"do_normalize": False, "do_rescale": False, "do_pad": False, "size": {"height": 64, "width": 64}},
    {"do_resize": False, "image_mean": [0.1, 0.2, 0.3], "image_std": [0.3, 0.2, 0.1]},
]


@pytest.mark.parametrize("kind", IDEFICS2)
@pytest.mark.parametrize("kwargs", _IDEFICS2_ARGS, ids=lambda kw: "-".join(f"{k}" for k in kw))
def test_idefics2_arguments(kind, kwargs):
    proc = hf_processor(kind, **kwargs)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (333, 517), (7, 9)]]
    for x in imgs:
        _check_split(proc, x, (kind, kwargs))
    # without do_pad only samples of equal frame counts stack (test_idefics2_refusals)
    samples = [[imgs[0]], [imgs[1], imgs[2]]] if kwargs.get("do_pad", True) else [[imgs[0]], [imgs[1]]]
    _check_split(proc, samples, (kind, kwargs, "samples"))


@pytest.mark.parametrize("kind", IDEFICS2)
@pytest.mark.parametrize("mode", GRAY_RGBA)
def test_idefics2_gray_and_rgba(kind, mode):
    img = _gray_or_rgba(mode)
    _check_split(hf_processor(kind, do_image_splitting=True, size={"shortest_edge": 50, "longest_edge": 200}), img,
                 (kind, mode))


@pytest.mark.parametrize("kind", IDEFICS2)
def test_idefics2_refusals(kind):
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind, size={"longest_edge": 300}))
    assert ei.value.argument == "size" and kind in str(ei.value)
    # frames of different sizes without do_pad: neither class can stack them
    proc = hf_processor(kind, do_pad=False)
    imgs = [as_kind("pil", _IMGS[s]) for s in [(480, 640), (333, 517)]]
    with pytest.raises((ValueError, RuntimeError)):
        proc(imgs, return_tensors="pt")
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(proc)(imgs)
    assert ei.value.argument == "do_pad"
    # a 1-pixel side with splitting: empty quadrants
    with pytest.raises(goprep.PipelineError) as ei:
        gt.from_hf(hf_processor(kind, do_image_splitting=True))(as_kind("pil", _IMGS[(2, 700)][:1]))
    assert ei.value.argument == "do_image_splitting"
