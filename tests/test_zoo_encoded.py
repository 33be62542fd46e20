"""from_hf's layout pipelines (goprep.transforms._hf_images) on encoded inputs and nested lists: JPEG/PNG bytes,
file paths, lists mixing them with decoded images, and lists of lists (one per sample, flattened as
transformers flattens them, or nested as the classes that nest samples keep them). Each output is checked
against the processor itself on the PIL images of the decoded pixels (goprep.decode, equal to Pillow's),
or on the same path strings (the processor loads them itself), within tests/zoo_compare.py's bounds; a
corrupt item raises naming it."""

import io

import numpy as np
import pytest

import goprep
import goprep.transforms as gt
from zoo_compare import assert_hf_outputs, hf_processor

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")
if not goprep.info()["codecs"]:
    pytest.skip("this build has no JPEG/PNG decoders", allow_module_level=True)

_RNG = np.random.default_rng(40)
_SHAPES = [(48, 64), (70, 30), (33, 33), (9, 7)]  # wide, tall, square, tiny
_ARRS = {s: _RNG.integers(0, 256, s + (3,), dtype=np.uint8) for s in _SHAPES}


def _encode(a, fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, fmt, **kw)
    return buf.getvalue()


# JPEG and PNG, mixed sizes
_ENC = [_encode(_ARRS[(48, 64)], "JPEG", quality=90), _encode(_ARRS[(70, 30)], "PNG"),
        _encode(_ARRS[(33, 33)], "JPEG", quality=75), _encode(_ARRS[(9, 7)], "PNG")]

# Each layout family on small sizes (both backends where their code differs), one at its class defaults
CASES = [
    ("DetrImageProcessor", {"size": {"shortest_edge": 64, "longest_edge": 96}}),
    ("DetrImageProcessorPil", {"size": {"shortest_edge": 64, "longest_edge": 96}}),
    ("SamImageProcessor", {"size": {"longest_edge": 96}, "pad_size": {"height": 96, "width": 96}}),
    ("Qwen2VLImageProcessor", {}),
    ("Qwen2VLImageProcessorPil", {}),
    ("PixtralImageProcessor", {"size": {"longest_edge": 64}}),
    ("PixtralImageProcessorPil", {"size": {"longest_edge": 64}}),
    ("Siglip2ImageProcessor", {"max_num_patches": 64}),
    ("MllamaImageProcessor", {"size": {"height": 56, "width": 56}}),
    ("LlavaNextImageProcessor", {"image_grid_pinpoints": [[112, 224], [224, 112]], "size": {"shortest_edge": 112},
                                 "crop_size": {"height": 112, "width": 112}}),
    ("LlavaOnevisionImageProcessor", {"image_grid_pinpoints": [[112, 224], [224, 112]],
                                      "size": {"height": 112, "width": 112}}),
    ("Idefics3ImageProcessor", {"resample": 3, "size": {"longest_edge": 128}, "max_image_size": {"longest_edge": 64}}),
    ("SmolVLMImageProcessorPil", {"size": {"longest_edge": 128}, "max_image_size": {"longest_edge": 64}}),  # LANCZOS
    ("Idefics2ImageProcessor", {"size": {"shortest_edge": 32, "longest_edge": 64}, "do_image_splitting": True}),
    ("MaskFormerImageProcessor", {"size": {"shortest_edge": 64, "longest_edge": 96}}),
    ("NougatImageProcessor", {"size": {"height": 64, "width": 48}}),
]


_PNG = b"\x89PNG"


def _decoded(x):
    """What the processor is given: each encoded item as the PIL image of its decoded pixels."""
    if isinstance(x, list):
        return [_decoded(y) for y in x]
    if isinstance(x, bytes):
        return Image.fromarray(goprep.decode(x))
    return x


def _check(proc, src, what, *extra, want_src=None):
    got = gt.from_hf(proc)(src, *extra)
    want = proc(_decoded(src) if want_src is None else want_src, *extra, return_tensors="pt")
    if not isinstance(got, dict):  # a one-tensor pipeline (Nougat's)
        got = {"pixel_values": got}
        want = {"pixel_values": want["pixel_values"]}
        if got["pixel_values"].ndim == 3:
            got["pixel_values"] = got["pixel_values"][None]
    assert_hf_outputs(proc, got, want, what)


