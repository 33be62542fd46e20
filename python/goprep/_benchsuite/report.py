"""Text tables, the JSON result file and the PNG chart."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

from .task import Impl
from .machine import load_warning
from .scenarios import PROFILED, ConfigResult, OverheadResult, Row, ServingResult
from .targets import Target


def fmt_time(seconds: float) -> str:
    """3 significant digits in the unit that suits: 12.3 us, 1.23 ms, 1.23 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale or unit == "us":
            return f"{seconds / scale:.3g} {unit}"
    raise AssertionError("unreachable")


def fmt_rate(per_s: float) -> str:
    return f"{per_s:,.0f}" if per_s >= 100 else f"{per_s:.3g}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


# --------------------------------------------------------------------------------------------------
# Text


def config_lines(cfg: ConfigResult, repeats: int) -> list[str]:
    title = (
        f"== {cfg.size.label} -> 224x224, batch {cfg.batch}: median of {repeats} interleaved repeats "
        f"(min..max), time per image =="
    )
    headers = ["implementation", "per image", "min..max", "images/s", "t / goprep", "max|diff|", "equal"]
    body: list[list[str]] = []
    failures: dict[str, list[str]] = {}  # detail -> labels, printed under the table
    for row in cfg.rows:
        impl = row.impl
        if not row.ok:
            body.append([impl.label, row.status.upper(), "", "", "", _diff(row), ""])
            failures.setdefault(row.detail, []).append(impl.label)
            continue
        assert row.stats is not None
        st = row.stats
        r = cfg.ratio(impl.key, impl.baseline)
        base = impl.baseline.removeprefix("goprep-")
        body.append(
            [
                impl.label,
                fmt_time(st.median) + ("" if st.n == repeats else f" (n={st.n})"),
                f"{fmt_time(st.min)}..{fmt_time(st.max)}",
                fmt_rate(1.0 / st.median),
                "" if r is None else f"{r:.2f}x ({base})",
                _diff(row),
                ""
                if row.check is None or row.check.exact_fraction is None
                else f"{100 * row.check.exact_fraction:.2f}%",
            ]
        )
    lines = [title] + _table(headers, body, [False, True, True, True, True, True, True])
    for detail, labels in failures.items():
        who = ", ".join(labels) if len(labels) <= 2 else f"{len(labels)} rows"
        lines.append(f"  {who}: {detail}")
    independent = [cfg.row(k) for k in ("numpy", "opencv-1t")]
    if all(r is not None and r.status == "check failed" for r in independent):
        # NumPy and OpenCV agree with each other to the bit; when both disagree with goprep, the
        # likelier culprit is goprep.
        lines.append("  ! NumPy and OpenCV both disagree with goprep's output: suspect goprep, not them")
    return lines + _load_lines(cfg.load)


def _load_lines(load: dict[str, float | None]) -> list[str]:
    warning = load_warning(load)
    return [f"  ! {warning}"] if warning else []


def _diff(row: Row) -> str:
    if row.check is None or row.check.max_abs_diff is None:
        return ""
    unit = " u8" if row.impl.tolerance_unit == "uint8" else ""
    return f"{row.check.max_abs_diff:.2g}{unit}"


def serving_lines(serving: ServingResult) -> list[str]:
    lines = [f"== serving: {serving.note} =="]
    body = []
    for p in serving.points:
        other = "opencv" if p.impl == "goprep" else "goprep"
        q = serving.point(other, p.threads)
        vs = "" if q is None else f"{p.throughput.median / q.throughput.median:.2f}x"
        sc = serving.scaling(p.impl, p.threads)
        body.append(
            [
                p.impl,
                str(p.threads),
                fmt_rate(p.throughput.median),
                f"{fmt_rate(p.throughput.min)}..{fmt_rate(p.throughput.max)}",
                "" if sc is None else f"{sc:.2f}x",
                vs,
                fmt_time(p.p50_s),
                fmt_time(p.p99_s),
                "" if p.own_cores is None else f"{p.own_cores:.2f}",
                "" if p.other_cores is None else f"{p.other_cores:.2f}",
            ]
        )
    lines += _table(
        [
            "pipeline",
            "threads",
            "requests/s",
            "min..max",
            "vs 1 thread",
            "vs other",
            "P50 latency",
            "P99 latency",
            "CPU used",
            "CPU others",
        ],
        body,
        [False] + [True] * 9,
    )
    lines.append(
        "  CPU used = cores this process kept busy while serving (stuck near 1.00 with 2+ threads: calls are "
        "serialised); CPU others = cores other processes took meanwhile"
    )
    lines += [f"  {name}: {err}" for name, err in serving.errors.items()]
    return lines + _load_lines(serving.load)


