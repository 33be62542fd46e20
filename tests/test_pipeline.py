import numpy as np
import pytest

import goprep
from conftest import PHOTOS, assert_array_identical, rand_u8

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


# Each chain is a plain function of goprep ops: called directly it runs eagerly (op by op);
# wrapped in goprep.pipeline it must return exactly the same thing.
def resize_flip_normalize(img):
    img = goprep.resize(img, (224, 224))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD)


def crop_resize_cvt_normalize_f16_hwc(img):
    img = goprep.crop(img, 10, 20, 250, 230)
    img = goprep.resize(img, (97, 131))
    img = goprep.cvt_color(img, "rgb2bgr")
    return goprep.normalize(img, mean=MEAN, std=STD, dtype="float16", layout="HWC")


def letterbox_normalize(img):
    img, _ = goprep.letterbox(img, (320, 256))
    return goprep.normalize(img, mean=MEAN, std=STD)


def vflip_crop_resize_nearest(img):
    img = goprep.flip(img, horizontal=False, vertical=True)
    img = goprep.crop(img, 5, 7, 200, 301)
    return goprep.resize(img, (150, 113), interpolation="nearest")


def antialias_resize_normalize(img):
    img = goprep.resize(img, (64, 80), antialias=True)
    return goprep.normalize(img, mean=MEAN, std=STD, scale=1.0, layout="HWC")


def antialias_flip_cvt(img):
    img = goprep.resize(img, (111, 57), antialias=True)
    img = goprep.flip(img, vertical=True)
    return goprep.cvt_color(img, "bgr2rgb")


def resize_upscale_flip_both(img):
    img = goprep.resize(img, (700, 1001))
    return goprep.flip(img, horizontal=True, vertical=True)


def flip_normalize_no_resize(img):
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD, dtype="float16")


def resize_only(img):
    return goprep.resize(img, (123, 45))


def float_scale_resize_normalize(img):  # float32 input in [0, 1]
    img = goprep.resize(img, (200, 200))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD, scale=1.0)


CHAINS_RGB = [
    resize_flip_normalize,
    crop_resize_cvt_normalize_f16_hwc,
    letterbox_normalize,
    vflip_crop_resize_nearest,
    antialias_resize_normalize,
    antialias_flip_cvt,
    resize_upscale_flip_both,
    flip_normalize_no_resize,
    resize_only,
]
# chains that produce a fixed output size, so a list of differently sized images can be batched
CHAINS_FIXED = [
    resize_flip_normalize,
    crop_resize_cvt_normalize_f16_hwc,
    letterbox_normalize,
    vflip_crop_resize_nearest,
    antialias_resize_normalize,
    antialias_flip_cvt,
    resize_only,
]
RGB_NAMES = ["astronaut", "chelsea", "coffee"]


def _f32(img):
    return img.astype(np.float32) / np.float32(255)


@pytest.mark.parametrize("name", RGB_NAMES)
@pytest.mark.parametrize("chain", CHAINS_RGB, ids=lambda f: f.__name__)
def test_fused_equals_eager_u8(chain, name):
    img = PHOTOS[name]
    assert_array_identical(goprep.pipeline(chain)(img), chain(img))


@pytest.mark.parametrize("name", ["astronaut", "chelsea"])
@pytest.mark.parametrize(
    "chain", CHAINS_RGB + [float_scale_resize_normalize], ids=lambda f: f.__name__
)
def test_fused_equals_eager_f32(chain, name):
    img = _f32(PHOTOS[name])
    assert_array_identical(goprep.pipeline(chain)(img), chain(img))


@pytest.mark.parametrize("chain", CHAINS_RGB, ids=lambda f: f.__name__)
def test_fused_batch_equals_per_image(chain):
    a = PHOTOS["astronaut"][:300, :451]
    batch = np.stack([a, PHOTOS["chelsea"], rand_u8((300, 451, 3), seed=4)])
    fused = goprep.pipeline(chain)
    got = fused(batch)
    want = np.stack([chain(im) for im in batch])
    assert_array_identical(got, want)
    assert_array_identical(got, chain(batch))  # eager ops on the batch too
    for i in range(len(batch)):
        assert_array_identical(got[i], fused(batch[i]))


