"""The error contract: the class hierarchy, one list of error codes shared with the engine, Go errors
mapped across the boundary, and the limits the engine sets. The catalogue of bad inputs, each raising
the documented class with .code/.argument, is tests/test_bad_inputs.py."""

import numpy as np
import pytest

import goprep
from conftest import assert_goprep_error, rand_u8

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
        desc = np.zeros((1, b.JobColumns()), np.int64)  # Execute's job table: (plan, source, output offset, ...)
        desc[0, :3] = (h, id(src), 0)
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
