"""The CUDA build's promises on machines without a GPU: no load-time dependency on the driver
libraries, import and device queries work (also with LD_BIND_NOW=1, which makes every symbol resolve
at load), and probing the driver never exits the process (gorgonia.org/cu's init would)."""

import glob
import os
import shutil
import subprocess

import pytest

import goprep
from conftest import run_python


def _extension():
    import goprep._ext as ext

    (so,) = glob.glob(os.path.join(os.path.dirname(ext.__file__), "_native*.so"))
    return so


def test_extension_does_not_need_driver_libraries():
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.fail("readelf (binutils) is needed to check the extension's NEEDED entries")
    out = subprocess.run([readelf, "-d", _extension()], capture_output=True, text=True, check=True).stdout
    needed = [ln for ln in out.splitlines() if "(NEEDED)" in ln]
    assert needed, out
    assert not [ln for ln in needed if "libcuda" in ln or "libnvidia-ml" in ln], needed


@pytest.mark.slow
@pytest.mark.parametrize("bind_now", ["", "1"])
def test_import_and_probe_never_exit(bind_now):
    env = {"LD_BIND_NOW": bind_now} if bind_now else {}
    r = run_python(
        """
        import goprep, numpy as np
        devs = goprep.devices()
        info = goprep.info()
        x = goprep.pipeline(lambda im: goprep.resize(im, 8))(np.zeros((16, 16, 3), np.uint8))
        print("OK", info["cuda_built"], len(devs), bool(info["cuda_reason"]) or bool(devs), x.shape)
        """,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "OK", r.stdout
    assert r.stdout.strip().endswith("True (8, 8, 3)"), r.stdout


def test_reason_when_no_gpu():
    info = goprep.info()
    if info["cuda_available"]:
        pytest.skip("a GPU is usable here")
    if info["cuda_built"]:
        # A CUDA build on a machine without a driver names what is missing.
        assert "libcuda" in info["cuda_reason"] or "cuInit" in info["cuda_reason"] or "no devices" in info["cuda_reason"]
    else:
        assert "CPU-only" in info["cuda_reason"]