@pytest.mark.parametrize("chain", CHAINS_FIXED, ids=lambda f: f.__name__)
def test_fused_list_of_sizes_is_one_batch(chain):
    imgs = [PHOTOS["astronaut"], PHOTOS["chelsea"], PHOTOS["coffee"], rand_u8((271, 331, 3), seed=1)]
    got = goprep.pipeline(chain)(imgs)
    assert isinstance(got, np.ndarray)
    want = np.stack([chain(im) for im in imgs])
    assert_array_identical(got, want)


def test_gray_and_rgba_chains():
    def gray(img):
        img = goprep.resize(img, (100, 90))
        img = goprep.cvt_color(img, "gray2rgb")
        return goprep.normalize(img, mean=MEAN, std=STD)

    def rgba(img):
        img = goprep.cvt_color(img, "rgba2rgb")
        img = goprep.resize(img, (77, 88), antialias=True)
        return goprep.normalize(img, mean=MEAN, std=STD, layout="HWC")

    def gray_only(img):
        img = goprep.resize(img, (50, 60))
        return goprep.normalize(img, mean=(0.5,), std=(0.25,))

    for fn, img in [(gray, PHOTOS["camera"]), (rgba, PHOTOS["chelsea_rgba"]), (gray_only, PHOTOS["camera"])]:
        assert_array_identical(goprep.pipeline(fn)(img), fn(img))
        assert_array_identical(goprep.pipeline(fn)(_f32(img)), fn(_f32(img)))


def test_u8_rounds_before_following_op():
    # a uint8 resize is rounded to uint8 before normalize, also when fused: values of the fused
    # result must all be (k * scale - mean) / std for an integer k
    img = rand_u8((57, 61, 1), seed=3)

    def fn(x):
        x = goprep.resize(x, (40, 33))
        return goprep.normalize(x, mean=(0.0,), std=(1.0,), scale=1.0, layout="HWC")

    got = goprep.pipeline(fn)(img)
    assert np.array_equal(got, np.round(got)), "fused pipeline skipped the uint8 rounding after resize"
    assert_array_identical(got, fn(img))


@pytest.mark.parametrize("deco", ["bare", "call", "cpu", "auto"])
def test_decorator_forms(deco):
    def fn(img):
        img = goprep.resize(img, (64, 64))
        return goprep.normalize(img, mean=MEAN, std=STD)

    wrapped = {
        "bare": lambda: goprep.pipeline(fn),
        "call": lambda: goprep.pipeline()(fn),
        "cpu": lambda: goprep.pipeline(device="cpu")(fn),
        "auto": lambda: goprep.pipeline(device="auto")(fn),
    }[deco]()
    img = PHOTOS["coffee"]
    assert_array_identical(wrapped(img), fn(img))


def test_decorator_syntax():
    @goprep.pipeline
    def prep(img):
        img = goprep.resize(img, (224, 224))
        img = goprep.flip(img)
        return goprep.normalize(img, mean=MEAN, std=STD)

    img = PHOTOS["astronaut"]
    x = prep(img)
    assert x.shape == (3, 224, 224) and x.dtype == np.float32
    assert_array_identical(x, resize_flip_normalize(img))
    xb = prep(np.stack([img, img]))
    assert xb.shape == (2, 3, 224, 224)
    xl = prep([img, PHOTOS["chelsea"]])
    assert xl.shape == (2, 3, 224, 224)


# ---------------------------------------------------------------------------- out=


def test_out_single_batch_list():
    fused = goprep.pipeline(resize_flip_normalize)
    img = PHOTOS["chelsea"]
    out = np.full((3, 224, 224), np.nan, np.float32)
    got = fused(img, out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, resize_flip_normalize(img))

    batch = np.stack([img, img[::-1].copy()])
    outb = np.zeros((2, 3, 224, 224), np.float32)
    got = fused(batch, out=outb)
    assert np.shares_memory(got, outb)
    assert_array_identical(outb, np.stack([resize_flip_normalize(b) for b in batch]))

    imgs = [PHOTOS["astronaut"], PHOTOS["coffee"]]
    outl = np.zeros((2, 3, 224, 224), np.float32)
    got = fused(imgs, out=outl)
    assert np.shares_memory(got, outl)
    assert_array_identical(outl, np.stack([resize_flip_normalize(i) for i in imgs]))


