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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt parameter numbers (glibc malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
SETTINGS = {"mmap_threshold": 16 << 20, "trim_threshold": 256 << 20, "top_pad": 16 << 20}


def tune() -> bool:
    """Apply SETTINGS with mallopt; True when glibc took all three (False elsewhere: musl, macOS)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = mallopt(_M_MMAP_THRESHOLD, SETTINGS["mmap_threshold"]) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, SETTINGS["trim_threshold"]) == 1 and ok
    return mallopt(_M_TOP_PAD, SETTINGS["top_pad"]) == 1 and ok
