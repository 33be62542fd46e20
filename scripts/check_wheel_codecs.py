"""The codec checks a built wheel must pass, shared by scripts/build_wheels.sh (each x86_64 wheel) and
scripts/test_arm64_wheel.sh (the aarch64 wheel under qemu). Imported from those scripts' inline checks
with the interpreter that runs the wheel: it needs goprep and NumPy only (no Pillow).

check(src) asserts that goprep's decoders are the static libraries scripts/build_codecs.sh builds
(libjpeg-turbo 3.1.x, libpng 1.6.x) and that every file of the codec corpus (src/gomod/codec/testdata)
decodes, in each mode the manifest lists, to the SHA-256 of Pillow's output there; it returns
(goprep.info()["codecs"], the number of decodes checked).
"""

import hashlib
import json
import os

import numpy as np

import goprep


def check(src):
    c = goprep.info()["codecs"]
    assert c.get("jpeg", "").startswith("libjpeg-turbo 3.1.") and c.get("png", "").startswith("libpng 1.6."), c
    corpus = os.path.join(src, "gomod", "codec", "testdata")
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    n = 0
    for name, want in sorted(manifest.items()):
        for mode in ("RGB", "L", "RGBA"):
            if mode in want:
                got = goprep.decode(os.path.join(corpus, name), mode=mode)
                assert hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest() == want[mode], (name, mode)
                n += 1
    assert n > 50, n
    return c, n
