"""The zoo bench's bound rows (goprep/_benchsuite/zoo.py): each model's resize alone and the rest of its
output written, timed in the same run, and the failing targets' details stating the ratio they allow."""

import numpy as np
import pytest

from goprep._benchsuite import images, task, zoo
from goprep._benchsuite.scenarios import Settings
from goprep._benchsuite.timing import Stats

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
Image = pytest.importorskip("PIL.Image")


def _stats(ms):
    return Stats(ms / 1e3, ms / 1e3, ms / 1e3, 1)


def test_bound_detail_states_the_reachable_ratio():
    """The bound is write + resize; its detail names the parts, HF's time over it and goprep's excess."""
    res = zoo.ZooResult()
    for k, ms in {"hf-fast": 20.0, "goprep-fast": 10.0, "bound-write": 1.0, "bound-resize": 4.0}.items():
        res.per_image[f"M {k}"] = _stats(ms)
    res.bound_of["M"] = {"out_bytes": 8_000_000, "rest_bytes": 2_000_000}
    assert res.bound("M") == pytest.approx(0.005)
    d = res.bound_detail("M", "fast")
    assert "4.00 ms" in d and "1.00 ms" in d and "5.00 ms" in d and "at best 4.00x" in d and "5.00 ms above" in d
    assert res.bound_detail("M", "pil") == "" and res.bound("N") is None


@pytest.mark.slow
def test_detr_bound_rows_measured_in_the_run():
    """A short run of DETR's rows: its bound rows are timed, their geometry is the processor's own (the
    unpadded part of HF's pixel_mask), and DETR's failing targets say
    what ratio the bound allows (the other models, not run, are FAIL 'not measured')."""
    case = ("DETR", "DetrImageProcessor", {})
    res = zoo.run(task.Threads(), Settings(repeats=1, min_sample_s=0.001, max_calls=1), cases=(case,))
    assert not res.error and not res.errors, (res.error, res.errors)
    for k in ("hf-fast", "goprep-fast", "hf-pil", "goprep-pil", "bound-write", "bound-resize"):
        assert res.per_image[f"DETR {k}"].median > 0
    x = Image.fromarray(np.ascontiguousarray(images.photos(images.SIZES[zoo.SIZE])[0]))
    mask = transformers.DetrImageProcessor()(x, return_tensors="pt")["pixel_mask"][0]
    assert res.bound_of["DETR"]["resizes"] == [(int(mask.any(1).sum()), int(mask.any(0).sum()))]
    assert 0 < res.bound_of["DETR"]["rest_bytes"] < res.bound_of["DETR"]["out_bytes"]
    targets = {t.key: t for t in zoo.targets(res)}
    for cls in ("fast", "pil"):
        t = targets[f"zoo_detr_vs_hf_{cls}_{zoo.SIZE}"]
        assert t.measured is not None
        assert t.status == "PASS" or t.detail.startswith("bound: "), t.line()
    assert targets[f"zoo_qwen2_vl_vs_hf_fast_{zoo.SIZE}"].measured is None
    assert any("DETR vs HF fast: bound:" in line for line in zoo.lines(res))
