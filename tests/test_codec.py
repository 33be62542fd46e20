"""gomod/codec (the decoders behind goprep.decode), through the binding's test entries ProbeHeader and
DecodeInto: byte-exact against Pillow (and OpenCV where it agrees), errors and refusals as Pillow's,
windows exact against the full decode, EXIF orientation as ImageOps.exif_transpose.

The public op (goprep.decode) and its tests live elsewhere; these tests pin the decoder itself."""

import io
import json
import struct
import zlib

import numpy as np
import pytest
from PIL import Image, ImageOps

import goprep
from goprep import _errors, _native

try:
    import cv2
except ImportError:  # no OpenCV wheel for this interpreter
    cv2 = None

pytestmark = pytest.mark.skipif(
    not goprep.info()["codecs"],
    reason="this goprep was built without libjpeg/libpng (-tags nocodecs): goprep.info()['codecs'] is empty",
)

MODES = {"RGB": 0, "L": 1, "RGBA": 2}


def probe(b):
    buf = np.frombuffer(b, np.uint8) if len(b) else np.zeros(1, np.uint8)
    try:
        return json.loads(_native.get().ProbeHeader(buf.ctypes.data, len(b)))
    except RuntimeError as e:
        raise _errors.from_native(e) from None


def decode(b, mode="RGB", scale=1, orient=False, max_pixels=0, window=None):
    """The decoder's output as an (H, W, C) array, C = 3 / 1 / 4."""
    h = probe(b)
    s = scale if h["Format"] == "jpeg" else 1
    H, W = -(-h["Height"] // s), -(-h["Width"] // s)
    if orient and h["Orientation"] >= 5:
        H, W = W, H
    ch = {"RGB": 3, "L": 1, "RGBA": 4}[mode]
    out = np.zeros((H, W, ch), np.uint8)
    buf = np.frombuffer(b, np.uint8)
    y0, y1, x0, x1 = window or (0, 0, 0, 0)
    try:
        _native.get().DecodeInto(buf.ctypes.data, len(b), MODES[mode], scale, int(orient), max_pixels,
                                 y0, y1, x0, x1, out.ctypes.data, out.nbytes, W * ch)
    except RuntimeError as e:
        raise _errors.from_native(e) from None
    return out


def pil(b, mode="RGB"):
    a = np.asarray(Image.open(io.BytesIO(b)).convert(mode))
    return a[..., None] if a.ndim == 2 else a


def photo(h, w, seed=0):
    """A smooth image with texture and edges: photo-like for the DCT, not all flat blocks."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    a = np.stack([128 + 100 * np.sin(x / 17 + y / 29), 128 + 100 * np.cos(y / 13 - x / 41),
                  (x * 3 + y * 2) % 256], -1)
    a += rng.normal(0, 12, a.shape)
    a[h // 3: h // 2, w // 4: w // 2] = (250, 20, 30)  # a sharp-edged block
    return np.clip(a, 0, 255).astype(np.uint8)


def jpeg(a, **kw):
    bio = io.BytesIO()
    (a if isinstance(a, Image.Image) else Image.fromarray(a)).save(bio, "JPEG", **kw)
    return bio.getvalue()


def cv2_jpeg(a, params):
    ok, enc = cv2.imencode(".jpg", a[..., ::-1] if a.ndim == 3 else a, params)
    assert ok
    return enc.tobytes()


SUBSAMPLINGS = {"444": 0, "422": 1, "420": 2}


def corpus():
    """(name, bytes) of the JPEG cases: every subsampling, progressive, restart intervals, gray, CMYK,
    odd sizes."""
    out = []
    for (h, w) in [(1, 1), (7, 5), (17, 33), (123, 157), (64, 64)]:
        a = photo(h, w, seed=h * w)
        for ss, v in SUBSAMPLINGS.items():
            for prog in (False, True):
                out.append((f"{h}x{w}-{ss}-{'prog' if prog else 'base'}",
                            jpeg(a, quality=90, subsampling=v, progressive=prog)))
        out.append((f"{h}x{w}-gray", jpeg(a[..., 1])))
        out.append((f"{h}x{w}-cmyk", jpeg(Image.fromarray(a).convert("CMYK"))))
    a = photo(123, 157, seed=5)
    if cv2 is not None:
        out.append(("440", cv2_jpeg(a, [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_440])))
        out.append(("411", cv2_jpeg(a, [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_411])))
        out.append(("rst", cv2_jpeg(a, [cv2.IMWRITE_JPEG_RST_INTERVAL, 3])))
        out.append(("rst-prog", cv2_jpeg(a, [cv2.IMWRITE_JPEG_RST_INTERVAL, 2, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])))
    out.append(("q100", jpeg(a, quality=100, subsampling=0)))
    out.append(("q10", jpeg(a, quality=10)))
    return out


CORPUS = corpus()
CORPUS_IDS = [n for n, _ in CORPUS]


# ------------------------------------------------------------------------------------------ JPEG


def test_codecs_reported():
    c = goprep.info()["codecs"]
    assert c["jpeg"].startswith("libjpeg-turbo "), c
    assert c["png"].startswith("libpng 1."), c


@pytest.mark.parametrize("name,b", CORPUS, ids=CORPUS_IDS)
@pytest.mark.parametrize("mode", ["RGB", "L", "RGBA"])
def test_jpeg_equals_pillow(name, b, mode):
    np.testing.assert_array_equal(decode(b, mode), pil(b, mode))


@pytest.mark.parametrize("name,b", CORPUS, ids=CORPUS_IDS)
def test_jpeg_probe(name, b):
    h = probe(b)
    im = Image.open(io.BytesIO(b))
    assert (h["Format"], h["Width"], h["Height"], h["BitDepth"]) == ("jpeg", im.width, im.height, 8)
    assert h["Components"] == {"L": 1, "RGB": 3, "CMYK": 4}[im.mode]
    assert h["Progressive"] == bool(im.info.get("progressive") or im.info.get("progression"))


@pytest.mark.parametrize("name,b", CORPUS, ids=CORPUS_IDS)
@pytest.mark.parametrize("scale", [2, 4, 8])
def test_jpeg_draft_scale_equals_pillow(name, b, scale):
    im = Image.open(io.BytesIO(b))
    w, h = im.size
    if w // scale == 0 or h // scale == 0:
        pytest.skip("Pillow's draft cannot ask for this scale")
    im.draft("RGB", (w // scale, h // scale))
    assert im.size == (-(-w // scale), -(-h // scale))
    np.testing.assert_array_equal(decode(b, scale=scale), np.asarray(im.convert("RGB")))


@pytest.mark.skipif(cv2 is None, reason="no OpenCV")
@pytest.mark.parametrize("name,b", CORPUS, ids=CORPUS_IDS)
def test_jpeg_equals_opencv(name, b):
    """OpenCV decodes YCbCr and gray JPEGs as Pillow does; CMYK differs (OpenCV does not apply
    Pillow's Adobe inversion + cmyk2rgb; documented in docs/perf/2026-12-03-codec.md)."""
    if name.endswith("cmyk"):
        pytest.skip("CMYK: OpenCV's conversion differs from Pillow's (goprep follows Pillow)")
    ref = cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)[..., ::-1]
    np.testing.assert_array_equal(decode(b), ref)


@pytest.mark.parametrize("name,b", [c for c in CORPUS if c[0].startswith(("123x157", "64x64", "4", "rst"))],
                         ids=[n for n in CORPUS_IDS if n.startswith(("123x157", "64x64", "4", "rst"))])
@pytest.mark.parametrize("scale", [1, 2])
@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_jpeg_window_is_exact(name, b, scale, mode):
    full = decode(b, mode, scale)
    H, W = full.shape[:2]
    rng = np.random.default_rng(len(b))
    for _ in range(25):
        y0, y1 = sorted(rng.choice(H + 1, 2, replace=False))
        x0, x1 = sorted(rng.choice(W + 1, 2, replace=False))
        got = decode(b, mode, scale, window=(y0, y1, x0, x1))
        np.testing.assert_array_equal(got[y0:y1, x0:x1], full[y0:y1, x0:x1], err_msg=str((y0, y1, x0, x1)))


@pytest.mark.slow
def test_jpeg_window_is_exact_big():
    b = jpeg(photo(1000, 1500), quality=90, subsampling=2)
    full = decode(b)
    rng = np.random.default_rng(7)
    for _ in range(40):
        y0, y1 = sorted(rng.choice(1001, 2, replace=False))
        x0, x1 = sorted(rng.choice(1501, 2, replace=False))
        got = decode(b, window=(y0, y1, x0, x1))
        np.testing.assert_array_equal(got[y0:y1, x0:x1], full[y0:y1, x0:x1], err_msg=str((y0, y1, x0, x1)))


@pytest.mark.parametrize("size", [(1, 1), (3, 4001), (4001, 3), (2, 2)])
def test_jpeg_odd_sizes(size):
    a = photo(*size)
    for ss in (0, 2):
        b = jpeg(a, subsampling=ss)
        np.testing.assert_array_equal(decode(b), pil(b))


def _exif(o):
    e = Image.Exif()
    e[0x0112] = o
    return e


@pytest.mark.parametrize("o", range(1, 9))
@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_jpeg_orientation_equals_exif_transpose(o, mode):
    b = jpeg(photo(37, 61), exif=_exif(o))
    assert probe(b)["Orientation"] == o
    ref = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(b))).convert(mode))
    got = decode(b, mode, orient=True)
    np.testing.assert_array_equal(got[..., 0] if mode == "L" else got, ref)
    np.testing.assert_array_equal(decode(b, mode), pil(b, mode))  # not applied unless asked


