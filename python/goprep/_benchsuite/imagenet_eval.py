"""The ImageNet eval transform, converted: ``goprep.transforms.from_torchvision`` against torchvision
itself, side by side in one interleaved run, 1 thread each.

- torchvision v1 on PIL images: ``Resize(256)``, ``CenterCrop(224)``, ``ToTensor()``, ``Normalize``;
- torchvision v2 on uint8 (C, H, W) tensors: ``Resize(256)`` (antialias), ``CenterCrop(224)``,
  ``ToDtype(float32, scale=True)``, ``Normalize``.

The goprep side is the converted transform called on the very same objects. Outputs are checked
first (PIL: within 1e-5; tensors: within 1 uint8 level after normalisation), then timed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from . import images
from .task import MEAN, STD, Threads
from .scenarios import Settings
from .targets import Target, _judge
from .timing import Stats, calibrated, measure

# the suite's photographs at 512x512 (the ImageNet eval resize is a 2x downscale) and 1920x1080 (a
# photo straight from a camera: 4.2x); row keys are "<size> <implementation>"
SIZES = ("512", "1080p")


@dataclass
class EvalResult:
    per_image: dict[str, Stats] = field(default_factory=dict)  # seconds per image
    checks: dict[str, float] = field(default_factory=dict)  # worst difference found before timing
    error: str = ""

    def ratio(self, slow: str, fast: str, best: bool = False) -> float | None:
        a, b = self.per_image.get(slow), self.per_image.get(fast)
        if a is None or b is None:
            return None
        return a.min / b.min if best else a.median / b.median

    def as_dict(self) -> dict[str, Any]:
        return {
            "per_image_s": {k: v.as_dict() for k, v in self.per_image.items()},
            "checks": self.checks,
            "error": self.error,
        }


def _fns(size: str) -> dict[str, tuple[Callable[[Any], Any], list[Any]]]:
    import numpy as np
    import torch
    import torchvision.transforms as T
    from PIL import Image
    from torchvision.transforms import v2

    import goprep.transforms as gt

    warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
    photos = images.photos(images.SIZES[size])
    pils = [Image.fromarray(np.ascontiguousarray(p)) for p in photos]
    tensors = [torch.from_numpy(p.copy()).permute(2, 0, 1).contiguous() for p in photos]
    v1 = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])
    tv2 = v2.Compose([v2.Resize(256), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])
    g1, g2 = gt.from_torchvision(v1, device="cpu"), gt.from_torchvision(tv2, device="cpu")

    def inference(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def run(x: Any) -> Any:
            with torch.inference_mode():
                return f(x)

        return run

    return {
        f"{size} torchvision-v1-pil": (inference(v1), pils),
        f"{size} goprep-v1-pil": (g1, pils),
        f"{size} torchvision-v2-tensor": (inference(tv2), tensors),
        f"{size} goprep-v2-tensor": (g2, tensors),
    }


def run(threads: Threads, settings: Settings) -> EvalResult:
    res = EvalResult()
    try:
        import torch

        fns = {k: v for size in SIZES for k, v in _fns(size).items()}
        # check before timing: the converted pipelines must compute what torchvision computes
        level = 1 / 255 / min(STD)
        pairs = [(f"{z} torchvision-v1-pil", f"{z} goprep-v1-pil", 1e-5) for z in SIZES]
        pairs += [(f"{z} torchvision-v2-tensor", f"{z} goprep-v2-tensor", level) for z in SIZES]
        for tv, gp, tol in pairs:
            f_tv, xs = fns[tv]
            f_gp, _ = fns[gp]
            worst = max(float((f_gp(x) - f_tv(x)).abs().max()) for x in xs)
            res.checks[gp] = worst
            if worst > tol * 1.001:
                res.error = f"{gp} differs from {tv} by {worst:.3g} (> {tol:.3g}); not timed"
                return res
        state = {"goprep": 1, "torch": 1}
        entries = [calibrated(key, fn, xs, settings, thread_state=state) for key, (fn, xs) in fns.items()]
        threads.apply(state)
        res.per_image.update(measure(entries, settings.repeats, threads.apply))
        del torch
    except Exception as exc:  # noqa: BLE001 - reported as the rows' failure, the run goes on
        res.error = f"{type(exc).__name__}: {exc}"
    return res


def lines(res: EvalResult) -> list[str]:
    out = [f"ImageNet eval transform (Resize(256), CenterCrop(224), ToTensor/ToDtype, Normalize), {' and '.join(SIZES)}, 1 thread"]
    if res.error:
        out.append(f"  error: {res.error}")
    for key, st in res.per_image.items():
        out.append(f"  {key:30} {st.median * 1e6:9.1f} us/image  (best {st.min * 1e6:.1f})")
    for gp, diff in res.checks.items():
        out.append(f"  check {gp}: max |diff| vs torchvision {diff:.3g}")
    return out


def targets(res: EvalResult) -> list[Target]:
    why = res.error or "not measured"
    out = []
    for z in SIZES:
        out.append(_judge(
            f"imagenet_eval_vs_torchvision_v1_pil_{z}", f"from_torchvision(ImageNet eval) vs torchvision v1 on {z} PIL images, 1 thread",
            res.ratio(f"{z} torchvision-v1-pil", f"{z} goprep-v1-pil"), ">=", 2.0, "x", why,
            res.ratio(f"{z} torchvision-v1-pil", f"{z} goprep-v1-pil", best=True)))
        out.append(_judge(
            f"imagenet_eval_vs_torchvision_v2_tensor_{z}", f"from_torchvision(ImageNet eval) vs torchvision v2 on {z} uint8 tensors, 1 thread",
            res.ratio(f"{z} torchvision-v2-tensor", f"{z} goprep-v2-tensor"), ">=", 1.5, "x", why,
            res.ratio(f"{z} torchvision-v2-tensor", f"{z} goprep-v2-tensor", best=True)))
    return out
