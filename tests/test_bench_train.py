"""Issue 36's training benchmark (goprep/_benchsuite/train.py): its data, its pre-timing checks, its
targets' verdicts, and a small run end to end. Speed is never asserted (the machine is shared); what is
asserted can fail: the data is what the issue asks for, goprep's batch is its per-item path bit for bit
and torchvision's within 1e-5, every row that ran produced numbers, and every verdict follows from them."""

from __future__ import annotations

import json
import operator
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torchvision")
from PIL import Image  # noqa: E402

import goprep  # noqa: E402
from goprep._benchsuite import images, train  # noqa: E402
from goprep._benchsuite.timing import Stats  # noqa: E402

pytestmark = pytest.mark.skipif("jpeg" not in goprep.info()["codecs"], reason="built without the JPEG decoder")
OPS = {">=": operator.ge, "<": operator.lt}


def _dali_installed() -> bool:
    try:
        import nvidia.dali  # noqa: F401
    except ImportError:
        return False
    return True


def test_data_and_checks(tmp_path):
    """ImageFolder of q90 JPEGs of about 500x375 (some portrait), one class per photograph; the checks
    made before timing find goprep's batch equal to its per-item calls and to the loader's batch, and
    torchvision's ops with the same parameters within the issue's 1e-5."""
    paths = train.make_jpegs(str(tmp_path), 9)
    assert len(paths) == 9 and sorted(os.listdir(tmp_path)) == sorted(images.PHOTOS)
    assert [os.path.basename(os.path.dirname(p)) for p in paths] == sorted(
        images.PHOTOS[k % 3] for k in range(9))
    shapes = set()
    for p in paths:
        with Image.open(p) as im:
            assert im.format == "JPEG" and im.mode == "RGB"
            w, h = im.size
        assert (480 <= w <= 520 and 355 <= h <= 395) or (355 <= w <= 395 and 480 <= h <= 520), (w, h)
        shapes.add((w, h))
    assert len(shapes) > 1  # sizes differ within a batch
    got = train.check(paths, size=64)
    assert got["batch-vs-per-item"] == 0 and got["fused-vs-batch"] == 0 and got["loader-vs-batch"] == 0, got
    assert got["torchvision-same-params"] <= train.TV_TOL, got


def _result(per_image: dict[str, float], cpu: dict[str, float], skipped: dict[str, str]) -> train.TrainResult:
    def st(v: float) -> Stats:
        return Stats(v, v * 0.9, v * 1.1, 3)

    return train.TrainResult(per_image={k: st(v) for k, v in per_image.items()},
                             cpu_per_image={k: st(v) for k, v in cpu.items()},
                             cores={k: int(k.split()[-1][:-1]) for k in per_image}, skipped=skipped,
                             files=10, batch=5, repeats=3, core_counts=(1, 2))


def test_targets_follow_the_numbers():
    """PASS/FAIL from the wall-time medians, INFO for the CPU-time ratios, SKIP naming why for DALI when
    it is not installed, FAIL (not SKIP) for a row that was run but not measured."""
    wall = {"goprep-loader 1c": 1 / 1200, "goprep-loader 2c": 1 / 2000, "torchvision 2c": 1 / 500,
            "dali-cpu 2c": 1 / 1500}
    got = {t.key: t for t in train.targets(_result(wall, dict(wall), {}))}
    assert got["train_vs_torchvision"].measured == pytest.approx(4.0)
    assert got["train_vs_dali_cpu"].measured == pytest.approx(4 / 3)
    assert got["train_per_core"].measured == pytest.approx(1.2)
    assert got["train_vs_torchvision_cpu"].status == "INFO"
    for t in got.values():
        if t.status in ("PASS", "FAIL"):
            assert (t.status == "PASS") == OPS[t.op](t.measured, t.threshold), t.line()
    assert [got[k].status for k in ("train_vs_torchvision", "train_vs_dali_cpu", "train_per_core")] == \
        ["PASS", "FAIL", "PASS"]
    no_dali = {k: v for k, v in wall.items() if not k.startswith("dali")}
    got = {t.key: t for t in train.targets(_result(no_dali, no_dali, {"dali-cpu": train.DALI_MISSING}))}
    assert got["train_vs_dali_cpu"].status == "SKIP" and "nvidia-dali" in got["train_vs_dali_cpu"].detail
    assert "train_vs_dali_cpu_cpu" not in got
    broken = train.TrainResult(error="boom", core_counts=(1, 2))
    assert {t.status for t in train.targets(broken) if t.status != "INFO"} == {"FAIL"}
    assert next(t for t in train.targets(broken) if t.key == "train_vs_torchvision").detail == "boom"
    assert {t.status for t in train.targets(train.TrainResult()) if t.status != "INFO"} == {"SKIP"}  # never run


