"""A converted training chain with colour steps (ColorJitter, RandomGrayscale) runs a batch as ONE
engine call of staged jobs (transforms/_staged_call.py, gomod/engine/staged_job.go): each item's
first segment into a worker's scratch image, its colour program in Go there, the next segment into
its slot of the result. That call equals the three-call path (one engine call per segment, one Go
colour call between) bit for bit: PIL-flavor and tensor-flavor chains, uint8 and float32, hue and
grayscale on, each item with its own draws, JPEG bytes with crop-aware (and DCT-reduced) decode,
1 and 3 threads; and torchvision under the same seed."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import goprep
from goprep import _run
from goprep.transforms import _staged_call as SC

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
T2 = pytest.importorskip("torchvision.transforms.v2")
from PIL import Image  # noqa: E402

import goprep.transforms as gt  # noqa: E402
from conftest import gradient_photos as _photos, jpeg_bytes as _jpegs  # noqa: E402

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
CODECS = pytest.mark.skipif(not {"jpeg"} <= set(goprep.info()["codecs"]), reason="goprep was built without its codecs")


def _chain(M, size: int = 48, erase: bool = False, tensor_in: bool = False):
    """RandomResizedCrop (RandomCrop for tensors: v1's float resize of tensors is a host step of its
    own, item by item) + flip + ColorJitter (hue on) + RandomGrayscale + a flip after the colour
    steps (so the last segment draws too) + ToTensor + Normalize (+ RandomErasing)."""
    if M is T2:
        to = [T2.ToDtype(torch.float32, scale=True)] if tensor_in else [T2.ToImage(), T2.ToDtype(torch.float32, scale=True)]
    else:
        to = [T.ConvertImageDtype(torch.float32)] if tensor_in else [T.ToTensor()]
    crop = M.RandomCrop(size) if tensor_in else M.RandomResizedCrop(size)
    ops = [crop, M.RandomHorizontalFlip(), M.ColorJitter(0.4, 0.4, 0.4, 0.1),
           M.RandomGrayscale(0.3), M.RandomVerticalFlip(), *to, M.Normalize(MEAN, STD)]
    if erase:
        ops.append(M.RandomErasing(0.5))
    return M.Compose(ops)


@contextlib.contextmanager
def _counting():
    """Counts the run path's engine calls (``goprep.testing.count_general_path``: every batch's) and
    the Go colour calls of the three-call path (``count_colour_calls``: binding ColorBatch) while the
    block runs; yields a function returning the (engine, colour) counts so far."""
    with goprep.testing.count_general_path() as engine, goprep.testing.count_colour_calls() as colour:
        yield lambda: (engine(), len(colour))


def _both(prep, src, seed: int, calls=None, **kw):
    """The batch under ``seed`` as one call and as three calls (``colour_path(one_call=False)``), and
    with ``calls`` (a _counting function) the one call's (engine, colour) counts and the pixels it
    decoded (else None)."""
    res, one_counts = [], None
    for one in (True, False):
        before = goprep.testing.decoded_pixels()
        with goprep.testing.colour_path(one_call=one):
            torch.manual_seed(seed)
            res.append(prep(src, **kw))
        if one and calls is not None:
            one_counts = calls() + (goprep.testing.decoded_pixels() - before,)
    return res[0], res[1], one_counts


@pytest.fixture(params=[1, 3], ids=["threads1", "threads3"])
def threads(request, restore_threads):
    goprep.set_num_threads(request.param)
    return request.param


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
def test_pil_batch_one_call_equals_three_and_torchvision(M, threads):
    """PIL images of different sizes (Pillow's numerics): one engine call, no Go colour call of its
    own, equal to the three-call path bit for bit and to torchvision within 1e-5."""
    t = _chain(M)
    prep = gt.from_torchvision(t)
    pils = [Image.fromarray(a) for a in _photos(9)]
    with _counting() as calls:
        got, three, one = _both(prep, pils, 11, calls)
    assert one[:2] == (1, 0)
    assert calls() == (1 + 3, 2)  # the three-call path: 3 segments, 2 colour cuts
    assert torch.equal(got, three)
    torch.manual_seed(11)
    want = torch.stack([t(x) for x in pils])
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.allclose(got, want, rtol=0, atol=1e-5)


@CODECS
@pytest.mark.parametrize("reduce", [None, "auto"])
def test_jpeg_batch_one_call_equals_three(reduce, threads):
    """JPEG bytes, decoded crop-aware (and DCT-reduced with reduce="auto") inside the staged jobs:
    one engine call, equal to the three-call path bit for bit; only the crops' pixels decoded."""
    prep = gt.from_torchvision(_chain(T2, 32))
    data = _jpegs(_photos(8, seed=3))
    with _counting() as calls:
        got, three, one = _both(prep, data, 5, calls, reduce=reduce)
    assert one[:2] == (1, 0)
    assert one[2] < sum(a.shape[0] * a.shape[1] for a in _photos(8, seed=3))  # crop-aware
    assert torch.equal(got, three)
    assert got.shape == (8, 3, 32, 32) and got.dtype == torch.float32


@pytest.mark.parametrize("M", [T, T2], ids=["v1", "v2"])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.float32], ids=["uint8", "float32"])
def test_tensor_batch_one_call_equals_three(M, dtype, threads):
    """A (N, C, H, W) tensor batch (torchvision's tensor numerics, v1's or v2's, uint8 and float32):
    one engine call, equal to the three-call path bit for bit, and torchvision within 1 uint8 level
    (normalized: 1/255/std)."""
    t = _chain(M, 40, tensor_in=True)
    prep = gt.from_torchvision(t)
    a = np.stack([p[:60, :64] for p in _photos(6)])
    x = torch.from_numpy(a).permute(0, 3, 1, 2).contiguous()
    if dtype == torch.float32:
        x = x.float() / 255
    with _counting() as calls:
        got, three, _ = _both(prep, x, 21)
    assert calls() == (1 + 3, 2)  # one call, then the three-call path's
    assert torch.equal(got, three)
    torch.manual_seed(21)
    want = torch.stack([t(im) for im in x])
    assert got.shape == want.shape
    assert (got - want).abs().max().item() <= 1 / 255 / min(STD) + 1e-5


