"""glibc malloc settings for processes that move ~1 MB messages: the reference server and its load
generator, every preprocessing variant alike.

grpcio receives each request into a fresh buffer and copies it into a Python ``bytes``; both are
~921 KB for a 640x480 frame. glibc serves blocks that large with ``mmap`` (or from the top of a heap it
trims back after ``free``), so every request's buffers are new pages: each 4 KB page faults and is
zeroed by the kernel on first touch. perf on the no-preprocessing server at 16 in flight: page faults,
page clearing and unmapping took ~20% of its CPU. Keeping such blocks in malloc's heaps (mmap
threshold 16 MiB, no trimming below 256 MiB, 16 MiB top pad) took the floor server from 1.77 / 2.09 ms
to 0.92 / 1.36 ms of CPU per raw request (two alternated runs, loaded 2-core machine), with 0.7-2.3
page faults per request left (perf stat). It is the tuning any Python service handling large messages
would apply (the same as ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` in its environment);
it costs address space that stays mapped (a few tens of MB), not speed.

With blocks that large kept, each malloc arena holds on to the high-water mark of what its threads
freed, and glibc makes up to 8 arenas per core (the worker threads, REST's encoding threads, gRPC's
own): over a soak the arenas' resident part kept growing as freed blocks were reused in other
places (REST: 24 -> 165 MB in 100 s). So the arenas are capped at one per core (``arenas``, at
least 2: threads share an arena's lock, held for a block's bookkeeping only), and a server returns
the free pages inside its heaps to the OS every ``TRIM_SECONDS`` (``trim``, malloc_trim: 1.4-3.4 ms
of CPU a call, then at most the pages reused before the next call fault again, instead of every
request's). Measured: docs/perf/2026-12-06-serve-rss.md.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from typing import Any, Optional

# mallopt parameter numbers (glibc malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -2, -3, -8
_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
SETTINGS = {"mmap_threshold": 16 << 20, "trim_threshold": 256 << 20, "top_pad": 16 << 20, "arenas": max(2, _CORES)}
TRIM_SECONDS = 5.0


@functools.lru_cache(maxsize=1)
def _libc() -> Optional[Any]:
    """glibc, or None where this is not Linux or the C library has no mallopt (musl, macOS); looked
    up once (find_library runs ldconfig)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return libc


def tune() -> bool:
    """Apply SETTINGS with mallopt (before the server starts its threads: the arena cap applies to
    arenas made after it); True when glibc took all four (False elsewhere: musl, macOS)."""
    libc = _libc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(_M_MMAP_THRESHOLD, SETTINGS["mmap_threshold"]) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, SETTINGS["trim_threshold"]) == 1 and ok
    ok = mallopt(_M_ARENA_MAX, SETTINGS["arenas"]) == 1 and ok
    return mallopt(_M_TOP_PAD, SETTINGS["top_pad"]) == 1 and ok


def trim() -> bool:
    """Return the free pages inside malloc's heaps to the OS (malloc_trim(0), which releases the GIL
    while it walks the arenas); False where there is no glibc."""
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    libc.malloc_trim(0)
    return True
