"""goprep.data: epoch coverage and DDP shards, the same batches whatever the thread count and run,
per-epoch shuffles, corrupt files (raised by path, or skipped and counted), shutdown with no thread
left (break, exceptions, Ctrl-C, close), the DataLoader path equal to the loader's, and a 2-epoch
training run on its batches. NumPy output where torch is not needed, so that most of it also runs
where torch has no wheel (free-threaded CPython)."""

from __future__ import annotations

import io
import os
import signal
import threading

import numpy as np
import pytest

import goprep
import goprep.data as gd
import goprep.transforms as gt

Image = pytest.importorskip("PIL.Image")
pytestmark = pytest.mark.skipif(not {"jpeg", "png"} <= set(goprep.info()["codecs"]),
                                reason="goprep was built without its codecs")

SIZE = 16
WAIT_S = 60  # every Event wait in these tests is bounded


def _jpeg(seed: int, h: int = 24, w: int = 32, fmt: str = "JPEG") -> bytes:
    a = np.random.default_rng(seed).integers(0, 256, (h, w, 3), np.uint8)
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, fmt)
    return buf.getvalue()


def _images(n: int):
    return [_jpeg(k, 20 + k % 7, 28 + k % 5) for k in range(n)]


def train(items, generator):
    """A random training transform of a list of encoded images: the native random resized crop with
    flips (drawn from ``generator``) fused with the decode in one call, then one normalize."""
    x = gt.random_resized_crop(items, SIZE, hflip=0.5, generator=generator)
    return goprep.normalize(x, mean=0.5, std=0.25)


@goprep.pipeline
def plain(img):
    """A transform without draws."""
    return goprep.normalize(goprep.resize(img, (8, 8)), mean=0.5, std=0.25)


def _goprep_threads():
    return [t for t in threading.enumerate() if t.name.startswith("goprep-data")]


def _epoch(ld):
    return [(np.asarray(x), np.asarray(y)) for x, y in ld]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """An ImageFolder: 3 classes of 5, 4 and 6 images (JPEG and PNG, in nested folders, with upper-case
    extensions) and files that are not images."""
    root = tmp_path_factory.mktemp("folder")
    seed = 0
    for cls, n in (("b_dog", 4), ("a_cat", 5), ("c_eel", 6)):
        for k in range(n):
            d = root / cls / ("sub" if k % 3 == 2 else "")
            d.mkdir(parents=True, exist_ok=True)
            ext = (".jpg", ".PNG", ".jpeg")[k % 3]
            (d / f"{k:02d}{ext}").write_bytes(_jpeg(seed, fmt="PNG" if ext == ".PNG" else "JPEG"))
            seed += 1
        (root / cls / "notes.txt").write_text("not an image")
    return root


def test_image_folder_is_torchvisions_order(folder):
    datasets = pytest.importorskip("torchvision.datasets")
    s = gd.image_folder(folder)
    tv = datasets.ImageFolder(str(folder), is_valid_file=lambda p: p.lower().endswith((".jpg", ".jpeg", ".png")))
    assert s.classes == tv.classes == ["a_cat", "b_dog", "c_eel"]
    assert list(zip(s.items, s.labels)) == tv.samples
    assert len(s) == 15


def test_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory"):
        gd.image_folder(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="any class folder"):
        gd.image_folder(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="classes empty"):
        gd.image_folder(tmp_path)


