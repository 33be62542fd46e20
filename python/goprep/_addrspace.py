"""The address-space check made before the Go runtime starts.

Loading the extension starts Go's runtime, which reserves address space for its heap arena map, its
first arenas and thread stacks. Under an address-space limit (``ulimit -v``, ``RLIMIT_AS``) that leaves
too little, the runtime does not fail politely: it aborts the process ("fatal error: out of memory
allocating heap arena map", or SIGABRT from a failed pthread_create). So goprep measures the headroom
first and raises ``BackendError`` saying how much is needed instead.
"""

from __future__ import annotations

import os
from typing import Optional

from ._errors import BackendError

# Measured (2026-12-03, linux/amd64, Go 1.26): a first call needs between 0.9 and 1.5 GiB of address
# space beyond what the process had mapped at that point; 1.3 GiB failed in 4 of 4 runs and 1.5 GiB
# passed in 4 of 4. 2 GiB leaves a margin, plus one default thread stack per CPU for the engine's
# threads.
GO_RUNTIME_BYTES = 2 << 30
THREAD_STACK_BYTES = 8 << 20


def _mapped_bytes() -> Optional[int]:
    """This process's mapped address space (VmSize), or None where /proc does not say."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def needed_bytes() -> int:
    """The headroom the Go runtime's start and first call need."""
    return GO_RUNTIME_BYTES + THREAD_STACK_BYTES * (os.cpu_count() or 1)


def check() -> None:
    """Raise BackendError when RLIMIT_AS leaves less headroom than ``needed_bytes()``; no limit (the
    usual case) or no way to measure is a pass."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return
    used = _mapped_bytes()
    if used is None:
        return
    need = needed_bytes()
    if soft - used < need:
        mib = 1 << 20
        raise BackendError(
            f"the address-space limit (ulimit -v / RLIMIT_AS) is {soft // mib} MiB and this process already maps "
            f"{used // mib} MiB; goprep's Go runtime needs about {need // mib} MiB more to start. Raise the limit to "
            f"at least {(used + need) // mib} MiB (ulimit -v {(used + need) // 1024}), or remove it",
            code="internal",
        )
