"""goprep.decode and encoded sources through pipelines: what a caller passes (bytes, paths, arrays,
lists), exactness against Pillow and OpenCV on the real photographs, the fast mode's reference
(Pillow's draft), errors that name the bad item, the bomb limit, the GIL, and spawn workers.

The codecs' own byte-exactness over a generated corpus (every subsampling, progressive, restarts,
odd sizes, gray, CMYK, every PNG colour type) is tests/test_codec.py's."""

import io
import multiprocessing
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from PIL import Image

import goprep
from conftest import IMAGENET_MEAN, IMAGENET_STD, PHOTOS, cv2

pytestmark = pytest.mark.skipif(
    not {"jpeg", "png"} <= set(goprep.info()["codecs"]), reason="goprep was built without its codecs"
)


def encode(a, fmt="JPEG", **kw):
    buf = io.BytesIO()
    im = Image.fromarray(a[..., 0] if a.ndim == 3 and a.shape[2] == 1 else a)
    im.save(buf, fmt, **({"quality": 90} if fmt == "JPEG" else {}), **kw)
    return buf.getvalue()


def pil_rgb(data, mode="RGB"):
    return np.asarray(Image.open(io.BytesIO(data)).convert(mode))


JPEGS = {name: encode(PHOTOS[name]) for name in ("astronaut", "chelsea", "coffee", "camera")}
PNGS = {name: encode(PHOTOS[name], "PNG") for name in ("chelsea", "chelsea_rgba", "camera")}


def hd_photo():
    """A 1920x1080 photograph (coffee upscaled), re-encoded at quality 90."""
    big = np.asarray(Image.fromarray(PHOTOS["coffee"]).resize((1920, 1080), Image.BICUBIC))
    return encode(big)


@goprep.pipeline
def imagenet(x):
    x = goprep.decode(x)
    x = goprep.resize(x, 256, antialias=True)
    x = goprep.center_crop(x, 224)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


@goprep.pipeline
def imagenet_fast(x):
    x = goprep.decode(x, reduce="auto")
    x = goprep.resize(x, 256, antialias=True)
    x = goprep.center_crop(x, 224)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


@goprep.pipeline
def imagenet_arrays(x):  # the same ops on an array: the reference for the fused calls
    x = goprep.resize(x, 256, antialias=True)
    x = goprep.center_crop(x, 224)
    return goprep.normalize(x, mean=IMAGENET_MEAN, std=IMAGENET_STD)


def test_info_lists_the_codecs():
    codecs = goprep.info()["codecs"]
    assert "libjpeg" in codecs["jpeg"] or "turbo" in codecs["jpeg"], codecs
    assert "png" in codecs["png"], codecs


@pytest.mark.parametrize("name", list(JPEGS))
def test_jpeg_exact_to_pillow_and_opencv(name):
    data = JPEGS[name]
    want = pil_rgb(data)
    got = goprep.decode(data)
    assert got.dtype == np.uint8 and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if cv2 is not None:
        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        np.testing.assert_array_equal(goprep.decode(data, mode="BGR"), bgr)
    np.testing.assert_array_equal(goprep.decode(data, mode="L"), pil_rgb(data, "L")[..., None])


@pytest.mark.parametrize("name", list(PNGS))
def test_png_exact_to_pillow(name):
    data = PNGS[name]
    np.testing.assert_array_equal(goprep.decode(data), pil_rgb(data))
    np.testing.assert_array_equal(goprep.decode(data, mode="RGBA"), pil_rgb(data, "RGBA"))
    np.testing.assert_array_equal(goprep.decode(data, mode="L"), pil_rgb(data, "L")[..., None])


