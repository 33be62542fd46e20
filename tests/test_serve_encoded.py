"""``python -m goprep serve`` on encoded images (JPEG and PNG requests): each preprocessing
implementation decodes its own way (preprocess.py), and every one gives the reference tensors, names a
bad or oversized image by its index, and refuses corrupt files and bomb headers with the documented
codes. The server itself: tests/test_serve_oip.py, whose helpers these tests use."""

import io
import struct

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")  # the test extra installs the serve extra: never skipped in CI
tc = pytest.importorskip("tritonclient.grpc")
PIL = pytest.importorskip("PIL.Image")

import goprep  # noqa: E402
from goprep._serve import protocol  # noqa: E402
from goprep._serve.bench import server_process  # noqa: E402
from goprep._serve.decode import pil_decode  # noqa: E402
from goprep._serve.loadgen import frames  # noqa: E402
from goprep._serve.preprocess import reference  # noqa: E402
from test_serve_oip import _client, _encode, _error, _image_input, _png, _scrape  # noqa: E402


# -- encoded images: each implementation decodes its own way (preprocess.py) -------------------------

IMPLS = ["python", "opencv", "goprep", "ResNet50_Weights.IMAGENET1K_V2"]


def _engine(impl, max_pixels=4096 * 4096):
    from goprep._serve.oip import Engine, Limits
    from goprep._serve.preprocess import make

    if "_Weights." in impl:
        pytest.importorskip("torchvision")
    eng = Engine("goprep", make(impl), None, 0, Limits(max_pixels=max_pixels))
    eng.warm()
    return eng


def _jpeg_bomb(w=60000, h=60000):
    """A small real JPEG whose frame header (SOF0) claims w x h."""
    j = _encode(frames(1, 64, 80)[0], "JPEG")
    k = j.index(b"\xff\xc0")
    return j[: k + 5] + struct.pack(">HH", h, w) + j[k + 9:]


def _infer_files(eng, files):
    return protocol.outputs(eng.infer(protocol.infer_request("goprep", "jpeg", files)))[protocol.TENSOR]


@pytest.mark.parametrize("impl", IMPLS)
def test_encoded_request_equals_pillow_decode_then_reference(impl):
    # A request of JPEGs and a PNG, of different sizes: the tensors are what Pillow's decode followed by
    # the reference preprocessing gives (python within its rounding tolerance; OpenCV's libjpeg-turbo and
    # goprep's decoder are exact, so within float rounding).
    eng = _engine(impl)
    ims = frames(2, 480, 640) + frames(1, 333, 517, seed=5)
    files = [_encode(ims[0], "JPEG"), _encode(ims[1], "PNG"), _encode(ims[2], "JPEG")]
    t = _infer_files(eng, files)
    if "_Weights." in impl:
        tv = pytest.importorskip("torchvision")
        tf = tv.models.get_weight(impl).transforms()
        want = [tf(PIL.open(io.BytesIO(f)).convert("RGB")).numpy() for f in files]
        tol = 1e-5
    else:
        want = [reference(pil_decode(f)) for f in files]
        tol = protocol.TOLERANCE if impl == "python" else 1e-5
    assert t.shape == (3, *want[0].shape) and t.dtype == np.float32
    for k in range(3):
        err = float(np.max(np.abs(t[k] - want[k])))
        assert err <= tol, (impl, k, err)


@pytest.mark.parametrize("impl", IMPLS)
def test_bad_and_oversized_images_name_their_index(impl):
    from goprep._serve.errors import BadRequest, TooLarge

    eng = _engine(impl)
    good = _encode(frames(1, 120, 160)[0], "JPEG")
    before = goprep.get_max_image_pixels()
    for files, k in (([good, b"not an image", good], 1), ([good, good, good[:300]], 2), ([b"", good], 0)):
        with pytest.raises(BadRequest) as e:
            _infer_files(eng, files)
        assert f"image[{k}]" in str(e.value) and "image[" not in str(e.value).replace(f"image[{k}]", ""), str(e.value)
    for bomb in (_jpeg_bomb(), _png(60000, 60000, 4)):  # headers claiming 3.6 gigapixels: refused unread
        with pytest.raises(TooLarge) as e:
            _infer_files(eng, [good, bomb])
        # (Pillow's own bomb guard refuses 3.6 gigapixels at open, before the size is known)
        assert "image[1]" in str(e.value) and "limit of 16777216" in str(e.value), str(e.value)
        assert e.value.reason == "pixels"
    # the server's own limit, per request: a 160x120 image over a 10000-pixel limit; the process-wide
    # goprep.set_max_image_pixels is left as it was
    small = _engine(impl, max_pixels=10000)
    with pytest.raises(TooLarge) as e:
        _infer_files(small, [good])
    assert "image[0]" in str(e.value) and "160x120" in str(e.value) and "limit of 10000" in str(e.value)
    assert goprep.get_max_image_pixels() == before
    assert _infer_files(eng, [good]).shape[0] == 1  # the engine still serves


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["python", "opencv", "goprep"])
def test_corrupt_and_bomb_images_status_codes(impl):
    # Over gRPC, every variant: a corrupt image in a batch is INVALID_ARGUMENT naming its index; a bomb
    # header INVALID_ARGUMENT saying the limit, counted as a pixels rejection.
    img = frames(1, 120, 160)[0]
    good = _encode(img, "JPEG")
    with server_process(impl, ("--workers", "2", "--metrics-port", "0")) as srv:
        c = _client(srv)
        code, msg = _error(lambda: c.infer("goprep", [_image_input([good, good, b"\xff\xd8junk"])]))
        assert code == "StatusCode.INVALID_ARGUMENT" and "image[2]" in msg, (code, msg)
        code, msg = _error(lambda: c.infer("goprep", [_image_input([good, _jpeg_bomb()])]))
        assert code == "StatusCode.INVALID_ARGUMENT" and "image[1]" in msg and "limit" in msg, (code, msg)
        t = c.infer("goprep", [_image_input([good, _encode(img, "PNG")])]).as_numpy("TENSOR")
        assert t.shape == (2, 3, 224, 224)
        np.testing.assert_allclose(t[1], reference(img), rtol=0, atol=protocol.TOLERANCE)  # PNG: lossless
        m = _scrape(srv)
        assert m[("goprep_serve_rejected_total", (("reason", "pixels"),))] == 1
        assert m[("goprep_serve_requests_total", (("code", "INVALID_ARGUMENT"),))] == 2
        c.close()
