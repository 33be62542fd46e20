"""goprep in front of a vision-language model's processor, in a serving loop (docs/HF.md, "A VLM
processor in a serving loop").

A request is a prompt with image placeholders and its images as JPEG bytes. A transformers processor
does two things to a batch of them: its image processor (``processor.image_processor(images)``) turns
the images into ``pixel_values`` and the auxiliary outputs (Qwen2-VL's ``image_grid_thw``,
LLaVA-OneVision's ``image_sizes`` and ``batch_num_images``); its text part expands each placeholder
into as many image tokens as that image's outputs give, and tokenizes. Here a goprep pipeline,
``goprep.transforms.from_hf(processor.image_processor)``, does the first (the batch's JPEG bytes go in
as they are, decoded in parallel and preprocessed with the GIL released), and the text part stays the processor's
own (transformers 5's ``replace_image_token`` and ``get_text_with_replacements``, the steps its
``__call__`` runs), fed goprep's auxiliary outputs. So the token counts follow goprep's outputs: a
wrong ``image_grid_thw`` or ``image_sizes`` changes ``input_ids``, which the check below compares.

    python examples/vlm_serving.py

builds Qwen2-VL's and LLaVA-OneVision's processors offline (the image processors' class defaults, a
tiny stand-in tokenizer with the models' image tokens: nothing is downloaded; a real server loads
them with ``AutoProcessor.from_pretrained(model_id)``), serves a few batches of requests of mixed
sizes, and checks every batch's model inputs against the processor's own
``processor(text=..., images=..., padding=True, return_tensors="pt")`` on the same JPEGs decoded by
Pillow: the same names, shapes and dtypes, ``input_ids``, ``attention_mask`` and every auxiliary
output equal, ``pixel_values`` within one uint8 level (docs/HF.md's bound for the torchvision-backed
processors). It exits non-zero on any difference. tests/test_example_vlm.py runs it.
"""

import io
import sys

import numpy as np
from PIL import Image

# --- quoted in docs/HF.md from here ---
import torch

import goprep.transforms as gt


def preprocess(processor, prep, prompts, images):
    """The model inputs ``processor(text=prompts, images=images, padding=True, return_tensors="pt")``
    returns, with the goprep pipeline ``prep`` (``gt.from_hf(processor.image_processor)``) in place of
    the processor's image processor; the tokens are the processor's own."""
    image_inputs = prep(images)  # was: processor.image_processor(images)
    n_images = sum(len(x) for x in images) if isinstance(images[0], list) else len(images)
    # each placeholder's image tokens, counted by the processor from goprep's outputs
    tokens = [processor.replace_image_token(image_inputs, image_idx=i) for i in range(n_images)]
    text, _ = processor.get_text_with_replacements(list(prompts), tokens)
    inputs = processor.tokenizer(text, padding=True, return_tensors="pt")
    if processor.return_mm_token_type_ids:  # Qwen2-VL marks its image tokens
        inputs["mm_token_type_ids"] = torch.tensor(processor.create_mm_token_type_ids(inputs["input_ids"]))
    return {**inputs, **image_inputs}


def serve(processor, requests, batch_size, per_prompt):
    """The serving loop: ``requests`` ((prompt, [JPEG bytes, ...]) pairs) in batches of
    ``batch_size``; yields each batch and its model inputs (the server's ``model.generate(**inputs)``
    goes there). ``per_prompt``: the processor takes one list of images per prompt (LLaVA-OneVision:
    a prompt's several images are laid out together), else one flat list (Qwen2-VL)."""
    prep = gt.from_hf(processor.image_processor)  # refuses by name what it cannot reproduce
    for start in range(0, len(requests), batch_size):
        batch = requests[start:start + batch_size]
        images = [list(jpegs) for _, jpegs in batch]  # JPEG bytes: goprep decodes them, in parallel
        if not per_prompt:
            images = [jpeg for sample in images for jpeg in sample]
        yield batch, preprocess(processor, prep, [prompt for prompt, _ in batch], images)
# --- to here ---


