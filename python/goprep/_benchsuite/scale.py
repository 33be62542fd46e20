"""``python -m goprep bench --scale``: a Ray Data job with 1 vs 2 actors on a 2-node local cluster.

What it measures (side by side in one run; needs the ``ray`` extra: ``pip install ".[ray]"`` in a source checkout):

- the local baseline: the same pipeline called on the same batches in this process, 1 goprep thread
  (an actor holds 1 CPU, so it runs 1 goprep thread);
- a Ray Data job (``goprep.ray.preprocess`` over ``ray.data.from_numpy`` of the images, results
  materialized in the object store) with ``concurrency`` 1 and 2 actors, one per node, each with
  1 CPU: wall time of the whole job, and the steady-state rate between the first batch starting and
  the last one ending inside the actors (no actor start-up in it);
- the per-batch overhead Ray adds over a local call: with 1 actor, the steady-state time per
  batch (first batch start to last batch end, over the batches) minus the local time per batch;
  and the job's fixed cost (wall time minus that window: actor start-up, planning, fetching).

The images, their size and the pipeline are the main bench's task (uint8 RGB -> bilinear 224x224 ->
flip -> ImageNet normalize -> float32 CHW).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

import goprep
import goprep.ray as goprep_ray

from .cluster import LocalRayCluster

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


@goprep.pipeline(device="cpu")
def task(img):
    img = goprep.resize(img, (224, 224))
    img = goprep.flip(img)
    return goprep.normalize(img, mean=MEAN, std=STD)


class TimedPreprocessor(goprep_ray.Preprocessor):
    """The Preprocessor, plus when and where each batch ran (for the steady-state rate)."""

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        import ray

        t0 = time.time()
        out = super().__call__(batch)
        t1 = time.time()
        n = len(out["pixel_values"])
        out["t_start"] = np.full(n, t0)
        out["t_end"] = np.full(n, t1)
        out["node"] = np.array([ray.get_runtime_context().get_node_id()] * n)
        return out


def _parse(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m goprep bench --scale",
                                description="A Ray Data job with 1 vs 2 actors on a 2-node local cluster (docs/SCALE.md).")
    p.add_argument("--images", type=int, default=192, help="images in the large job (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=16, help="images per batch (default: %(default)s)")
    p.add_argument("--size", type=int, default=256, help="input images are SIZE x SIZE x 3 (default: %(default)s)")
    p.add_argument("--out", default="bench_results", metavar="DIR", help="where scale.json goes (default: %(default)s)")
    a = p.parse_args(list(argv) if argv is not None else None)
    for name in ("images", "batch_size", "size"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.images < 2 * a.batch_size:
        p.error("--images must be at least 2 batches")
    return a


def _job(ray: Any, data: np.ndarray, batch_size: int, concurrency: int) -> Dict[str, Any]:
    # one block per batch, so that batches can go to either actor (a single block would feed one)
    ds = ray.data.from_numpy([data[i : i + batch_size] for i in range(0, len(data), batch_size)])
    t0 = time.perf_counter()
    out = ds.map_batches(
        TimedPreprocessor,
        fn_constructor_kwargs={"pipeline": task, "column": "data"},
        batch_size=batch_size,
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=1,
        zero_copy_batch=True,
    ).materialize()
    wall = time.perf_counter() - t0
    # read the timing columns straight from the materialized blocks: select_columns().to_pandas()
    # would need a Ray task, hence a CPU, which the finished job's actors may not have released yet
    import pandas as pd

    cols = pd.concat(
        [b[["t_start", "t_end", "node"]] for b in out.iter_batches(batch_size=None, batch_format="pandas")],
        ignore_index=True,
    )
    n = len(cols)
    batches = cols.drop_duplicates(["t_start", "t_end"])
    window = float(cols["t_end"].max() - cols["t_start"].min())
    return {
        "images": n,
        "batches": len(batches),
        "actors": concurrency,
        "wall_s": wall,
        "images_per_s": n / wall,
        "window_s": window,
        "steady_images_per_s": n / window if window > 0 else float("nan"),
        "in_actor_call_s": float((batches["t_end"] - batches["t_start"]).median()),
        "nodes": int(cols["node"].nunique()),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parse(argv)
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, (args.images, args.size, args.size, 3), dtype=np.uint8)
    out_mb = (args.images * 3 * 224 * 224 * 4) >> 20
    cluster = LocalRayCluster(nodes=2, cpus_per_node=1, object_store_mb=max(256, 3 * out_mb), timeout=240)
    # Ray fixes its auth mode when it is imported: set the cluster's before the first import of ray.
    os.environ.update(cluster.client_env)
    import ray

    result: Dict[str, Any] = {"args": vars(args), "cores": os.cpu_count(), "load_before": os.getloadavg()}
    t_all = time.perf_counter()
    print(f"starting a 2-node Ray cluster on 127.0.0.1 (1 CPU per node), {args.images} images "
          f"{args.size}x{args.size}, batch {args.batch_size} ...", flush=True)
    try:
        cluster.start()
        ray.init(address=cluster.address, log_to_driver=False)
        ray.data.DataContext.get_current().wait_for_min_actors_s = 240
        ray.data.DataContext.get_current().enable_progress_bars = False

        # local baseline: the same batches, 1 goprep thread, median of 5 passes
        goprep.set_num_threads(1)
        batches = [data[i : i + args.batch_size] for i in range(0, len(data), args.batch_size)]
        for b in batches[:2]:
            task(b)
        per_pass = []
        for _ in range(5):
            t0 = time.perf_counter()
            for b in batches:
                task(b)
            per_pass.append(time.perf_counter() - t0)
        local_batch_s = statistics.median(per_pass) / len(batches)
        result["local"] = {"batch_s": local_batch_s, "images_per_s": args.batch_size / local_batch_s}

        # the Ray results must be the local ones before any time counts
        check = ray.data.from_numpy(data[: args.batch_size])
        got = np.stack([r["pixel_values"] for r in goprep_ray.preprocess(check, task, "data", batch_size=args.batch_size).take_all()])
        if not np.array_equal(got, task(data[: args.batch_size])):
            raise AssertionError("Ray results differ from the local pipeline")

        jobs: List[Dict[str, Any]] = []
        for conc in (1, 2, 1, 2):  # interleaved: each count's best of two, measured side by side
            r = _job(ray, data, args.batch_size, conc)
            jobs.append(r)
            print(f"  job: {r['images']} images, {r['actors']} actor(s) on {r['nodes']} node(s): "
                  f"{r['wall_s']:.2f} s wall ({r['images_per_s']:.0f} images/s), steady state "
                  f"{r['steady_images_per_s']:.0f} images/s", flush=True)
        result["jobs"] = jobs
        best = {c: max((j for j in jobs if j["actors"] == c), key=lambda j: j["steady_images_per_s"]) for c in (1, 2)}
        one, two = best[1], best[2]
        # steady state with 1 actor: time per batch between first start and last end, against the same
        # batch called locally; what is left is Ray's share (scheduling, Arrow conversion, object store)
        result["ray_batch_s"] = one["window_s"] / one["batches"]
        result["in_actor_call_s"] = one["in_actor_call_s"]
        result["overhead_per_batch_s"] = result["ray_batch_s"] - local_batch_s
        result["job_fixed_s"] = one["wall_s"] - one["window_s"]
        result["speedup_2_vs_1_wall"] = two["images_per_s"] / one["images_per_s"]
        result["speedup_2_vs_1_steady"] = two["steady_images_per_s"] / one["steady_images_per_s"]
    finally:
        try:
            ray.shutdown()
        finally:
            left = cluster.stop()
    result["leftover_processes"] = left
    result["load_after"] = os.getloadavg()
    result["total_s"] = time.perf_counter() - t_all

    lb = result["local"]
    print()
    print(f"local call, 1 thread:          {lb['batch_s'] * 1e3:8.2f} ms per batch of {args.batch_size} ({lb['images_per_s']:.0f} images/s)")
    print(f"same call inside the actor:    {result['in_actor_call_s'] * 1e3:8.2f} ms")
    print(f"Ray Data, 1 actor, per batch:  {result['ray_batch_s'] * 1e3:8.2f} ms (steady state) -> Ray adds "
          f"{result['overhead_per_batch_s'] * 1e3:.2f} ms per batch ({result['overhead_per_batch_s'] / lb['batch_s']:.0%} of the local call)")
    print(f"Ray Data, fixed cost per job:  {result['job_fixed_s']:8.2f} s (actor start-up, planning, fetching results)")
    print(f"2 actors vs 1: {result['speedup_2_vs_1_wall']:.2f}x images/s (whole job), "
          f"{result['speedup_2_vs_1_steady']:.2f}x (steady state, inside the actors)")
    print(f"cluster stopped, leftover processes: {left or 'none'}; {result['total_s']:.0f} s in all; "
          f"load average {result['load_before'][0]:.1f} before, {result['load_after'][0]:.1f} after (on {os.cpu_count()} cores)")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "scale.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(f"wrote {path}")
    return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main())
