"""examples/vlm_serving.py (docs/HF.md, "A VLM processor in a serving loop"): goprep's from_hf pipeline in
place of Qwen2-VL's and LLaVA-OneVision's image processors, the tokens HF's, gives the processors' own
model inputs; the example runs as a script and its check fails where the inputs differ; docs/HF.md
quotes it verbatim."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
Image = pytest.importorskip("PIL.Image")

import goprep.transforms as gt  # noqa: E402
from zoo_compare import assert_hf_outputs  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "vlm_serving.py"
HF_DOC = ROOT / "docs" / "HF.md"
TEXT_KEYS = ("input_ids", "attention_mask", "mm_token_type_ids")


@pytest.fixture(scope="module")
def ex():
    """examples/vlm_serving.py as a module."""
    transformers.logging.set_verbosity_error()
    spec = importlib.util.spec_from_file_location("vlm_serving", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # another Python process
def test_the_example_runs_and_reports_every_batch_equal():
    """The script as a user runs it: every batch of both models checked equal, exit status 0."""
    r = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONUNBUFFERED="1"), cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    rows = re.findall(r"^(\S+) batch (\d): (\d+) images, input_ids \((\d+), (\d+)\): equal to the processor's "
                      r"\(pixel_values within (\S+)\)$", r.stdout, re.M)
    assert [(m, b) for m, b, *_ in rows] == [("qwen2-vl", "0"), ("qwen2-vl", "1"),
                                             ("llava-onevision", "0"), ("llava-onevision", "1")], r.stdout
    for model in ("qwen2-vl", "llava-onevision"):  # the six requests' seven images, in batches of three prompts
        assert sum(int(n) for m, _, n, *_ in rows if m == model) == 7, r.stdout
        assert all(int(p) == 3 for m, _, _, p, *_ in rows if m == model), r.stdout


def _assert_model_inputs(processor, got, want, what):
    """goprep's model inputs against the processor's, independently of the example's check: the same
    names, the text outputs equal, the image outputs within the zoo sweep's bounds (tests/zoo_compare.py)."""
    assert sorted(got) == sorted(want.keys()), (what, sorted(got), sorted(want.keys()))
    for k in TEXT_KEYS:
        if k in want:
            assert torch.equal(got[k], want[k]), (what, k)
    image_keys = [k for k in want.keys() if k not in TEXT_KEYS]
    assert_hf_outputs(processor.image_processor, {k: got[k] for k in image_keys},
                      {k: want[k] for k in image_keys}, what)


@pytest.mark.parametrize("model", ["qwen2-vl", "llava-onevision"])
def test_the_serving_loop_on_jpeg_requests(ex, model):
    """serve() on small JPEG requests (the quick run's stand-in for the script): each batch's images
    decoded in one call and regrouped by prompt, its model inputs equal to the processor's on the same
    JPEGs decoded by Pillow (text outputs and auxiliary outputs exactly, pixel_values within bounds)."""
    build, per_prompt, placeholder = ex.MODELS[model]
    processor = build()
    rng = np.random.default_rng(9)
    sizes = [[(90, 300)], [(200, 50), (64, 64)], [(31, 47)], [(120, 160), (40, 400)]]
    reqs = [(f"user {' '.join([placeholder] * len(s))} describe this image .", [ex.jpeg(rng, h, w) for h, w in s])
            for s in sizes]
    batches = list(ex.serve(processor, reqs, 3, per_prompt))
    assert [len(b) for b, _ in batches] == [3, 1]
    for batch, got in batches:
        _assert_model_inputs(processor, got, ex.reference(processor, batch, per_prompt), (model, len(batch)))


def _img(rng, shape, mode):
    a = rng.integers(0, 256, shape + (3,), dtype=np.uint8)
    if mode == "array":
        return a
    return Image.fromarray(a).convert(mode)


# (model, image-processor arguments, images per prompt as (h, w, kind)); kind: "array" (what goprep.decode
# gives), or a PIL mode (the processors convert gray and RGBA to RGB)
CASES = [
    ("qwen2-vl", {}, [[(1500, 300, "array")], [(60, 1900, "RGB"), (7, 9, "array")], [(333, 517, "L")]]),
    ("qwen2-vl", {"max_pixels": 200704}, [[(1080, 1920, "array")], [(480, 640, "RGBA")]]),
    ("llava-onevision", {}, [[(1500, 300, "array")], [(60, 1900, "RGB"), (7, 9, "array")], [(333, 517, "L")]]),
    ("llava-onevision", {"image_grid_pinpoints": [[384, 768], [768, 384], [768, 768]]},
     [[(1080, 1920, "array")], [(480, 640, "RGBA"), (20, 600, "array"), (300, 300, "RGB")]]),
]