def test_every_source_kind_gives_the_same_image(tmp_path):
    data = JPEGS["chelsea"]
    path = tmp_path / "chelsea.jpg"
    path.write_bytes(data)
    want = pil_rgb(data)
    kinds = [data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8), str(path), path]
    for k in kinds:
        np.testing.assert_array_equal(goprep.decode(k), want, err_msg=type(k).__name__)
    # a strided 1-D array is read through a contiguous copy
    strided = np.repeat(np.frombuffer(data, np.uint8), 2)[::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(goprep.decode(strided), want)
    got = goprep.decode(kinds)
    assert isinstance(got, list) and len(got) == len(kinds)
    for g in got:
        np.testing.assert_array_equal(g, want)


def test_eager_list_of_different_sizes():
    got = goprep.decode([JPEGS["astronaut"], PNGS["chelsea"], JPEGS["coffee"]])
    assert [g.shape for g in got] == [(512, 512, 3), (300, 451, 3), (400, 600, 3)]
    np.testing.assert_array_equal(got[1], PHOTOS["chelsea"])


def test_pipeline_equals_decode_then_the_same_ops():
    for name, data in list(JPEGS.items()) + list(PNGS.items()):
        want = imagenet_arrays(pil_rgb(data))
        np.testing.assert_array_equal(imagenet(data), want, err_msg=name)


def test_a_pipeline_without_decode_decodes_with_the_defaults():
    data = JPEGS["coffee"]
    np.testing.assert_array_equal(imagenet_arrays(data), imagenet(data))
    np.testing.assert_array_equal(goprep.resize(data, (50, 60)), goprep.resize(pil_rgb(data), (50, 60)))


def test_list_is_one_batch_and_out_is_filled():
    files = [JPEGS["astronaut"], JPEGS["coffee"], PNGS["chelsea_rgba"], JPEGS["camera"]]
    want = np.stack([imagenet_arrays(pil_rgb(f)) for f in files])
    got = imagenet(files)
    assert got.shape == (4, 3, 224, 224)
    np.testing.assert_array_equal(got, want)
    out = np.full_like(want, np.nan)
    assert imagenet(files, out=out) is out
    np.testing.assert_array_equal(out, want)


def test_modes_in_a_pipeline():
    @goprep.pipeline
    def bgr(x):
        return goprep.resize(goprep.decode(x, mode="BGR"), (64, 64))

    @goprep.pipeline
    def gray(x):
        return goprep.resize(goprep.decode(x, mode="L"), (64, 64))

    data = JPEGS["astronaut"]
    np.testing.assert_array_equal(bgr(data), goprep.resize(pil_rgb(data)[..., ::-1].copy(), (64, 64)))
    np.testing.assert_array_equal(gray(data), goprep.resize(pil_rgb(data, "L")[..., None], (64, 64)))


@pytest.mark.parametrize("reduce", [2, 4, 8])
def test_reduce_equals_pillow_draft(reduce):
    data = hd_photo()
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", (-(-1920 // reduce), -(-1080 // reduce)))
    want = np.asarray(im.convert("RGB"))
    got = goprep.decode(data, reduce=reduce)
    assert got.shape == want.shape == (-(-1080 // reduce), -(-1920 // reduce), 3)
    np.testing.assert_array_equal(got, want)


def test_reduce_auto_equals_pillow_draft_then_the_same_ops():
    data = hd_photo()
    im = Image.open(io.BytesIO(data))
    # torchvision's Resize(256) on 1920x1080 targets 455x256; Pillow's reducing_gap=2 asks for twice that
    im.draft("RGB", (2 * 455, 2 * 256))
    drafted = np.asarray(im.convert("RGB"))
    assert drafted.shape == (540, 960, 3)  # scale 1/2: the largest that keeps >= 2x the target
    np.testing.assert_array_equal(imagenet_fast(data), imagenet_arrays(drafted))
    exact = imagenet(data)
    diff = np.abs(imagenet_fast(data) - exact) * np.array(IMAGENET_STD, np.float32)[:, None, None] * 255
    assert diff.max() < 12, diff.max()  # docs/API.md states the measured error against exact mode


def test_reduce_auto_keeps_full_size_after_a_crop():
    @goprep.pipeline
    def crop_first(x):
        x = goprep.decode(x, reduce="auto")
        x = goprep.crop(x, 100, 200, 800, 800)
        return goprep.resize(x, (100, 100), antialias=True)

    data = hd_photo()
    np.testing.assert_array_equal(crop_first(data), goprep.resize(pil_rgb(data)[100:900, 200:1000].copy(), (100, 100), antialias=True))


def test_png_ignores_reduce():
    data = PNGS["chelsea"]
    np.testing.assert_array_equal(goprep.decode(data, reduce=4), PHOTOS["chelsea"])
    np.testing.assert_array_equal(imagenet_fast(data), imagenet(data))


def test_orientation():
    a = PHOTOS["chelsea"]
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, "JPEG", quality=90, exif=exif)
        data = buf.getvalue()
        from PIL import ImageOps

        want = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))
        np.testing.assert_array_equal(goprep.decode(data, apply_orientation=True), want, err_msg=str(orientation))
        np.testing.assert_array_equal(goprep.decode(data), pil_rgb(data))  # off by default, like Pillow


# -- bad input -----------------------------------------------------------------------------------