@pytest.mark.parametrize("kind,kwargs", CASES, ids=[c[0] for c in CASES])
def test_bytes_mixed_sizes_and_nested(kind, kwargs):
    """One JPEG alone, one PNG alone, a batch of JPEGs and PNGs of mixed sizes, and a list of lists."""
    proc = hf_processor(kind, **kwargs)
    _check(proc, _ENC[0], (kind, "one JPEG"))
    _check(proc, _ENC[1], (kind, "one PNG"))
    _check(proc, list(_ENC), (kind, "mixed sizes"))
    _check(proc, [[_ENC[0], _ENC[3]], [_ENC[2]], [_ENC[1]]], (kind, "nested"))


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "Qwen2VLImageProcessor", "PixtralImageProcessorPil",
                                  "SamImageProcessorPil", "Siglip2ImageProcessorPil", "LlavaNextImageProcessorPil"])
def test_nested_decoded_lists_flatten(kind):
    """A list of lists of decoded images (PIL, arrays): transformers flattens it (make_flat_list_of_images);
    goprep's outputs equal the processor's on it, and on the flat list."""
    proc = hf_processor(kind)
    a, b, c = (_ARRS[s] for s in _SHAPES[:3])
    nested = [[Image.fromarray(a), b], [Image.fromarray(c)]]
    got = gt.from_hf(proc)(nested)
    assert_hf_outputs(proc, got, proc(nested, return_tensors="pt"), (kind, "nested"))
    flat = gt.from_hf(proc)([Image.fromarray(a), b, Image.fromarray(c)])
    assert all(torch.equal(got[k], flat[k]) for k in got)
    with pytest.raises(goprep.PipelineError, match="lists of lists"):
        gt.from_hf(proc)([[[a]]])


@pytest.mark.parametrize("kind,kwargs", [("ViTImageProcessor", {}), ("ViTImageProcessorPil", {}),
                                         ("DPTImageProcessor", {"size": {"height": 64, "width": 64}}),
                                         ("DonutImageProcessor", {"size": {"height": 64, "width": 48}})],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_generic_processors_nested(kind, kwargs):
    """The one-tensor pipelines (every other from_hf class) flatten a list of lists too, bytes or images."""
    proc = hf_processor(kind, **kwargs)
    _check(proc, [[_ENC[0], _ENC[3]], [_ENC[2]]], (kind, "nested bytes"))
    _check(proc, [[Image.fromarray(_ARRS[(48, 64)])], [_ARRS[(70, 30)], Image.fromarray(_ARRS[(33, 33)])]],
           (kind, "nested images"))


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "Qwen2VLImageProcessorPil", "PixtralImageProcessor",
                                  "MllamaImageProcessorPil", "LlavaOnevisionImageProcessor"])
def test_paths_and_mixed_kinds(kind, tmp_path):
    """File paths (str, as the processor takes them and loads them itself, and pathlib paths), and one list
    mixing paths, bytes, arrays and PIL images in any order (the encoded ones run as one call, the others
    as another, results in the list's order)."""
    kw = dict(CASES).get(kind.removesuffix("Pil"), {})
    proc = hf_processor(kind, **kw)
    paths = []
    for k, data in enumerate(_ENC):
        p = tmp_path / f"img{k}.{'png' if data.startswith(_PNG) else 'jpg'}"
        p.write_bytes(data)
        paths.append(p)
    strs = [str(p) for p in paths]
    _check(proc, strs, (kind, "str paths"), want_src=strs)  # transformers loads the paths itself
    _check(proc, strs[1], (kind, "one path"), want_src=strs[1])
    got = gt.from_hf(proc)(paths)
    want = gt.from_hf(proc)(list(_ENC))
    assert all(torch.equal(got[k], want[k]) if isinstance(got[k], torch.Tensor) else got[k] == want[k] for k in got)
    mixed = [_ENC[0], _ARRS[(70, 30)], strs[2], Image.fromarray(_ARRS[(9, 7)]), _ENC[1]]
    _check(proc, mixed, (kind, "mixed kinds"), want_src=[_decoded(_ENC[0]), _ARRS[(70, 30)], strs[2],
                                                         Image.fromarray(_ARRS[(9, 7)]), _decoded(_ENC[1])])


@pytest.mark.parametrize("kind", ["Qwen2VLImageProcessor", "Qwen2VLImageProcessorPil", "SamImageProcessor",
                                  "PixtralImageProcessorPil", "LlavaNextImageProcessor"])
