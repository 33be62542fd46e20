"""``python -m goprep bench``: goprep next to NumPy, OpenCV, Pillow and torchvision, in one run.

Measures one preprocessing task (uint8 RGB photograph -> bilinear 224x224 -> horizontal flip ->
ImageNet normalize -> float32 CHW) implemented with each library, checks every output against
goprep's before its time counts, and reports time per image, images/s and the ratio to goprep;
then a serving scenario (1..8 Python threads handling single requests) and the per-call overhead
of the decorator + binding; finally PASS/FAIL lines for the project's performance targets.
Writes a JSON result file and a PNG chart to ``--out``.

The implementation lives in :mod:`goprep._benchsuite`; this module holds the command line.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main"]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m goprep bench",
        description=(
            "Benchmark goprep against NumPy, OpenCV, Pillow and torchvision on the same "
            "preprocessing task, side by side in one run. Exits 0 (it is a report) unless --check."
        ),
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="fewer repeats, 512x512 input only, batch 1 and 32 (under a minute on 2 idle cores)",
    )
    p.add_argument(
        "--out", default="bench_results", metavar="DIR", help="where the JSON and PNG go (default: %(default)s)"
    )
    p.add_argument(
        "--repeats", type=int, metavar="N", help="interleaved repeats per measurement (default: 9, --quick: 7)"
    )
    p.add_argument("--check", action="store_true", help="exit 1 if any performance target fails")
    p.add_argument(
        "--scale", action="store_true", help="instead: Ray Data with 1 vs 2 actors on a 2-node local cluster (--scale --help)"
    )
    p.add_argument(
        "--train", action="store_true", help="instead: the training-input benchmark alone (--train --help)"
    )
    p.add_argument(
        "--sizes",
        metavar="LIST",
        help="comma-separated input sizes from 256, 512, 1080p (default: all; --quick: 512)",
    )
    p.add_argument("--batches", metavar="LIST", help="comma-separated batch sizes (default: 1,32,256; --quick: 1,32)")
    args = p.parse_args(list(argv) if argv is not None else None)
    if args.repeats is not None and args.repeats < 1:
        p.error("--repeats must be at least 1")
    # --sizes / --batches become lists here, so that a typo fails before anything runs
    from ._benchsuite.images import SIZES

    if args.sizes:
        names = [s.strip() for s in args.sizes.split(",") if s.strip()]
        unknown = [n for n in names if n not in SIZES]
        if unknown or not names:
            p.error(f"--sizes: unknown {unknown or args.sizes!r}; choose from {', '.join(SIZES)}")
        args.sizes = [SIZES[n] for n in dict.fromkeys(names)]
    if args.batches:
        try:
            batches = [int(v) for v in args.batches.split(",") if v.strip()]
        except ValueError:
            batches = []
        if not batches or min(batches) < 1:
            p.error(f"--batches: expected comma-separated positive integers, got {args.batches!r}")
        args.batches = list(dict.fromkeys(batches))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the exit code (0, or 1 with ``--check`` when a target fails)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--scale" in argv:  # its own options and report: goprep/_benchsuite/scale.py
        from ._benchsuite.scale import main as scale_main

        return scale_main([a for a in argv if a != "--scale"])
    if "--train" in argv:  # issue 36's training benchmark alone: goprep/_benchsuite/train.py
        from ._benchsuite.train import main as train_main

        return train_main([a for a in argv if a != "--train"])
    args = _parse(argv)
    started = _dt.datetime.now().astimezone()
    t_start = time.perf_counter()

    # Heavy imports only now: ``import goprep`` must never pay for them.
    from tqdm import tqdm

    from ._benchsuite import cold, decode, images, impls_goprep, impls_peers, imagenet_eval, machine, profiler, report
    from ._benchsuite import scenarios, targets, task, train, yuv, zoo
    from ._benchsuite.scenarios import ConfigResult, Settings

    sizes = args.sizes or ([images.SIZES["512"]] if args.quick else list(images.SIZES.values()))
    batches: list[int] = args.batches or ([1, 32] if args.quick else [1, 32, 256])
    repeats = args.repeats or (7 if args.quick else 9)
    settings = Settings(
        repeats=repeats,
        min_sample_s=0.025 if args.quick else 0.05,
        max_calls=100_000,
        serving_target_s=0.25 if args.quick else 0.6,
        serving_repeats=3 if args.quick else 5,
        overhead_min_sample_s=0.025 if args.quick else 0.05,
        row_budget_s=4.0 if args.quick else 12.0,
    )

    info = machine.machine_info()
    threads = task.Threads()
    notes: list[str] = [
        "Task: uint8 RGB photograph (scikit-image astronaut/chelsea/coffee, INTER_AREA to the input size) -> "
        "bilinear 224x224 (half-pixel centres, no antialias) -> horizontal flip -> (x/255 - mean)/std "
        "(ImageNet) -> float32 CHW, C-contiguous.",
        "batch 1 = one (H, W, 3) image per call, cycling the three photographs; "
        "batch N = one (N, H, W, 3) array per call.",
        "Timing: time.perf_counter, warm-up and output check first, then repeats interleaved across "
        "implementations (order rotated each repeat); median per image (min..max over repeats); "
        "GC paused inside samples.",
        "t / goprep = the row's time / goprep's time (1-thread rows vs goprep 1 thread, all-thread rows vs goprep "
        f"with {threads.all} threads); above 1 means goprep is faster.",
        f"Output check against goprep (1 thread): near-exact rows (NumPy, OpenCV) within one uint8 step "
        f"({task.NEAR_EXACT_TOL:.4f} normalised), float-bilinear rows (Pillow transform, torchvision) within "
        f"{task.ROUNDING_TOL}; 'equal' = share of values within 1e-4. Failing rows are not timed.",
        "OpenCV '1 thread' rows run with cv2.setNumThreads(1) for a fair single-core comparison; "
        f"'all' rows with OpenCV's default ({threads.cv2_default}).",
        "NumPy: fixed-point bilinear written in plain NumPy (same arithmetic as cv2.resize INTER_LINEAR), "
        "vectorised over the batch.",
        "Pillow: Image.resize always antialiases when shrinking, so the task row uses Image.transform(AFFINE, "
        "BILINEAR) (plain bilinear); the Image.resize row is compared with goprep's antialias=True pipeline instead.",
        "cv2.resize alone does only part of the task (no flip/normalize): shown as the speed floor for the target.",
    ]

    # ---- implementations -------------------------------------------------------------------------
    rows: list[task.Impl] = []
    goprep_error: Exception | None = None
    try:
        rows += impls_goprep.goprep_impls(threads, antialias=True)
    except Exception as exc:  # noqa: BLE001 - report everything else anyway
        goprep_error = exc
        notes.append(f"goprep rows unavailable: {type(exc).__name__}: {exc}")
    refs: dict[str, task.Fn] | Exception
    try:
        refs = impls_goprep.references(threads)
    except Exception as exc:  # noqa: BLE001
        refs = exc
    rows += impls_peers.numpy_impls(threads)
    opencv_rows = impls_peers.opencv_impls(threads)
    rows += opencv_rows
    notes.append("OpenCV dnn: " + next(r.note for r in opencv_rows if r.key == "opencv-blob-1t"))
    rows += impls_peers.pillow_impls(threads, antialias=True)
    tv_rows, tv_skip = impls_peers.torchvision_impls(threads)
    rows += tv_rows
    if tv_skip:
        notes.append(tv_skip)
    gp = info.get("goprep", {})
    if gp.get("cuda_available"):
        notes.append("goprep CUDA row: host NumPy arrays in and out, transfers included.")
    else:
        notes.append(
            f"goprep CUDA rows skipped: cuda_available is False ({gp.get('cuda_reason', gp.get('error', '?'))})."
        )

    # The scaling target needs 512x512 batch 256; when the grid does not run it (--quick), a small
    # probe with only the two goprep CPU rows does.
    grid_keys = {(s.name, b) for s in sizes for b in batches}
    gp_rows = [r for r in rows if r.key in ("goprep-1t", "goprep-all", "goprep-1t-out", "goprep-all-out")]
    probe_needed = ("512", 256) not in grid_keys and len(gp_rows) == 4

    try:
        serving_fns: dict[str, task.Fn] | Exception = impls_goprep.serving_fns()
    except Exception as exc:  # noqa: BLE001
        serving_fns = exc
    try:
        overhead_fns: dict[str, Any] | Exception = impls_goprep.overhead_fns()
    except Exception as exc:  # noqa: BLE001
        overhead_fns = exc
    n_overhead = 7 if not isinstance(overhead_fns, Exception) else 0
    total = (
        len(sizes) * len(batches) * len(rows) * (1 + repeats)
        + (len(gp_rows) * (1 + repeats) if probe_needed else 0)
        + 2 * (1 + len(settings.serving_threads) * settings.serving_repeats)
        + n_overhead * (1 + repeats)
    )

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    stem = f"goprep-bench-{started.strftime('%Y%m%d-%H%M%S')}{'-quick' if args.quick else ''}"
    json_path = os.path.join(out_dir, stem + ".json")
    png_path = os.path.join(out_dir, stem + ".png")

    def say(lines: Sequence[str] | str = "") -> None:
        # one write per block: tqdm clears and redraws its bar around every write
        tqdm.write(lines if isinstance(lines, str) else "\n".join(lines), file=sys.stdout)
        sys.stdout.flush()

    say(f"goprep benchmark, {started.isoformat(timespec='seconds')}{' (--quick)' if args.quick else ''}")
    say(machine.machine_lines(info))
    say("Notes:")
    say([f"  - {n}" for n in notes])
    say()

    grid: list[ConfigResult] = []
    probes: list[ConfigResult] = []
    serving = overhead = None
    run_monitor = machine.LoadMonitor()
    try:
        # A progress bar only for a person watching a terminal: redirected output (a log file, CI)
        # gets the tables alone, not carriage-return redraws tangled between them.
        bars = sys.stdout.isatty() and sys.stderr.isatty()
        with tqdm(total=total, unit="step", file=sys.stderr, dynamic_ncols=True, leave=False, disable=not bars) as bar:
            for size in sizes:
                for b in batches:
                    cfg = scenarios.run_config(size, b, rows, refs, threads, settings, bar)
                    grid.append(cfg)
                    say(report.config_lines(cfg, repeats) + [""])
            if probe_needed:
                probe = scenarios.run_config(images.SIZES["512"], 256, gp_rows, refs, threads, settings, bar)
                probes.append(probe)
                say(
                    ["(scaling probe for the batch-256 target, goprep rows only)"]
                    + report.config_lines(probe, repeats)
                    + [""]
                )
            serving = scenarios.run_serving(serving_fns, refs, threads, settings, bar)
            say(report.serving_lines(serving) + [""])
            overhead = scenarios.run_overhead(overhead_fns, threads, settings, bar)
            say(report.overhead_lines(overhead) + [""])
            converted = imagenet_eval.run(threads, settings)  # issue 13: from_torchvision vs torchvision
            say(imagenet_eval.lines(converted) + [""])
            zoo_res = zoo.run(threads, settings)  # issue 40: from_hf vs HF's fast and PIL processors
            say(zoo.lines(zoo_res) + [""])
            decoded = decode.run(threads, settings, ("480p",) if args.quick else tuple(decode.SIZES))  # issue 26
            say(decode.lines(decoded) + [""])
            cold_res = cold.run(threads, settings)  # issue 13: distinct images vs the copy-bandwidth bound
            say(cold.lines(cold_res) + [""])
            frames = yuv.run(threads, settings)  # issue 37: NV12 frames vs RGB and OpenCV, with the bound
            say(yuv.lines(frames) + [""])
            prof_cost = profiler.run()  # issue 11: the profiler's per-call cost, paired rounds
            say(profiler.lines(prof_cost) + [""])
            # issue 36: training batches from JPEG files, goprep's loader vs torchvision's and DALI's
            trained = train.run(*((train.QUICK_FILES, train.QUICK_BATCH, train.QUICK_REPEATS) if args.quick else ()))
            say(train.lines(trained) + [""])
    finally:
        threads.restore()
    run_load = run_monitor.stop()

    def find(cfgs: Sequence[ConfigResult], size: str, b: int) -> ConfigResult | None:
        return next((c for c in cfgs if c.size.name == size and c.batch == b), None)

    results = targets.evaluate(
        find(grid, "512", 1),
        find(grid, "512", 256) or find(probes, "512", 256),
        serving,
        overhead,
        usable_cores=threads.all,
        all_threads=threads.all,
        b1080=find(grid, "1080p", 1),
        cold=find(grid, "512cold", 1),
        copy_scaling=cold_res.copy_scaling(),
    )
    results += imagenet_eval.targets(converted)
    results += zoo.targets(zoo_res)
    results += decode.targets(decoded, threads.all, cold_res.copy_scaling(2))
    results += cold.targets(cold_res)
    results += yuv.targets(frames)
    results += profiler.targets(prof_cost)
    results += train.targets(trained)
    say(report.target_lines(results))
    if goprep_error is not None:
        say(f"goprep itself failed: {type(goprep_error).__name__}: {goprep_error}")
    warning = machine.load_warning(run_load)
    if warning:
        say(f"! whole run: {warning.replace('this measurement', 'the run')}")

    wall = time.perf_counter() - t_start
    data = report.result_dict(
        argv=list(argv) if argv is not None else sys.argv[1:],
        settings={
            "quick": args.quick,
            "sizes": [s.name for s in sizes],
            "batches": batches,
            "repeats": repeats,
            "min_sample_s": settings.min_sample_s,
            "row_budget_s": settings.row_budget_s,
            "serving_threads": list(settings.serving_threads),
            "serving_repeats": settings.serving_repeats,
            "all_threads": threads.all,
            "goprep_default_threads": threads.goprep_default,
            "cv2_default_threads": threads.cv2_default,
        },
        machine=info,
        notes=notes,
        grid=grid,
        probes=probes,
        serving=serving,
        overhead=overhead,
        targets=results,
        started=started.isoformat(timespec="seconds"),
        wall_s=wall,
        load=run_load,
    )
    data["imagenet_eval"] = converted.as_dict()
    data["zoo"] = zoo_res.as_dict()
    data["decode"] = decoded.as_dict()
    data["cold"] = cold_res.as_dict()
    data["yuv"] = frames.as_dict()
    data["profiler_cost"] = prof_cost.as_dict()
    data["train"] = trained.as_dict()
    report.write_json(json_path, data)
    try:
        report.write_chart(
            png_path,
            grid,
            serving,
            overhead,
            f"goprep bench: {info['cpu_model']}, {threads.all} cores, {started.strftime('%Y-%m-%d %H:%M')}",
        )
        say(f"\nwrote {json_path}\nwrote {png_path}  ({wall:.0f} s)")
    except Exception as exc:  # noqa: BLE001 - the chart is a convenience; the JSON is written
        say(f"\nwrote {json_path}\nchart failed: {type(exc).__name__}: {exc}  ({wall:.0f} s)")

    failed = [t for t in results if t.status == "FAIL"]
    return 1 if args.check and failed else 0


if __name__ == "__main__":  # python -m goprep._bench
    raise SystemExit(main())