@pytest.mark.parametrize("o", [3, 6])
def test_jpeg_orientation_with_scale(o):
    b = jpeg(photo(37, 61), exif=_exif(o))
    im = Image.open(io.BytesIO(b))
    im.draft("RGB", (61 // 2, 37 // 2))
    ref = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
    np.testing.assert_array_equal(decode(b, scale=2, orient=True), ref)


def _pillow_refuses(b):
    try:
        Image.open(io.BytesIO(b)).convert("RGB")
    except Exception:  # noqa: BLE001 - whatever Pillow raises, it refuses
        return True
    return False


@pytest.mark.parametrize("name", ["123x157-420-base", "123x157-444-prog", "64x64-gray", "64x64-cmyk", "rst"])
def test_jpeg_truncation_matches_pillow(name):
    """Cut at many points: whatever Pillow refuses, the decoder refuses (DecodeError); whatever it
    decodes, the decoder decodes to the same bytes."""
    b = dict(CORPUS).get(name)
    if b is None:
        pytest.skip("needs OpenCV's encoder")
    cuts = sorted(set(list(range(0, 700, 7)) + list(range(len(b) - 40, len(b) + 1)) +
                      list(np.linspace(0, len(b), 60).astype(int))))
    for n in cuts:
        t = b[:n]
        if _pillow_refuses(t):
            with pytest.raises(goprep.DecodeError) as ei:
                decode(t)
            assert ei.value.code == "decode" and ei.value.argument == "data", (n, ei.value)
        else:
            np.testing.assert_array_equal(decode(t), pil(t), err_msg=f"cut at {n}")


def test_jpeg_corrupt_data_like_pillow():
    """Flipped bytes in the entropy-coded data: libjpeg warns and goes on; Pillow (which ignores
    warnings) decodes, and so does the decoder, to the same bytes; where Pillow raises, so does it."""
    b = bytearray(dict(CORPUS)["123x157-420-base"])
    rng = np.random.default_rng(3)
    sos = bytes(b).index(b"\xff\xda")
    for _ in range(60):
        c = bytearray(b)
        for i in rng.integers(sos + 20, len(b) - 2, 4):
            c[i] = rng.integers(0, 256)
        c = bytes(c)
        if _pillow_refuses(c):
            with pytest.raises(goprep.DecodeError):
                decode(c)
        else:
            np.testing.assert_array_equal(decode(c), pil(c))


@pytest.mark.parametrize("data,what", [
    (b"", "empty"),
    (b"GIF89a" + bytes(40), "unknown image format"),
    (b"\xff\xd8\xff", "truncated"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(5), "truncated"),
    (b"\xff\xd8\xff\xd9", "no image"),
])
def test_bad_data_is_decode_error(data, what):
    with pytest.raises(goprep.DecodeError) as ei:
        probe(data)
    assert ei.value.code == "decode" and ei.value.argument == "data"
    assert isinstance(ei.value, ValueError)
    assert what.split()[0] in str(ei.value).lower() or what == "no image", str(ei.value)


def _sof_bomb(h, w):
    """A tiny baseline JPEG header claiming h x w, with tables, SOF0 and an SOS but no data."""
    b = jpeg(photo(8, 8))
    i = b.index(b"\xff\xc0")
    return b[: i + 5] + struct.pack(">HH", h, w) + b[i + 9:]


def test_bomb_refused_before_allocation():
    b = _sof_bomb(60000, 60000)
    assert (probe(b)["Height"], probe(b)["Width"]) == (60000, 60000)
    with pytest.raises(goprep.ShapeError) as ei:
        decode_header_only(b, max_pixels=100_000_000)
    assert ei.value.code == "too_large" and ei.value.argument == "data"
    assert "60000x60000" in str(ei.value) and "100000000" in str(ei.value)


def decode_header_only(b, max_pixels):
    """Decode with a 1-byte destination: a refusal must come before any size check of dst."""
    buf = np.frombuffer(b, np.uint8)
    out = np.zeros(1, np.uint8)
    try:
        _native.get().DecodeInto(buf.ctypes.data, len(b), 0, 1, 0, max_pixels, 0, 0, 0, 0, out.ctypes.data, 1, 3)
    except RuntimeError as e:
        raise _errors.from_native(e) from None


def test_max_pixels_allows_up_to_the_limit():
    b = jpeg(photo(10, 20))
    assert decode(b, max_pixels=200).shape == (10, 20, 3)
    with pytest.raises(goprep.ShapeError):
        decode(b, max_pixels=199)


# ------------------------------------------------------------------------------------------- PNG


def png_bytes(im, **kw):
    bio = io.BytesIO()
    im.save(bio, "PNG", **kw)
    return bio.getvalue()


def adam7_png(a):
    """An interlaced (Adam7) 8-bit RGB/RGBA/L PNG, written here (Pillow writes none)."""
    h, w = a.shape[:2]
    ch = 1 if a.ndim == 2 else a.shape[2]
    ct = {1: 0, 2: 4, 3: 2, 4: 6}[ch]
    raw = b""
    for ys, xs, dy, dx in [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2),
                           (1, 0, 2, 1)]:
        sub = a[ys::dy, xs::dx]
        if sub.size == 0:
            continue
        for row in sub.reshape(sub.shape[0], -1):
            raw += b"\x00" + row.tobytes()

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ct, 0, 0, 1)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def png_corpus():
    a = photo(45, 67, seed=9)
    rgba = np.concatenate([a, photo(45, 67, seed=10)[..., :1]], -1)
    im = Image.fromarray(a)
    p = im.quantize(200)
    p_trns = p.copy()
    p_trns.info["transparency"] = bytes(range(0, 250, 2))
    p_one = p.copy()
    p_one.info["transparency"] = 7
    l_trns = Image.fromarray(a[..., 0])
    out = {
        "L": png_bytes(Image.fromarray(a[..., 0])),
        "LA": png_bytes(Image.fromarray(rgba).convert("LA")),
        "RGB": png_bytes(im),
        "RGBA": png_bytes(Image.fromarray(rgba)),
        "P": png_bytes(p),
        "P-trns": png_bytes(p_trns, transparency=p_trns.info["transparency"]),
        "P-trns1": png_bytes(p_one, transparency=7),
        "P4": png_bytes(im.quantize(16), bits=4),
        "P1": png_bytes(im.quantize(2), bits=1),
        "1": png_bytes(Image.fromarray(a[..., 0] > 128)),
        "L-trns": png_bytes(l_trns, transparency=int(a[0, 0, 0])),
        "RGB-trns": png_bytes(im, transparency=tuple(int(v) for v in a[0, 0])),
        "RGB-adam7": adam7_png(a),
        "RGBA-adam7": adam7_png(rgba),
        "L-adam7": adam7_png(a[..., 0]),
        "RGB-1x1": png_bytes(Image.fromarray(a[:1, :1])),
    }
    return out