def overhead_lines(overhead: OverheadResult) -> list[str]:
    lines = [f"== per-call overhead: {overhead.note} =="]
    body = [[name, f"{st.median:.2f}", f"{st.min:.2f}..{st.max:.2f}"] for name, st in overhead.per_call_us.items()]
    lines += _table(["call", "us/call", "min..max"], body, [False, True, True])
    lines += [f"  {name}: {err}" for name, err in overhead.errors.items()]
    for name, on in overhead.per_call_us.items():  # the profiler's cost: on and off side by side
        off = overhead.per_call_us.get(name[: -len(PROFILED)]) if name.endswith(PROFILED) else None
        if off is not None:
            lines.append(f"  profiler cost, {name[: -len(PROFILED)]}: off {off.median:.2f} us, on {on.median:.2f} us"
                         f" = {on.median - off.median:+.2f} us per call (medians of separate wall-clock rows; the"
                         " judged figure is the paired measure under '== profiler cost')")
    return lines + _load_lines(overhead.load)


def target_lines(targets: Sequence[Target]) -> list[str]:
    return ["== targets (512x512 -> 224x224, batch 1 unless said; PASS/FAIL judged on medians) =="] + [
        t.line() for t in targets
    ]


# --------------------------------------------------------------------------------------------------
# JSON


def _row_dict(cfg: ConfigResult, row: Row) -> dict[str, Any]:
    impl = row.impl
    d: dict[str, Any] = {
        "key": impl.key,
        "label": impl.label,
        "family": impl.family,
        "threads": impl.threads,
        "partial": impl.partial,
        "reference": impl.reference,
        "status": row.status,
        "detail": row.detail,
        "note": impl.note,
        "check": None
        if row.check is None
        else {
            "max_abs_diff": row.check.max_abs_diff,
            "exact_fraction": row.check.exact_fraction,
            "tolerance": impl.tolerance,
            "unit": impl.tolerance_unit,
        },
    }
    if row.ok and row.stats is not None:
        d.update(
            {
                "calls_per_sample": row.calls,
                "seconds_per_image": row.stats.as_dict(),
                "images_per_s": 1.0 / row.stats.median,
                "baseline": impl.baseline,
                "time_ratio_to_baseline": cfg.ratio(impl.key, impl.baseline),
                "time_ratio_to_goprep_1t": cfg.ratio(impl.key, "goprep-1t"),
                "samples_seconds_per_image": row.samples,
            }
        )
    return d


