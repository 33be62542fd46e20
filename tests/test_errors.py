"""Every bad input raises the documented class (and its builtin base), with .code/.argument set and
the message starting with the argument's name; nothing crashes."""

import numpy as np
import pytest

import goprep
from conftest import assert_goprep_error, rand_f32, rand_u8

MEAN3, STD3 = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def _chain(img):
    img = goprep.resize(img, (16, 16))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN3, std=STD3)


_PIPE = goprep.pipeline(_chain)


def _c(x):
    # mean/std as long as the channel axis so that only the property under test is wrong
    return x.shape[-1] if getattr(x, "ndim", 0) >= 3 and x.shape[-1] > 0 else 3


def _mean_std(c):
    return tuple([0.5] * c), tuple([0.25] * c)


# op name -> callable(src, **kw). All are valid for a 3-channel uint8/float32 image.
OPS = {
    "resize": lambda x, **kw: goprep.resize(x, (8, 8), **kw),
    "resize_nearest": lambda x, **kw: goprep.resize(x, (8, 8), interpolation="nearest", **kw),
    "resize_antialias": lambda x, **kw: goprep.resize(x, (4, 4), antialias=True, **kw),
    "flip": lambda x, **kw: goprep.flip(x, **kw),
    "crop": lambda x, **kw: goprep.crop(x, 0, 0, 1, 1, **kw),
    "letterbox": lambda x, **kw: goprep.letterbox(x, (8, 8), **kw),
    "cvt_color": lambda x, **kw: goprep.cvt_color(x, "rgb2bgr", **kw),
    "normalize": lambda x, **kw: goprep.normalize(x, mean=_mean_std(_c(x))[0], std=_mean_std(_c(x))[1], **kw),
    "pipeline": lambda x, **kw: _PIPE(x, **kw),
}
SRC_OPS = list(OPS)  # ops whose input is validated
OUT_OPS = [k for k in OPS if k != "crop"]


def _src_arg(op):
    # the decorated function's parameter name is up to the implementation; plain ops name `src`
    return None if op == "pipeline" else "src"


# -------------------------------------------------------------------------------------- hierarchy


def test_error_hierarchy():
    G = goprep.GoprepError
    assert issubclass(goprep.InvalidArgumentError, G) and issubclass(goprep.InvalidArgumentError, ValueError)
    assert issubclass(goprep.ShapeError, goprep.InvalidArgumentError) and issubclass(goprep.ShapeError, ValueError)
    assert issubclass(goprep.DTypeError, G) and issubclass(goprep.DTypeError, TypeError)
    assert issubclass(goprep.PipelineError, G) and issubclass(goprep.PipelineError, ValueError)
    assert issubclass(goprep.BackendError, G) and issubclass(goprep.BackendError, RuntimeError)
    assert issubclass(goprep.DeviceError, goprep.BackendError)
    assert issubclass(goprep.ForkError, goprep.BackendError)
    assert issubclass(G, Exception)


# -------------------------------------------------------------------------------------- src


@pytest.mark.parametrize("dtype", ["int16", "float64", "uint16", "int8", "bool", "object", "complex64"])
@pytest.mark.parametrize("op", SRC_OPS)
def test_bad_dtype(op, dtype):
    x = np.zeros((10, 12, 3), dtype=dtype)
    with pytest.raises(goprep.DTypeError) as ei:
        OPS[op](x)
    assert_goprep_error(ei.value, goprep.DTypeError, argument=_src_arg(op), code="bad_dtype", builtin=TypeError)


@pytest.mark.parametrize("shape", [(10, 12), (2, 2, 10, 12, 3), (12,), ()])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("op", SRC_OPS)
def test_bad_ndim(op, shape, dtype):
    x = np.zeros(shape, dtype=dtype)
    with pytest.raises(goprep.ShapeError) as ei:
        OPS[op](x)
    assert_goprep_error(ei.value, goprep.ShapeError, argument=_src_arg(op), code="bad_shape", builtin=ValueError)


@pytest.mark.parametrize("c", [2, 5, 0])
@pytest.mark.parametrize("op", SRC_OPS)
def test_bad_channels(op, c):
    x = np.zeros((10, 12, c), dtype=np.uint8)
    with pytest.raises(goprep.ShapeError) as ei:
        OPS[op](x)
    assert_goprep_error(ei.value, goprep.ShapeError, argument=_src_arg(op), code="bad_shape", builtin=ValueError)


