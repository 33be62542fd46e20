"""Fork safety, always in a subprocess with a timeout so that a hang fails instead of blocking."""

import pytest

from conftest import run_python

PRELUDE = r"""
import gc, os, sys, time, signal, traceback
import numpy as np
import goprep

img = np.random.default_rng(0).integers(0, 256, (64, 80, 3), dtype=np.uint8)

def child_work():
    # returns 0 on a correct result, 10 on ForkError, other values on failures
    try:
        r = goprep.flip(img)
        if not np.array_equal(r, img[:, ::-1]):
            return 2
        r = goprep.resize(np.full((10, 10, 3), 7, np.uint8), (33, 21))
        if not (r.shape == (33, 21, 3) and (r == 7).all()):
            return 2
        return 0
    except goprep.ForkError as e:
        if not (isinstance(e, goprep.BackendError) and isinstance(e, RuntimeError) and e.code == "forked"):
            return 4
        return 10
    except BaseException:
        traceback.print_exc()
        return 3

def wait_child(pid, deadline_s):
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                print("CHILD_SIGNAL", os.WTERMSIG(status), flush=True)
                sys.exit(1)
            return os.WEXITSTATUS(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print("CHILD_HUNG", flush=True)
    sys.exit(1)
"""


@pytest.mark.slow
def test_fork_after_import_only():
    code = PRELUDE + r"""
assert not any("_native" in l and ".so" in l for l in open("/proc/self/maps")), "import goprep loaded the native module"
pid = os.fork()
if pid == 0:
    rc = child_work()
    gc.collect()
    os._exit(rc)
rc = wait_child(pid, 20)
print("CHILD_RC", rc, flush=True)
sys.exit(0 if rc == 0 else 1)
"""
    p = run_python(code, timeout=60)
    assert p.returncode == 0, f"child of an import-only parent must use goprep successfully\n{p.stdout}\n{p.stderr}"
    assert "CHILD_RC 0" in p.stdout


@pytest.mark.slow
def test_multiprocessing_fork_pool_after_import_only():
    code = r"""
import multiprocessing as mp, sys
import numpy as np
import goprep

def work(i):
    x = np.full((20 + i, 30, 3), i, np.uint8)
    r = goprep.resize(x, (16, 16))
    return bool((r == i).all())

if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as pool:
        res = pool.map_async(work, range(6)).get(timeout=30)
    print("OK", res)
    sys.exit(0 if all(res) else 1)
"""
    p = run_python(code, timeout=60)
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}"


@pytest.mark.slow
@pytest.mark.parametrize("exit_how", ["os._exit", "sys.exit"])
def test_fork_after_use(exit_how):
    code = PRELUDE + r"""
# use goprep in the parent: native runtime up, worker threads started, a plan and some objects alive
goprep.set_num_threads(2)
assert np.array_equal(goprep.flip(img), img[:, ::-1])
pipe = goprep.pipeline(lambda x: goprep.normalize(goprep.resize(x, (32, 32)), mean=(0.5,)*3, std=(0.2,)*3))
want = pipe(img)
_, info = goprep.letterbox(img, (100, 100))
cycle = [pipe, info]
cycle.append(cycle)          # only the cycle collector frees these
del pipe, info, cycle

pid = os.fork()
if pid == 0:
    rc = child_work()
    if rc in (0, 10):
        gc.collect()         # finalizers of parent-created goprep objects must not hang
    if EXIT_HOW == "os._exit":
        os._exit(rc)
    else:
        sys.exit(rc)         # full interpreter finalization in the child
rc = wait_child(pid, 20)
print("CHILD_RC", rc, flush=True)
# the parent is unaffected by the fork
gc.collect()
assert np.array_equal(goprep.flip(img), img[:, ::-1])
sys.exit(0 if rc in (0, 10) else 1)
""".replace("EXIT_HOW", repr(exit_how))
    p = run_python(code, timeout=60)
    assert "CHILD_HUNG" not in p.stdout, f"forked child hung\n{p.stdout}\n{p.stderr}"
    assert p.returncode == 0, f"child must succeed or raise goprep.ForkError\n{p.stdout}\n{p.stderr}"


@pytest.mark.slow
def test_fork_after_use_pipeline_in_child():
    code = PRELUDE + r"""
pipe = goprep.pipeline(lambda x: goprep.flip(goprep.resize(x, (32, 40))))
want = pipe(img)
pid = os.fork()
if pid == 0:
    try:
        r = pipe(img)
        rc = 0 if np.array_equal(r, want) else 2
    except goprep.ForkError:
        rc = 10
    except BaseException:
        traceback.print_exc()
        rc = 3
    gc.collect()
    os._exit(rc)
rc = wait_child(pid, 20)
print("CHILD_RC", rc, flush=True)
sys.exit(0 if rc in (0, 10) else 1)
"""
    p = run_python(code, timeout=60)
    assert "CHILD_HUNG" not in p.stdout, f"forked child hung\n{p.stdout}\n{p.stderr}"
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}"


def test_fork_after_decode_raises_fork_error_in_child():
    """A child forked after goprep decoded something gets ForkError from decode (never a hang or a
    crash): the Go runtime's threads did not survive the fork."""
    code = PRELUDE + r"""
import io
from PIL import Image
buf = io.BytesIO()
Image.fromarray(img).save(buf, "PNG")
data = buf.getvalue()
if not goprep.info()["codecs"]:
    print("NO_CODECS", flush=True)
    sys.exit(0)
assert np.array_equal(goprep.decode(data), img)
pid = os.fork()
if pid == 0:
    try:
        goprep.decode(data)
        rc = 0
    except goprep.ForkError:
        rc = 10
    except BaseException:
        traceback.print_exc()
        rc = 3
    os._exit(rc)
rc = wait_child(pid, 20)
print("CHILD_RC", rc, flush=True)
sys.exit(0 if rc == 10 else 1)
"""
    p = run_python(code, timeout=60)
    if "NO_CODECS" in p.stdout:
        pytest.skip("goprep was built without its codecs")
    assert "CHILD_HUNG" not in p.stdout, f"forked child hung\n{p.stdout}\n{p.stderr}"
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}"
