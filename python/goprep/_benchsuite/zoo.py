"""Issue 40: ``goprep.transforms.from_hf`` against the Hugging Face image processors it reproduces,
side by side in one interleaved run, 1 thread each (torch and goprep), on the suite's 1920x1080
photographs as PIL images (what a serving loop hands the processor).

Each model is timed against both of transformers' classes with the processor's defaults: the
torchvision-backed ("fast", ``<Name>ImageProcessor``) and the PIL-backed (``<Name>ImageProcessorPil``),
each next to the goprep pipeline converted from it (``from_hf``), which reproduces that class's
numerics. Outputs are checked first (every output name, shape and value: ``pixel_values`` within 1e-5
of the PIL class and within 2 uint8 levels, normalised, of the fast class; the others equal); a case
that fails its check is not timed. Row keys are "<model> <implementation>".

Each model's bound rows, timed in the same interleaved run: "<model> bound-resize", the resize(s) the
processor does on the photograph, alone, fused into float32 CHW as goprep's engine does them (antialiased,
the class's interpolation, an identity normalisation; a resize to the source's own size is left out), and
"<model> bound-write", writing the rest of the bytes of goprep's outputs for one image (``np.empty`` +
``fill`` of the output's bytes less the resize's). Any implementation resizes and writes the whole output,
so their sum is a floor on this machine, and HF's time over it the ratio reachable at best; a target that
fails says so (``ZooResult.bound_detail``).
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


_INTERP = {0: "nearest", 2: "bilinear", 3: "bicubic"}  # PIL resample codes -> goprep's interpolation


def _qwen_resizes(proc: Any, out: dict[str, Any], h: int, w: int) -> list[tuple[int, int]]:
    """Qwen2-VL: one resize, to its patch grid times the patch size (image_grid_thw)."""
    _, gh, gw = (int(v) for v in out["image_grid_thw"][0])
    return [(gh * proc.patch_size, gw * proc.patch_size)]


def _onevision_resizes(proc: Any, out: dict[str, Any], h: int, w: int) -> list[tuple[int, int]]:
    """LLaVA-OneVision: the image fitted into its best pinpoint (then tiled) and the global image."""
    from ..transforms._hf_tiles import patch_output_size, select_best_resolution

    best = select_best_resolution(h, w, [tuple(p) for p in proc.image_grid_pinpoints])
    return [patch_output_size(h, w, best), (proc.size["height"], proc.size["width"])]


def _detr_resizes(proc: Any, out: dict[str, Any], h: int, w: int) -> list[tuple[int, int]]:
    """DETR: one resize, to the unpadded part of the output (pixel_mask's ones)."""
    m = out["pixel_mask"][0]
    return [(int(m.any(1).sum()), int(m.any(0).sum()))]


# per model: the resizes its processor does on an h x w image, from its goprep output and settings
_RESIZES: dict[str, Callable[[Any, dict[str, Any], int, int], list[tuple[int, int]]]] = {
    "Qwen2-VL": _qwen_resizes, "LLaVA-OneVision": _onevision_resizes, "DETR": _detr_resizes}


@dataclass
class ZooResult:
    per_image: dict[str, Stats] = field(default_factory=dict)  # seconds per image
    checks: dict[str, float] = field(default_factory=dict)  # worst pixel_values difference found before timing
    errors: dict[str, str] = field(default_factory=dict)  # per model: why it was not timed
    error: str = ""  # the whole section's failure (no transformers, ...)
    bound_of: dict[str, dict[str, Any]] = field(default_factory=dict)  # per model: output bytes, resizes

    def bound(self, name: str) -> float | None:
        """Seconds per image of writing goprep's output bytes plus the resize(s) alone (medians): the
        floor this machine puts under any implementation of model ``name``."""
        a, b = self.per_image.get(f"{name} bound-write"), self.per_image.get(f"{name} bound-resize")
        return None if a is None or b is None else a.median + b.median

    def bound_detail(self, name: str, cls: str) -> str:
        """Why a target of ``name`` against HF's ``cls`` ("fast"/"pil") class is or is not reachable: the
        bound's parts, the ratio it allows, and goprep's time above it; '' without a bound."""
        b, hf, gp = self.bound(name), self.per_image.get(f"{name} hf-{cls}"), self.per_image.get(f"{name} goprep-{cls}")
        if b is None or hf is None or gp is None:
            return ""
        w, r = self.per_image[f"{name} bound-write"].median, self.per_image[f"{name} bound-resize"].median
        geo = self.bound_of.get(name, {})
        mb, rest = geo.get("out_bytes", 0) / 1e6, geo.get("rest_bytes", 0) / 1e6
        return (f"bound: the resize alone (fused, float32) {r * 1e3:.2f} ms + writing the rest of the {mb:.1f} MB output "
                f"({rest:.1f} MB) {w * 1e3:.2f} ms = "
                f"{b * 1e3:.2f} ms, so at best {hf.median / b:.2f}x HF {cls}'s {hf.median * 1e3:.2f} ms; goprep "
                f"{gp.median * 1e3:.2f} ms, {(gp.median - b) * 1e3:.2f} ms above the bound")

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
            "bounds": {name: {**v, "bound_s": self.bound(name)} for name, v in self.bound_of.items()},
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


def _bound_entries(name: str, kind: str, kw: dict[str, Any], g_fast: Any, pils: list[Any],
                   res: ZooResult) -> dict[str, tuple[Callable[[Any], Any], list[Any]]]:
    """The bound rows of one model (see the module's doc), keyed by row: each callable and its inputs
    (per photograph: the output's byte count; the photograph as an array and its resize targets)."""
    import numpy as np
    import transformers

    import goprep

    fast = getattr(transformers, kind)(**kw)
    interp = _INTERP[int(getattr(fast, "resample", 3))]
    @goprep.pipeline(device="cpu")
    def resized(img: Any, size: tuple[int, int]) -> Any:
        return goprep.normalize(goprep.resize(img, size, interpolation=interp, antialias=True), mean=0.0, std=1.0)

    writes, resizes = [], []
    for x in pils:
        out = _arrays(g_fast(x))
        a = np.ascontiguousarray(np.asarray(x))
        h, w = a.shape[:2]
        sizes = [t for t in _RESIZES[name](fast, out, h, w) if t != (h, w)]
        resizes.append((a, sizes))
        total = sum(v.nbytes for v in out.values())
        writes.append(max(0, total - sum(3 * th * tw * 4 for th, tw in sizes)))
    res.bound_of[name] = {"out_bytes": total, "rest_bytes": writes[-1], "resizes": resizes[-1][1],
                          "interpolation": interp}

    def write(n: int) -> None:
        np.empty(n, np.uint8).fill(1)

    def resize(item: tuple[Any, list[tuple[int, int]]]) -> None:
        for t in item[1]:
            resized(item[0], t)

    return {f"{name} bound-write": (write, writes), f"{name} bound-resize": (resize, resizes)}


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
            try:
                bounds = _bound_entries(name, kind, kw, fns[f"{name} goprep-fast"][0], pils, res)
            except Exception as exc:  # noqa: BLE001 - the model's rows stand without their bound
                res.errors[f"{name} bound"] = f"{type(exc).__name__}: {exc}"
                continue
            entries += [calibrated(key, fn, xs, settings, thread_state=state) for key, (fn, xs) in bounds.items()]
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
        for cls in ("fast", "pil"):
            d = res.bound_detail(name, cls)
            if d:
                out.append(f"  {name} vs HF {cls}: {d}")
    for gp, diff in res.checks.items():
        out.append(f"  check {gp}: max |diff| of pixel_values vs HF {diff:.3g}")
    return out


def targets(res: ZooResult) -> list[Target]:
    out = []
    for name, _, _ in CASES:
        why = res.error or res.errors.get(name, "not measured")
        key = name.lower().replace("-", "_")
        for cls, target in (("fast", FAST_TARGET), ("pil", PIL_TARGET)):
            t = _judge(
                f"zoo_{key}_vs_hf_{cls}_{SIZE}",
                f"from_hf({name}) vs HF's {'torchvision-backed' if cls == 'fast' else 'PIL-backed'} processor, {SIZE} PIL images, 1 thread",
                res.ratio(f"{name} hf-{cls}", f"{name} goprep-{cls}"), ">=", target, "x", why,
                res.ratio(f"{name} hf-{cls}", f"{name} goprep-{cls}", best=True))
            if t.status == "FAIL" and t.measured is not None:
                t.detail = res.bound_detail(name, cls) or "no bound measured"
            out.append(t)
    return out