@pytest.mark.parametrize("op", SRC_OPS)
def test_non_native_byte_order(op):
    x = rand_f32((10, 12, 3)).astype(">f4")
    assert not x.dtype.isnative
    with pytest.raises((goprep.DTypeError, goprep.InvalidArgumentError)) as ei:
        OPS[op](x)
    assert_goprep_error(ei.value, (goprep.DTypeError, goprep.InvalidArgumentError), argument=_src_arg(op))


@pytest.mark.parametrize("shape", [(0, 12, 3), (10, 0, 3), (2, 0, 12, 3), (2, 10, 0, 3)])
@pytest.mark.parametrize("op", SRC_OPS)
def test_zero_size_input(op, shape):
    x = np.zeros(shape, dtype=np.uint8)
    if op == "crop":  # the window cannot fit either; either argument may be blamed
        with pytest.raises(goprep.InvalidArgumentError) as ei:
            OPS[op](x)
        assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument={"src", "top", "left", "height", "width"})
        return
    with pytest.raises(goprep.ShapeError) as ei:
        OPS[op](x)
    assert_goprep_error(ei.value, goprep.ShapeError, argument=_src_arg(op), builtin=ValueError)


@pytest.mark.parametrize("bad", [None, "image", 3.0, object()])
@pytest.mark.parametrize("op", SRC_OPS)
def test_garbage_input_raises_not_crashes(op, bad):
    with pytest.raises(Exception):
        OPS[op](bad)


# -------------------------------------------------------------------------------------- out


def _good_out(op, x):
    r = OPS[op](x)
    return r[0] if isinstance(r, tuple) else r


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("op", OUT_OPS)
def test_read_only_out(op, dtype):
    x = rand_u8((10, 12, 3)).astype(dtype)
    out = np.zeros_like(_good_out(op, x))
    out.setflags(write=False)
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        OPS[op](x, out=out)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="out", code="read_only", builtin=ValueError)
    assert not out.any()


@pytest.mark.parametrize("op", OUT_OPS)
def test_wrong_shape_out(op):
    x = rand_u8((10, 12, 3))
    good = _good_out(op, x)
    for shape in [good.shape[:-1] + (good.shape[-1] + 1,), (1,) + good.shape, good.shape[::-1] if good.shape[0] != good.shape[-1] else (good.size,)]:
        out = np.zeros(shape, dtype=good.dtype)
        with pytest.raises(goprep.ShapeError) as ei:
            OPS[op](x, out=out)
        assert_goprep_error(ei.value, goprep.ShapeError, argument="out", code="bad_shape", builtin=ValueError)


@pytest.mark.parametrize("op", OUT_OPS)
def test_wrong_dtype_out(op):
    x = rand_u8((10, 12, 3))
    good = _good_out(op, x)
    for dt in ["float64", "int32", "float16" if good.dtype != np.float16 else "float32"]:
        out = np.zeros(good.shape, dtype=dt)
        with pytest.raises(goprep.DTypeError) as ei:
            OPS[op](x, out=out)
        assert_goprep_error(ei.value, goprep.DTypeError, argument="out", code="bad_dtype", builtin=TypeError)


@pytest.mark.parametrize("op", OUT_OPS)
def test_non_contiguous_out(op):
    x = rand_u8((10, 12, 3))
    good = _good_out(op, x)
    big = np.zeros(good.shape[:-1] + (2 * good.shape[-1],), dtype=good.dtype)
    out = big[..., ::2]
    assert out.shape == good.shape and not out.flags.c_contiguous
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        OPS[op](x, out=out)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="out", builtin=ValueError)


@pytest.mark.parametrize("op", ["resize", "flip", "normalize"])
def test_unaligned_out(op):
    x = rand_f32((10, 12, 3))
    good = _good_out(op, x)
    raw = np.zeros(good.nbytes + 1, np.uint8)
    out = raw[1:].view(good.dtype).reshape(good.shape)
    assert not out.flags.aligned
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        OPS[op](x, out=out)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="out", builtin=ValueError)


