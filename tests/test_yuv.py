"""YUV frame sources (goprep.yuv): OpenCV-exact conversion, fused with every resize rule, the other
matrices within 1 level of the float64 formula, plane layouts, batches, lists and bad input."""

import numpy as np
import pytest

import goprep

cv2 = pytest.importorskip("cv2")

RGB_CODES = {"nv12": cv2.COLOR_YUV2RGB_NV12, "nv21": cv2.COLOR_YUV2RGB_NV21, "i420": cv2.COLOR_YUV2RGB_I420,
             "yv12": cv2.COLOR_YUV2RGB_YV12, "yuyv": cv2.COLOR_YUV2RGB_YUYV, "uyvy": cv2.COLOR_YUV2RGB_UYVY}
BGR_CODES = {"nv12": cv2.COLOR_YUV2BGR_NV12, "i420": cv2.COLOR_YUV2BGR_I420, "yuyv": cv2.COLOR_YUV2BGR_YUYV}
PACKED = ("yuyv", "uyvy")


def frame(fmt, h, w, seed=0, n=None):
    """A random frame of format ``fmt`` as its single array ((H*3/2, W) or (H, W, 2)), or a batch."""
    rng = np.random.default_rng(seed)
    shape = (h, w, 2) if fmt in PACKED else (h * 3 // 2, w)
    return rng.integers(0, 256, ((n,) if n else ()) + shape, dtype=np.uint8)


def smooth_frame(fmt, h, w, seed=0):
    """A frame with smooth content (a resize's weights matter on photographs, not on noise)."""
    yy, xx = np.mgrid[0:h, 0:w]
    rng = np.random.default_rng(seed)
    f = frame(fmt, h, w, seed)
    y = (128 + 100 * np.sin(xx / 7.0 + seed) * np.cos(yy / 5.0)).astype(np.uint8) ^ rng.integers(0, 8, (h, w), dtype=np.uint8)
    if fmt in PACKED:
        f[..., 0 if fmt == "yuyv" else 1] = y
    else:
        f[:h] = y
    return f


def identity(img):
    return img


@goprep.pipeline(device="cpu")
def ident(img):
    return img


@pytest.mark.parametrize("fmt", list(RGB_CODES))
@pytest.mark.parametrize("size", [(2, 2), (6, 10), (37 * 2, 21 * 2), (64, 128)])
def test_opencv_exact_no_resize(fmt, size):
    h, w = size
    if fmt in PACKED:
        h -= 1  # 4:2:2 allows odd heights
        h = max(h, 1)
    f = frame(fmt, h, w, seed=h * w)
    want = cv2.cvtColor(f, RGB_CODES[fmt])
    got = ident(goprep.yuv(f, format=fmt, preset="opencv"))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", ["nv12", "i420", "yuyv"])
def test_opencv_exact_every_sample(fmt):
    """Every (Y, U, V) triple of the 8-bit cube, byte-identical to cv2.cvtColor."""
    u, v = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8), indexing="ij")
    u, v = u.ravel(), v.ravel()  # 65536 chroma pairs, each over 2x2 (4:2:0) or 2x1 (4:2:2) pixels
    if fmt in PACKED:
        # each pair of pixels shares one (U, V): 128 pairs per chroma value give all 256 Y values
        h, w = 256, 65536 // 256 * 2 * 128 // 128
        rows = []
        ys = np.arange(256, dtype=np.uint8)
        for r in range(128):
            y0, y1 = ys[(2 * r) % 256], ys[(2 * r + 1) % 256]
            row = np.empty((65536, 4), np.uint8)
            row[:, 0], row[:, 2] = y0, y1
            row[:, 1], row[:, 3] = u, v
            rows.append(row.reshape(256, 256 * 4))
        f = np.concatenate(rows).reshape(-1, 512, 2)
    else:
        h, w = 64 * 2, 1024 * 2  # 64 * 1024 = 65536 chroma samples
        cu, cv = u.reshape(64, 1024), v.reshape(64, 1024)
        fs = []
        for k in range(64):  # 64 frames with Y covering 0..255 over each 2x2 block
            y = ((np.arange(h * w).reshape(h, w) + 4 * k) % 256).astype(np.uint8)
            if fmt == "nv12":
                uv = np.stack([cu, cv], -1).reshape(64, 2048)
                fs.append(np.concatenate([y, uv]))
            else:
                fs.append(np.concatenate([y.ravel(), cu.ravel(), cv.ravel()]).reshape(-1, w))
        f = np.stack(fs)
    code = RGB_CODES[fmt]
    got = ident(goprep.yuv(f, format=fmt, preset="opencv"))
    want = np.stack([cv2.cvtColor(x, code) for x in f]) if f.ndim == 3 and fmt not in PACKED else cv2.cvtColor(f, code)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", ["nv12", "i420", "yuyv"])