def test_erasing_after_one_call():
    """RandomErasing stays on the finished tensors: the one call then erasing equals the three-call
    path bit for bit, and torchvision within 1e-5."""
    t = _chain(T, 40, erase=True)
    prep = gt.from_torchvision(t)
    pils = [Image.fromarray(a) for a in _photos(7)]
    with _counting() as calls:
        got, three, _ = _both(prep, pils, 8)
    assert calls() == (1 + 3, 2)
    assert torch.equal(got, three)
    torch.manual_seed(8)
    want = torch.stack([t(x) for x in pils])
    assert torch.allclose(got, want, rtol=0, atol=1e-5)


def test_what_go_does_not_take_keeps_three_calls():
    """Float64 arrays (no Go colour kernels) and the Go switch off keep the multi-call path, with
    the same results as before; out= is filled as the three-call path fills it."""
    prep = gt.from_torchvision(_chain(T, 32, tensor_in=True))
    a = np.stack([p[:50, :50] for p in _photos(3)])
    x = torch.from_numpy(a).permute(0, 3, 1, 2).contiguous()
    with _counting() as calls, goprep.testing.colour_path(go=False):
        torch.manual_seed(4)
        off = prep(x)
    assert calls() == (3, 0)  # three segments, NumPy colour kernels
    out = torch.empty_like(off)
    torch.manual_seed(4)
    assert prep(x, out=out) is out
    assert torch.equal(out, off)
    assert not SC.one_call_ready([(None, "v1")], [np.zeros((4, 4, 3), np.float64)], "cpu")
    assert not SC.one_call_ready([(None, "pil")], [np.zeros((4, 4, 3), np.float32)], "cpu")
    assert not SC.one_call_ready([(None, "pil")], [np.zeros((4, 4, 4), np.uint8)], "cpu")
    assert not SC.one_call_ready([(None, "pil")], [np.zeros((4, 4, 3), np.uint8)], "cuda")
    assert SC.one_call_ready([(None, "v2")], [np.zeros((4, 4, 3), np.float32)], "auto")


