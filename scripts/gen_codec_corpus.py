"""Writes gomod/codec/testdata/: small JPEG and PNG files (the Go tests' and FuzzDecode's seed corpus)
and manifest.json, which records for each file what Pillow makes of it (size, components, EXIF
orientation, and the SHA-256 of np.asarray(Image.open(f).convert(mode)) for RGB/L/RGBA, of
ImageOps.exif_transpose(...).convert("RGB"), and of draft scales 2/4/8), so that the Go tests check
byte-exactness against Pillow without Python.

    python scripts/gen_codec_corpus.py          # rewrite testdata (deterministic for a given Pillow)
    python scripts/gen_codec_corpus.py --check  # exit 1 if a recorded hash disagrees with this Pillow

Needs Pillow and NumPy, and OpenCV for the 4:4:0 and restart-marker files (left out without it).
Total size is kept under 300 KB.
"""

import hashlib
import io
import json
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image, ImageOps

try:
    import cv2
except ImportError:
    cv2 = None

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gomod", "codec", "testdata")


def photo(h, w, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    a = np.stack([128 + 100 * np.sin(x / 7 + y / 11), 128 + 100 * np.cos(y / 5 - x / 13), (x * 5 + y * 3) % 256], -1)
    a += rng.normal(0, 10, a.shape)
    a[h // 3: h // 2, w // 4: w // 2] = (250, 20, 30)
    return np.clip(a, 0, 255).astype(np.uint8)


def save(im, fmt, **kw):
    bio = io.BytesIO()
    im.save(bio, fmt, **kw)
    return bio.getvalue()


def exif(o):
    e = Image.Exif()
    e[0x0112] = o
    return e


def adam7(a):
    h, w = a.shape[:2]
    ch = 1 if a.ndim == 2 else a.shape[2]
    raw = b""
    for ys, xs, dy, dx in [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]:
        sub = a[ys::dy, xs::dx]
        if sub.size:
            for row in sub.reshape(sub.shape[0], -1):
                raw += b"\x00" + row.tobytes()

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    ct = {1: 0, 2: 4, 3: 2, 4: 6}[ch]
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ct, 0, 0, 1)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def files():
    a = photo(37, 53, 1)
    im = Image.fromarray(a)
    out = {}
    for ss, v in (("444", 0), ("422", 1), ("420", 2)):
        out[f"j-{ss}.jpg"] = save(im, "JPEG", quality=90, subsampling=v)
        out[f"j-{ss}-prog.jpg"] = save(im, "JPEG", quality=90, subsampling=v, progressive=True)
    out["j-gray.jpg"] = save(im.convert("L"), "JPEG")
    out["j-gray-prog.jpg"] = save(im.convert("L"), "JPEG", progressive=True)
    out["j-cmyk.jpg"] = save(im.convert("CMYK"), "JPEG")
    out["j-1x1.jpg"] = save(Image.fromarray(a[:1, :1]), "JPEG")
    out["j-3x101.jpg"] = save(Image.fromarray(photo(3, 101, 2)), "JPEG", subsampling=2)
    out["j-big-420.jpg"] = save(Image.fromarray(photo(160, 240, 3)), "JPEG", quality=85, subsampling=2)
    for o in (3, 6, 8):
        out[f"j-orient{o}.jpg"] = save(im, "JPEG", exif=exif(o))
    if cv2 is not None:
        def enc(params):
            return cv2.imencode(".jpg", a[..., ::-1], params)[1].tobytes()
        out["j-440.jpg"] = enc([cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_440])
        out["j-rst.jpg"] = enc([cv2.IMWRITE_JPEG_RST_INTERVAL, 2])
        out["j-rst-prog.jpg"] = enc([cv2.IMWRITE_JPEG_RST_INTERVAL, 1, cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    rgba = np.concatenate([a, photo(37, 53, 9)[..., :1]], -1)
    p = im.quantize(64)
    out["p-l.png"] = save(im.convert("L"), "PNG")
    out["p-la.png"] = save(Image.fromarray(rgba).convert("LA"), "PNG")
    out["p-rgb.png"] = save(im, "PNG")
    out["p-rgba.png"] = save(Image.fromarray(rgba), "PNG")
    out["p-p.png"] = save(p, "PNG")
    out["p-p-trns.png"] = save(p, "PNG", transparency=bytes(range(0, 128, 2)))
    out["p-p4.png"] = save(im.quantize(16), "PNG", bits=4)
    out["p-1.png"] = save(im.convert("1"), "PNG")
    out["p-rgb-trns.png"] = save(im, "PNG", transparency=tuple(int(v) for v in a[0, 0]))
    out["p-adam7.png"] = adam7(a)
    out["p-16.png"] = save(Image.fromarray(a[..., 0].astype(np.uint16) * 257), "PNG")
    out["p-orient6.png"] = save(im, "PNG", exif=exif(6))
    return out


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def describe(b):
    im = Image.open(io.BytesIO(b))
    d = {"width": im.width, "height": im.height}
    if im.mode in ("I;16", "I"):
        d["refused"] = "16-bit PNG is not supported"
        return d
    for mode in ("RGB", "L", "RGBA"):
        d[mode] = sha(np.asarray(Image.open(io.BytesIO(b)).convert(mode)))
    d["orient"] = Image.open(io.BytesIO(b)).getexif().get(0x0112, 1)
    d["oriented_RGB"] = sha(np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(b))).convert("RGB")))
    if im.format == "JPEG":
        for s in (2, 4, 8):
            if im.width // s and im.height // s:
                j = Image.open(io.BytesIO(b))
                j.draft("RGB", (im.width // s, im.height // s))
                d[f"scale{s}_RGB"] = sha(np.asarray(j.convert("RGB")))
    return d


def main():
    check = "--check" in sys.argv
    fs = files()
    manifest = {name: describe(b) for name, b in sorted(fs.items())}
    path = os.path.join(OUT, "manifest.json")
    if check:
        with open(path) as f:
            old = json.load(f)
        bad = [n for n in old if n in manifest and old[n] != manifest[n]]
        print("manifest agrees with this Pillow" if not bad else f"differs: {bad}")
        return 1 if bad else 0
    os.makedirs(OUT, exist_ok=True)
    for name, b in fs.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(b)
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    total = sum(len(b) for b in fs.values()) + os.path.getsize(path)
    print(f"{len(fs)} files, {total / 1024:.0f} KB in {os.path.relpath(OUT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
