"""The bad-input catalogue: one table of odd arguments (CASES), each of which either works or raises the
documented goprep error (class and builtin base, .code, .argument that the message starts with), and
two runners for it.

- In-process (the default): the case runs in the test process; its stderr must stay clean.
- Forked, for the cases that could crash the process (a subclass lying about its layout, huge sizes,
  extreme integers) or that change process-wide state (threads, the environment): each in its own
  process, so that a crash or abort shows up as that case's failure, with its exit signal and stderr.
  Starting ~100 interpreters would cost minutes on a loaded CI machine. Instead one helper
  interpreter imports this module (numpy and goprep, which loads nothing native) and forks a child per
  case: each child starts its own Go runtime, runs one case and reports back, so cases are isolated
  from each other as separate processes are, for a few milliseconds each.

Both runners run a case with run_case (the same outcome record) and judge it with check.
"""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import goprep
from conftest import IMAGENET_MEAN, IMAGENET_STD, rand_f32, rand_u8

# --------------------------------------------------------------------------------------------------
# the table's types

class _Any:
    def __repr__(self):
        return "ANY"


ANY = _Any()  # an expectation left unchecked


@dataclasses.dataclass(frozen=True)
class Raises:
    """The case raises `cls` (a class name, or a tuple of them: any one), a goprep error unless
    goprep=False. exact: the type itself, not a subclass. code / argument: one value or a set of them;
    argument None: the error names no argument; ANY: not checked. builtin: a builtin base class name."""

    cls: object
    code: object = ANY
    argument: object = ANY
    builtin: str = ""
    exact: bool = False
    goprep: bool = True


OK = "ok"  # the code runs without an exception (it may assert)


@dataclasses.dataclass(frozen=True)
class Case:
    code: str  # run with exec in namespace()
    want: object  # OK or Raises
    after: str = ""  # run after the code (in its namespace), whatever the code raised: e.g. `out` untouched
    forked: bool = False


CASES = {}


def _add(cid, code, want, *, after="", forked=False):
    cid = cid.replace(" ", "")
    assert cid not in CASES, cid
    CASES[cid] = Case(code, want, after, forked)


# --------------------------------------------------------------------------------------------------
# forked cases

from bad_inputs_forked import DTE, FORKED_CASES, IAE, SE, U8  # noqa: E402  (the forked cases: data)

for _cid, (_code, _want) in FORKED_CASES.items():
    _add(_cid, _code, _want if _want == OK else Raises(*_want, exact=True), forked=True)


# --------------------------------------------------------------------------------------------------
# in-process cases: every op against each kind of bad source, out= and argument

MEAN3, STD3 = IMAGENET_MEAN, IMAGENET_STD


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
    return ANY if op == "pipeline" else "src"


def _good_out(op, x):
    r = OPS[op](x)
    return r[0] if isinstance(r, tuple) else r


def _wrong_out_shapes(good):
    transposed = good.shape[::-1] if good.shape[0] != good.shape[-1] else (good.size,)
    return [good.shape[:-1] + (good.shape[-1] + 1,), (1,) + good.shape, transposed]


def _wrong_out_dtypes(good):
    return ["float64", "int32", "float16" if good.dtype != np.float16 else "float32"]


def namespace():
    """The names a case's code sees."""
    return {"np": np, "goprep": goprep, "os": os, "OPS": OPS, "PIPE": _PIPE, "chain": _chain, "MEAN3": MEAN3,
            "STD3": STD3, "rand_u8": rand_u8, "rand_f32": rand_f32, "good_out": _good_out,
            "wrong_out_shapes": _wrong_out_shapes, "wrong_out_dtypes": _wrong_out_dtypes}