def test_bgr_order(fmt):
    f = frame(fmt, 8, 12, seed=3)
    got = ident(goprep.yuv(f, format=fmt, preset="opencv", order="bgr"))
    np.testing.assert_array_equal(got, cv2.cvtColor(f, BGR_CODES[fmt]))


MODES = [
    dict(interpolation="bilinear"),
    dict(interpolation="bilinear", antialias=True),
    dict(interpolation="bilinear", antialias="torch"),
    dict(interpolation="bicubic"),
    dict(interpolation="bicubic", antialias=True),
    dict(interpolation="area"),
    dict(interpolation="nearest"),
    dict(interpolation="nearest-exact"),
]


@pytest.mark.parametrize("fmt", list(RGB_CODES))
@pytest.mark.parametrize("mode", MODES, ids=lambda m: "-".join(str(v) for v in m.values()))
@pytest.mark.parametrize("size", [(224, 224), (37, 61), (300, 50), (12, 200)])
def test_resize_equals_convert_then_resize(fmt, mode, size):
    """Through a resize: equal to cv2.cvtColor followed by goprep's resize of that image, bit for bit
    (the engine converts the rows the resize reads into the same RGB rows)."""
    f = smooth_frame(fmt, 120, 160, seed=len(fmt))

    @goprep.pipeline(device="cpu")
    def prep(img):
        img = goprep.resize(img, size, **mode)
        return goprep.normalize(img, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))

    want = prep(cv2.cvtColor(f, RGB_CODES[fmt]))
    got = prep(goprep.yuv(f, format=fmt, preset="opencv"))
    np.testing.assert_array_equal(got, want)


def test_imagenet_preset_chain():
    """Shorter side 256 (antialias), centre crop 224, flip, normalize: as on the converted image."""
    f = smooth_frame("nv12", 270, 480, seed=5)

    @goprep.pipeline(device="cpu")
    def prep(img):
        img = goprep.resize(img, 256, antialias=True)
        img = goprep.center_crop(img, 224)
        img = goprep.flip(img)
        return goprep.normalize(img, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))

    np.testing.assert_array_equal(prep(goprep.yuv(f, preset="opencv")), prep(cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)))


def test_letterbox_and_crop():
    f = smooth_frame("i420", 90, 160, seed=2)
    rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_I420)
    a, ia = goprep.letterbox(goprep.yuv(f, format="i420", preset="opencv"), 128)
    b, ib = goprep.letterbox(rgb, 128)
    np.testing.assert_array_equal(a, b)
    assert ia == ib
    np.testing.assert_array_equal(goprep.crop(goprep.yuv(f, format="i420", preset="opencv"), 3, 5, 40, 33),
                                  rgb[3:43, 5:38])


def test_eager_ops():
    f = smooth_frame("nv12", 64, 96, seed=1)
    rgb = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
    src = goprep.yuv(f, preset="opencv")
    np.testing.assert_array_equal(goprep.resize(src, (32, 48)), goprep.resize(rgb, (32, 48)))
    np.testing.assert_array_equal(goprep.flip(src), rgb[:, ::-1])
    np.testing.assert_array_equal(goprep.cvt_color(src, "rgb2bgr"), rgb[..., ::-1])


def float_ref(y, u, v, matrix, rng):
    kr, kb = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722), "bt2020": (0.2627, 0.0593)}[matrix]
    kg = 1 - kr - kb
    y, u, v = (np.asarray(a, np.float64) for a in (y, u, v))
    if rng == "limited":
        y, u, v = (y - 16) * 255 / 219, (u - 128) * 255 / 224, (v - 128) * 255 / 224
    else:
        u, v = u - 128, v - 128
    r = y + 2 * (1 - kr) * v
    g = y - 2 * kb * (1 - kb) / kg * u - 2 * kr * (1 - kr) / kg * v
    b = y + 2 * (1 - kb) * u
    return np.clip(np.stack([r, g, b], -1), 0, 255)