def test_rgba_and_gray_png_converted(kind):
    """do_convert_rgb: an RGBA PNG composited onto white and a gray one repeated, as the processor converts
    the image Pillow opens from the same bytes (goprep's other converted pipelines do the same)."""
    kw = dict(CASES).get(kind.removesuffix("Pil"), {})
    proc = hf_processor(kind, **kw)
    rgba = _RNG.integers(0, 256, (40, 52, 4), dtype=np.uint8)
    gray = _RNG.integers(0, 256, (30, 20), dtype=np.uint8)
    src = [_encode(rgba, "PNG"), _ENC[0], _encode(gray, "PNG")]
    _check(proc, src, (kind, "RGBA, RGB and gray"), want_src=[Image.open(io.BytesIO(x)) for x in src])


def test_vitmatte_and_oneformer_bytes():
    """The classes with a second argument: ViTMatte's trimaps, OneFormer's task_inputs."""
    maps = [_RNG.choice(np.array([0, 128, 255], np.uint8), (48, 64)) for _ in range(2)]
    for kind in ("VitMatteImageProcessor", "VitMatteImageProcessorPil"):
        proc = hf_processor(kind)
        _check(proc, [_ENC[0], _ENC[0]], kind, maps)
        _check(proc, _ENC[0], (kind, "one"), maps[0])
        _check(proc, [[_ENC[0]], [_ENC[0]]], (kind, "nested"), [[maps[0]], [maps[1]]])  # both flattened
    for kind in ("OneFormerImageProcessor", "OneFormerImageProcessorPil"):
        proc = hf_processor(kind, size={"shortest_edge": 64, "longest_edge": 96})
        _check(proc, list(_ENC), kind, ["semantic"])


@pytest.mark.parametrize("kind", ["DetrImageProcessor", "Qwen2VLImageProcessor", "PixtralImageProcessor",
                                  "LlavaNextImageProcessor", "MllamaImageProcessor", "NougatImageProcessor"])
def test_corrupt_item_raises_naming_it(kind):
    """A corrupt item raises goprep.DecodeError naming it by its place in the caller's list (``src[i]``, also
    where the batch runs as several calls: Qwen2-VL's groups of one size, encoded and decoded images), or
    ``src`` when it is the only image; nothing is returned."""
    kw = dict(CASES).get(kind, {})
    conv = gt.from_hf(hf_processor(kind, **kw))
    truncated = _ENC[0][:len(_ENC[0]) // 2]  # a valid header: fails in the engine call that decodes it
    garbage = b"not an image at all"  # fails when the batch is opened
    for bad in (truncated, garbage):
        src = [_ENC[0], _ENC[1], _ARRS[(33, 33)], bad]
        with pytest.raises(goprep.DecodeError) as ei:
            conv(src)
        assert ei.value.argument == "src[3]" and "src[3]" in str(ei.value) and "src[0]" not in str(ei.value), \
            (kind, ei.value)
        with pytest.raises(goprep.DecodeError) as ei:
            conv(bad)
        assert ei.value.argument == "src", (kind, ei.value)
    with pytest.raises(goprep.DecodeError) as ei:
        conv([_ENC[0], "/nonexistent/goprep-zoo.jpg"])
    assert ei.value.argument == "src[1]" and "nonexistent" in str(ei.value)


def test_exif_rotated_path_refused(tmp_path):
    """A path whose EXIF orientation is not 1: the processor loads it rotated (load_image's exif_transpose),
    goprep decodes the stored pixels: refused naming it. Its bytes run as Image.open reads them."""
    exif = Image.Exif()
    exif[0x0112] = 6
    data = _encode(_ARRS[(48, 64)], "JPEG", exif=exif)
    p = tmp_path / "rotated.jpg"
    p.write_bytes(data)
    # the layout pipelines, and a plain one-tensor pipeline (ViT's), which decodes inside its one call
    for kind in ("DetrImageProcessor", "Qwen2VLImageProcessor", "LlavaNextImageProcessor", "ViTImageProcessor"):
        proc = hf_processor(kind, **dict(CASES).get(kind, {}))
        with pytest.raises(goprep.PipelineError, match="orientation 6") as ei:
            gt.from_hf(proc)([_ENC[1], str(p)])
        assert ei.value.argument == "src[1]"
        with pytest.raises(goprep.PipelineError, match="orientation 6") as ei:
            gt.from_hf(proc)(p)
        assert ei.value.argument == "src"
        _check(proc, [_ENC[1], data], (kind, "rotated bytes"))
