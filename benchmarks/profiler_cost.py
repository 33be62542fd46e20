"""Where the profiler's per-call cost goes (issue 11: "when on, under 1 us per call").

    python benchmarks/profiler_cost.py [ROUNDS]

1. The cost itself, measured as the benches measure it (goprep._benchsuite.profiler.overhead_us, the
   one definition): a 4x4x3 flip as a pipeline and as an eager op, blocks of calls with the profiler
   off and on back to back in alternating order, thread CPU time (other processes on a shared machine
   disturb it less than wall time); the median of the per-round on - off differences and their
   interquartile range. ROUNDS (default 61) sets the number of rounds.
2. Its parts, each timed alone in a loop (net of the loop): the three clock readings, the thread's
   state lookup, a store into a list (Python's fields) vs into an int64 array.array (the earlier
   design), the timed entry point vs the plain one, and aggregating a full 4096-row buffer.

In a real call the parts cost about twice what they cost alone (the interpreter's caches are cold
after the engine call), so 2. explains the shape of 1., not its sum.
"""

from __future__ import annotations

import array
import statistics
import sys
import time
import timeit

import numpy as np

import goprep
from goprep import _native, _ops, _profile
from goprep._benchsuite.profiler import overhead_us as profiler_overhead_us


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 61
    goprep.set_num_threads(1)

    prof = profiler_overhead_us(rounds)
    print(f"1. per call, 4x4x3 flip, {rounds} paired off/on rounds of {prof['block']:.0f} calls (thread CPU time, "
          "median of the differences [interquartile range]):")
    for k, name in (("call_us", "pipeline"), ("eager_call_us", "eager")):
        o = "overhead_us" if name == "pipeline" else "eager_overhead_us"
        print(f"   {name:8s} off {prof[k + '_profiling_off']:.2f} us, on {prof[k + '_profiling_on']:.2f} us: "
              f"{prof[o]:+.2f} us [{prof[o + '_q25']:+.2f}, {prof[o + '_q75']:+.2f}]")

    @goprep.pipeline(device="cpu")
    def flip_pipeline(img):
        return goprep.flip(img)

    tiny = np.ascontiguousarray(np.random.default_rng(0).integers(0, 256, (4, 4, 3), np.uint8))
    flip_pipeline(tiny)
    goprep.flip(tiny)

    # 2. the parts
    goprep.set_profiling(True)
    flip_pipeline(tiny)
    st = _profile.state()
    goprep.set_profiling(False)
    sig = next(iter(_ops._FLIP._cache.values()))  # the eager flip's signature (a one-op pipeline's)
    out = np.empty_like(tiny)
    run, run_timed, _ = _native.raw_entries()
    h, s, o, base = sig.handle, id(tiny), id(out), st.eaddr
    tls, clock = _profile._tls, time.perf_counter_ns
    lst, arr = [0] * 4096, array.array("q", bytes(8 * 4096))
    m = 20000

    env = {"clock": clock, "tls": tls, "lst": lst, "arr": arr, "run": run, "run_timed": run_timed, "h": h, "s": s,
           "o": o, "base": base}
    parts = {
        "nothing": "pass",
        "perf_counter_ns()": "clock()",
        "thread state (_tls.s)": "tls.s",
        "list[7] = perf_counter_ns()": "lst[7] = clock()",
        "array[7] = perf_counter_ns()": "arr[7] = clock()",
        "Run (plain entry point)": "run(h, s, o)",
        "RunTimed (timed entry point)": "run_timed(h, s, o, base, 7)",
    }
    timers = {k: timeit.Timer(v, globals=env, timer=time.thread_time) for k, v in parts.items()}
    times = {k: [] for k in parts}
    for _ in range(max(5, rounds // 2)):
        for k, t in timers.items():
            times[k].append(t.timeit(m) / m * 1e9)
    floor = statistics.median(times["nothing"])
    print("2. parts, alone (ns, net of the timing loop):")
    for k, v in times.items():
        if k != "nothing":
            print(f"   {k:30s} {statistics.median(v) - floor:7.1f}")
    goprep.set_profiling(True)
    for _ in range(_profile.ROWS - 1 - st.i):
        flip_pipeline(tiny)
    fold = []
    for _ in range(5):
        st.done = 0
        saved = dict(st.agg)
        t = time.thread_time_ns()
        with st.lock:
            st.aggregate()
        fold.append((time.thread_time_ns() - t) / st.i)
        st.agg = saved
    goprep.set_profiling(False)
    goprep.stats(reset=True)
    print(f"   aggregating a full buffer, per row {statistics.median(fold):7.1f}")


if __name__ == "__main__":
    main()
