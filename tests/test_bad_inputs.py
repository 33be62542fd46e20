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

U8 = "np.zeros((8, 10, 3), np.uint8)"
F32 = "np.zeros((8, 10, 3), np.float32)"

IAE, SE, DTE, PE = "InvalidArgumentError", "ShapeError", "DTypeError", "PipelineError"

# Cases that could crash the process, or change process-wide state (threads, environment), run forked.
# id -> (code, expected). expected is "ok" (the code runs without an exception; it may assert), or
# (exception class name, code, argument), all three exactly (argument None: the error names none).
_FORKED = {
    # --- memory safety (a subclass lying about its layout)
    "lying_subclass_src": (
        "class L(np.ndarray):\n"
        "    shape = property(lambda s: (4000, 4000, 3)); strides = property(lambda s: (12000, 3, 1))\n"
        f"r = goprep.resize({U8}.view(L), (50, 50)); assert r.shape == (50, 50, 3)",
        "ok",
    ),
    "lying_subclass_out": (
        "class O(np.ndarray):\n    shape = property(lambda s: (50, 50, 3))\n"
        f"goprep.resize({U8}, (50, 50), out=np.zeros((1, 1, 3), np.uint8).view(O))",
        (SE, "bad_shape", "out"),
    ),
    "lying_subclass_list": (
        "class L(np.ndarray):\n    shape = property(lambda s: (4000, 4000, 3))\n"
        f"p = goprep.pipeline(lambda im: goprep.resize(im, (5, 5)), device='cpu'); p([{U8}.view(L), {U8}])",
        "ok",
    ),
    "masked_src": (f"goprep.resize(np.ma.masked_array({U8}), (4, 4))", (IAE, "invalid_argument", "src")),
    "masked_out": (f"goprep.flip({U8}, out=np.ma.masked_array({U8}))", (IAE, "invalid_argument", "out")),
    # --- sizes and huge requests
    "resize_1x1e8": (f"goprep.resize({U8}, (1, 100_000_000))", (SE, "too_large", "size")),
    "resize_1e8x1": (f"goprep.resize({U8}, (100_000_000, 1))", (SE, "too_large", "size")),
    "resize_aa_huge": (f"goprep.resize({U8}, (1, 50_000_000), antialias=True)", (SE, "too_large", "size")),
    "letterbox_huge": (f"goprep.letterbox({U8}, (1, 100_000_000))", (SE, "too_large", "size")),
    "size_beyond_max_dim": (f"goprep.resize({U8}, (1 << 31, 4))", (SE, "too_large", "size")),
    "size_10e400": (f"goprep.resize({U8}, 10**400)", (SE, "too_large", "size")),
    "size_zero": (f"goprep.resize({U8}, (0, 4))", (SE, "bad_shape", "size")),
    "size_negative": (f"goprep.resize({U8}, -3)", (SE, "bad_shape", "size")),
    "size_float": (f"goprep.resize({U8}, (4.0, 4))", (IAE, "invalid_argument", "size")),
    "size_bool": (f"goprep.resize({U8}, True)", (IAE, "invalid_argument", "size")),
    "size_str": (f"goprep.resize({U8}, '4')", (IAE, "invalid_argument", "size")),
    "size_triple": (f"goprep.resize({U8}, (4, 4, 4))", (IAE, "invalid_argument", "size")),
    "size_none": (f"goprep.resize({U8}, None)", (IAE, "invalid_argument", "size")),
    "size_np_int": (f"assert goprep.resize({U8}, (np.int8(3), np.uint64(5))).shape == (3, 5, 3)", "ok"),
    "output_bytes_too_large": (
        "goprep.resize(np.zeros((1, 1, 4), np.uint8), (1 << 30, 1 << 30))",
        (SE, "too_large", "size"),
    ),
    # --- crops with NumPy integers
    "crop_int8_overflow": (f"goprep.crop({U8}, np.int8(100), 0, np.int8(100), 2)", (SE, "bad_shape", "height")),
    "crop_int8_ok": (f"assert goprep.crop({U8}, np.int8(2), np.int8(3), np.int8(4), np.int8(5)).shape == (4, 5, 3)", "ok"),
    "crop_uint8_wrap": (f"goprep.crop({U8}, np.uint8(200), 0, np.uint8(100), 1)", (SE, "bad_shape", "height")),
    "crop_int64_pipeline": (
        "p = goprep.pipeline(lambda im: goprep.crop(im, np.int64(1), np.int64(2), np.int64(3), np.int64(4)), device='cpu')\n"
        f"assert p({U8}).shape == (3, 4, 3)",
        "ok",
    ),
    "crop_negative": (f"goprep.crop({U8}, -1, 0, 2, 2)", (SE, "bad_shape", "top")),
    "crop_zero": (f"goprep.crop({U8}, 0, 0, 0, 2)", (SE, "bad_shape", "height")),
    "crop_outside": (f"goprep.crop({U8}, 0, 5, 2, 6)", (SE, "bad_shape", "width")),
    "crop_float": (f"goprep.crop({U8}, 0.0, 0, 2, 2)", (IAE, "invalid_argument", "top")),
    "crop_bool": (f"goprep.crop({U8}, 0, True, 2, 2)", (IAE, "invalid_argument", "left")),
    "crop_huge": (f"goprep.crop({U8}, 10**400, 0, 1, 1)", (SE, "bad_shape", "height")),
    # --- mean/std/scale
    "mean_str": (f"goprep.normalize({U8}, mean='0.5', std=1)", (IAE, "invalid_argument", "mean")),
    "mean_list_of_str": (f"goprep.normalize({U8}, mean=['0.5'] * 3, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_true": (f"goprep.normalize({U8}, mean=True, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_none": (f"goprep.normalize({U8}, mean=None, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_nan": (f"goprep.normalize({U8}, mean=float('nan'), std=1)", (IAE, "invalid_argument", "mean")),
    "mean_inf_f32": (f"goprep.normalize({U8}, mean=1e39, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_10e400": (f"goprep.normalize({U8}, mean=10**400, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_nested": (f"goprep.normalize({U8}, mean=[[0.5, 0.5, 0.5]], std=1)", (IAE, "invalid_argument", "mean")),
    "mean_dict": (f"goprep.normalize({U8}, mean={{'r': 1}}, std=1)", (IAE, "invalid_argument", "mean")),
    "mean_wrong_len": (f"goprep.normalize({U8}, mean=(1, 2), std=1)", (IAE, "invalid_argument", "mean")),
    "mean_ndarray": (f"goprep.normalize({U8}, mean=np.array([0.5, 0.5, 0.5]), std=np.float32(2))", "ok"),
    "mean_bool_array": (f"goprep.normalize({U8}, mean=np.array([True] * 3), std=1)", (IAE, "invalid_argument", "mean")),
    "std_zero": (f"goprep.normalize({U8}, mean=0, std=(1, 0, 1))", (IAE, "invalid_argument", "std")),
    "std_subnormal_zero_f32": (f"goprep.normalize({U8}, mean=0, std=1e-50)", (IAE, "invalid_argument", "std")),
    "std_str": (f"goprep.normalize({U8}, mean=0, std='1')", (IAE, "invalid_argument", "std")),
    "scale_str": (f"goprep.normalize({U8}, mean=0, std=1, scale='0.5')", (IAE, "invalid_argument", "scale")),
    "scale_list": (f"goprep.normalize({U8}, mean=0, std=1, scale=[0.5])", (IAE, "invalid_argument", "scale")),
    "scale_10e400": (f"goprep.normalize({U8}, mean=0, std=1, scale=10**400)", (IAE, "invalid_argument", "scale")),
    "scale_bool": (f"goprep.normalize({U8}, mean=0, std=1, scale=False)", (IAE, "invalid_argument", "scale")),
    "norm_dtype_bad": (f"goprep.normalize({U8}, mean=0, std=1, dtype='float64')", (IAE, "invalid_argument", "dtype")),
    "norm_dtype_list": (f"goprep.normalize({U8}, mean=0, std=1, dtype=['float32'])", (IAE, "invalid_argument", "dtype")),
    "norm_layout_bad": (f"goprep.normalize({U8}, mean=0, std=1, layout='NCHW')", (IAE, "invalid_argument", "layout")),
    "norm_layout_list": (f"goprep.normalize({U8}, mean=0, std=1, layout=['CHW'])", (IAE, "invalid_argument", "layout")),
    "norm_layout_array": (
        f"goprep.normalize({U8}, mean=.5, std=.5, layout=np.array(['CHW', 'HWC']))", (IAE, "invalid_argument", "layout")
    ),
    "norm_layout_array_1": (
        f"goprep.normalize({U8}, mean=.5, std=.5, layout=np.array(['CHW']))",
        (IAE, "invalid_argument", "layout"),
    ),
    "norm_neg_zero_distinct": (
        f"a = goprep.normalize({U8}, mean=0.0, std=1, scale=-1.0, layout='HWC')\n"
        f"b = goprep.normalize({U8}, mean=-0.0, std=1, scale=-1.0, layout='HWC')\n"
        "assert np.signbit(a).all() and not np.signbit(b).any(), (np.signbit(a).mean(), np.signbit(b).mean())",
        "ok",
    ),
    # --- pad values
    "pad_1e300_f32": (f"goprep.letterbox({F32}, (12, 12), pad_value=1e300)", (IAE, "invalid_argument", "pad_value")),
    "pad_10e400": (f"goprep.letterbox({U8}, (12, 12), pad_value=10**400)", (IAE, "invalid_argument", "pad_value")),
    "pad_nan": (f"goprep.letterbox({F32}, (12, 12), pad_value=float('nan'))", (IAE, "invalid_argument", "pad_value")),
    "pad_u8_256": (f"goprep.letterbox({U8}, (12, 12), pad_value=256)", (IAE, "invalid_argument", "pad_value")),
    "pad_u8_fraction": (f"goprep.letterbox({U8}, (12, 12), pad_value=1.5)", (IAE, "invalid_argument", "pad_value")),
    "pad_str": (f"goprep.letterbox({U8}, (12, 12), pad_value='0')", (IAE, "invalid_argument", "pad_value")),
    "pad_none": (f"goprep.letterbox({U8}, (12, 12), pad_value=None)", (IAE, "invalid_argument", "pad_value")),
    "pad_bool": (f"goprep.letterbox({U8}, (12, 12), pad_value=True)", (IAE, "invalid_argument", "pad_value")),
    "pad_np_uint8": (f"r, _ = goprep.letterbox({U8}, (12, 12), pad_value=np.uint8(7)); assert r[0, 0, 0] == 7", "ok"),
    "pad_neg_zero_f32": (
        f"r, _ = goprep.letterbox({F32}, (12, 12), pad_value=0.0); s, _ = goprep.letterbox({F32}, (12, 12), pad_value=-0.0)\n"
        "assert not np.signbit(r[0, 0, 0]) and np.signbit(s[0, 0, 0])",
        "ok",
    ),
    # --- flags, interpolation, colour codes
    "flip_int_flag": (f"goprep.flip({U8}, horizontal=1)", (IAE, "invalid_argument", "horizontal")),
    "flip_str_flag": (f"goprep.flip({U8}, vertical='yes')", (IAE, "invalid_argument", "vertical")),
    "antialias_none": (f"goprep.resize({U8}, 4, antialias=None)", (IAE, "invalid_argument", "antialias")),
    "antialias_nearest": (f"goprep.resize({U8}, 4, interpolation='nearest', antialias=True)", (IAE, "invalid_argument", "antialias")),
    "interp_bad": (f"goprep.resize({U8}, 4, interpolation='cubic')", (IAE, "invalid_argument", "interpolation")),
    "interp_list": (f"goprep.resize({U8}, 4, interpolation=['nearest'])", (IAE, "invalid_argument", "interpolation")),
    "cvt_list": (f"goprep.cvt_color({U8}, ['rgb2bgr'])", (IAE, "invalid_argument", "code")),
    "cvt_dict": (f"goprep.cvt_color({U8}, {{}})", (IAE, "invalid_argument", "code")),
    "cvt_bad": (f"goprep.cvt_color({U8}, 'rgb2hsv')", (IAE, "invalid_argument", "code")),
    "cvt_channels": (f"goprep.cvt_color({U8}, 'rgba2rgb')", (SE, "bad_shape", "src")),
    # --- sources
    "src_list": ("goprep.resize([[1, 2, 3]], 4)", (IAE, "invalid_argument", "src")),
    "src_none": ("goprep.flip(None)", (IAE, "invalid_argument", "src")),
    "src_int16": ("goprep.flip(np.zeros((4, 4, 3), np.int16))", (DTE, "bad_dtype", "src")),
    "src_float64": ("goprep.flip(np.zeros((4, 4, 3)))", (DTE, "bad_dtype", "src")),
    "src_big_endian": ("goprep.flip(np.zeros((4, 4, 3), '>f4'))", (DTE, "bad_dtype", "src")),
    "src_object": ("goprep.flip(np.zeros((4, 4, 3), object))", (DTE, "bad_dtype", "src")),
    # an (H, W) array is a one-channel image; an RGB-only op on it is refused
    "src_2d_rgb_only": ("goprep.cvt_color(np.zeros((4, 4), np.uint8), 'rgb2bgr')", (SE, "bad_shape", "src")),
    "src_5d": ("goprep.flip(np.zeros((1, 1, 4, 4, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_channels_2": ("goprep.flip(np.zeros((4, 4, 2), np.uint8))", (SE, "bad_shape", "src")),
    "src_zero_width": ("goprep.flip(np.zeros((4, 0, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_empty_batch": ("goprep.flip(np.zeros((0, 4, 4, 3), np.uint8))", (SE, "bad_shape", "src")),
    "src_unaligned_f32": (
        "b = np.zeros(4 * 4 * 3 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(4, 4, 3); goprep.flip(b)",
        (IAE, "invalid_argument", "src"),
    ),
    "src_size1_huge_stride": (
        "x = np.lib.stride_tricks.as_strided(np.arange(12, dtype=np.uint8), (1, 4, 3), (1 << 62, 3, 1))\n"
        "assert np.array_equal(goprep.flip(x), x[:, ::-1])",
        "ok",
    ),
    "src_broadcast_zero_strides": (
        "x = np.broadcast_to(np.arange(3, dtype=np.uint8), (5, 6, 3)); assert np.array_equal(goprep.flip(x), x)",
        "ok",
    ),
    "src_negative_strides": (
        "x = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)[::-1, ::-2, ::-1]\n"
        "assert np.array_equal(goprep.flip(x), x[:, ::-1])",
        "ok",
    ),
    "src_readonly_ok": ("x = np.zeros((4, 4, 3), np.uint8); x.flags.writeable = False; goprep.flip(x)", "ok"),
    # --- out=
    "out_readonly": (
        f"o = np.zeros((8, 10, 3), np.uint8); o.flags.writeable = False; goprep.flip({U8}, out=o)",
        (IAE, "read_only", "out"),
    ),
    "out_overlap": ("x = np.zeros((8, 10, 3), np.uint8); goprep.flip(x, out=x)", (IAE, "overlap", "out")),
    "out_wrong_dtype": (f"goprep.flip({U8}, out=np.zeros((8, 10, 3), np.float32))", (DTE, "bad_dtype", "out")),
    "out_wrong_shape": (f"goprep.flip({U8}, out=np.zeros((8, 10, 4), np.uint8))", (SE, "bad_shape", "out")),
    "out_noncontig": (f"goprep.flip({U8}, out=np.zeros((8, 20, 3), np.uint8)[:, ::2])", (IAE, "invalid_argument", "out")),
    "out_list": (f"goprep.flip({U8}, out=[0])", (IAE, "invalid_argument", "out")),
    # --- traced images
    "traced_len": (
        f"p = goprep.pipeline(lambda im: (len(im), im)[1], device='cpu'); p({U8})",
        (PE, "pipeline", None),
    ),
    "traced_leak": (
        "box = []\n"
        "def f(im):\n    box.append(im); return goprep.flip(im)\n"
        f"goprep.pipeline(f, device='cpu')({U8}); goprep.resize(box[0], 4)",
        (PE, "pipeline", "src"),
    ),
    "traced_leak_crop": (
        "box = []\n"
        "def f(im):\n    box.append(im); return goprep.flip(im)\n"
        f"goprep.pipeline(f, device='cpu')({U8}); goprep.crop(box[0], 0, 0, 1, 1)",
        (PE, "pipeline", "src"),
    ),
    "traced_numpy": (f"goprep.pipeline(lambda im: np.asarray(im), device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_arith": (f"goprep.pipeline(lambda im: im * 2, device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_index": (f"goprep.pipeline(lambda im: im[0], device='cpu')({U8})", (PE, "pipeline", None)),
    "traced_two_resizes": (
        f"goprep.pipeline(lambda im: goprep.resize(goprep.resize(im, 4), 2), device='cpu')({U8})",
        (PE, "pipeline", None),
    ),
    "pipeline_returns_none": (f"goprep.pipeline(lambda im: None, device='cpu')({U8})", (PE, "pipeline", None)),
    "pipeline_empty_list": ("goprep.pipeline(lambda im: im, device='cpu')([])", (SE, "bad_shape", "src")),
    "pipeline_list_mixed_sizes": (
        f"goprep.pipeline(lambda im: im, device='cpu')([{U8}, np.zeros((3, 3, 3), np.uint8)])",
        (SE, "bad_shape", "src"),
    ),
    "pipeline_bad_device": ("goprep.pipeline(lambda im: im, device='gpu')", (IAE, "invalid_argument", "device")),
    "pipeline_device_list": ("goprep.pipeline(lambda im: im, device=['cpu'])", (IAE, "invalid_argument", "device")),
    "pipeline_output_bad": ("goprep.pipeline(lambda im: im, output='tensorflow')", (IAE, "invalid_argument", "output")),
    "pipeline_output_array": (
        "goprep.pipeline(lambda im: im, output=np.array(['a', 'b']))",
        (IAE, "invalid_argument", "output"),
    ),
    "pipeline_output_array_1": (
        "goprep.pipeline(lambda im: im, output=np.array(['numpy']))",
        (IAE, "invalid_argument", "output"),
    ),
    "pipeline_output_list": ("goprep.pipeline(lambda im: im, output=['numpy'])", (IAE, "invalid_argument", "output")),
    "pipeline_not_callable": ("goprep.pipeline(3)", (IAE, "invalid_argument", "fn")),
    # --- stream handles (the engine takes them as int64)
    "stream_negative": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=-1)",
        (IAE, "invalid_argument", "stream"),
    ),
    "stream_2_63": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=2**63)",
        (IAE, "invalid_argument", "stream"),
    ),
    "stream_2_64": (
        f"goprep.pipeline(lambda im: goprep.flip(im))({U8}, stream=np.uint64(2**64 - 1))",
        (IAE, "invalid_argument", "stream"),
    ),
    "to_device_stream_2_63": (f"goprep.to_device({U8}, stream=2**63)", (IAE, "invalid_argument", "stream")),
    # --- threads
    "threads_2_63": ("goprep.set_num_threads(2**63)", (IAE, "invalid_argument", "n")),
    "threads_10e400": ("goprep.set_num_threads(10**400)", (IAE, "invalid_argument", "n")),
    "threads_4097": ("goprep.set_num_threads(4097)", (IAE, "invalid_argument", "n")),
    "threads_zero": ("goprep.set_num_threads(0)", (IAE, "invalid_argument", "n")),
    "threads_float": ("goprep.set_num_threads(2.0)", (IAE, "invalid_argument", "n")),
    "threads_np_int": ("goprep.set_num_threads(np.int64(2)); assert goprep.get_num_threads() == 2", "ok"),
    "env_threads_100000": (
        "os.environ['GOPREP_NUM_THREADS'] = '100000'; goprep.flip(np.zeros((2, 2, 3), np.uint8))",
        (IAE, "invalid_argument", "GOPREP_NUM_THREADS"),
    ),
    "env_threads_word": (
        "os.environ['GOPREP_NUM_THREADS'] = 'many'; goprep.get_num_threads()",
        (IAE, "invalid_argument", "GOPREP_NUM_THREADS"),
    ),
    "env_threads_ok": (
        "os.environ['GOPREP_NUM_THREADS'] = '3'; assert goprep.get_num_threads() == 3",
        "ok",
    ),
    # --- boxes
    "unmap_boxes_bad_shape": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([1, 2, 3])",
        (SE, "bad_shape", "boxes"),
    ),
    "unmap_boxes_str": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 'x']])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_ragged": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 4], [1, 2]])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_complex": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 1j]])",
        (IAE, "invalid_argument", "boxes"),
    ),
    "unmap_boxes_10e400": (
        f"_, info = goprep.letterbox({U8}, (12, 12)); info.unmap_boxes([[1, 2, 3, 10**400]])",
        (IAE, "invalid_argument", "boxes"),
    ),
}

for _cid, (_code, _want) in _FORKED.items():
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
    for interp in ["lanczos", "cubic", "", "nearest_exact", "linear2", "Bicubic"]:
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