@pytest.mark.parametrize("matrix", ["bt601", "bt709", "bt2020"])
@pytest.mark.parametrize("rng", ["limited", "full"])
def test_matrices_within_one_level(matrix, rng):
    h, w = 64, 96
    f = frame("nv12", h, w, seed=11)
    got = ident(goprep.yuv(f, matrix=matrix, range=rng)).astype(np.float64)
    y = f[:h]
    uv = f[h:].reshape(h // 2, w // 2, 2)
    u = np.repeat(np.repeat(uv[..., 0], 2, 0), 2, 1)
    v = np.repeat(np.repeat(uv[..., 1], 2, 0), 2, 1)
    assert np.abs(got - float_ref(y, u, v, matrix, rng)).max() <= 1


def test_jpeg_preset_is_bt601_full():
    f = frame("i420", 16, 16, seed=4)
    a = ident(goprep.yuv(f, format="i420", preset="jpeg"))
    b = ident(goprep.yuv(f, format="i420", matrix="bt601", range="full"))
    np.testing.assert_array_equal(a, b)


def test_plane_forms_agree():
    """One array, separate planes, padded rows (views of bigger arrays) and planes in any memory order
    read the same frame."""
    h, w = 24, 40
    f = frame("nv12", h, w, seed=8)
    want = cv2.cvtColor(f, cv2.COLOR_YUV2RGB_NV12)
    y, uv = f[:h].copy(), f[h:].copy()
    big = np.zeros((h * 2, w + 8), np.uint8)
    py = big[:h, 4:4 + w]
    py[:] = y
    puv = np.zeros((h // 2, w + 3), np.uint8)[:, :w]
    puv[:] = uv
    for form in [(y, uv), (py, puv), (y, uv.reshape(h // 2, w // 2, 2)), (puv.copy(), None)]:
        if form[1] is None:
            continue
        np.testing.assert_array_equal(ident(goprep.yuv(form, preset="opencv")), want)
    # i420 as three planes, and yv12
    g = frame("i420", h, w, seed=9)
    want = cv2.cvtColor(g, cv2.COLOR_YUV2RGB_I420)
    flat = g.ravel()
    yp, up, vp = flat[:h * w].reshape(h, w), flat[h * w:h * w * 5 // 4].reshape(h // 2, w // 2), flat[h * w * 5 // 4:].reshape(h // 2, w // 2)
    np.testing.assert_array_equal(ident(goprep.yuv((yp, up, vp), format="i420", preset="opencv")), want)
    np.testing.assert_array_equal(ident(goprep.yuv((yp.copy(), vp.copy(), up.copy()), format="yv12", preset="opencv")), want)


@pytest.mark.parametrize("fmt", ["nv12", "yuyv"])
def test_batches_and_lists(fmt):
    fs = frame(fmt, 16, 20, seed=12, n=3)

    @goprep.pipeline(device="cpu")
    def prep(img):
        return goprep.resize(img, (8, 10), antialias=True)

    want = np.stack([prep(cv2.cvtColor(x, RGB_CODES[fmt])) for x in fs])
    np.testing.assert_array_equal(prep(goprep.yuv(fs, format=fmt, preset="opencv")), want)
    np.testing.assert_array_equal(prep([goprep.yuv(x, format=fmt, preset="opencv") for x in fs]), want)
    if fmt == "nv12":  # batched planes: one batch stride for all planes (views of one buffer)
        y, uv = fs[:, :16], fs[:, 16:]
        np.testing.assert_array_equal(prep(goprep.yuv((y, uv), preset="opencv")), want)
        with pytest.raises(goprep.ShapeError, match="batch stride"):
            goprep.yuv((y.copy(), uv.copy()), preset="opencv")


GPU_OPS = {
    "bilinear": lambda img: goprep.resize(img, (32, 48)),
    "bilinear-aa": lambda img: goprep.resize(img, (40, 60), antialias=True),
    "bicubic": lambda img: goprep.resize(img, (45, 70), interpolation="bicubic"),
    "bicubic-aa": lambda img: goprep.resize(img, (40, 60), interpolation="bicubic", antialias=True),
    "area": lambda img: goprep.resize(img, (24, 40), interpolation="area"),
    "nearest": lambda img: goprep.resize(img, (50, 30), interpolation="nearest"),
    "nearest-exact": lambda img: goprep.resize(img, (50, 30), interpolation="nearest-exact"),
    "upscale": lambda img: goprep.resize(img, (90, 130)),
    "none": identity,
    "crop-flip-norm": lambda img: goprep.normalize(goprep.flip(goprep.crop(goprep.resize(img, 40), 3, 5, 30, 33), vertical=True),
                                                  mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)),
    "letterbox": lambda img: goprep.letterbox(img, 72)[0],
}


@pytest.mark.parametrize("fmt", list(RGB_CODES))
@pytest.mark.parametrize("op", list(GPU_OPS))
def test_gpu_equals_cpu(sim_gpu, fmt, op):
    """device="cuda" runs YUV frames on the GPU kernels (simulated GPU: the real kernels compiled for
    the CPU), bit for bit the CPU engine's bytes, for single frames and batches, host and device output."""
    fn = GPU_OPS[op]
    f = smooth_frame(fmt, 64, 96)
    batch = frame(fmt, 64, 96, seed=3, n=3)
    for src in (goprep.yuv(f, format=fmt, preset="opencv"), goprep.yuv(batch, format=fmt, matrix="bt709", range="full")):
        want = goprep.pipeline(device="cpu")(fn)(src)
        got = goprep.pipeline(device="cuda")(fn)(src)
        np.testing.assert_array_equal(got, want)
        dev = goprep.pipeline(device="cuda", output="device")(fn)(src)
        np.testing.assert_array_equal(dev.get(), want)
    assert goprep.info()["gpu"]["gpu_calls"] == 4
    assert goprep.info()["gpu"]["cpu_fallbacks"] == 0


def test_gpu_planes_and_bgr(sim_gpu):
    """Separate planes with padded rows, BGR order: the GPU equals cvtColor then resize."""
    g = smooth_frame("i420", 64, 96)
    big = np.zeros((64 * 3 // 2, 128), np.uint8)
    big[:, :96] = g
    yp, up, vp = big[:64, :96], g[64:80].reshape(32, 48), g[80:].reshape(32, 48)
    want = goprep.resize(cv2.cvtColor(g, cv2.COLOR_YUV2BGR_I420), (32, 48))

    @goprep.pipeline(device="cuda")
    def prep(img):
        return goprep.resize(img, (32, 48))

    np.testing.assert_array_equal(prep(goprep.yuv((yp, up, vp), format="i420", preset="opencv", order="bgr")), want)
    assert goprep.info()["gpu"]["gpu_calls"] == 1 and goprep.info()["gpu"]["cpu_fallbacks"] == 0


class _CudaView:
    """A CUDA array interface view into device memory (as CuPy or Numba hand out), backed by a
    goprep.DeviceArray on the simulated GPU (its device memory is host memory)."""

    def __init__(self, dev, shape, strides, offset=0):
        self._dev = dev
        self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": "|u1",
                                         "data": (dev.ptr + offset, False), "version": 3}


@pytest.mark.parametrize("fmt", list(RGB_CODES))
def test_device_frames(sim_gpu, fmt):
    """CUDA arrays (goprep.to_device, CAI views) are read in place on the GPU: single frames, batches and
    plane views into one allocation give the bytes host frames give on the CPU."""
    fn = GPU_OPS["crop-flip-norm"]
    cpu = goprep.pipeline(device="cpu")(fn)
    f = smooth_frame(fmt, 64, 96)
    batch = frame(fmt, 64, 96, seed=5, n=2)
    for host, kw in ((f, {"preset": "opencv"}), (batch, {"matrix": "bt2020", "range": "limited"})):
        want = cpu(goprep.yuv(host, format=fmt, **kw))
        dev = goprep.to_device(host)
        src = goprep.yuv(dev, format=fmt, **kw)
        np.testing.assert_array_equal(goprep.pipeline(device="cuda")(fn)(src), want)
        np.testing.assert_array_equal(goprep.pipeline(fn)(src), want)  # auto: a device frame runs on its GPU
        np.testing.assert_array_equal(goprep.pipeline(device="cuda", output="device")(fn)(src).get(), want)
        np.testing.assert_array_equal(goprep.pipeline(device="cuda")(fn)([src, src]), np.stack([want, want]))
    if fmt in ("nv12", "i420"):  # planes as views into one allocation, rows padded to 128 bytes
        big = np.zeros((96, 128), np.uint8)
        big[:, :96] = f
        dev = goprep.to_device(big)
        if fmt == "nv12":
            planes = (_CudaView(dev, (64, 96), (128, 1)), _CudaView(dev, (32, 96), (128, 1), 64 * 128))
            host = (big[:64, :96], big[64:, :96])
        else:
            g = np.zeros((32 * 3, 128), np.uint8)  # U and V as (32, 48) planes with 128-byte rows
            g[:32, :48], g[32:64, :48] = f[64:80].reshape(32, 48), f[80:].reshape(32, 48)
            big[64:] = g[:32]
            big2 = np.concatenate([big, g[32:64]])
            dev = goprep.to_device(big2)
            planes = (_CudaView(dev, (64, 96), (128, 1)), _CudaView(dev, (32, 48), (128, 1), 64 * 128),
                      _CudaView(dev, (32, 48), (128, 1), 96 * 128))
            host = (big2[:64, :96], big2[64:96, :48], big2[96:, :48])
        want = cpu(goprep.yuv(host, format=fmt, preset="opencv"))
        np.testing.assert_array_equal(want, cpu(goprep.yuv(f, format=fmt, preset="opencv")))
        np.testing.assert_array_equal(goprep.pipeline(device="cuda")(fn)(goprep.yuv(planes, format=fmt, preset="opencv")), want)
    g = goprep.info()["gpu"]
    assert g["cpu_fallbacks"] == 0 and g["gpu_failures"] == 0 and g["gpu_calls"] >= 8


def test_device_frame_errors(sim_gpu):
    dev = goprep.to_device(frame("nv12", 8, 8))
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.yuv((dev, np.zeros((4, 8), np.uint8)), preset="opencv")
    assert e.value.argument == "frame"
    with pytest.raises(goprep.InvalidArgumentError) as e:
        goprep.pipeline(device="cpu")(identity)(goprep.yuv(dev, preset="opencv"))
    assert e.value.argument == "device"
    with pytest.raises(goprep.DTypeError) as e:
        goprep.yuv(goprep.to_device(np.zeros((12, 8), np.float32)), preset="opencv")
    assert e.value.argument == "frame"


@pytest.mark.parametrize("call, cls, arg", [
    (lambda: goprep.yuv((np.zeros((3, 6), np.uint8), np.zeros((1, 6), np.uint8)), preset="opencv"), goprep.ShapeError, "frame"),  # odd height
    (lambda: goprep.yuv(np.zeros((6, 5), np.uint8), preset="opencv"), goprep.ShapeError, "frame"),  # odd width
    (lambda: goprep.yuv(np.zeros((7, 6), np.uint8), preset="opencv"), goprep.ShapeError, "frame"),  # not H*3/2
    (lambda: goprep.yuv(np.zeros((4, 5, 2), np.uint8), format="yuyv", preset="opencv"), goprep.ShapeError, "frame"),
    (lambda: goprep.yuv(np.zeros((4, 6, 3), np.uint8), format="yuyv", preset="opencv"), goprep.ShapeError, "frame"),
    (lambda: goprep.yuv((np.zeros((4, 6), np.uint8), np.zeros((2, 4), np.uint8)), preset="opencv"), goprep.ShapeError, "frame"),
    (lambda: goprep.yuv((np.zeros((4, 6), np.uint8),), preset="opencv"), goprep.ShapeError, "frame"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.float32), preset="opencv"), goprep.DTypeError, "frame"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), matrix="bt470", range="full"), goprep.InvalidArgumentError, "matrix"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), matrix="bt709", range="tv"), goprep.InvalidArgumentError, "range"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), matrix="bt709"), goprep.InvalidArgumentError, "range"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8)), goprep.InvalidArgumentError, "matrix"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), format="nv16", preset="opencv"), goprep.InvalidArgumentError, "format"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), preset="pal"), goprep.InvalidArgumentError, "preset"),
    (lambda: goprep.yuv(np.zeros((6, 6), np.uint8), preset="opencv", matrix="bt709"), goprep.InvalidArgumentError, "preset"),
    (lambda: goprep.yuv(np.zeros((6, 8), np.uint8)[:, ::2], preset="opencv"), goprep.ShapeError, "frame"),
    (lambda: goprep.yuv(np.zeros((12, 6), np.uint8)[::2], format="i420", preset="opencv"), goprep.ShapeError, "frame"),
])
def test_bad_input(call, cls, arg):
    with pytest.raises(cls) as e:
        call()
    assert e.value.argument == arg


def test_error_lists_valid_names():
    with pytest.raises(goprep.InvalidArgumentError, match="'bt2020'"):
        goprep.yuv(np.zeros((6, 6), np.uint8), matrix="smpte240m", range="full")


def test_overlapping_planes_refused_by_engine():
    """Planes that share memory (the UV plane inside the Y plane) are refused before any read."""
    y = np.zeros((8, 8), np.uint8)
    with pytest.raises(goprep.ShapeError) as e:
        ident(goprep.yuv((y, y[2:6]), preset="opencv"))
    assert e.value.argument == "src"