def tiny_tokenizer(image_tokens):
    """A stand-in for a model's tokenizer (``AutoProcessor.from_pretrained`` loads the real one): a
    word-level vocabulary with ``image_tokens`` as special tokens, so that a run of them splits into
    one id each, as in the model's own tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = "describe this image compare the two images what is in and . ? user assistant".split()
    special = ["<|endoftext|>", *image_tokens]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(special + ["[UNK]"] + words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="<|endoftext|>",
                                   additional_special_tokens=list(image_tokens))


def qwen2_vl(**image_kwargs):
    """Qwen2-VL's processor (``Qwen/Qwen2-VL-2B-Instruct``'s classes; ``image_kwargs`` such as
    ``max_pixels`` go to its image processor)."""
    from transformers import Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor

    tok = tiny_tokenizer(["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"])
    return Qwen2VLProcessor(image_processor=Qwen2VLImageProcessor(**image_kwargs), tokenizer=tok,
                            video_processor=Qwen2VLVideoProcessor())


def llava_onevision(**image_kwargs):
    """LLaVA-OneVision's processor, with ``llava-hf/llava-onevision-qwen2-0.5b-ov-hf``'s
    processor_config.json values (729 image tokens a tile, the "full" feature strategy)."""
    from transformers import LlavaOnevisionImageProcessor, LlavaOnevisionProcessor, LlavaOnevisionVideoProcessor

    return LlavaOnevisionProcessor(image_processor=LlavaOnevisionImageProcessor(**image_kwargs),
                                   tokenizer=tiny_tokenizer(["<image>", "<video>"]),
                                   video_processor=LlavaOnevisionVideoProcessor(), num_image_tokens=729,
                                   vision_feature_select_strategy="full")


# name: (the processor, whether it takes one list of images per prompt, the prompts' image placeholder)
MODELS = {
    "qwen2-vl": (qwen2_vl, False, "<|vision_start|><|image_pad|><|vision_end|>"),
    "llava-onevision": (llava_onevision, True, "<image>"),
}


def check_equal(got, want, processor):
    """Raise AssertionError unless goprep's model inputs ``got`` are the processor's ``want``: the same
    names, shapes and dtypes; every output but ``pixel_values`` equal; ``pixel_values`` within one
    uint8 level before the normalisation. Returns the largest ``pixel_values`` difference."""
    assert sorted(got) == sorted(want.keys()), (sorted(got), sorted(want.keys()))
    worst = 0.0
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
        if name == "pixel_values":
            worst = float((g.double() - w.double()).abs().max())
            level = 1 / 255 / min(processor.image_processor.image_std)
            assert worst <= level, f"pixel_values differ by {worst:.3g}, over one uint8 level ({level:.3g})"
        else:
            assert torch.equal(g, w), f"{name} differs"
    return worst


def jpeg(rng, h, w):
    """A random ``h x w`` photo-like RGB image (smooth, with noise) as JPEG bytes."""
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) * 255 // max(h + w - 2, 1)], -1)
    img = np.clip(base + rng.normal(0, 20, (h, w, 3)), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def requests(placeholder, seed=0):
    """Six requests of mixed sizes: a 1080p photo, a tall and a wide image, a tiny one, and a prompt with
    two images."""
    rng = np.random.default_rng(seed)
    sizes = [[(1080, 1920)], [(1500, 300)], [(200, 1000), (480, 640)], [(20, 30)], [(768, 1024)], [(640, 480)]]
    prompts = ["user {} describe this image .", "user {} what is in this image ?",
               "user {} and {} compare the two images", "{} what is this ?", "user {} describe this image .",
               "{} describe the image ."]
    return [(p.format(*[placeholder] * len(s)), [jpeg(rng, h, w) for h, w in s]) for p, s in zip(prompts, sizes)]


def reference(processor, batch, per_prompt):
    """What the loop replaces: the processor's own call on a batch of requests, their JPEGs decoded by
    Pillow."""
    pil = [[Image.open(io.BytesIO(j)).convert("RGB") for j in jpegs] for _, jpegs in batch]
    images = pil if per_prompt else [im for sample in pil for im in sample]
    return processor(text=[p for p, _ in batch], images=images, padding=True, return_tensors="pt")


def run(name, batch_size=3, **image_kwargs):
    """Serve the requests for model ``name`` and check each batch against the processor's own call on
    the same JPEGs decoded by Pillow; returns one (images, input_ids shape, largest pixel_values
    difference) a batch."""
    build, per_prompt, placeholder = MODELS[name]
    processor = build(**image_kwargs)
    rows = []
    for batch, inputs in serve(processor, requests(placeholder), batch_size, per_prompt):
        want = reference(processor, batch, per_prompt)
        rows.append((len([j for _, jpegs in batch for j in jpegs]), tuple(want["input_ids"].shape),
                     check_equal(inputs, want, processor)))
    return rows


def main():
    import transformers

    transformers.logging.set_verbosity_error()
    for name in MODELS:
        for k, (n, ids, worst) in enumerate(run(name)):
            print(f"{name} batch {k}: {n} images, input_ids {ids}: equal to the processor's "
                  f"(pixel_values within {worst:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