def test_stage_program_refused_by_the_engine():
    """A stage program whose next plan does not read the image before it is refused by the engine
    before anything runs, naming the stages (binding staged.go, engine CheckStages)."""
    p1 = goprep.pipeline(lambda im: goprep.resize(im, (8, 8)), device="cpu")
    p2 = goprep.pipeline(lambda im: goprep.normalize(im, mean=[0, 0, 0], std=[1, 1, 1]), device="cpu")
    src = np.zeros((16, 16, 3), np.uint8)
    s1 = p1._lookup(src, (), {})
    wrong = p2._lookup(np.zeros((9, 8, 3), np.uint8), (), {})
    res = np.zeros((1, 9, 8, 3), np.float32)
    prog = SC.program([(wrong.handle, "pil", [("brightness", 1.5)])])
    with pytest.raises(goprep.GoprepError) as e:
        _run.run([s1], [src], res, res.shape, res.dtype, "cpu", stages=[prog])
    assert e.value.argument == "stages" and "does not read" in str(e.value)
    assert not res.any()


@pytest.mark.slow
def test_ctrl_c_stops_the_one_call():
    """Ctrl-C reaches the one call of staged jobs (a cancellable call: 64 items of 224x224 float32 out):
    held inside the engine and interrupted, it raises KeyboardInterrupt, has left the engine by then,
    and the next batch runs."""
    from conftest import run_python

    p = run_python(
        r"""
import numpy as np, torch, goprep, goprep.transforms as gt
import torchvision.transforms as T
from goprep import testing
rng = np.random.default_rng(0)
imgs = [rng.integers(0, 256, (300, 280, 3), dtype=np.uint8) for _ in range(64)]
prep = gt.from_torchvision(T.Compose([T.RandomResizedCrop(224), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ToTensor()]))
assert 64 * 3 * 224 * 224 * 4 >= testing.INTERRUPTIBLE_MIN_BYTES
with testing.count_general_path() as calls:
    testing.interrupt_each(lambda: prep(imgs), 5)
    assert prep(imgs).shape == (64, 3, 224, 224)
assert calls() == 6, calls()  # one engine call per batch, the five interrupted ones included
print("ok")
""",
        sigint=True, timeout=300,
    )
    assert p.returncode == 0 and "ok" in p.stdout, f"rc={p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}"


@CODECS
def test_sizes_that_differ_raise_on_both_paths():
    """JPEGs of different sizes through a chain that keeps their sizes (ColorJitter first): both
    paths refuse the batch with a ShapeError naming src, as any list of different result sizes."""
    prep = gt.from_torchvision(T.Compose([T.ColorJitter(0.4, 0.4), T.ToTensor()]))
    data = _jpegs(_photos(3))
    for one in (True, False):
        with goprep.testing.colour_path(one_call=one), pytest.raises(goprep.ShapeError) as e:
            prep(data)
        assert e.value.argument == "src" and "one size" in str(e.value)


def test_bfloat16_tensors_keep_the_dtype_error():
    """A bfloat16 tensor batch (a dtype NumPy has no name for) is no staged job's: one_call_ready
    says no instead of raising, and the chain refuses the batch with the DTypeError naming src that
    any other dtype the engine does not take gets."""
    x = torch.rand(3, 3, 20, 20).to(torch.bfloat16)
    assert not SC.one_call_ready([(None, "v1")], list(x), "cpu")
    prep = gt.from_torchvision(_chain(T, 16, tensor_in=True))
    with pytest.raises(goprep.DTypeError) as e:
        prep(x)
    assert e.value.argument == "src" and "bfloat16" in str(e.value)


def test_benchmark_help_and_bad_arguments():
    """benchmarks/train_fused_color.py explains its arguments with --help and refuses a bad one by
    name (argparse), before it imports or measures anything."""
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "train_fused_color.py")
    ok = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and all(w in ok.stdout for w in ("reps", "threads", "JPEGs per batch")), ok.stderr
    bad = subprocess.run([sys.executable, script, "0"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "reps" in bad.stderr and "must be >= 1" in bad.stderr, bad.stderr