def _overlap_cases():
    # (name, callable(src, out), src, out) where out has the right shape/dtype but aliases src
    cases = []
    x = rand_u8((10, 12, 3), seed=1)
    cases.append(("flip_same", lambda s, o: goprep.flip(s, out=o), x, x))
    y = rand_u8((10, 12, 3), seed=2)
    cases.append(("resize_same", lambda s, o: goprep.resize(s, (10, 12), out=o), y, y))
    z = rand_u8((10, 12, 3), seed=3)
    cases.append(("cvt_same", lambda s, o: goprep.cvt_color(s, "rgb2bgr", out=o), z, z))
    f = rand_f32((10, 12, 3), seed=4)
    cases.append(("normalize_same", lambda s, o: goprep.normalize(s, mean=MEAN3, std=STD3, layout="HWC", out=o), f, f))
    big = rand_u8((11, 12, 3), seed=5)
    cases.append(("flip_partial", lambda s, o: goprep.flip(s, out=o), big[:10], big[1:]))
    big2 = rand_u8((3, 10, 12, 3), seed=6)
    cases.append(("resize_batch_partial", lambda s, o: goprep.resize(s, (10, 12), out=o), big2[:2], big2[1:]))
    v = rand_u8((10, 12, 3), seed=7)
    cases.append(("flip_reversed_view", lambda s, o: goprep.flip(s, out=o), v[::-1, ::-1], v))
    lb = rand_u8((16, 16, 3), seed=8)
    cases.append(("letterbox_same", lambda s, o: goprep.letterbox(s, (16, 16), out=o), lb, lb))
    p = rand_u8((16, 16, 3), seed=9)
    pipe = goprep.pipeline(lambda im: goprep.flip(goprep.resize(im, (16, 16))))
    cases.append(("pipeline_same", lambda s, o: pipe(s, out=o), p, p))
    return cases


@pytest.mark.parametrize("case", _overlap_cases(), ids=lambda c: c[0])
def test_out_overlapping_input(case):
    _, fn, src, out = case
    before = src.copy()
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        fn(src, out)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="out", code="overlap", builtin=ValueError)
    assert np.array_equal(src, before), "input was modified before the overlap was detected"


# -------------------------------------------------------------------------------------- sizes


_BAD_SIZES = [(0, 10), (10, 0), 0, (-1, 10), (10, -5), -3, (1, 2, 3), None, (0,), 2.5]


# a 1-element size is valid for resize (the shorter side, as in torchvision) and center_crop
@pytest.mark.parametrize(
    "op,size",
    [(op, s) for op in ("resize", "letterbox", "center_crop") for s in _BAD_SIZES] + [("letterbox", (5,))],
)
def test_bad_size(op, size):
    x = rand_u8((10, 12, 3))
    fn = {"resize": goprep.resize, "letterbox": goprep.letterbox, "center_crop": goprep.center_crop}[op]
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        fn(x, size)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="size", builtin=ValueError)


@pytest.mark.parametrize("size", [(2**40, 2**40), (2**31, 2**31), 2**32, (1, 2**62), (2**62, 3)])
@pytest.mark.parametrize("op", ["resize", "letterbox", "resize_u8_batch", "resize_f32"])
def test_size_overflow(op, size):
    if op == "resize":
        fn = lambda: goprep.resize(rand_u8((4, 4, 3)), size)
    elif op == "resize_u8_batch":
        fn = lambda: goprep.resize(rand_u8((2, 4, 4, 4)), size)
    elif op == "resize_f32":
        fn = lambda: goprep.resize(rand_f32((4, 4, 3)), size)
    else:
        fn = lambda: goprep.letterbox(rand_u8((4, 4, 3)), size)
    with pytest.raises(goprep.ShapeError) as ei:
        fn()
    assert_goprep_error(ei.value, goprep.ShapeError, argument="size", code="too_large", builtin=ValueError)


@pytest.mark.parametrize("size", [(2**64, 10), (10, 2**80), 2**65])
def test_size_beyond_int64(size):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(rand_u8((4, 4, 3)), size)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="size", builtin=ValueError)


def test_pipeline_size_overflow():
    pipe = goprep.pipeline(lambda im: goprep.normalize(goprep.resize(im, (2**40, 2**40)), mean=MEAN3, std=STD3))
    with pytest.raises(goprep.ShapeError) as ei:
        pipe(rand_u8((4, 4, 3)))
    assert ei.value.code == "too_large"


_PAD = lambda x, **kw: goprep.pad(x, **kw)  # noqa: E731
_PAD_PIPE = lambda x, **kw: goprep.pipeline(lambda im: goprep.pad(im, **kw), device="cpu")(x)  # noqa: E731