@pytest.mark.parametrize("n", [13, 16])
@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_epoch_covers_every_sample(n, world):
    """Through the loader's real threads, labels = sample indices: shard="exact" reads each sample
    exactly once across the ranks; "pad" and "drop" give every rank DistributedSampler's count, "pad"
    repeating only the first samples of the epoch's order and "drop" dropping its tail."""
    items = _images(n)
    got = {}
    for shard in ("exact", "pad", "drop"):
        per = []
        for rank in range(world):
            ld = gd.Loader(items, plain, batch_size=3, rank=rank, world_size=world, shard=shard, seed=7,
                           output="numpy", threads=2)
            ld.set_epoch(3)
            ys = np.concatenate([y for _, y in ld])
            assert ys.tolist() == ld.sampler.indices().tolist()
            per.append(ys)
        got[shard] = per
    every = np.concatenate(got["exact"])
    assert sorted(every.tolist()) == list(range(n))
    assert max(map(len, got["exact"])) - min(map(len, got["exact"])) <= 1
    order = gd.shard_indices(n, seed=7, epoch=3)  # the epoch's whole order (one rank)
    for shard, want in (("pad", -(-n // world)), ("drop", n // world)):
        assert all(len(r) == want for r in got[shard])
        flat = np.concatenate(got[shard])
        assert sorted(flat.tolist()) == sorted(order[:want * world].tolist() if shard == "drop" else
                                               list(range(n)) + order[:want * world - n].tolist())


@pytest.mark.parametrize("n", [13, 16])
@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_shard_sizes_are_distributed_samplers(n, world):
    tud = pytest.importorskip("torch.utils.data")
    for shard, drop in (("pad", False), ("drop", True)):
        for rank in range(world):
            ds = tud.distributed.DistributedSampler(range(n), num_replicas=world, rank=rank, drop_last=drop)
            assert len(gd.shard_indices(n, seed=0, epoch=0, rank=rank, world_size=world, shard=shard)) == len(ds)


def test_transform_gets_each_batch_in_one_call():
    calls = []
    lock = threading.Lock()

    def spy(items, generator):
        with lock:
            calls.append(list(items))
        return train(items, generator)

    items = _images(10)
    ld = gd.Loader(items, spy, batch_size=4, output="numpy", threads=3)
    shapes = [x.shape for x, _ in ld]
    assert shapes == [(4, 3, SIZE, SIZE)] * 2 + [(2, 3, SIZE, SIZE)]
    assert sorted(map(len, calls)) == [2, 4, 4]
    assert sorted(x for c in calls for x in c) == sorted(items)


def test_same_batches_whatever_the_thread_count_and_run():
    items = _images(22)
    runs = []
    for threads, prefetch in ((1, 1), (2, 2), (4, 3), (4, 8)):
        ld = gd.Loader(items, train, batch_size=5, seed=11, threads=threads, prefetch=prefetch, output="numpy")
        ld.set_epoch(2)
        runs.append(_epoch(ld))
    first = runs[0]
    assert len(first) == 5
    for other in runs[1:]:
        assert all(np.array_equal(a, b) and np.array_equal(ya, yb) for (a, ya), (b, yb) in zip(first, other))
    # the promise itself: batch b is the transform on its images with the generator of batch_seed
    ld = gd.Loader(items, train, batch_size=5, seed=11, output="numpy")
    ld.set_epoch(2)
    for (x, y), idx in zip(first, ld.plan()):
        assert y.tolist() == idx.tolist()
        g = np.random.default_rng(gd.batch_seed(11, 2, idx))
        assert np.array_equal(x, train([items[i] for i in idx], g))


def test_epoch_changes_the_shuffle_and_the_draws():
    items = _images(12)
    ld = gd.Loader(items, train, batch_size=12, seed=5, output="numpy")
    (x0, y0), = _epoch(ld)
    ld.set_epoch(1)
    (x1, y1), = _epoch(ld)
    assert sorted(y0.tolist()) == sorted(y1.tolist()) == list(range(12))
    assert y0.tolist() != y1.tolist()
    # the same image in both epochs comes out differently (a new draw)
    same0, same1 = x0[list(y0).index(3)], x1[list(y1).index(3)]
    assert not np.array_equal(same0, same1)
    ld.set_epoch(0)
    (x2, y2), = _epoch(ld)
    assert np.array_equal(x0, x2) and np.array_equal(y0, y2)
    # another seed, another order; shuffle=False keeps the samples' order
    other = gd.Loader(items, train, batch_size=12, seed=6, output="numpy")
    assert _epoch(other)[0][1].tolist() != y0.tolist()
    fixed = gd.Loader(items, train, batch_size=12, shuffle=False, output="numpy")
    assert _epoch(fixed)[0][1].tolist() == list(range(12))


@pytest.fixture()
def with_corrupt(tmp_path):
    paths = []
    for k in range(9):
        p = tmp_path / f"{k}.jpg"
        data = _jpeg(k)
        p.write_bytes(data[: len(data) // 3] if k == 4 else data)
        paths.append(str(p))
    return paths


def test_corrupt_file_raises_naming_its_path(with_corrupt):
    ld = gd.Loader(with_corrupt, train, labels=[k % 2 for k in range(9)], batch_size=4, shuffle=False,
                   output="numpy")
    with pytest.raises(goprep.DecodeError) as e:
        _epoch(ld)
    assert with_corrupt[4] in str(e.value) and e.value.path == with_corrupt[4]
    assert ld.skipped == 0
    assert not _goprep_threads()
    # encoded bytes are named by index
    data = [_jpeg(0), b"\xff\xd8\xff garbage", _jpeg(1)]
    with pytest.raises(goprep.DecodeError, match=rf"item 1 \({len(data[1])} bytes\)"):
        _epoch(gd.Loader(data, train, batch_size=3, output="numpy"))


def test_corrupt_file_skipped_and_counted(with_corrupt):
    ld = gd.Loader(with_corrupt, train, batch_size=4, shuffle=False, on_error="skip", output="numpy")
    got = _epoch(ld)
    assert [len(y) for _, y in got] == [4, 3, 1]
    assert sorted(np.concatenate([y for _, y in got]).tolist()) == [0, 1, 2, 3, 5, 6, 7, 8]
    assert ld.skipped == 1 and ld.skipped_files == [with_corrupt[4]]
    assert all(x.shape[0] == len(y) for x, y in got)
    _epoch(ld)  # counted again in the next epoch
    assert ld.skipped == 2
    # a batch of only corrupt images is left out; the count says how many
    bad = [b"", b"not an image"]
    ld = gd.Loader(bad + [_jpeg(3)], train, batch_size=2, shuffle=False, on_error="skip", output="numpy")
    assert [y.tolist() for _, y in ld] == [[2]]
    assert ld.skipped == 2


def test_other_transform_errors_reach_the_consumer():
    def broken(items, generator):
        raise ZeroDivisionError("in the transform")

    ld = gd.Loader(_images(8), broken, batch_size=2, on_error="skip", output="numpy")
    with pytest.raises(ZeroDivisionError, match="in the transform"):
        _epoch(ld)
    assert not _goprep_threads()


def test_break_and_consumer_exceptions_leave_no_thread():
    items = _images(40)
    ld = gd.Loader(items, train, batch_size=2, threads=3, prefetch=4, output="numpy")
    for k, _ in enumerate(ld):
        if k == 1:
            break
    assert not _goprep_threads()
    with pytest.raises(ValueError, match="consumer"):
        for _ in ld:
            raise ValueError("consumer")
    assert not _goprep_threads()
    it = iter(ld)
    next(it)
    assert _goprep_threads()
    del it  # dropped without closing: the generator's finalizer stops its threads
    assert not _goprep_threads()


def test_close_and_context_manager():
    with gd.Loader(_images(30), train, batch_size=2, threads=2, output="numpy") as ld:
        it = iter(ld)
        next(it)
        assert _goprep_threads()
    assert not _goprep_threads()
    with pytest.raises(RuntimeError, match="closed during the epoch"):
        next(it)
    with pytest.raises(RuntimeError, match="after close"):
        iter(ld)


def test_ctrl_c_while_waiting_for_a_batch():
    """A real SIGINT reaches the main thread while it waits for a batch that is still running: the
    KeyboardInterrupt leaves the loop and the running batch's thread is joined."""
    started, release = threading.Event(), threading.Event()

    def held(items, generator):
        started.set()
        assert release.wait(WAIT_S)
        return train(items, generator)

    def interrupt():
        assert started.wait(WAIT_S)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        release.set()

    ld = gd.Loader(_images(6), held, batch_size=2, threads=2, output="numpy")
    helper = threading.Thread(target=interrupt)
    # Python's handler even when the tests run with SIGINT ignored (a non-interactive shell's background job)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    helper.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in ld:
                pass
    finally:
        release.set()
        helper.join(WAIT_S)
        signal.signal(signal.SIGINT, old)
    assert not _goprep_threads()


def test_timeout_names_the_batch_and_warns_of_a_hung_thread():
    """A batch not ready in ``timeout`` seconds raises TimeoutError; its thread cannot be stopped from
    outside, so closing warns that it is left running (a daemon) once ``join_timeout`` has passed."""
    release = threading.Event()

    def held(items, generator):
        assert release.wait(WAIT_S)
        return train(items, generator)

    ld = gd.Loader(_images(4), held, batch_size=2, threads=1, output="numpy", timeout=0.2, join_timeout=0.2)
    try:
        with pytest.warns(RuntimeWarning, match="goprep-data-0 still running a batch"):
            with pytest.raises(TimeoutError, match="batch 0 not ready after 0.2 s"):
                _epoch(ld)
    finally:
        release.set()
    for t in _goprep_threads():  # it finishes its batch, sees the stop and returns
        t.join(WAIT_S)
    assert not _goprep_threads()


@pytest.mark.parametrize("kw,arg", [
    (dict(batch_size=0), "batch_size"), (dict(batch_size=2, threads=0), "threads"),
    (dict(batch_size=2, rank=2, world_size=2), "rank"), (dict(batch_size=2, world_size=0), "world_size"),
    (dict(batch_size=2, shard="even"), "shard"), (dict(batch_size=2, on_error="ignore"), "on_error"),
    (dict(batch_size=2, output="list"), "output"), (dict(batch_size=2, generator="python"), "generator"),
    (dict(batch_size=2, seed=-1), "seed"), (dict(batch_size=2, labels=[0]), "labels"),
    (dict(batch_size=2, output="numpy", pin_memory=True), "pin_memory"), (dict(batch_size=2, timeout=0), "timeout"),
    (dict(batch_size=2, join_timeout=-1), "join_timeout"), (dict(batch_size=2, prefetch=0), "prefetch"),
])
def test_bad_arguments_are_named(kw, arg):
    with pytest.raises(goprep.InvalidArgumentError) as e:
        gd.Loader(_images(3), train, **kw)
    assert e.value.argument == arg
    with pytest.raises(goprep.InvalidArgumentError) as e:
        gd.Loader([b"x", 3], train, batch_size=2)
    assert e.value.argument == "items[1]"
    with pytest.raises(goprep.InvalidArgumentError) as e:
        gd.Loader(_images(3), "train", batch_size=2)
    assert e.value.argument == "transform"


def test_torch_output_and_pinning():
    torch = pytest.importorskip("torch")
    ld = gd.Loader(_images(6), train, labels=[1, 0, 1, 0, 1, 0], batch_size=4, output="torch")
    assert ld._runner.pin_memory == torch.cuda.is_available()
    x, y = next(iter(ld))
    assert x.dtype == torch.float32 and tuple(x.shape) == (4, 3, SIZE, SIZE) and y.dtype == torch.int64
    assert x.is_pinned() == y.is_pinned() == torch.cuda.is_available()
    # torch generators: the same promise with torch.Generator draws
    ld = gd.Loader(_images(6), train, batch_size=6, output="numpy", generator="torch")
    (x, y), = _epoch(ld)
    g = torch.Generator().manual_seed(gd.batch_seed(0, 0, y))
    assert np.array_equal(x, train([_images(6)[i] for i in y], g))


def test_dataset_in_a_dataloader_gives_the_loaders_batches(folder):
    torch = pytest.importorskip("torch")
    ld = gd.Loader(folder, train, batch_size=4, seed=3, threads=3)
    ds = gd.Dataset(folder, train, seed=3)
    assert isinstance(ds, torch.utils.data.Dataset) and ds.classes == ld.classes
    for epoch in (0, 1):
        ld.set_epoch(epoch)
        ds.set_epoch(epoch)
        dl = torch.utils.data.DataLoader(ds, batch_size=4, sampler=ds.sampler(), collate_fn=gd.collate)
        want, got = list(ld), list(dl)
        assert len(got) == len(want) == 4
        for (x, y), (xw, yw) in zip(got, want):
            assert torch.equal(x, xw) and torch.equal(y, yw)
    x, y = ds[2]
    assert tuple(x.shape) == (3, SIZE, SIZE) and int(y) == ds.samples.labels[2]
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_two_epoch_training_on_the_loader(tmp_path):
    """Two classes told apart by colour, read through the loader for 2 epochs by a small CNN with
    SGD: every loss is finite, the weights move, and the second epoch's mean loss is below the first's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    items, labels = [], []
    for k in range(48):
        c = k % 2
        a = rng.integers(0, 60, (40, 48, 3), np.uint8)
        a[..., 0 if c == 0 else 2] += 150
        p = tmp_path / f"{k}.png"
        Image.fromarray(a).save(p)
        items.append(str(p))
        labels.append(c)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(4, 2))
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    means = []
    with gd.Loader(items, train, labels=labels, batch_size=8, seed=1, threads=2) as ld:
        for epoch in range(2):
            ld.set_epoch(epoch)
            losses = []
            for x, y in ld:
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                assert torch.isfinite(loss)
                losses.append(loss.item())
            assert len(losses) == 6
            means.append(sum(losses) / len(losses))
    assert means[1] < means[0], means
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert not _goprep_threads()


def test_dataset_pickles_for_worker_processes():
    """What DataLoader's worker processes get: the dataset pickled (its lock rebuilt), giving the same
    batch for the same epoch and indices."""
    import pickle

    pytest.importorskip("torch")
    ds = gd.Dataset(_images(6), train, seed=4)
    ds.set_epoch(2)
    copy = pickle.loads(pickle.dumps(ds))
    assert copy.epoch == 2
    (x, y), (cx, cy) = ds.__getitems__([5, 0, 3]), copy.__getitems__([5, 0, 3])
    assert y.tolist() == cy.tolist() == [5, 0, 3] and np.array_equal(x.numpy(), cx.numpy())


def test_converted_training_chain_draws_from_the_batch_generator():
    """A converted torchvision training chain takes generator= (its ops draw torchvision's calls on
    it): through the loader its batches are the same for 1 and 2 threads and for two runs, whatever
    torch's global generator does meanwhile, and equal to calling it with that batch's generator."""
    T = pytest.importorskip("torchvision.transforms")
    conv = gt.from_torchvision(T.Compose([T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip(), T.ToTensor()]))
    import torch
    import warnings

    runs = []
    for threads in (1, 2, 1):
        torch.manual_seed(threads)  # the global generator differs between runs: the batches must not
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            loader = gd.Loader(_images(8), conv, batch_size=4, seed=3, threads=threads, output="numpy")
        runs.append(_epoch(loader))
    for run in runs[1:]:
        assert all(np.array_equal(x, rx) and np.array_equal(y, ry) for (x, y), (rx, ry) in zip(runs[0], run))
    from goprep.data._order import batch_seed, make_generator

    idx = [int(i) for i in runs[0][0][1]]  # no labels given: each sample's label is its index
    g = make_generator("numpy", batch_seed(3, 0, idx))
    np.testing.assert_array_equal(np.asarray(conv([_images(8)[i] for i in idx], generator=g)), runs[0][0][0])
    torch.manual_seed(0)
    a = conv(_images(4))  # without generator=: torchvision's draws from torch's global generator
    torch.manual_seed(0)
    assert torch.equal(a, conv(_images(4)))


def test_torch_output_without_torch_is_refused_by_name(monkeypatch):
    """Where PyTorch is not installed (as on free-threaded CPython), output="torch" (the default)
    says so at construction and names output="numpy"; NumPy output needs no torch."""
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # what `import torch` sees without PyTorch
    with pytest.raises(goprep.InvalidArgumentError, match="output='numpy'") as e:
        gd.Loader(_images(2), train, batch_size=2)
    assert e.value.argument == "output"
    (x, y), = _epoch(gd.Loader(_images(2), train, batch_size=2, output="numpy"))
    assert x.shape == (2, 3, SIZE, SIZE) and sorted(y.tolist()) == [0, 1]
