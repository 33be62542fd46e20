"""Internals of ``python -m goprep bench`` (entry point: :func:`goprep._bench.main`).

Modules:

- ``machine``   -- what the numbers were measured on (CPU, cores, library versions).
- ``images``    -- the real photographs the suite preprocesses (scikit-image's bundled images).
- ``task``      -- the preprocessing task every row performs, its tolerances, the row type, thread settings.
- ``impls_goprep`` -- the task as goprep pipelines, the references rows are checked against, the probes.
- ``impls_peers``  -- the same task written with NumPy, OpenCV, Pillow and torchvision.
- ``timing``    -- warm-up, calibration and interleaved repeats timed with ``time.perf_counter``.
- ``scenarios`` -- the throughput grid, the serving scenario and the per-call overhead probe.
- ``targets``   -- the PASS/FAIL performance targets (``ISSUE37``: issue 37's, ``scaling_target``: its rule).
- ``decode``    -- issues 26 and 37: JPEG/PNG bytes to the eval tensor, the reduced decode and its bound.
- ``cold``      -- issues 13 and 37: distinct images against the copy bound; the copy's thread scaling.
- ``yuv``       -- issue 37: NV12 frames against RGB and OpenCV, with the measured bound
  (``python -m goprep._benchsuite.yuv --issue37`` prints every issue-37 row and target).
- ``report``    -- text tables, JSON and the PNG chart.
- ``zoo``       -- issue 40: ``from_hf`` vs Hugging Face's fast and PIL image processors (Qwen2-VL, ...).
- ``train``     -- issue 36: training batches from JPEG files, goprep's loader vs torchvision and DALI.

Nothing here is imported by ``import goprep``; the heavy optional dependencies (cv2, PIL, skimage,
matplotlib, tqdm, torch) are imported only when the benchmark runs.
"""