def test_out_u8_result():
    fused = goprep.pipeline(antialias_flip_cvt)
    img = PHOTOS["coffee"]
    out = np.zeros((111, 57, 3), np.uint8)
    got = fused(img, out=out)
    assert np.shares_memory(got, out)
    assert_array_identical(out, antialias_flip_cvt(img))


# ---------------------------------------------------------------------------- plan reuse


def test_plan_reuse_and_new_shapes():
    from goprep import _native, testing

    # Caching depends on the engine memory of the plans alive (plan_bytes): start from none. An earlier
    # test's plans may still be held, by memos or by garbage awaiting collection (test_errors' pipelines
    # of 2**20-sized plans: ~1 GiB alive on free-threaded 3.14t until a collection, over the 256 MiB bound)
    import gc

    gc.collect()
    testing.clear_caches()
    traces = []

    def counted(img):
        traces.append(1)
        return crop_resize_cvt_normalize_f16_hwc(img)

    fused = goprep.pipeline(counted)
    a, c = PHOTOS["astronaut"], PHOTOS["coffee"]
    r1 = fused(a)
    plans = _native.get().NumPlans()
    r2 = fused(a)
    assert len(traces) == 1, "the second call with the same signature must reuse the traced plan"
    assert _native.get().NumPlans() == plans, "a reused signature must not build another engine plan"
    assert_array_identical(r1, r2)
    assert not np.shares_memory(r1, r2), "a second call must not overwrite the first result"
    assert_array_identical(fused(c), crop_resize_cvt_normalize_f16_hwc(c))  # different shape
    assert_array_identical(fused(_f32(c)), crop_resize_cvt_normalize_f16_hwc(_f32(c)))  # different dtype
    assert_array_identical(fused(np.stack([a, a])), np.stack([r1, r1]))  # batch
    n = len(traces)
    assert_array_identical(fused(a), r1)  # back to the first signature
    assert len(traces) == n == 4, traces  # a, c, float c, batch: one trace each, none for the return


def test_python_caches_are_hit_and_bounded():
    """The Python caches (engine plans by spec, each pipeline's signatures, eager ops' included) are hit
    on repeats and stay bounded however many shapes go through; evicted plans are freed."""
    import gc

    from goprep import testing

    b = _binding()
    with testing.cache_limits(plans=6, signatures=4):
        testing.clear_caches()
        gc.collect()
        base = b.NumPlans()
        x = PHOTOS["chelsea"]
        traced = testing.trace_count()
        goprep.resize(x, (7, 9))
        goprep.resize(x, (7, 9))
        assert testing.trace_count() == traced + 1, "the eager memo must skip tracing on a repeated call"
        fused = goprep.pipeline(lambda im, s: goprep.resize(im, s), device="cpu")
        for k in range(30):
            goprep.resize(x, (k + 1, 5))
            fused(x, (k + 1, 6))
            sizes = testing.cache_sizes()
            assert sizes["plans"] <= 6 and max(sizes["signatures"]) <= 4, sizes
        gc.collect()
        live = b.NumPlans() - base
        assert 0 < live <= 6 + 4 + 4, live  # plans are shared between caches, never more than all of them hold
        testing.clear_caches()
        gc.collect()
        assert b.NumPlans() - base <= 0, "plans no cache holds must be freed"


def _binding():
    from goprep import _native

    return _native.get()


# ---------------------------------------------------------------------------- letterbox info


def _lb_info(img):
    img, info = goprep.letterbox(img, (256, 320), pad_value=0)
    return img, info


def _lb_norm_info(img):
    img, info = goprep.letterbox(img, (256, 320))
    return goprep.normalize(img, mean=MEAN, std=STD), info


def _info_tuple(info):
    return (info.scale, info.top, info.left, info.height, info.width)