BAD = {
    "empty": b"",
    "garbage": b"this is not an image at all" * 10,
    "truncated_jpeg": JPEGS["astronaut"][: len(JPEGS["astronaut"]) // 2],
    "jpeg_header_only": JPEGS["astronaut"][:300],
    "truncated_png": PNGS["chelsea"][: len(PNGS["chelsea"]) // 2],
    "gif": b"GIF89a\x01\x00\x01\x00\x00\x00\x00;",
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_data_is_a_decode_error(name):
    with pytest.raises(goprep.DecodeError) as e:
        goprep.decode(BAD[name])
    assert e.value.code == "decode" and e.value.argument == "data"
    assert isinstance(e.value, ValueError) and isinstance(e.value, goprep.GoprepError)
    with pytest.raises(goprep.DecodeError) as e:
        imagenet(BAD[name])
    assert e.value.argument == "src"


def test_a_bad_item_is_named_and_the_rest_is_unharmed():
    good = [JPEGS["astronaut"], JPEGS["coffee"], JPEGS["chelsea"]]
    want = imagenet(good)
    for i in range(3):
        files = list(good)
        files.insert(i, BAD["truncated_jpeg"])
        with pytest.raises(goprep.DecodeError) as e:
            imagenet(files)
        assert e.value.argument == f"src[{i}]", e.value
        with pytest.raises(goprep.DecodeError) as e:
            goprep.decode(files)
        assert e.value.argument == f"data[{i}]"
    np.testing.assert_array_equal(imagenet(good), want)
    assert goprep._native.get().NumDecodeBatches() == 0


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(goprep.DecodeError, match="no such file"):
        goprep.decode(str(tmp_path / "nope.jpg"))
    with pytest.raises(goprep.DecodeError, match="directory"):
        goprep.decode(tmp_path)


def test_bad_arguments_are_named():
    data = JPEGS["camera"]
    for kw, arg in [({"mode": "rgb"}, "mode"), ({"mode": 3}, "mode"), ({"reduce": 3}, "reduce"),
                    ({"reduce": True}, "reduce"), ({"reduce": "fast"}, "reduce"), ({"apply_orientation": 1}, "apply_orientation")]:
        with pytest.raises(goprep.InvalidArgumentError) as e:
            goprep.decode(data, **kw)
        assert e.value.argument == arg
    for bad in [3.5, object(), [data, 7]]:
        with pytest.raises(goprep.InvalidArgumentError) as e:
            goprep.decode(bad)
        assert e.value.argument in ("data", "data[1]")
    with pytest.raises(goprep.InvalidArgumentError):
        goprep.decode("with\x00nul.jpg")


def test_decode_misplaced_in_a_pipeline():
    @goprep.pipeline
    def late(x):
        return goprep.decode(goprep.flip(x))

    @goprep.pipeline
    def twice(x):
        x = goprep.decode(x)
        return goprep.decode(x)

    with pytest.raises(goprep.PipelineError, match="first op"):
        late(JPEGS["camera"])
    with pytest.raises(goprep.PipelineError):
        twice(JPEGS["camera"])
    with pytest.raises(goprep.PipelineError, match="image array"):
        imagenet(PHOTOS["coffee"])


def test_device_output_uploads_the_cpu_result(sim_gpu):
    p = goprep.pipeline(imagenet_arrays._fn, device="auto", output="device")
    files = [JPEGS["coffee"], JPEGS["astronaut"]]
    got = p(files)
    assert isinstance(got, goprep.DeviceArray) and got.shape == (2, 3, 224, 224)
    np.testing.assert_array_equal(got.get(), imagenet(files))
    with pytest.raises(goprep.InvalidArgumentError) as e:
        p(files, out=np.empty((2, 3, 224, 224), np.float32))
    assert e.value.argument == "out"
    with pytest.raises(goprep.InvalidArgumentError) as e:
        imagenet(files, stream=0)
    assert e.value.argument == "stream"


def bomb_jpeg(h=60000, w=60000):
    """A tiny valid JPEG whose SOF0 header claims h x w."""
    data = bytearray(encode(np.zeros((8, 8, 3), np.uint8)))
    i = data.index(b"\xff\xc0")
    data[i + 5 : i + 9] = h.to_bytes(2, "big") + w.to_bytes(2, "big")
    return bytes(data)


def test_bomb_is_refused_from_its_header_with_little_memory():
    code = textwrap.dedent(
        """
        import resource, sys
        sys.path.insert(0, "tests")
        import goprep, numpy as np
        from test_decode import bomb_jpeg
        data = bomb_jpeg()
        goprep.decode(bomb_jpeg(16, 16))  # the extension loaded and warm before measuring
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(20):
            try:
                goprep.decode(data)
            except goprep.DecodeError as e:
                assert e.code == "too_large", e
                assert "60000x60000" in str(e), e
            else:
                raise SystemExit("not refused")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) < 10 << 20


def test_set_max_image_pixels():
    data = JPEGS["astronaut"]  # 512 x 512
    old = goprep.set_max_image_pixels(512 * 512 - 1)
    try:
        with pytest.raises(goprep.DecodeError) as e:
            goprep.decode(data)
        assert e.value.code == "too_large" and "512x512" in str(e.value)
        goprep.set_max_image_pixels(512 * 512)
        goprep.decode(data)
        goprep.set_max_image_pixels(None)
        assert goprep.get_max_image_pixels() is None
        goprep.decode(data)
        with pytest.raises(goprep.InvalidArgumentError):
            goprep.set_max_image_pixels(0)
    finally:
        goprep.set_max_image_pixels(old)
    assert goprep.get_max_image_pixels() == old == 178956970


# -- concurrency -----------------------------------------------------------------------------------

def test_gil_is_released_while_decoding():
    files = [hd_photo()] * 8
    imagenet(files[:1])  # traced and warm
    ticks = []
    done = threading.Event()

    def spin():
        while not done.is_set():
            ticks.append(time.perf_counter())

    calls = []
    t = threading.Thread(target=spin)
    t.start()
    try:
        for _ in range(3):
            t0 = time.perf_counter()
            imagenet(files)
            calls.append((t0, time.perf_counter()))
    finally:
        done.set()
        t.join()
    # The spinning thread ran during the decode calls: with the GIL held it could not take a tick.
    during = [sum(1 for x in ticks if a < x < b) for a, b in calls]
    assert max(during) > 100, during


def _spawn_worker(data):
    import goprep as g

    return g.decode(data).sum(dtype=np.int64)


def test_spawn_workers_decode():
    data = JPEGS["coffee"]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        sums = pool.map(_spawn_worker, [data] * 4)
    assert sums == [int(pil_rgb(data).sum(dtype=np.int64))] * 4


def test_profiled_decode_calls_are_recorded_in_stats():
    """A profiled call of a pipeline on JPEG bytes is one call of that pipeline in goprep.stats(), and
    nothing else is: run on the CPU without error, its time split as stats() documents."""
    goprep.stats(reset=True)  # calls profiled by earlier tests are not this window's
    goprep.set_profiling(True)
    try:
        imagenet(JPEGS["camera"])
        s = goprep.stats(reset=True)
    finally:
        goprep.set_profiling(False)
    assert list(s) == ["imagenet"], s  # the pipeline's qualified name; its decode is no call of its own
    e = s["imagenet"]
    assert (e["calls"], e["errors"], e["devices"]) == (1, 0, {"cpu": 1}), e
    assert e["engine_s"] > 0 and e["gpu_s"] == e["gpu_copy_s"] == e["gpu_kernel_s"] == 0, e
    assert e["total_s"] == pytest.approx(e["engine_s"] + e["gil_wait_s"] + e["python_s"], rel=1e-9), e
    assert e["p50_us"] == e["p99_us"] == e["p999_us"] == pytest.approx(e["total_s"] * 1e6, rel=1e-9), e


def test_hf_convert_rgb_on_encoded_images():
    """A converted Hugging Face processor with do_convert_rgb on encoded bytes computes what the
    processor computes on the PIL image opened from them: transparency composited onto white (PNG
    RGBA, LA, palette with tRNS), JPEGs decoded by goprep."""
    transformers = pytest.importorskip("transformers")
    import goprep.transforms as gt

    proc = transformers.CLIPImageProcessorPil()
    conv = gt.from_hf(proc)
    rgba = PHOTOS["chelsea_rgba"]
    la = np.dstack([PHOTOS["chelsea"][..., 0], rgba[..., 3]])
    cases = {
        "png-rgba": encode(rgba, "PNG"),
        "png-la": (lambda b: (Image.fromarray(la, "LA").save(b, "PNG"), b.getvalue())[1])(io.BytesIO()),
        "png-rgb": PNGS["chelsea"],
        "jpeg": JPEGS["coffee"],
        "jpeg-gray": JPEGS["camera"],
    }
    for name, data in cases.items():
        want = proc(Image.open(io.BytesIO(data)), return_tensors="pt")["pixel_values"][0]
        got = conv(data)
        assert float((got - want).abs().max()) <= 1e-5, name