def _clean(obj: Any) -> Any:
    """JSON has no inf/nan: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def result_dict(
    *,
    argv: Sequence[str],
    settings: dict[str, Any],
    machine: dict[str, Any],
    notes: Sequence[str],
    grid: Sequence[ConfigResult],
    probes: Sequence[ConfigResult],
    serving: ServingResult | None,
    overhead: OverheadResult | None,
    targets: Sequence[Target],
    started: str,
    wall_s: float,
    load: dict[str, float | None],
) -> dict[str, Any]:
    def cfg_dict(cfg: ConfigResult) -> dict[str, Any]:
        return {
            "input": {"name": cfg.size.name, "height": cfg.size.height, "width": cfg.size.width},
            "output": {"height": 224, "width": 224},
            "batch": cfg.batch,
            "wall_s": cfg.wall_s,
            "load_during_timing": cfg.load,
            "results": [_row_dict(cfg, r) for r in cfg.rows],
        }

    out: dict[str, Any] = {
        "schema": "goprep-bench/1",
        "started": started,
        "wall_s": wall_s,
        "load_during_run": load,
        "argv": list(argv),
        "settings": settings,
        "machine": machine,
        "notes": list(notes),
        "grid": [cfg_dict(c) for c in grid],
        "probes": [cfg_dict(c) for c in probes],
        "serving": None
        if serving is None
        else {
            "note": serving.note,
            "errors": serving.errors,
            "load_during_timing": serving.load,
            "points": [
                {
                    "impl": p.impl,
                    "threads": p.threads,
                    "requests_per_run": p.requests,
                    "requests_per_s": p.throughput.as_dict(),
                    "scaling_vs_1_thread": serving.scaling(p.impl, p.threads),
                    "latency_p50_s": p.p50_s,
                    "latency_p99_s": p.p99_s,
                    "own_cores": p.own_cores,
                    "other_cores": p.other_cores,
                }
                for p in serving.points
            ],
        },
        "overhead": None
        if overhead is None
        else {
            "note": overhead.note,
            "errors": overhead.errors,
            "load_during_timing": overhead.load,
            "us_per_call": {k: v.as_dict() for k, v in overhead.per_call_us.items()},
        },
        "targets": [t.as_dict() for t in targets],
    }
    return _clean(out)


def write_json(path: str, data: dict[str, Any]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


# --------------------------------------------------------------------------------------------------
# Chart

_FAMILY_COLOURS = {
    "goprep": "#1b9e77",
    "numpy": "#7570b3",
    "opencv": "#d95f02",
    "pillow": "#e7298a",
    "torchvision": "#66a61e",
}


def write_chart(
    path: str,
    grid: Sequence[ConfigResult],
    serving: ServingResult | None,
    overhead: OverheadResult | None,
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")  # headless: never open a window
    import matplotlib.pyplot as plt

    sizes = list(dict.fromkeys(c.size.name for c in grid))
    fig = plt.figure(figsize=(18.0, 11.0))
    gs = fig.add_gridspec(2, 3, height_ratios=[1.25, 1.0])
    fig.suptitle(title, fontsize=11)

    # Top row: images/s per implementation, grouped by batch size, one panel per input size, and a
    # last narrow panel holding the legend.
    top = gs[0, :].subgridspec(1, len(sizes) + 1, width_ratios=[1.0] * len(sizes) + [0.55])
    impls: list[Impl] = []
    for cfg in grid:
        for r in cfg.rows:
            if r.impl.key not in {i.key for i in impls}:
                impls.append(r.impl)
    # rows of one family share a colour, lighter for each further row (1 thread, all threads, ...)
    shade: dict[str, int] = {}
    family_count: dict[str, int] = {}
    for impl in impls:
        shade[impl.key] = family_count.get(impl.family, 0)
        family_count[impl.family] = shade[impl.key] + 1
    handles: dict[str, Any] = {}
    for col, size_name in enumerate(sizes):
        ax = fig.add_subplot(top[0, col])
        cfgs = [c for c in grid if c.size.name == size_name]
        width = 0.8 / max(1, len(impls))
        for i, impl in enumerate(impls):
            xs, ys = [], []
            for j, cfg in enumerate(cfgs):
                row = cfg.row(impl.key)
                if row is not None and row.ok and row.stats is not None:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    ys.append(1.0 / row.stats.median)
            bars = ax.bar(
                xs,
                ys,
                width,
                label=impl.label,
                color=_FAMILY_COLOURS.get(impl.family, "grey"),
                alpha=max(0.3, 1.0 - 0.2 * shade[impl.key]),
                hatch="//" if impl.partial else None,
                edgecolor="black",
                linewidth=0.4,
            )
            handles.setdefault(impl.label, bars)
        ax.set_xticks(range(len(cfgs)), [f"batch {c.batch}" for c in cfgs])
        if not any(r.ok for c in cfgs for r in c.rows):
            ax.text(0.5, 0.5, "nothing timed", ha="center", va="center", transform=ax.transAxes)
            continue
        ax.set_yscale("log")
        ax.set_ylabel("images / s (log scale)")
        ax.set_title(f"{cfgs[0].size.label} -> 224x224" if cfgs else size_name)
        ax.grid(axis="y", which="both", alpha=0.3)
    ax_leg = fig.add_subplot(top[0, -1])
    ax_leg.axis("off")
    if handles:
        ax_leg.legend(list(handles.values()), list(handles), loc="center left", fontsize=8, frameon=False)

    # Bottom row: serving throughput, serving latency, call overhead.
    if serving is not None and serving.points:
        ax_t = fig.add_subplot(gs[1, 0])
        ax_l = fig.add_subplot(gs[1, 1])
        for name in dict.fromkeys(p.impl for p in serving.points):
            pts = [p for p in serving.points if p.impl == name]
            colour = _FAMILY_COLOURS.get(name, "grey")
            ks = [p.threads for p in pts]
            ax_t.plot(ks, [p.throughput.median for p in pts], "o-", color=colour, label=name)
            ax_t.fill_between(
                ks, [p.throughput.min for p in pts], [p.throughput.max for p in pts], color=colour, alpha=0.2
            )
            ax_l.plot(ks, [p.p50_s * 1e3 for p in pts], "o-", color=colour, label=f"{name} P50")
            ax_l.plot(ks, [p.p99_s * 1e3 for p in pts], "s--", color=colour, label=f"{name} P99")
        for ax in (ax_t, ax_l):
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(dict.fromkeys(p.threads for p in serving.points)))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.set_xlabel("Python threads")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        ax_t.set_ylabel("requests / s")
        ax_t.set_title("serving 512x512 single requests: throughput")
        ax_l.set_ylabel("latency (ms)")
        ax_l.set_yscale("log")
        ax_l.set_title("serving: per-request latency")
    if overhead is not None and overhead.per_call_us:
        ax_o = fig.add_subplot(gs[1, 2])
        names = list(overhead.per_call_us)
        meds = [overhead.per_call_us[n].median for n in names]
        colours = [_FAMILY_COLOURS["goprep"] if n.startswith("goprep") else _FAMILY_COLOURS["opencv"] for n in names]
        ax_o.barh(range(len(names)), meds, color=colours)
        ax_o.set_yticks(range(len(names)), names, fontsize=8)
        ax_o.axvline(5.0, color="red", linestyle=":", label="5 us target")
        ax_o.set_xlabel("us per call (4x4x3 flip)")
        ax_o.set_title("per-call overhead")
        ax_o.invert_yaxis()
        ax_o.legend(fontsize=8)
        ax_o.grid(axis="x", alpha=0.3)

    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
