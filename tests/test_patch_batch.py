"""Qwen2-VL's batches of mixed sizes in one engine call (``PatchBatch._concat`` over ``Pipeline._concat``):
each image its own plan (its smart_resize size), its patch rows written at its row offset of one
``(sum of patches, C * T * P * P)`` result. Checked against transformers' processors (tests/zoo_compare.py's
bounds), bit for bit against the per-size-group path it replaced (``PatchBatch._grouped``), and by counting
the run path's engine calls (``goprep.testing.count_general_path``)."""

import io

import numpy as np
import pytest

import goprep
import goprep.testing as gtest
import goprep.transforms as gt
from goprep.transforms._hf_images import Images
from zoo_compare import as_kind, assert_hf_outputs, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")

_RNG = np.random.default_rng(4040)
# tiny (grows to min_pixels), tall, wide, square, above max_pixels of the small config below
_SHAPES = [(7, 9), (1500, 300), (120, 1900), (224, 224), (1400, 1700)]
_IMGS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}
_KINDS = ["Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil"]
_CFGS = [{}, {"min_pixels": 128 * 28 * 28, "max_pixels": 256 * 28 * 28}, {"patch_size": 16, "temporal_patch_size": 1}]


def grouped(conv, src):
    """The per-size-group path's pixel_values (one engine call per resized size, concatenated)."""
    with Images(src, conv.rgb()) as im:
        return conv._grouped(im, [conv._target(h, w) for h, w in im.sizes])


def one_call(conv, src):
    """conv(src), asserting it made exactly one engine call."""
    with gtest.count_general_path() as calls:
        got = conv(src)
        assert calls() == 1, calls()
    return got


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("cfg", _CFGS, ids=["defaults", "max_pixels", "p16-t1"])
@pytest.mark.parametrize("input_kind", ["pil", "numpy", "tensor"])
def test_mixed_sizes_one_call(kind, cfg, input_kind):
    """A batch of five sizes (one repeated): one engine call, HF's outputs, the grouped path's rows bit for
    bit, and a contiguous (patches, C * T * P * P) float32 result."""
    proc = hf_processor(kind, **cfg)
    conv = gt.from_hf(proc)
    imgs = [as_kind(input_kind, _IMGS[s]) for s in _SHAPES] + [as_kind(input_kind, _IMGS[(7, 9)])]
    got = one_call(conv, imgs)
    assert len({tuple(r) for r in got["image_grid_thw"].tolist()}) == len(_SHAPES)  # really mixed
    assert_hf_outputs(proc, got, proc(imgs, return_tensors="pt"), (kind, cfg, input_kind))
    pv = got["pixel_values"]
    assert pv.is_contiguous() and torch.equal(pv, grouped(conv, imgs))
    # each image's rows are what it gives alone
    k = 0
    for x, (_, gh, gw) in zip(imgs, got["image_grid_thw"].tolist()):
        assert torch.equal(pv[k:k + gh * gw], conv(x)["pixel_values"])
        k += gh * gw
    assert k == pv.shape[0]


@pytest.mark.parametrize("kind", _KINDS)
def test_mixed_modes_converted_in_one_call(kind):
    """Gray, RGBA and RGB PIL images of different sizes (do_convert_rgb: composited onto white, as HF does),
    and (H, W, 4) / (H, W, 1) arrays: one engine call each batch, HF's outputs."""
    proc = hf_processor(kind)
    conv = gt.from_hf(proc)
    rgba = _RNG.integers(0, 256, (90, 120, 4), dtype=np.uint8)
    pils = [Image.fromarray(rgba[..., 0]), Image.fromarray(rgba[:60, :70], "RGBA"), Image.fromarray(_IMGS[(1500, 300)])]
    assert_hf_outputs(proc, one_call(conv, pils), proc(pils, return_tensors="pt"), (kind, "modes"))
    for arrs in ([rgba, rgba[:40, :50].copy()], [rgba[..., :1].copy(), rgba[:50, :30, :1].copy()]):
        assert_hf_outputs(proc, one_call(conv, arrs), proc(arrs, return_tensors="pt"), (kind, arrs[0].shape))


@pytest.mark.skipif(not goprep.info()["codecs"], reason="this build has no JPEG/PNG decoders")
@pytest.mark.parametrize("kind", _KINDS)
def test_encoded_mixed_sizes_decoded_in_the_one_call(kind, tmp_path):
    """JPEG bytes and paths of mixed sizes: decoded in the one engine call; equal to HF on the decoded
    pixels and to the grouped path bit for bit. Mixed with a decoded image: still HF's outputs."""
    proc = hf_processor(kind)
    conv = gt.from_hf(proc)
    data = []
    for s in [(7, 9), (1500, 300), (120, 1900), (7, 9)]:
        b = io.BytesIO()
        Image.fromarray(_IMGS[s]).save(b, "JPEG", quality=90)
        data.append(b.getvalue())
    path = tmp_path / "wide.jpg"
    path.write_bytes(data[2])
    src = data[:2] + [str(path), data[3]]
    before = gtest.decoded_pixels()
    got = one_call(conv, src)
    assert gtest.decoded_pixels() - before == sum(h * w for h, w in [(7, 9), (1500, 300), (120, 1900), (7, 9)])
    pils = [Image.fromarray(a) for a in goprep.decode(data)]
    assert_hf_outputs(proc, got, proc(pils, return_tensors="pt"), (kind, "encoded"))
    assert torch.equal(got["pixel_values"], grouped(conv, src))
    mixed = [data[0], pils[1], data[2]]
    assert_hf_outputs(proc, conv(mixed), proc(pils[:3], return_tensors="pt"), (kind, "mixed"))


