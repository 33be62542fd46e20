"""Under an address-space limit (ulimit -v) too low for Go's runtime, the first call raises
goprep.BackendError saying how much is needed; the process does not die. With enough room it works."""

import pytest

from conftest import run_python

pytestmark = pytest.mark.slow  # a fresh interpreter per limit

CODE = r"""
import resource, sys
import numpy as np
import goprep
vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1]) * 1024
lim = vm + {extra_mib} * 2**20
resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
try:
    out = goprep.resize(np.zeros((64, 64, 3), np.uint8), (32, 32))
    print("RESULT", out.shape)
except goprep.BackendError as e:
    print("ERROR", e.code, e)
"""


@pytest.mark.parametrize("extra_mib", [300, 700, 1300])
def test_too_low_a_limit_raises_backend_error(extra_mib):
    p = run_python(CODE.format(extra_mib=extra_mib))
    assert p.returncode == 0, f"the process died: {p.returncode}\n{p.stderr[-2000:]}"
    assert "ERROR internal" in p.stdout and "ulimit -v" in p.stdout and "MiB" in p.stdout, p.stdout


def test_enough_room_works():
    p = run_python(CODE.format(extra_mib=4096))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "RESULT (32, 32, 3)" in p.stdout, p.stdout