def test_per_core_failure_states_the_decode_bound():
    """A per-core FAIL carries the bound measured in the same run: the decode floor's images/s and what
    it leaves of 1 ms per image, against what the resize and the rest take; a PASS or a run without the
    floor row has no such detail."""
    wall = {"goprep-loader 1c": 1 / 900, f"{train.FLOOR} 1c": 1 / 1400, "goprep-loader 2c": 1 / 1600}
    t = next(t for t in train.targets(_result(wall, dict(wall), {})) if t.key == "train_per_core")
    assert t.status == "FAIL"
    assert "1400 images/s on 1 core" in t.detail and "leaving 0.29 ms" in t.detail and "take 0.40 ms" in t.detail
    fast = dict(wall, **{"goprep-loader 1c": 1 / 1100})
    t = next(t for t in train.targets(_result(fast, dict(fast), {})) if t.key == "train_per_core")
    assert t.status == "PASS"
    no_floor = {k: v for k, v in wall.items() if not k.startswith(train.FLOOR)}
    t = next(t for t in train.targets(_result(no_floor, dict(no_floor), {})) if t.key == "train_per_core")
    assert t.status == "FAIL" and "bound" not in t.detail
    slow = dict(wall, **{f"{train.FLOOR} 1c": 1 / 800})
    t = next(t for t in train.targets(_result(slow, dict(slow), {})) if t.key == "train_per_core")
    assert "800 images/s on 1 core" in t.detail and "out of reach" in t.detail and "leaving" not in t.detail


@pytest.mark.slow
def test_train_bench_runs_every_row(tmp_path):
    """``python -m goprep bench --train`` on a small set: every row timed (DALI's where it is installed,
    else skipped with its reason printed), each with images/s and CPU time, and the verdicts printed."""
    cmd = [sys.executable, "-m", "goprep", "bench", "--train", "--files", "24", "--batch", "8", "--repeats", "1",
           "--cores", "1,2", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (report,) = tmp_path.glob("goprep-train-bench-*.json")
    data = json.loads(report.read_text())
    res = data["train"]
    assert not res["error"], res["error"]
    assert all(res["checks"][k] == 0 for k in ("batch-vs-per-item", "fused-vs-batch", "loader-vs-batch")), res["checks"]
    impls = ["goprep-loader", "goprep-batch", "torchvision"] + (["dali-cpu"] if _dali_installed() else [])
    want = {f"{i} {c}c" for i in impls for c in (1, 2)} | {f"{train.FLOOR} 1c"}
    assert set(res["per_image_s"]) == want and set(res["cpu_per_image_s"]) == want
    for k in want:
        assert res["per_image_s"][k]["median"] > 0 and res["cpu_per_image_s"][k]["median"] > 0, k
        assert k in proc.stdout
    if not _dali_installed():
        assert "dali-cpu: skipped: DALI not installed" in proc.stdout
    assert "loader overhead, 2 core(s)" in proc.stdout
    for t in data["targets"]:
        if t["status"] in ("PASS", "FAIL"):
            assert (t["status"] == "PASS") == OPS[t["op"]](t["measured"], t["threshold"]), t
        assert f"{t['status']:4}  {t['name']}" in proc.stdout, t["name"]
    assert {t["key"] for t in data["targets"]} >= {"train_vs_torchvision", "train_vs_dali_cpu", "train_per_core"}
    assert np.isfinite([t["measured"] for t in data["targets"] if t["key"] == "train_vs_torchvision"]).all()