@pytest.mark.parametrize("pad", [_PAD, _PAD_PIPE], ids=["eager", "pipeline"])
@pytest.mark.parametrize(
    "kw,src,arg",
    [
        (dict(padding=(2**42, 0)), (8, 10, 3), "padding"),  # beyond the per-dimension limit
        (dict(padding=2**80), (8, 10, 3), "padding"),  # beyond int64
        (dict(padding=(2**28, 0)), (1, 1, 3), "padding"),  # the engine refuses the plan (its size)
        (dict(multiple=2**30), (8, 10, 3), "multiple"),  # beyond MAX_OUT_BYTES
        (dict(multiple=(1, 2**29)), (1, 1, 3), "multiple"),
        (dict(size=(8, 2**30)), (8, 10, 3), "size"),
    ],
    ids=["padding_max_dim", "padding_int64", "padding_plan", "multiple_bytes", "multiple_plan", "size_plan"],
)
def test_too_large_names_the_argument_given(pad, kw, src, arg):
    # Every too-large check named `size`, whichever argument made the result that large.
    with pytest.raises(goprep.ShapeError) as ei:
        pad(rand_u8(src), **kw)
    assert_goprep_error(ei.value, goprep.ShapeError, argument=arg, code="too_large", builtin=ValueError)


def test_too_large_source_names_src():
    # No op grew the image: the source set its size (np.zeros: the pages are never touched).
    with pytest.raises(goprep.ShapeError) as ei:
        goprep.flip(np.zeros((1, 2**29, 1), np.uint8))
    assert_goprep_error(ei.value, goprep.ShapeError, argument="src", code="too_large")


_UNALLOCATABLE = {  # results of 3 to 12 TiB: within MAX_OUT_BYTES, beyond what NumPy can allocate here
    "center_crop": (lambda x: goprep.center_crop(x, 2**20), "size"),
    "letterbox": (lambda x: goprep.letterbox(x, 2**20), "size"),
    "pad_size": (lambda x: goprep.pad(x, size=2**20), "size"),
    "pad_padding": (lambda x: goprep.pad(x, 2**20), "padding"),
    "pipeline": (lambda x: goprep.pipeline(lambda im: goprep.center_crop(im, 2**20), device="cpu")(x), "size"),
    "pipeline_list": (lambda x: goprep.pipeline(lambda im: goprep.pad(im, 2**20), device="cpu")([x, x]), "padding"),
    "normalize": (
        lambda x: goprep.pipeline(lambda im: goprep.normalize(goprep.letterbox(im, 2**20)[0], mean=0, std=1))(x),
        "size",
    ),
}


@pytest.mark.parametrize("case", list(_UNALLOCATABLE))
def test_unallocatable_result_is_too_large(case):
    # NumPy's MemoryError ("Unable to allocate 3.00 TiB") escaped. Where the machine would grant the
    # address space (vm.overcommit_memory=1), the allocation fails here on purpose instead.
    import contextlib

    from goprep import testing

    fn, arg = _UNALLOCATABLE[case]
    try:
        np.empty(2**40, np.uint8)  # never touched: nothing is committed
    except MemoryError:
        refuse = contextlib.nullcontext()
    else:
        refuse = testing.refuse_allocations()
    with refuse, pytest.raises(goprep.ShapeError) as ei:
        fn(rand_u8((8, 8, 3)))
    assert_goprep_error(ei.value, goprep.ShapeError, argument=arg, code="too_large", builtin=ValueError)


# -------------------------------------------------------------------------------------- normalize


@pytest.mark.parametrize(
    "std", [(0.2, 0.0, 0.2), (np.nan, 0.2, 0.2), (0.2, 0.2, np.inf), (-np.inf, 0.2, 0.2), (0.0, 0.0, 0.0)]
)
def test_bad_std(std):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std=std)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="std", builtin=ValueError)


@pytest.mark.parametrize("arg", ["mean", "std"])
@pytest.mark.parametrize("n", [0, 2, 4])
def test_mean_std_wrong_length(arg, n):
    kw = {"mean": MEAN3, "std": STD3}
    kw[arg] = tuple([0.5] * n)
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.normalize(rand_u8((4, 5, 3)), **kw)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument=arg, builtin=ValueError)


@pytest.mark.parametrize("layout", ["CWH", "chw_", "", "NCHW2"])
def test_bad_layout(layout):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std=STD3, layout=layout)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="layout", builtin=ValueError)