def _case(ex, model, kwargs, spec, seed=5):
    """The processor, its prompts and images (as the model takes them) for one case."""
    build, per_prompt, placeholder = ex.MODELS[model]
    processor = build(**kwargs)
    rng = np.random.default_rng(seed)
    nested = [[_img(rng, (h, w), kind) for h, w, kind in sample] for sample in spec]
    prompts = [" ".join(["user"] + [placeholder] * len(s) + ["describe", "this", "image", "."]) for s in spec]
    return processor, prompts, nested if per_prompt else [im for s in nested for im in s]


@pytest.mark.parametrize("model,kwargs,spec", CASES, ids=[f"{m}-{i}" for i, (m, *_) in enumerate(CASES)])
def test_preprocess_gives_the_processors_model_inputs(ex, model, kwargs, spec):
    """preprocess on odd sizes (tall, wide, tiny, thin), gray and RGBA, several images a prompt, the
    common arguments: every text output equal to the processor's, the image outputs within the sweep's
    bounds (tests/zoo_compare.py), and the token counts the processor's."""
    processor, prompts, images = _case(ex, model, kwargs, spec)
    got = ex.preprocess(processor, gt.from_hf(processor.image_processor), prompts, images)
    want = processor(text=prompts, images=images, padding=True, return_tensors="pt")
    _assert_model_inputs(processor, got, want, (model, kwargs))
    n_images = sum(len(s) for s in spec)
    n_tokens = int((want["input_ids"] == processor.image_token_id).sum())
    assert n_tokens > n_images, n_tokens  # each placeholder was expanded (to its image's token count)
    ex.check_equal(got, want, processor)  # the example's own check agrees


def _tampered(prep, key, change):
    """``prep`` with its auxiliary output ``key`` changed by ``change``: what a wrong image_grid_thw
    or image_sizes would give."""
    def wrong(images):
        out = prep(images)
        out[key] = change(out[key].clone())
        return out
    return wrong


def _halve_rows(t):
    t[:, -2] //= 2
    return t


@pytest.mark.parametrize("model,key,change", [
    ("qwen2-vl", "image_grid_thw", _halve_rows),  # half the patch rows: half the image tokens
    ("llava-onevision", "image_sizes", lambda t: t.flip(-1)),  # (h, w) read as (w, h): another token count
])
def test_the_token_counts_follow_goprep_and_the_check_fails_on_any_difference(ex, model, key, change):
    """The image tokens in input_ids are counted from goprep's auxiliary outputs, so a wrong output
    changes input_ids, and check_equal raises; so it does for a pixel_values off by 2 uint8 levels and
    for one token changed."""
    processor, prompts, images = _case(ex, model, {}, [[(1500, 300, "array")], [(60, 1900, "array")]])
    prep = gt.from_hf(processor.image_processor)
    want = processor(text=prompts, images=images, padding=True, return_tensors="pt")
    wrong = ex.preprocess(processor, _tampered(prep, key, change), prompts, images)
    assert wrong["input_ids"].shape != want["input_ids"].shape or not torch.equal(wrong["input_ids"], want["input_ids"])
    with pytest.raises(AssertionError):
        ex.check_equal(wrong, want, processor)

    got = ex.preprocess(processor, prep, prompts, images)
    ex.check_equal(got, want, processor)
    pixels = dict(got, pixel_values=got["pixel_values"].clone())
    pixels["pixel_values"].view(-1)[7] += 2 / 255 / min(processor.image_processor.image_std)
    with pytest.raises(AssertionError, match="pixel_values differ"):
        ex.check_equal(pixels, want, processor)
    tokens = dict(got, input_ids=got["input_ids"].clone())
    tokens["input_ids"][0, 0] += 1
    with pytest.raises(AssertionError, match="input_ids differs"):
        ex.check_equal(tokens, want, processor)


def test_docs_quote_the_example_verbatim():
    """docs/HF.md's serving-loop block is the example's quoted part, letter for letter."""
    src = EXAMPLE.read_text()
    m = re.search(r"^# --- quoted in docs/HF.md from here ---\n(.*?)^# --- to here ---\n", src, re.S | re.M)
    assert m, "examples/vlm_serving.py lost its quote markers"
    doc = HF_DOC.read_text()
    d = re.search(r"^## A VLM processor in a serving loop\n.*?^```python\n(.*?)^```", doc, re.S | re.M)
    assert d, "docs/HF.md has no serving-loop example"
    assert d.group(1) == m.group(1)
