"""Peak memory of one goprep call over a batch of 64 1920x1080 JPEGs (issue 26): the process's peak
RSS growth during the call against what must be alive at once, the output plus the decoded images in
flight (one per engine thread, goprep's pooled decode buffers).

Each case runs in a fresh interpreter: warm-up with one image (the extension, plans and one buffer
per thread exist), then peak RSS (ru_maxrss) before and after the 64-image call.

    python benchmarks/decode_memory.py [--threads 1,2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import io, json, resource, sys
    import numpy as np
    from PIL import Image
    import goprep
    from goprep._benchsuite import images

    threads = int(sys.argv[1])
    goprep.set_num_threads(threads)
    jpegs = []
    for p in images.photos(images.Size("1080p", 1080, 1920)):
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(p)).save(buf, "JPEG", quality=90)
        jpegs.append(buf.getvalue())
    batch = [jpegs[i % len(jpegs)] for i in range(64)]

    @goprep.pipeline(device="cpu")
    def prep(x):
        x = goprep.decode(x)
        x = goprep.resize(x, 256, antialias=True)
        x = goprep.center_crop(x, 224)
        return goprep.normalize(x, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))

    prep(batch[:threads])  # warm: plans, pools, one decode buffer per thread
    out = np.empty((64, 3, 224, 224), np.float32)
    out.fill(0)  # resident before measuring, so the output is not counted as growth
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    prep(batch, out=out)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"threads": threads, "growth": after - before, "output": out.nbytes,
                      "decoded_each": 1080 * 1920 * 3}))
    """
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    for t in [int(x) for x in a.threads.split(",")]:
        r = json.loads(subprocess.run([sys.executable, "-c", CHILD, str(t)], check=True, capture_output=True, text=True).stdout)
        alive = r["decoded_each"] * t
        print(f"threads {t}: peak RSS growth during the call {r['growth'] / 2**20:.1f} MiB; "
              f"output {r['output'] / 2**20:.1f} MiB (resident before the call), decoded images alive at once "
              f"{alive / 2**20:.1f} MiB; growth / (decoded alive) = {r['growth'] / alive:.2f}, "
              f"(output + growth) / (output + decoded alive) = {(r['output'] + r['growth']) / (r['output'] + alive):.2f}")


if __name__ == "__main__":
    main()
