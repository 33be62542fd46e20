"""Issue 40: ``goprep.transforms.from_hf`` against the Hugging Face image processors it reproduces,
side by side in one interleaved run, 1 thread each (torch and goprep), on the suite's 1920x1080
photographs as PIL images (what a serving loop hands the processor).

Each model is timed against both of transformers' classes with the processor's defaults: the
torchvision-backed ("fast", ``<Name>ImageProcessor``) and the PIL-backed (``<Name>ImageProcessorPil``),
each next to the goprep pipeline converted from it (``from_hf``), which reproduces that class's
numerics. Outputs are checked first (every output name, shape and value: ``pixel_values`` within 1e-5
of the PIL class and within 2 uint8 levels, normalised, of the fast class; the others equal); a case
that fails its check is not timed. Row keys are "<model> <implementation>".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from . import images
from .task import Threads
from .scenarios import Settings
from .targets import Target, _judge
from .timing import Stats, calibrated, measure

# (model, transformers class of the fast processor, constructor arguments); the PIL class is the
# same name + "Pil"
CASES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("Qwen2-VL", "Qwen2VLImageProcessor", {}),
    ("LLaVA-OneVision", "LlavaOnevisionImageProcessor", {}),
    ("DETR", "DetrImageProcessor", {}),
)
SIZE = "1080p"
# issue 40's speed targets: goprep >= 5x the fast class and >= 10x the PIL class
FAST_TARGET, PIL_TARGET = 5.0, 10.0


@dataclass
class ZooResult:
    per_image: dict[str, Stats] = field(default_factory=dict)  # seconds per image
    checks: dict[str, float] = field(default_factory=dict)  # worst pixel_values difference found before timing
    errors: dict[str, str] = field(default_factory=dict)  # per model: why it was not timed
    error: str = ""  # the whole section's failure (no transformers, ...)

    def ratio(self, slow: str, fast: str, best: bool = False) -> float | None:
        a, b = self.per_image.get(slow), self.per_image.get(fast)
        if a is None or b is None:
            return None
        return a.min / b.min if best else a.median / b.median

    def as_dict(self) -> dict[str, Any]:
        return {
            "per_image_s": {k: v.as_dict() for k, v in self.per_image.items()},
            "checks": self.checks,
            "errors": self.errors,
            "error": self.error,
        }


def _arrays(out: Any) -> dict[str, Any]:
    """An output mapping (HF's BatchFeature or goprep's) as NumPy arrays by name."""
    import numpy as np

    res = {}
    for k, v in dict(out).items():
        if hasattr(v, "detach"):
            v = v.detach().cpu().numpy()
        res[k] = np.asarray(v)
    return res


def _check(hf: Any, gp: Any, tol: float) -> tuple[float, str]:
    """The worst |difference| of pixel_values and what else differs ('' when nothing)."""
    import numpy as np

    a, b = _arrays(hf), _arrays(gp)
    if set(a) != set(b):
        return float("inf"), f"outputs {sorted(b)} != HF's {sorted(a)}"
    worst = 0.0
    for k in a:
        if a[k].shape != b[k].shape:
            return float("inf"), f"{k}: shape {b[k].shape} != HF's {a[k].shape}"
        if k == "pixel_values":
            worst = float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64)), initial=0.0))
        elif not np.array_equal(a[k], b[k]):
            return float("inf"), f"{k} differs from HF's"
    return worst, "" if worst <= tol else f"pixel_values differ by {worst:.3g} (> {tol:.3g})"


def _case(name: str, kind: str, kw: dict[str, Any], pils: list[Any]) -> dict[str, tuple[Callable[[Any], Any], float]]:
    """The four callables of one model, keyed by row, with the check tolerance of the goprep rows."""
    import transformers

    import goprep.transforms as gt

    fast, pil = getattr(transformers, kind)(**kw), getattr(transformers, kind + "Pil")(**kw)
    g_fast, g_pil = gt.from_hf(fast), gt.from_hf(pil)
    std = getattr(fast, "image_std", None) or [1.0]
    level = 1 / 255 / min(std)  # one uint8 level after the processor's normalisation
    return {
        f"{name} hf-fast": (lambda x: fast(x, return_tensors="pt"), 0.0),
        f"{name} goprep-fast": (g_fast, 2 * level * 1.001),
        f"{name} hf-pil": (lambda x: pil(x, return_tensors="pt"), 0.0),
        f"{name} goprep-pil": (g_pil, 1e-5),
    }


def run(threads: Threads, settings: Settings, cases: tuple[tuple[str, str, dict[str, Any]], ...] = CASES) -> ZooResult:
    res = ZooResult()
    try:
        import numpy as np
        import torch
        import transformers
        from PIL import Image

        transformers.logging.set_verbosity_error()
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        pils = [Image.fromarray(np.ascontiguousarray(p)) for p in images.photos(images.SIZES[SIZE])]
        state = {"goprep": 1, "torch": 1}
        threads.apply(state)
        entries = []
        for name, kind, kw in cases:
            try:
                fns = _case(name, kind, kw, pils)
                with torch.inference_mode():
                    for ref, gp in ((f"{name} hf-fast", f"{name} goprep-fast"), (f"{name} hf-pil", f"{name} goprep-pil")):
                        worst, why = 0.0, ""
                        for x in pils:
                            d, w = _check(fns[ref][0](x), fns[gp][0](x), fns[gp][1])
                            worst, why = max(worst, d), why or w
                        res.checks[gp] = worst
                        if why:
                            raise ValueError(f"{gp}: {why}; not timed")
            except Exception as exc:  # noqa: BLE001 - this model's rows fail, the others run
                res.errors[name] = f"{type(exc).__name__}: {exc}"
                continue
            entries += [calibrated(key, fn, pils, settings, thread_state=state) for key, (fn, _) in fns.items()]
        res.per_image.update(measure(entries, settings.repeats, threads.apply))
    except Exception as exc:  # noqa: BLE001 - reported as the rows' failure, the run goes on
        res.error = f"{type(exc).__name__}: {exc}"
    return res


def lines(res: ZooResult) -> list[str]:
    out = [f"from_hf vs Hugging Face image processors (defaults), {SIZE} PIL images, 1 thread"]
    if res.error:
        out.append(f"  error: {res.error}")
    for name, why in res.errors.items():
        out.append(f"  {name}: {why}")
    for key, st in res.per_image.items():
        out.append(f"  {key:28} {st.median * 1e3:9.2f} ms/image  (best {st.min * 1e3:.2f})")
    for name, _, _ in CASES:
        f, p = res.ratio(f"{name} hf-fast", f"{name} goprep-fast"), res.ratio(f"{name} hf-pil", f"{name} goprep-pil")
        if f is not None and p is not None:
            out.append(f"  {name}: fast / goprep {f:.2f}x, PIL / goprep {p:.2f}x")
    for gp, diff in res.checks.items():
        out.append(f"  check {gp}: max |diff| of pixel_values vs HF {diff:.3g}")
    return out


def targets(res: ZooResult) -> list[Target]:
    out = []
    for name, _, _ in CASES:
        why = res.error or res.errors.get(name, "not measured")
        key = name.lower().replace("-", "_")
        for cls, target in (("fast", FAST_TARGET), ("pil", PIL_TARGET)):
            out.append(_judge(
                f"zoo_{key}_vs_hf_{cls}_{SIZE}",
                f"from_hf({name}) vs HF's {'torchvision-backed' if cls == 'fast' else 'PIL-backed'} processor, {SIZE} PIL images, 1 thread",
                res.ratio(f"{name} hf-{cls}", f"{name} goprep-{cls}"), ">=", target, "x", why,
                res.ratio(f"{name} hf-{cls}", f"{name} goprep-{cls}", best=True)))
    return out