@pytest.mark.parametrize("dtype", ["float64", "uint8", "int8", "bfloat16", ""])
def test_bad_normalize_dtype(dtype):
    with pytest.raises((goprep.DTypeError, goprep.InvalidArgumentError)) as ei:
        goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std=STD3, dtype=dtype)
    assert_goprep_error(ei.value, (goprep.DTypeError, goprep.InvalidArgumentError), argument="dtype")


# -------------------------------------------------------------------------------------- crop


@pytest.mark.parametrize(
    "args,names",
    [
        ((-1, 0, 5, 5), {"top"}),
        ((0, -1, 5, 5), {"left"}),
        ((0, 0, -5, 5), {"height"}),
        ((0, 0, 5, -5), {"width"}),
        ((0, 0, 0, 5), {"height"}),
        ((0, 0, 5, 0), {"width"}),
        ((8, 0, 5, 5), {"top", "height"}),
        ((0, 10, 5, 5), {"left", "width"}),
        ((0, 0, 11, 12), {"top", "height"}),
        ((0, 0, 10, 13), {"left", "width"}),
        ((10, 0, 1, 1), {"top", "height"}),
        ((0, 0, 2**62, 2**62), {"top", "height", "left", "width"}),
    ],
)
def test_bad_crop(args, names):
    x = rand_u8((10, 12, 3))
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.crop(x, *args)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument=names, builtin=ValueError)


def test_crop_in_pipeline_out_of_bounds():
    pipe = goprep.pipeline(lambda im: goprep.resize(goprep.crop(im, 0, 0, 50, 50), (8, 8)))
    with pytest.raises(goprep.InvalidArgumentError):
        pipe(rand_u8((40, 60, 3)))


# -------------------------------------------------------------------------------------- strings


@pytest.mark.parametrize("interp", ["lanczos", "cubic", "", "nearest_exact", "linear2", "Bicubic"])
def test_bad_interpolation(interp):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.resize(rand_u8((4, 5, 3)), (3, 3), interpolation=interp)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="interpolation", builtin=ValueError)


@pytest.mark.parametrize("code", ["rgb2hsv", "bgr2gray", "", "rgb2rgb2"])
def test_bad_cvt_code(code):
    with pytest.raises(goprep.InvalidArgumentError) as ei:
        goprep.cvt_color(rand_u8((4, 5, 3)), code)
    assert_goprep_error(ei.value, goprep.InvalidArgumentError, argument="code", builtin=ValueError)


@pytest.mark.parametrize("device", ["tpu", "", "gpu0"])
def test_bad_device_string(device):
    with pytest.raises(goprep.GoprepError):
        goprep.pipeline(device=device)(_chain)(rand_u8((4, 5, 3)))


# -------------------------------------------------------------------------------------- pipeline input


def test_pipeline_bad_inputs():
    with pytest.raises(goprep.DTypeError):
        _PIPE(np.zeros((10, 12, 3), np.float64))
    with pytest.raises(goprep.ShapeError):
        _PIPE(np.zeros((10, 12, 2), np.uint8))
    with pytest.raises(goprep.GoprepError):
        _PIPE([np.zeros((10, 12, 3), np.uint8), np.zeros((10, 12, 4), np.uint8)])  # mixed channels


def test_library_still_works_after_errors():
    x = rand_u8((10, 12, 3))
    for _ in range(3):
        with pytest.raises(goprep.GoprepError):
            goprep.resize(x, (0, 0))
    assert goprep.resize(x, (10, 12)).shape == (10, 12, 3)
    assert np.array_equal(goprep.flip(x), x[:, ::-1])


# ------------------------------------------------------------------ one source for shared facts


def _binding():
    from goprep import _native

    return _native.get()


def test_error_codes_have_one_source():
    """The engine's list (engine.Codes) is the only list: Python's map covers exactly it, and every code
    raised anywhere in goprep's Python sources is on it."""
    import pathlib
    import re

    from goprep import _errors

    codes = _binding().ErrorCodes().split(",")
    assert len(codes) == len(set(codes)) and "invalid_argument" in codes
    assert set(_errors._BY_CODE) == set(codes)
    classes = [getattr(goprep, n) for n in goprep.__all__ if n.endswith("Error")]
    assert {c.default_code for c in classes} <= set(codes)
    used = set()
    for f in pathlib.Path(goprep.__file__).parent.rglob("*.py"):
        used |= set(re.findall(r"""code=["'](\w+)["']""", f.read_text()))
    assert {"too_large", "read_only", "overlap"} <= used, used  # the scan finds them
    assert used <= set(codes), used - set(codes)