def _add_in_process_cases():
    # --- a closed PIL image: goprep's error, not Pillow's "Operation on closed image"
    closed = "from PIL import Image; im = Image.fromarray(np.zeros((6, 7, 3), np.uint8)); im.close(); "
    for op, call in [("resize", "goprep.resize(im, (3, 3))"), ("pipeline", "PIPE(im)"), ("list", "PIPE([im])")]:
        _add(f"closed_pil-{op}", closed + call, Raises(IAE, code="invalid_argument", argument="src", builtin="ValueError"))
    # --- src
    for op in SRC_OPS:
        for dtype in ["int16", "float64", "uint16", "int8", "bool", "object", "complex64"]:
            _add(f"bad_dtype-{op}-{dtype}", f"OPS[{op!r}](np.zeros((10, 12, 3), dtype={dtype!r}))",
                 Raises(DTE, code="bad_dtype", argument=_src_arg(op), builtin="TypeError"))
        for dtype in ["uint8", "float32"]:
            # (an (H, W) array is a one-channel image: tests/test_input_kinds.py)
            for shape in [(2, 2, 10, 12, 3), (12,), ()]:
                # a 1-D uint8 array is encoded image bytes to every op that runs a pipeline (not crop)
                want = (Raises("DecodeError", code="decode", argument=_src_arg(op), builtin="ValueError")
                        if dtype == "uint8" and shape == (12,) and op != "crop"
                        else Raises(SE, code="bad_shape", argument=_src_arg(op), builtin="ValueError"))
                _add(f"bad_ndim-{op}-{dtype}-{shape}", f"OPS[{op!r}](np.zeros({shape!r}, dtype={dtype!r}))", want)
        for c in [2, 5, 0]:
            _add(f"bad_channels-{op}-{c}", f"OPS[{op!r}](np.zeros((10, 12, {c}), dtype=np.uint8))",
                 Raises(SE, code="bad_shape", argument=_src_arg(op), builtin="ValueError"))
        _add(f"non_native_byte_order-{op}",
             f"x = rand_f32((10, 12, 3)).astype('>f4')\nassert not x.dtype.isnative\nOPS[{op!r}](x)",
             Raises((DTE, IAE), argument=_src_arg(op)))
        for shape in [(0, 12, 3), (10, 0, 3), (2, 0, 12, 3), (2, 10, 0, 3)]:
            code = f"OPS[{op!r}](np.zeros({shape!r}, dtype=np.uint8))"
            if op == "crop":  # the window cannot fit either; either argument may be blamed
                want = Raises(IAE, argument={"src", "top", "left", "height", "width"})
            else:
                want = Raises(SE, argument=_src_arg(op), builtin="ValueError")
            _add(f"zero_size_input-{op}-{shape}", code, want)
        for bad in ["None", "'image'", "3.0", "object()"]:  # raises, does not crash
            _add(f"garbage_input-{op}-{bad}", f"OPS[{op!r}]({bad})", Raises("Exception", goprep=False))

    # --- out=
    for op in OUT_OPS:
        for dtype in ["uint8", "float32"]:
            _add(f"read_only_out-{op}-{dtype}",
                 f"x = rand_u8((10, 12, 3)).astype({dtype!r})\nout = np.zeros_like(good_out({op!r}, x))\n"
                 f"out.setflags(write=False)\nOPS[{op!r}](x, out=out)",
                 Raises(IAE, code="read_only", argument="out", builtin="ValueError"), after="assert not out.any()")
        for k in range(3):
            _add(f"wrong_shape_out-{op}-{k}",
                 f"x = rand_u8((10, 12, 3))\ngood = good_out({op!r}, x)\n"
                 f"OPS[{op!r}](x, out=np.zeros(wrong_out_shapes(good)[{k}], dtype=good.dtype))",
                 Raises(SE, code="bad_shape", argument="out", builtin="ValueError"))
            _add(f"wrong_dtype_out-{op}-{k}",
                 f"x = rand_u8((10, 12, 3))\ngood = good_out({op!r}, x)\n"
                 f"OPS[{op!r}](x, out=np.zeros(good.shape, dtype=wrong_out_dtypes(good)[{k}]))",
                 Raises(DTE, code="bad_dtype", argument="out", builtin="TypeError"))
        _add(f"non_contiguous_out-{op}",
             f"x = rand_u8((10, 12, 3))\ngood = good_out({op!r}, x)\n"
             "big = np.zeros(good.shape[:-1] + (2 * good.shape[-1],), dtype=good.dtype)\nout = big[..., ::2]\n"
             f"assert out.shape == good.shape and not out.flags.c_contiguous\nOPS[{op!r}](x, out=out)",
             Raises(IAE, argument="out", builtin="ValueError"))
    for op in ["resize", "flip", "normalize"]:
        _add(f"unaligned_out-{op}",
             f"x = rand_f32((10, 12, 3))\ngood = good_out({op!r}, x)\nraw = np.zeros(good.nbytes + 1, np.uint8)\n"
             f"out = raw[1:].view(good.dtype).reshape(good.shape)\nassert not out.flags.aligned\nOPS[{op!r}](x, out=out)",
             Raises(IAE, argument="out", builtin="ValueError"))

    # out= aliasing the source (right shape and dtype): refused before anything is written
    _OVERLAP = {
        "flip_same": "src = out = rand_u8((10, 12, 3), seed=1)\ngoprep.flip(src, out=out)",
        "resize_same": "src = out = rand_u8((10, 12, 3), seed=2)\ngoprep.resize(src, (10, 12), out=out)",
        "cvt_same": "src = out = rand_u8((10, 12, 3), seed=3)\ngoprep.cvt_color(src, 'rgb2bgr', out=out)",
        "normalize_same": "src = out = rand_f32((10, 12, 3), seed=4)\n"
        "goprep.normalize(src, mean=MEAN3, std=STD3, layout='HWC', out=out)",
        "flip_partial": "big = rand_u8((11, 12, 3), seed=5)\nsrc, out = big[:10], big[1:]\ngoprep.flip(src, out=out)",
        "resize_batch_partial": "big2 = rand_u8((3, 10, 12, 3), seed=6)\nsrc, out = big2[:2], big2[1:]\n"
        "goprep.resize(src, (10, 12), out=out)",
        "flip_reversed_view": "v = rand_u8((10, 12, 3), seed=7)\nsrc, out = v[::-1, ::-1], v\ngoprep.flip(src, out=out)",
        "letterbox_same": "src = out = rand_u8((16, 16, 3), seed=8)\ngoprep.letterbox(src, (16, 16), out=out)",
        "pipeline_same": "src = out = rand_u8((16, 16, 3), seed=9)\n"
        "pipe = goprep.pipeline(lambda im: goprep.flip(goprep.resize(im, (16, 16))))\npipe(src, out=out)",
    }
    for name, code in _OVERLAP.items():
        setup, call = code.rsplit("\n", 1)
        _add(f"out_overlapping_input-{name}", f"{setup}\nbefore = src.copy()\n{call}",
             Raises(IAE, code="overlap", argument="out", builtin="ValueError"),
             after="assert np.array_equal(src, before), 'input was modified before the overlap was detected'")

    # --- sizes
    # a 1-element size is valid for resize (the shorter side, as in torchvision) and center_crop
    _BAD_SIZES = [(0, 10), (10, 0), 0, (-1, 10), (10, -5), -3, (1, 2, 3), None, (0,), 2.5]
    for op, size in [(op, s) for op in ("resize", "letterbox", "center_crop") for s in _BAD_SIZES] + [("letterbox", (5,))]:
        _add(f"bad_size-{op}-{size}", f"goprep.{op}(rand_u8((10, 12, 3)), {size!r})",
             Raises(IAE, argument="size", builtin="ValueError"))
    _OVERFLOW_SRC = {"resize": "rand_u8((4, 4, 3))", "resize_u8_batch": "rand_u8((2, 4, 4, 4))",
                     "resize_f32": "rand_f32((4, 4, 3))", "letterbox": "rand_u8((4, 4, 3))"}
    for op, src in _OVERFLOW_SRC.items():
        for size in [(2**40, 2**40), (2**31, 2**31), 2**32, (1, 2**62), (2**62, 3)]:
            fn = "letterbox" if op == "letterbox" else "resize"
            _add(f"size_overflow-{op}-{size}", f"goprep.{fn}({src}, {size!r})",
                 Raises(SE, code="too_large", argument="size", builtin="ValueError"))
    for size in [(2**64, 10), (10, 2**80), 2**65]:
        _add(f"size_beyond_int64-{size}", f"goprep.resize(rand_u8((4, 4, 3)), {size!r})",
             Raises(IAE, argument="size", builtin="ValueError"))
    _add("pipeline_size_overflow",
         "pipe = goprep.pipeline(lambda im: goprep.normalize(goprep.resize(im, (2**40, 2**40)), mean=MEAN3, std=STD3))\n"
         "pipe(rand_u8((4, 4, 3)))",
         Raises(SE, code="too_large"))

    # Every too-large check named `size`, whichever argument made the result that large.
    _PAD_CALLS = {"eager": "goprep.pad(rand_u8({src}), {kw})",
                  "pipeline": "goprep.pipeline(lambda im: goprep.pad(im, {kw}), device='cpu')(rand_u8({src}))"}
    _TOO_LARGE = {
        "padding_max_dim": ("padding=(2**42, 0)", (8, 10, 3), "padding"),  # beyond the per-dimension limit
        "padding_int64": ("padding=2**80", (8, 10, 3), "padding"),  # beyond int64
        "padding_plan": ("padding=(2**28, 0)", (1, 1, 3), "padding"),  # the engine refuses the plan (its size)
        "multiple_bytes": ("multiple=2**30", (8, 10, 3), "multiple"),  # beyond MAX_OUT_BYTES
        "multiple_plan": ("multiple=(1, 2**29)", (1, 1, 3), "multiple"),
        "size_plan": ("size=(8, 2**30)", (8, 10, 3), "size"),
    }
    for name, (kw, src, arg) in _TOO_LARGE.items():
        for how, call in _PAD_CALLS.items():
            _add(f"too_large_names_the_argument_given-{name}-{how}", call.format(src=src, kw=kw),
                 Raises(SE, code="too_large", argument=arg, builtin="ValueError"))
    # No op grew the image: the source set its size (np.zeros: the pages are never touched).
    _add("too_large_source_names_src", "goprep.flip(np.zeros((1, 2**29, 1), np.uint8))",
         Raises(SE, code="too_large", argument="src"))

    # --- normalize
    for std in ["(0.2, 0.0, 0.2)", "(np.nan, 0.2, 0.2)", "(0.2, 0.2, np.inf)", "(-np.inf, 0.2, 0.2)", "(0.0, 0.0, 0.0)"]:
        _add(f"bad_std-{std}", f"goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std={std})",
             Raises(IAE, argument="std", builtin="ValueError"))
    for n in [0, 2, 4]:
        for arg in ["mean", "std"]:
            kw = {"mean": "MEAN3", "std": "STD3", arg: repr(tuple([0.5] * n))}
            _add(f"mean_std_wrong_length-{n}-{arg}", f"goprep.normalize(rand_u8((4, 5, 3)), mean={kw['mean']}, std={kw['std']})",
                 Raises(IAE, argument=arg, builtin="ValueError"))
    for layout in ["CWH", "chw_", "", "NCHW2"]:
        _add(f"bad_layout-{layout!r}", f"goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std=STD3, layout={layout!r})",
             Raises(IAE, argument="layout", builtin="ValueError"))
    for dtype in ["float64", "uint8", "int8", "bfloat16", ""]:
        _add(f"bad_normalize_dtype-{dtype!r}", f"goprep.normalize(rand_u8((4, 5, 3)), mean=MEAN3, std=STD3, dtype={dtype!r})",
             Raises((DTE, IAE), argument="dtype"))

    # --- crop
    for args, names in [
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
    ]:
        _add(f"bad_crop-{args}", f"goprep.crop(rand_u8((10, 12, 3)), *{args!r})",
             Raises(IAE, argument=names, builtin="ValueError"))
    _add("crop_in_pipeline_out_of_bounds",
         "pipe = goprep.pipeline(lambda im: goprep.resize(goprep.crop(im, 0, 0, 50, 50), (8, 8)))\npipe(rand_u8((40, 60, 3)))",
         Raises(IAE))

    # --- strings
    for interp in ["lanczos3", "cubic", "", "nearest_exact", "linear2", "Bicubic"]:
        _add(f"bad_interpolation-{interp!r}", f"goprep.resize(rand_u8((4, 5, 3)), (3, 3), interpolation={interp!r})",
             Raises(IAE, argument="interpolation", builtin="ValueError"))
    for code in ["rgb2hsv", "bgr2gray", "", "rgb2rgb2"]:
        _add(f"bad_cvt_code-{code!r}", f"goprep.cvt_color(rand_u8((4, 5, 3)), {code!r})",
             Raises(IAE, argument="code", builtin="ValueError"))
    for device in ["tpu", "", "gpu0"]:
        _add(f"bad_device_string-{device!r}", f"goprep.pipeline(device={device!r})(chain)(rand_u8((4, 5, 3)))",
             Raises("GoprepError"))

    # --- pipeline input
    _add("pipeline_bad_inputs-float64", "PIPE(np.zeros((10, 12, 3), np.float64))", Raises(DTE))
    _add("pipeline_bad_inputs-two_channels", "PIPE(np.zeros((10, 12, 2), np.uint8))", Raises(SE))
    _add("pipeline_bad_inputs-mixed_channels",
         "PIPE([np.zeros((10, 12, 3), np.uint8), np.zeros((10, 12, 4), np.uint8)])", Raises("GoprepError"))


