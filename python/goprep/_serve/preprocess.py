"""The preprocessing the server can use: three implementations of one fixed tensor, for comparing
like with like (serve-bench), and presets converted by goprep.transforms (make_preset).

The three implementations all produce the tensor defined in protocol.py (224x224 bilinear without antialiasing, horizontal flip, ImageNet normalisation, CHW
float32) from an (H, W, 3) uint8 RGB image (a FRAME), and each owns the decode of encoded images
(IMAGE), as a service written with that library would:

- ``python``: Pillow decodes (decode.pil_open: the header checked first), then Pillow resamples the
  decoded image and NumPy normalises;
- ``opencv``: the header checked the same way (Pillow's lazy open), then ``cv2.imdecode`` and its
  BGR to RGB, then OpenCV resizes and flips, NumPy normalises;
- ``goprep`` and the presets: the request's files go into the pipeline as one call (``prep(files)``):
  goprep decodes them in parallel on its threads, fused with the preprocessing, one batch out, under
  the server's pixel limit (``_decode.thread_max_pixels``, around the call).

Each is written the way a service would write it with that library, not tuned to lose: the NumPy
steps work in place on one float32 buffer.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from .decode import decode_error, decode_images, pil_open, pil_rgb
from .protocol import MEAN, SIZE, STD

_MEAN = np.array(MEAN, np.float32)
_INV_STD = (1.0 / np.array(STD, np.float64)).astype(np.float32)


def _normalize_chw(hwc_u8: np.ndarray) -> np.ndarray:
    """NumPy's part of the python and opencv variants: scale, normalise, HWC -> CHW."""
    a = hwc_u8.astype(np.float32)
    a *= np.float32(1 / 255)
    a -= _MEAN
    a *= _INV_STD
    return np.ascontiguousarray(a.transpose(2, 0, 1))


class Preprocess:
    """One implementation: ``prep(image) -> tensor`` for an (H, W, 3) uint8 RGB image (a FRAME, or
    what ``decode`` returned), and the decode of a request's encoded files. ``fused``: the files go
    through ``files`` instead, decode and preprocessing in one call (one batch out), so the server
    cannot time the decode apart (oip.Engine.infer)."""

    fused = False

    def __call__(self, img: Any) -> np.ndarray:
        raise NotImplementedError

    def decode(self, files: Sequence[bytes], max_pixels: int) -> List[Any]:
        """The request's images, each what ``__call__`` takes; BadRequest / TooLarge (errors.py) naming
        the image's index."""
        return decode_images(files, max_pixels)

    def files(self, files: Sequence[bytes], max_pixels: int, starts: Sequence[int] = (0,)) -> np.ndarray:
        """The batch of tensors of encoded ``files`` (fused implementations only); ``starts``: where
        each request's files begin, for the error (decode.decode_error)."""
        raise NotImplementedError


class _Python(Preprocess):
    """Pillow plus NumPy. Pillow's ``Image.resize(BILINEAR)`` widens its filter when shrinking (an
    antialiased resize, up to 92 levels away from plain bilinear on a 640x480 frame), so the
    resampling is Pillow's affine transform with BILINEAR, which samples the source at the output's
    half-pixel centres: plain bilinear, the tensor the other two variants produce. Encoded images are
    decoded by Pillow and stay PIL images into the resampling."""

    def __init__(self) -> None:
        from PIL import Image

        self._Image = Image

    def __call__(self, img: Any) -> np.ndarray:
        Image = self._Image
        pil = img if isinstance(img, Image.Image) else Image.fromarray(img)
        w, h = pil.size
        r = pil.transform((SIZE, SIZE), Image.Transform.AFFINE, (w / SIZE, 0, 0, 0, h / SIZE, 0), resample=Image.Resampling.BILINEAR)
        r = r.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        return _normalize_chw(np.asarray(r))

    def decode(self, files: Sequence[bytes], max_pixels: int) -> List[Any]:
        return [pil_rgb(f, max_pixels, f"image[{i}]") for i, f in enumerate(files)]


