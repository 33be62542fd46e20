"""`python -m goprep demo`: what a newcomer sees first."""

import subprocess
import sys

import pytest


def test_demo_cuda_line_in_plain_words():
    from goprep._demo import cuda_line

    reason = "CUDA driver library not available: libcuda.so.1: cannot open shared object file"
    line = cuda_line({"cuda_available": False, "cuda_built": True, "devices": [], "cuda_reason": reason})
    assert line == "CUDA: no NVIDIA driver found; using the CPU engine"
    assert "CPU-only" in cuda_line({"cuda_available": False, "cuda_built": False, "devices": [],
                                    "cuda_reason": "this goprep build has no CUDA backend (CPU-only)"})
    assert cuda_line({"cuda_available": True, "cuda_built": True, "devices": [{"name": "NVIDIA H200"}],
                      "cuda_reason": ""}).startswith("CUDA: NVIDIA H200")


@pytest.mark.slow
def test_demo_matches_its_numpy_reference_exactly():
    r = subprocess.run([sys.executable, "-m", "goprep", "demo", "--batch", "3", "--seconds", "0.2"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all 451,584 values identical -> OK" in r.stdout, r.stdout
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    assert r.stdout.rstrip().splitlines()[-1].startswith("CUDA: "), r.stdout


@pytest.mark.slow
def test_demo_rejects_bad_arguments():
    r = subprocess.run([sys.executable, "-m", "goprep", "demo", "--batch", "0"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "--batch must be at least 1" in r.stderr, r.stderr