def _native_error(fn, *args):
    try:
        fn(*args)
    except RuntimeError as e:  # what gopy raises for a Go error, before goprep maps it
        return e
    raise AssertionError(f"{fn} did not fail")


def test_error_mapping_across_the_boundary():
    """Real Go errors, raised through gopy, map to the documented class with .code and .argument."""
    import json

    from goprep import _errors
    from goprep._trace import trace_array

    b = _binding()
    good = json.loads(trace_array(rand_u8((4, 5, 3))).spec())

    def spec(**edit):
        s = json.loads(json.dumps(good))
        for path, v in edit.items():
            d = s
            keys = path.split("__")
            for k in keys[:-1]:
                d = d[k]
            d[keys[-1]] = v
        return json.dumps(s)

    stop = np.ones(1, np.int32)  # a cancel flag already set
    h = b.NewPlan(spec())
    try:
        src, out = rand_u8((4, 5, 3)), np.empty((4, 5, 3), np.uint8)
        desc = np.array([[h, id(src), 0]], np.int64)  # Execute's job table: (plan, source, output offset)
        cases = [
            (_native_error(b.NewPlan, "{"), goprep.InvalidArgumentError, "invalid_argument", "spec"),
            (_native_error(b.NewPlan, spec(in__dtype="i16")), goprep.DTypeError, "bad_dtype", "src"),
            (_native_error(b.NewPlan, spec(in__c=2)), goprep.ShapeError, "bad_shape", "src"),
            (_native_error(b.NewPlan, spec(resize__h=1 << 40)), goprep.ShapeError, "too_large", "size.height"),
            (_native_error(b.SetNumThreads, 0), goprep.InvalidArgumentError, "invalid_argument", "n"),
            (_native_error(b.CheckNumThreadsEnv, "x"), goprep.InvalidArgumentError, "invalid_argument", "GOPREP_NUM_THREADS"),
            (_native_error(b.PlanBytes, -5), goprep.BackendError, "internal", "plan"),
            (_native_error(b.Execute, id(desc), 1, id(out), "cpu", False, -1, -1, id(stop), 0, 0), goprep.BackendError, "cancelled", None),
            (_native_error(b.Execute, 0, 1, id(out), "tpu", False, -1, -1, 0, 0, 0), goprep.InvalidArgumentError, "invalid_argument", "device"),
        ]
    finally:
        b.FreePlan(h)
    for raw, cls, code, arg in cases:
        assert str(raw).startswith(f"goprep[{code}]"), raw
        e = _errors.from_native(raw)
        assert type(e) is cls and e.code == code and e.argument == arg, (raw, type(e), e.code, e.argument)
    # codes only Python raises still parse into their class if they ever cross the boundary
    for code, cls in _errors._BY_CODE.items():
        e = _errors.from_native(RuntimeError(f"goprep[{code}] out: message"))
        assert type(e) is cls and e.code == code and e.argument == "out"
    assert type(_errors.from_native(RuntimeError("segfault?"))) is goprep.BackendError


def test_max_dim_from_the_engine():
    from goprep import _native

    top = _native.limit("max_dim")
    assert top == _binding().MaxDim() and top > 0
    assert goprep.resize(rand_u8((2, 2, 3)), (1, 3)).shape == (1, 3, 3)
    with pytest.raises(goprep.ShapeError) as e:
        goprep.resize(rand_u8((2, 2, 3)), (1, top + 1))
    assert e.value.code == "too_large"


@pytest.mark.parametrize(
    "device",
    ["cpu", "auto", "cuda", "cuda:0", "cuda:12", "cuda:01", "cuda:-1", "cuda:+1", "cuda: 1", "CUDA", "gpu", "", "cuda:",
     "cpu ", "cuda:1.0", "cuda:0x1"],
)
def test_device_grammar_agrees(device):
    """Python checks device strings at pipeline() (no extension loaded yet), the engine at run time: the
    two grammars must accept exactly the same strings."""
    from goprep import _device

    try:
        _device.check_device(device)
        py_ok = True
    except goprep.InvalidArgumentError:
        py_ok = False
    e = _native_error(_binding().Execute, 0, 1, 1, device, False, -1, -1, 0, 0, 0)  # a valid device fails later, on the job table
    go_ok = "device:" not in str(e)
    assert py_ok == go_ok, (device, py_ok, str(e))