def test_one_image_and_errors_name_the_image():
    """One image is one call too; an image the engine refuses is named by its place in the batch."""
    conv = gt.from_hf(hf_processor("Qwen2VLImageProcessor"))
    x = _IMGS[(224, 224)]
    assert torch.equal(one_call(conv, x)["pixel_values"], grouped(conv, x))
    bad = [x, x.astype(np.float32) / 255]  # a list must share one dtype
    with pytest.raises(goprep.DTypeError) as ei:
        conv(bad)
    assert ei.value.argument == "src"
    with pytest.raises(goprep.PipelineError, match="aspect ratio"):
        conv([x, np.zeros((2, 500, 3), np.uint8)])


def test_profiled_as_one_call_of_the_pipeline():
    """With profiling on, the one engine call is recorded as one call of the converted pipeline."""
    conv = gt.from_hf(hf_processor("Qwen2VLImageProcessorPil"))
    imgs = [_IMGS[(7, 9)], _IMGS[(120, 1900)]]
    was = goprep.profiling()
    goprep.set_profiling(True)
    try:
        goprep.stats(reset=True)
        conv(imgs)
        st = goprep.stats(reset=True)
    finally:
        goprep.set_profiling(was)
    assert [v["calls"] for v in st.values()] == [1], st
    assert next(iter(st.values()))["engine_s"] > 0


@pytest.mark.skipif(not gtest.simulated_gpu_available(), reason="this build has no simulated GPU")
def test_gpu_placement_runs_the_one_call_on_the_cpu():
    """A converter placed on the GPU (simulated): patch plans are not in the GPU kernels, so the batch's
    one call runs on the CPU engine, equal to the CPU converter's result."""
    proc = hf_processor("Qwen2VLImageProcessor")
    imgs = [_IMGS[(7, 9)], _IMGS[(120, 1900)], _IMGS[(224, 224)]]
    want = gt.from_hf(proc, device="cpu")(imgs)["pixel_values"]
    gtest.simulate_gpu(True)
    try:
        got = one_call(gt.from_hf(proc, device="cuda"), imgs)["pixel_values"]
    finally:
        gtest.simulate_gpu(False)
    assert got.device.type == "cpu" and torch.equal(got, want)


@pytest.mark.skipif(not gtest.simulated_gpu_available(), reason="this build has no simulated GPU")
def test_device_arrays_take_the_grouped_path():
    """goprep device arrays (simulated GPU) cannot go through the one host call: one image, a same-size
    pair and a mixed-size pair run the per-size path and give the host images' pixel_values (the one
    call refused them, even one image, naming "different result sizes")."""
    conv = gt.from_hf(hf_processor("Qwen2VLImageProcessor"))
    a, b = _IMGS[(7, 9)], _IMGS[(120, 1900)]
    gtest.simulate_gpu(True)
    try:
        for host in ([a], [a, a], [b, a]):
            got = conv([goprep.to_device(x, "cuda") for x in host])["pixel_values"]
            want = conv(host)["pixel_values"]
            assert isinstance(got, torch.Tensor) and torch.equal(got, want)
        got = conv(goprep.to_device(a, "cuda"))["pixel_values"]
        assert torch.equal(got, conv(a)["pixel_values"])
    finally:
        gtest.simulate_gpu(False)


@pytest.mark.parametrize("kind", _KINDS)
def test_batch_tensor_and_nested_lists_one_call(kind):
    """An (N, C, H, W) tensor and a list of lists of mixed sizes (flattened as transformers flattens them):
    one engine call each, HF's outputs."""
    proc = hf_processor(kind)
    conv = gt.from_hf(proc)
    batch = torch.from_numpy(_RNG.integers(0, 256, (3, 3, 61, 90), dtype=np.uint8))
    assert_hf_outputs(proc, one_call(conv, batch), proc(batch, return_tensors="pt"), (kind, "NCHW"))
    nested = [[as_kind("pil", _IMGS[(7, 9)])], [as_kind("pil", _IMGS[(120, 1900)]), as_kind("pil", _IMGS[(224, 224)])]]
    assert_hf_outputs(proc, one_call(conv, nested), proc(nested, return_tensors="pt"), (kind, "nested"))
