"""The preprocessing the server can use: three implementations of one fixed tensor, for comparing
like with like (serve-bench), and presets converted by goprep.transforms (make_preset).

The three implementations all produce the tensor defined in protocol.py (224x224 bilinear without antialiasing, horizontal flip, ImageNet normalisation, CHW
float32) from an (H, W, 3) uint8 RGB image.

Each is written the way a service would write it with that library, not tuned to lose: the NumPy
steps work in place on one float32 buffer.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from .protocol import MEAN, SIZE, STD

Preprocess = Callable[[np.ndarray], np.ndarray]

_MEAN = np.array(MEAN, np.float32)
_INV_STD = (1.0 / np.array(STD, np.float64)).astype(np.float32)


def _normalize_chw(hwc_u8: np.ndarray) -> np.ndarray:
    """NumPy's part of the python and opencv variants: scale, normalise, HWC -> CHW."""
    a = hwc_u8.astype(np.float32)
    a *= np.float32(1 / 255)
    a -= _MEAN
    a *= _INV_STD
    return np.ascontiguousarray(a.transpose(2, 0, 1))


def make_python() -> Preprocess:
    """Pillow plus NumPy. Pillow's ``Image.resize(BILINEAR)`` widens its filter when shrinking (an
    antialiased resize, up to 92 levels away from plain bilinear on a 640x480 frame), so the
    resampling is Pillow's affine transform with BILINEAR, which samples the source at the output's
    half-pixel centres: plain bilinear, the tensor the other two variants produce."""
    from PIL import Image

    def run(img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        pil = Image.fromarray(img)
        r = pil.transform((SIZE, SIZE), Image.Transform.AFFINE, (w / SIZE, 0, 0, 0, h / SIZE, 0), resample=Image.Resampling.BILINEAR)
        r = r.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        return _normalize_chw(np.asarray(r))

    return run


def make_opencv() -> Preprocess:
    """OpenCV (resize and flip release the GIL) plus NumPy."""
    import cv2

    def run(img: np.ndarray) -> np.ndarray:
        r = cv2.resize(img, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
        return _normalize_chw(cv2.flip(r, 1))

    return run


def imagenet_preprocess(img: np.ndarray) -> np.ndarray:
    """The goprep variant's pipeline function (its name is the profiler's and the metrics' key)."""
    import goprep

    x = goprep.resize(img, (SIZE, SIZE), interpolation="bilinear")
    x = goprep.flip(x, horizontal=True)
    return goprep.normalize(x, mean=MEAN, std=STD, dtype="float32", layout="CHW")  # type: ignore[no-any-return]


def make_goprep(device: str = "cpu", reuse_output: bool = True) -> Preprocess:
    """One fused goprep pipeline: resize, flip and normalise in a single pass in Go, GIL released.

    With ``reuse_output`` each worker thread writes its tensors into one buffer of its own (``out=``,
    the documented way to serve with goprep, docs/SERVING.md): the tensor is consumed (checksummed
    or run through the model) before that thread takes its next request, so nothing is allocated per
    request. The caller must not keep a tensor past its next call on the same thread."""
    import threading

    import goprep

    pipe = goprep.pipeline(imagenet_preprocess, device=device)
    if not reuse_output:
        return pipe  # type: ignore[no-any-return]
    local = threading.local()

    def run(img: np.ndarray) -> np.ndarray:
        try:
            out = local.out
        except AttributeError:
            out = local.out = np.empty((3, SIZE, SIZE), np.float32)
        return pipe(img, out=out)  # type: ignore[no-any-return]

    return run


IMPLEMENTATIONS: Dict[str, str] = {
    "python": "Pillow resample + NumPy normalise/transpose",
    "opencv": "OpenCV resize/flip + NumPy normalise/transpose",
    "goprep": "one fused goprep pipeline",
    "none": "no preprocessing: the server's floor (gRPC, decoding, the reply) for calibration",
}


PRESET_HELP = ("a torchvision weights name (ResNet50_Weights.IMAGENET1K_V2: its transforms()), timm:MODEL "
               "(timm:resnet50: the model's pretrained data config) or hf:PATH (a Hugging Face "
               "preprocessor_config.json, or the model folder holding it), converted by goprep.transforms")


def make_preset(spec: str, device: str = "cpu") -> Preprocess:
    """A preset's preprocessing as one goprep pipeline: ``Xxx_Weights.ENTRY`` through
    ``goprep.transforms.from_torchvision(weights)``, ``timm:MODEL`` through
    ``from_timm(resolve_data_config(pretrained_cfg=...))``, ``hf:PATH`` through ``from_hf`` of the
    JSON config (read from disk: nothing is downloaded). ValueError naming the spec if it is neither
    or the library does not know it."""
    from goprep import transforms

    if spec.startswith("timm:"):
        try:
            import timm
            import timm.data
        except ImportError:
            raise ValueError(f"--preprocess {spec}: needs timm (pip install timm)") from None
        cfg = timm.models.get_pretrained_cfg(spec[5:]) if spec[5:] else None
        if cfg is None:
            raise ValueError(f"--preprocess {spec}: timm has no pretrained config called {spec[5:]!r}")
        conv = transforms.from_timm(timm.data.resolve_data_config({}, pretrained_cfg=cfg.to_dict()), device=device)
    elif spec.startswith("hf:"):
        import json
        import os

        path = spec[3:]
        if os.path.isdir(path):
            path = os.path.join(path, "preprocessor_config.json")
        try:
            with open(path) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            raise ValueError(f"--preprocess {spec}: cannot read {path} as a JSON config ({type(e).__name__})") from None
        if not isinstance(cfg, dict):
            raise ValueError(f"--preprocess {spec}: {path} does not hold a JSON object")
        from goprep import PipelineError

        try:
            conv = transforms.from_hf(cfg, device=device)
        except PipelineError as e:
            raise ValueError(f"--preprocess {spec}: {e}") from None
    elif "_Weights." in spec:
        try:
            import torchvision
        except ImportError:
            raise ValueError(f"--preprocess {spec}: needs torchvision (pip install torchvision)") from None
        try:
            weights = torchvision.models.get_weight(spec)
        except (ValueError, KeyError, AttributeError):
            raise ValueError(f"--preprocess {spec}: torchvision has no weights called {spec!r}") from None
        conv = transforms.from_torchvision(weights, device=device)
    else:
        raise ValueError(f"--preprocess must be one of {', '.join(IMPLEMENTATIONS)} or {PRESET_HELP}; got {spec!r}")

    def run(img: np.ndarray) -> np.ndarray:
        return np.asarray(conv(img))

    return run


def make(name: str, device: str = "cpu") -> Optional[Preprocess]:
    """The implementation or preset called ``name``; None for "none" (the server then replies with the
    decoded shapes). ValueError for an unknown one."""
    if name == "none":
        return None
    if name == "python":
        return make_python()
    if name == "opencv":
        return make_opencv()
    if name == "goprep":
        return make_goprep(device)
    return make_preset(name, device)


def reference(img: np.ndarray) -> np.ndarray:
    """The tensor every reply is checked against (OpenCV's resize, which goprep matches exactly)."""
    return make_opencv()(img)
