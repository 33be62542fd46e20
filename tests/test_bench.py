"""Smoke test of `python -m goprep bench`: a minimal grid runs end to end and writes its report."""

import json
import subprocess
import sys


def test_bench_smoke(tmp_path):
    cmd = [sys.executable, "-m", "goprep", "bench", "--quick", "--sizes", "256", "--batches", "1",
           "--repeats", "1", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    reports = list(tmp_path.glob("goprep-bench-*.json"))
    charts = list(tmp_path.glob("goprep-bench-*.png"))
    assert len(reports) == 1 and len(charts) == 1
    data = json.loads(reports[0].read_text())
    text = json.dumps(data)
    # every implementation was checked against goprep before being timed, and the targets were judged
    assert "goprep-1t" in text and "opencv-1t" in text
    assert "PASS" in proc.stdout or "FAIL" in proc.stdout
    assert "decorator + binding overhead" in proc.stdout
