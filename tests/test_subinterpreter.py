"""goprep in a sub-interpreter: a clear ImportError at import, and the process exits normally (a plan
freed while a sub-interpreter shut down used to hang the process's exit on CPython 3.11)."""

import pytest

from conftest import run_python

pytestmark = pytest.mark.slow  # a fresh interpreter

CODE = r"""
try:
    import _interpreters as subs        # CPython 3.13+
except ImportError:
    import _xxsubinterpreters as subs   # 3.10-3.12
import goprep, numpy as np
goprep.resize(np.zeros((8, 8, 3), np.uint8), (4, 4))   # used in the main interpreter first
sid = subs.create()
try:
    r = subs.run_string(sid, "import goprep")
except Exception as e:   # 3.10-3.12: RunFailedError
    r = e
print("SUB", getattr(r, "msg", r))
print("MAIN", goprep.resize(np.zeros((8, 8, 3), np.uint8), (4, 4)).shape)
"""


def test_import_in_a_subinterpreter_is_refused_and_the_process_exits():
    p = run_python(CODE, timeout=60)  # a hang fails here
    assert p.returncode == 0, p.stderr[-2000:]
    assert "cannot be imported in a sub-interpreter" in p.stdout, p.stdout
    assert "MAIN (4, 4, 3)" in p.stdout


def test_main_interpreter_is_not_taken_for_a_subinterpreter():
    import goprep

    assert goprep._in_subinterpreter() is False