@pytest.mark.parametrize("fn", [_lb_info, _lb_norm_info], ids=["letterbox", "letterbox_normalize"])
def test_letterbox_info_returned(fn):
    fused = goprep.pipeline(fn)
    img = PHOTOS["chelsea"]
    got, info = fused(img)
    want, winfo = fn(img)
    assert isinstance(info, goprep.LetterboxInfo)
    assert_array_identical(got, want)
    assert _info_tuple(info) == _info_tuple(winfo)

    imgs = [PHOTOS["astronaut"], PHOTOS["chelsea"], PHOTOS["coffee"]]
    got, infos = fused(imgs)
    assert isinstance(infos, list) and len(infos) == 3
    for i, im in enumerate(imgs):
        w, wi = fn(im)
        assert_array_identical(got[i], w)
        assert isinstance(infos[i], goprep.LetterboxInfo)
        assert _info_tuple(infos[i]) == _info_tuple(wi)
    boxes = np.array([[10.0, 20.0, 100.0, 120.0]])
    np.testing.assert_allclose(np.asarray(infos[2].unmap_boxes(boxes)), np.asarray(fn(imgs[2])[1].unmap_boxes(boxes)))


# ---------------------------------------------------------------------------- misuse


def _two_resizes(img):
    img = goprep.resize(img, (100, 100))
    return goprep.resize(img, (50, 50))


def _resize_and_letterbox(img):
    img = goprep.resize(img, (100, 100))
    img, _ = goprep.letterbox(img, (64, 64))
    return img


def _op_after_normalize(img):
    img = goprep.normalize(img, mean=MEAN, std=STD, layout="HWC")
    return goprep.flip(img)


def _resize_after_normalize(img):
    img = goprep.normalize(img, mean=MEAN, std=STD, layout="HWC")
    return goprep.resize(img, (10, 10))


def _two_normalizes(img):
    img = goprep.normalize(img, mean=MEAN, std=STD, layout="HWC")
    return goprep.normalize(img, mean=MEAN, std=STD, layout="HWC")


def _np_asarray(img):
    img = goprep.resize(img, (100, 100))
    return np.asarray(img)


def _np_flip(img):
    img = goprep.resize(img, (100, 100))
    return np.flip(img, axis=0)


def _np_arith(img):
    img = goprep.resize(img, (100, 100))
    return img * 2


def _np_rmul(img):
    img = goprep.resize(img, (100, 100))
    return 2 * img


def _np_div(img):
    img = goprep.resize(img, (100, 100))
    return img / 255.0


def _np_ufunc(img):
    img = goprep.resize(img, (100, 100))
    return np.multiply(img, 2)


def _np_method_astype(img):
    img = goprep.resize(img, (100, 100))
    return img.astype(np.float32)


def _np_method_transpose(img):
    img = goprep.resize(img, (100, 100))
    return img.transpose(2, 0, 1)


def _np_slice(img):
    img = goprep.resize(img, (100, 100))
    return img[::2]


MISUSE = [_two_resizes, _resize_and_letterbox, _op_after_normalize, _resize_after_normalize, _two_normalizes,
          _np_asarray, _np_flip, _np_arith, _np_rmul, _np_div, _np_ufunc, _np_method_astype, _np_method_transpose,
          _np_slice]


@pytest.mark.parametrize("fn", MISUSE, ids=lambda f: f.__name__.lstrip("_"))
def test_pipeline_misuse_raises(fn):
    img = PHOTOS["astronaut"]
    with pytest.raises(goprep.PipelineError) as ei:
        goprep.pipeline(fn)(img)
    assert isinstance(ei.value, ValueError)
    assert isinstance(ei.value, goprep.GoprepError)
    assert ei.value.code == "pipeline"


def test_pipeline_still_usable_after_misuse():
    with pytest.raises(goprep.PipelineError):
        goprep.pipeline(_two_resizes)(PHOTOS["coffee"])
    img = PHOTOS["coffee"]
    assert_array_identical(goprep.pipeline(resize_flip_normalize)(img), resize_flip_normalize(img))
    # eager ops outside any pipeline are unaffected by an aborted trace
    assert_array_identical(goprep.flip(img), np.ascontiguousarray(img[:, ::-1]))


