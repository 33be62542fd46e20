"""The profiler's per-call cost (issue 11: with ``goprep.set_profiling(True)``, under 1 us per call),
measured one way for every report that prints it: the main bench (its targets), serve-bench (its
JSON's machine.profiler) and benchmarks/profiler_cost.py."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from .targets import Target, _judge


def overhead_us(rounds: int = 61, block: int = 400) -> Dict[str, float]:
    """Per-call cost of the profiler on a tiny pipeline and a tiny eager op (a 4x4x3 flip, one engine
    thread): ``rounds`` rounds, each timing a block of ``block`` calls with the profiler off and one
    with it on, back to back, in alternating order (off-on, on-off: drift cancels), on thread CPU time
    (time this thread ran, so preemption by other processes on a shared machine is not counted). The
    cost is the median of the per-round on - off differences, with their interquartile range: the
    fastest-round difference printed before swung from -2.9 to +1.6 us between runs on the loaded
    2-core machine, the median of paired rounds within +0.5 to +1.6 us over 23 runs (docs/SERVING.md).
    serve-bench, the main bench and benchmarks/profiler_cost.py all report this figure."""
    import numpy as np

    import goprep

    @goprep.pipeline(device="cpu")
    def tiny(x: Any) -> Any:
        return goprep.flip(x)

    src = np.zeros((4, 4, 3), np.uint8)
    was, threads = goprep.profiling(), goprep.get_num_threads()
    fns = {"call_us": tiny, "eager_call_us": goprep.flip}
    times: Dict[Tuple[str, bool], List[float]] = {(k, on): [] for k in fns for on in (False, True)}
    clock = time.thread_time_ns
    try:
        goprep.set_num_threads(1)  # the call's fixed cost, not a fan-out to one goroutine per core
        for on in (False, True, False, True):  # warm both paths (trace, plan, the thread's buffers)
            goprep.set_profiling(on)
            for fn in fns.values():
                for _ in range(block):
                    fn(src)
        for r in range(rounds):
            for on in ((False, True) if r % 2 == 0 else (True, False)):
                goprep.set_profiling(on)
                for k, fn in fns.items():
                    t = clock()
                    for _ in range(block):
                        fn(src)
                    times[k, on].append((clock() - t) / block / 1e3)
    finally:
        goprep.set_profiling(was)
        goprep.set_num_threads(threads)
        goprep.stats(reset=True)
    out: Dict[str, float] = {"rounds": rounds, "block": block}
    for k, name in (("call_us", "overhead_us"), ("eager_call_us", "eager_overhead_us")):
        off, on = np.array(times[k, False]), np.array(times[k, True])
        d = on - off
        out[f"{k}_profiling_off"], out[f"{k}_profiling_on"] = float(np.median(off)), float(np.median(on))
        out[name] = float(np.median(d))
        out[f"{name}_q25"], out[f"{name}_q75"] = (float(q) for q in np.percentile(d, (25, 75)))
    return out


@dataclass
class ProfilerCost:
    values: Dict[str, float] = field(default_factory=dict)  # overhead_us's result
    error: str = ""

    def as_dict(self) -> Dict[str, Any]:
        return {"values": self.values, "error": self.error}


def run(rounds: int = 61) -> ProfilerCost:
    try:
        return ProfilerCost(overhead_us(rounds))
    except Exception as exc:  # noqa: BLE001 - reported as the section's error, the run goes on
        return ProfilerCost(error=f"{type(exc).__name__}: {exc}")


_KINDS = (("call_us", "overhead_us", "goprep.pipeline(flip)"), ("eager_call_us", "eager_overhead_us", "goprep.flip (eager)"))


def lines(res: ProfilerCost) -> List[str]:
    v = res.values
    out = [f"== profiler cost: 4x4x3 flip, 1 engine thread, {v.get('rounds', 0):.0f} paired off/on rounds of "
           f"{v.get('block', 0):.0f} calls, thread CPU time (median of the differences [interquartile range]) =="]
    if res.error:
        return out + [f"  {res.error}"]
    for k, o, name in _KINDS:
        out.append(f"  {name:24s} off {v[k + '_profiling_off']:.2f} us, on {v[k + '_profiling_on']:.2f} us: "
                   f"{v[o]:+.2f} us per call [{v[o + '_q25']:+.2f}, {v[o + '_q75']:+.2f}]")
    return out


def targets(res: ProfilerCost) -> List[Target]:
    why = res.error or "not measured"
    return [_judge(f"profiler_cost_{o}", f"profiler cost per call, {name} (paired rounds, thread CPU time)",
                   res.values.get(o), "<", 1.0, "us", why) for _, o, name in _KINDS]