_add_in_process_cases()


# --------------------------------------------------------------------------------------------------
# running and judging a case


def run_case(case):
    """Run a case's code, then its `after`; the outcome as a JSON-able record."""
    ns = namespace()
    try:
        exec(case.code, ns)
        res = {"outcome": "ok"}
    except BaseException as e:
        res = {"outcome": "raised", "type": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
               "goprep": isinstance(e, goprep.GoprepError), "code": getattr(e, "code", None),
               "argument": getattr(e, "argument", None), "message": str(e)[:300]}
    try:
        exec(case.after, ns)
        res["after"] = "ok"
    except BaseException as e:
        res["after"] = f"{type(e).__name__}: {e}"
    return res


def _one_or_set(v):
    return v if isinstance(v, (set, tuple, list)) else {v}


def check(cid, r):
    case = CASES[cid]
    want = case.want
    where = f"case {cid}:\n{case.code}\nresult: {r}"
    assert r["signal"] == 0 and r["exit"] == 0, f"the process crashed\n{where}"
    assert "Exception ignored" not in r["stderr"] and "panic" not in r["stderr"], where
    if want == OK:
        assert r["outcome"] == "ok", where
    else:
        assert r["outcome"] == "raised", f"did not raise\n{where}"
        if want.goprep:
            assert r["goprep"], f"{r['type']} is not a goprep error\n{where}"
        classes = _one_or_set(want.cls)
        if want.exact:
            assert r["type"] in classes, f"want {want}\n{where}"
        else:
            assert set(r["mro"]) & set(classes), f"got {r['type']}, want one of {classes}\n{where}"
        if want.builtin:
            assert want.builtin in r["mro"], f"{r['type']} is not a {want.builtin}\n{where}"
        if want.code is not ANY:
            assert r["code"] in _one_or_set(want.code), f".code={r['code']!r}, want {want.code}\n{where}"
        if want.argument is None:
            assert r["argument"] is None, f".argument={r['argument']!r}, want None\n{where}"
        elif want.argument is not ANY:
            args = _one_or_set(want.argument)
            assert r["argument"] in args, f".argument={r['argument']!r}, want one of {args}\n{where}"
            assert r["message"].startswith(r["argument"]), f"message does not start with the argument\n{where}"
    assert r["after"] == "ok", f"after: {case.after}\n{where}"