def test_cuda_device_unavailable():
    if goprep.info()["cuda_available"]:
        pytest.skip("CUDA is available here")
    with pytest.raises(goprep.DeviceError) as ei:
        goprep.pipeline(device="cuda")(resize_only)(PHOTOS["coffee"])
    assert isinstance(ei.value, goprep.BackendError) and isinstance(ei.value, RuntimeError)
    assert ei.value.code == "device_unavailable"


def test_list_of_same_shaped_images_does_not_reuse_rows():
    # Regression: jobs of one RunMany call that share a plan must not share cached source rows.
    rng = np.random.default_rng(11)
    for h in (1, 2, 3, 40):
        a = rng.integers(0, 256, (h, 32, 3), dtype=np.uint8)
        b = rng.integers(0, 256, (h, 32, 3), dtype=np.uint8)

        @goprep.pipeline
        def prep(img):
            return goprep.resize(img, (64, 64))

        got = prep([a, b])
        assert np.array_equal(got[0], prep(a))
        assert np.array_equal(got[1], prep(b))


def test_cache_keys_tell_argument_types_apart():
    img = np.zeros((8, 8, 3), np.uint8)
    goprep.resize(img, (4, 4))
    with pytest.raises(goprep.InvalidArgumentError):
        goprep.resize(img, (4.0, 4))

    @goprep.pipeline
    def prep(x, horizontal):
        return goprep.flip(x, horizontal=horizontal)

    prep(img, True)
    with pytest.raises(goprep.InvalidArgumentError):
        prep(img, 1)


@pytest.mark.parametrize("fn", [resize_flip_normalize, crop_resize_cvt_normalize_f16_hwc, letterbox_normalize])
def test_memo_path_equals_general_path(fn):
    from goprep import testing

    # A repeated small call is served from the memo by the fast path, profiled or not; it must give
    # what the general path (taken here by out=) gives, and a fresh array each call.
    img = rand_u8((300, 280, 3), seed=3)
    pipe = goprep.pipeline(fn)
    first = pipe(img)
    with testing.count_general_path() as calls:
        again = pipe(img)
        goprep.set_profiling(True)
        try:
            third = pipe(img)
        finally:
            goprep.set_profiling(False)
        assert calls() == 0  # all took the memo path
        image = (lambda r: r[0]) if isinstance(first, tuple) else (lambda r: r)
        buf = np.empty_like(image(first))
        general = pipe(img, out=buf)
        assert calls() == 1 and image(general) is buf
    for r in (first, again, third):
        assert_array_identical(image(r), buf)
        if isinstance(r, tuple):
            assert r[1:] == general[1:]
    assert not np.shares_memory(image(again), image(third))


def test_memo_path_float32_alignment_still_checked():
    # The memo path serves float32 sources only when aligned: a misaligned one with the same layout
    # falls through to the general path's error.
    pipe = goprep.pipeline(lambda x: goprep.flip(x))
    img = np.random.default_rng(0).random((8, 6, 3), dtype=np.float32)
    pipe(img)
    raw = np.zeros(img.nbytes + 1, np.uint8)[1:]
    bad = raw.view(np.float32).reshape(img.shape)
    bad[...] = img
    assert not bad.flags.aligned and bad.strides == img.strides
    with pytest.raises(goprep.InvalidArgumentError, match="aligned") as e:
        pipe(bad)
    assert e.value.argument == "src"
    with pytest.raises(goprep.InvalidArgumentError, match="aligned"):
        goprep.flip(bad)


def test_eager_memo_path_equals_general_path():
    from goprep import testing

    img = rand_u8((64, 48, 3), seed=4)
    first = goprep.flip(goprep.resize(img, (20, 30)))
    with testing.count_general_path() as calls:
        again = goprep.flip(goprep.resize(img, (20, 30)))
        goprep.set_profiling(True)
        try:
            third = goprep.flip(goprep.resize(img, (20, 30)))
        finally:
            goprep.set_profiling(False)
        assert calls() == 0
        buf = np.empty_like(first)
        general = goprep.flip(goprep.resize(img, (20, 30)), out=buf)
        assert calls() == 1 and general is buf
    for r in (first, again, third):
        assert_array_identical(r, buf)