PNGS = png_corpus()


@pytest.mark.parametrize("name", list(PNGS))
@pytest.mark.parametrize("mode", ["RGB", "L", "RGBA"])
def test_png_equals_pillow(name, mode):
    b = PNGS[name]
    assert probe(b)["Format"] == "png"
    np.testing.assert_array_equal(decode(b, mode), pil(b, mode))


def test_png_probe():
    for name, b in PNGS.items():
        h, im = probe(b), Image.open(io.BytesIO(b))
        assert (h["Width"], h["Height"], h["BitDepth"]) == (im.width, im.height, 8), name
    assert probe(PNGS["RGBA"])["Components"] == 4 and probe(PNGS["P"])["Components"] == 3
    assert probe(PNGS["P-trns"])["Components"] == 4 and probe(PNGS["LA"])["Components"] == 2


def test_png_16bit_refused():
    b = png_bytes(Image.fromarray(photo(9, 9)[..., 0].astype(np.uint16) * 257))
    assert probe(b)["BitDepth"] == 16
    with pytest.raises(goprep.DecodeError, match="16-bit PNG is not supported"):
        decode(b)


@pytest.mark.parametrize("name", ["RGB", "P-trns", "RGB-adam7"])
def test_png_truncation_matches_pillow(name):
    b = PNGS[name]
    for n in sorted(set(list(range(0, 120, 3)) + list(np.linspace(0, len(b), 50).astype(int)) +
                        list(range(len(b) - 16, len(b) + 1)))):
        t = b[:n]
        if _pillow_refuses(t):
            with pytest.raises(goprep.DecodeError):
                decode(t)
        else:
            np.testing.assert_array_equal(decode(t), pil(t), err_msg=f"cut at {n}")


def test_png_bomb_refused():
    b = PNGS["RGB"]
    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    bomb = b[:8] + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + b[33:]
    with pytest.raises(goprep.ShapeError, match="60000x60000"):
        decode_header_only(bomb, max_pixels=10_000_000)


@pytest.mark.parametrize("o", [1, 3, 6, 8])
def test_png_orientation(o):
    b = png_bytes(Image.fromarray(photo(13, 21)), exif=_exif(o))
    assert probe(b)["Orientation"] == o
    ref = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(b))).convert("RGB"))
    np.testing.assert_array_equal(decode(b, orient=True), ref)