IN_PROCESS = [k for k, c in CASES.items() if not c.forked]
FORKED = [k for k, c in CASES.items() if c.forked]


@pytest.mark.parametrize("cid", IN_PROCESS)
def test_bad_input(cid, capfd):
    r = run_case(CASES[cid])
    r.update(signal=0, exit=0, stderr=capfd.readouterr().err)
    check(cid, r)


_CHILD = r"""
import json, os, sys
import test_bad_inputs as t  # numpy, goprep (which loads nothing native) and the table

ids = json.load(sys.stdin)
results = {}
for cid in ids:
    r, w = os.pipe()
    err_path = os.path.join(sys.argv[1], cid + ".stderr")
    pid = os.fork()
    if pid == 0:  # a fresh process for the case: its own Go runtime, its own fate
        os.close(r)
        fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        out = json.dumps(t.run_case(t.CASES[cid])).encode()
        os.write(w, out)
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    res = json.loads(data) if data else {"outcome": "no result", "after": None}
    res["signal"] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    res["exit"] = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    with open(err_path) as f:
        res["stderr"] = f.read()[-3000:]
    results[cid] = res
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def forked_outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad_inputs")
    env = {k: v for k, v in os.environ.items() if k != "GOPREP_NUM_THREADS"}
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD), str(tmp)],
        input=json.dumps(FORKED),
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    )
    assert p.returncode == 0, p.stderr[-3000:]
    print(f"\n{len(FORKED)} bad-input cases, one process each, in {time.perf_counter() - t0:.1f} s")
    return json.loads(p.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("cid", FORKED)
def test_bad_input_forked(cid, forked_outcomes):
    check(cid, forked_outcomes[cid])
