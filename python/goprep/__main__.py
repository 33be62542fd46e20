"""The command line: ``python -m goprep COMMAND``, also installed as the ``goprep`` command."""

from __future__ import annotations

import sys
from typing import List, Optional

USAGE = """usage: python -m goprep [-h] [-V] COMMAND [options]
       goprep COMMAND [options]     (the same: the command pip installs with goprep)

options:
  -h, --help     show this message and exit
  -V, --version  print goprep's version and exit

commands:
  demo    preprocess a batch of images with a fused pipeline, check it against NumPy, print throughput
  bench   benchmark goprep against NumPy, OpenCV, Pillow and PyTorch
  info    print version, backend, threads, SIMD level and CUDA status as JSON
  profile run a script with the profiler on and print where goprep's time went (profile SCRIPT [args])
  serve   an inference server speaking KServe v2 / Triton gRPC (tritonclient works): your ONNX model
          behind goprep preprocessing
  serve-bench  load-test the server with each preprocessing implementation
  serve-soak   soak the server: valid, malformed and cancelled requests at concurrency 32, every reply checked

python -m goprep COMMAND --help describes each command's options.
"""


def version() -> str:
    """What --version prints: the package's version (goprep.__version__, its one source)."""
    from . import __version__

    return f"goprep {__version__}"


def _info(argv: List[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m goprep info",
        description="Print goprep's version, engine version, backend, thread count, SIMD level, the GPUs it "
        "can use and why CUDA is or is not in use, as JSON (the same dict as goprep.info()).",
    )
    ap.parse_args(argv)
    import json

    import goprep

    print(json.dumps(goprep.info(), indent=2))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        print(version())
        return 0
    cmd, rest = args[0], args[1:]
    if cmd == "demo":
        from ._demo import main as demo

        return demo(rest)
    if cmd == "bench":
        from ._bench import main as bench

        return bench(rest)
    if cmd == "profile":
        from ._profile import main as profile

        return profile(rest)
    if cmd == "serve":
        from ._serve.server import main as serve

        return serve(rest)
    if cmd == "serve-bench":
        from ._serve.bench import main as serve_bench

        return serve_bench(rest)
    if cmd == "serve-soak":
        from ._serve.soak import main as serve_soak

        return serve_soak(rest)
    if cmd == "info":
        return _info(rest)
    print(f"unknown command {cmd!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