class _OpenCV(Preprocess):
    """OpenCV (imdecode, resize and flip release the GIL) plus NumPy. ``cv2.imdecode`` takes any
    format it knows up to 2^30 pixels, so each file's header is read first by Pillow's lazy
    ``Image.open`` (JPEG or PNG, width x height within the limit), as for the python variant."""

    def __init__(self) -> None:
        import cv2

        self._cv2 = cv2
        self._flags = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION

    def __call__(self, img: Any) -> np.ndarray:
        cv2 = self._cv2
        r = cv2.resize(img, (SIZE, SIZE), interpolation=cv2.INTER_LINEAR)
        return _normalize_chw(cv2.flip(r, 1))

    def decode(self, files: Sequence[bytes], max_pixels: int) -> List[Any]:
        from .errors import BadRequest

        cv2 = self._cv2
        out = []
        for i, f in enumerate(files):
            where = f"image[{i}]"
            pil_open(f, max_pixels, where).close()  # the header's checks; nothing decoded
            bgr = cv2.imdecode(np.frombuffer(f, np.uint8), self._flags)
            if bgr is None or bgr.ndim != 3 or bgr.shape[2] != 3:
                raise BadRequest(f"{where} is not a readable JPEG or PNG file: OpenCV cannot decode it")
            out.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        return out


class _Fused(Preprocess):
    """A goprep pipeline (or a goprep.transforms conversion) run on frames one by one and on a
    request's files as one call: decode fused with the preprocessing, the images in parallel."""

    fused = True

    def __init__(self, fn: Callable[..., Any], reuse_output: bool = False) -> None:
        from goprep import _decode

        self._fn = fn
        self._limit = _decode.thread_max_pixels
        self._local = threading.local() if reuse_output else None

    def __call__(self, img: Any) -> np.ndarray:
        local = self._local
        if local is None:
            return np.asarray(self._fn(img))
        try:
            out = local.out
        except AttributeError:
            out = local.out = np.empty((3, SIZE, SIZE), np.float32)
        return self._fn(img, out=out)  # type: ignore[no-any-return]

    def files(self, files: Sequence[bytes], max_pixels: int, starts: Sequence[int] = (0,)) -> np.ndarray:
        from goprep import DecodeError

        try:
            with self._limit(max_pixels):
                return np.asarray(self._fn(list(files)))
        except DecodeError as e:
            raise decode_error(e, max_pixels, len(files), starts) from None


def make_python() -> Preprocess:
    """Pillow plus NumPy (_Python)."""
    return _Python()


def make_opencv() -> Preprocess:
    """OpenCV plus NumPy (_OpenCV)."""
    return _OpenCV()


def imagenet_preprocess(img: np.ndarray) -> np.ndarray:
    """The goprep variant's pipeline function (its name is the profiler's and the metrics' key)."""
    import goprep

    x = goprep.resize(img, (SIZE, SIZE), interpolation="bilinear")
    x = goprep.flip(x, horizontal=True)
    return goprep.normalize(x, mean=MEAN, std=STD, dtype="float32", layout="CHW")  # type: ignore[no-any-return]


def make_goprep(device: str = "cpu", reuse_output: bool = True) -> Preprocess:
    """One fused goprep pipeline: resize, flip and normalise in a single pass in Go, GIL released; a
    request's encoded files go in as one list, decoded in parallel and fused with it.

    With ``reuse_output`` each worker thread writes its frames' tensors into one buffer of its own
    (``out=``, the documented way to serve with goprep, docs/SERVING.md): the tensor is consumed
    (copied into the batch) before that thread takes its next image, so nothing is allocated per
    frame. The caller must not keep a tensor past its next call on the same thread. The files'
    batch is a new array per request."""
    import goprep

    return _Fused(goprep.pipeline(imagenet_preprocess, device=device), reuse_output)


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

    return _Fused(conv)


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


_REF: List[Preprocess] = []


def reference(img: np.ndarray) -> np.ndarray:
    """The tensor every reply is checked against (OpenCV's resize, which goprep matches exactly), of
    an RGB image (for a JPEG: Pillow's decode, decode.pil_rgb)."""
    if not _REF:
        _REF.append(make_opencv())
    return _REF[0](img)
