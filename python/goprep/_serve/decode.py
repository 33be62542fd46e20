"""Turning a request's encoded images into pixels, for each preprocessing implementation its own way
(preprocess.py), every one checking the file's header before a pixel is decoded: the format (JPEG or
PNG only, whatever the client calls it) and width x height against the pixel limit, so a tiny file
that claims 60000x60000, or a highly compressible PNG that would inflate to gigabytes, costs the
server only its header. Errors name the image's index in the request (``image[2]``).

- goprep (``decode_images``, and the goprep variant's fused call, ``decode_error``): goprep's own
  decoder, one call per request, the images decoded in parallel with the GIL released; its header
  probe refuses a bomb (DecodeError "too_large") before allocating.
- Pillow (``pil_open``, ``pil_rgb``; the python variant, and the header check of the opencv one):
  ``Image.open`` is lazy, it reads the header only; ``load`` decodes.

OpenCV's ``imdecode`` is never called on a file whose header was not checked: it takes any format it
knows up to 2^30 pixels.
"""

from __future__ import annotations

import bisect
import io
import re
import warnings
from typing import Any, List, Sequence

import numpy as np

from .errors import BadRequest, TooLarge

FORMATS = ("JPEG", "PNG")
_DIMS = re.compile(r"\d+x\d+")
_ARG = re.compile(r"((?:src|data)(?:\[\d+\])?): ")


def decode_error(e: Any, max_pixels: int, n: int, starts: Sequence[int] = (0,)) -> Exception:
    """goprep's DecodeError ``e`` (about ``data[i]`` or ``src[i]``) as the server's error: TooLarge
    for a header over ``max_pixels``, else BadRequest, naming ``image[i]`` (``n``: the images of the
    call, for an error that names no index).

    ``starts``: where each request's images begin in the call (a dynamic batch joins several
    requests' files, batching.py): the error names the image's index within its own request and
    carries that request's position in ``starts`` as ``.request`` (None when the error names no
    image and the call held several requests)."""
    arg, detail = e.argument or "", e.detail
    if not arg:  # the argument may come inside the engine's message: "src[1]: unexpected EOF"
        m = _ARG.match(detail)
        if m:
            arg, detail = m.group(1), detail[m.end():]
    k = arg.find("[")
    request = 0 if len(starts) == 1 else None
    if k >= 0 and arg.endswith("]") and arg[k + 1 : -1].isdigit():
        i = int(arg[k + 1 : -1])
        request = max(0, bisect.bisect_right(starts, i) - 1)
        where = f"image[{i - starts[request]}]"
    else:
        where = "image[0]" if n == 1 else "an image"
    err: Exception
    if e.code == "too_large":
        m = _DIMS.search(detail)
        size = f" of {m.group(0)} pixels" if m else ""
        err = TooLarge(f"{where}{size} is larger than the server's limit of {max_pixels} pixels", "pixels")
    else:
        err = BadRequest(f"{where} is not a readable JPEG or PNG file: {detail}")
    err.request = request  # type: ignore[attr-defined]
    return err


def decode_images(files: Sequence[bytes], max_pixels: int) -> List[np.ndarray]:
    """The RGB pixels of JPEG or PNG files, decoded by goprep in one call; BadRequest when one is
    neither or is corrupt (naming its index), TooLarge when its header claims more than ``max_pixels``
    pixels (checked before decoding)."""
    from .. import _ops
    from .._errors import DecodeError

    try:
        return _ops.decode_rgb(files, max_pixels)
    except DecodeError as e:
        raise decode_error(e, max_pixels, len(files)) from None


def decode_image(data: bytes, max_pixels: int) -> np.ndarray:
    """One file's RGB pixels (decode_images of one)."""
    return decode_images([data], max_pixels)[0]


def pil_open(data: bytes, max_pixels: int, where: str = "image") -> Any:
    """Pillow's lazy open of a JPEG or PNG file: its header read and checked, nothing decoded (the
    caller closes it, or loads it: pil_rgb). BadRequest when it is neither or has no pixels, TooLarge
    when its header claims more than ``max_pixels`` pixels."""
    from PIL import Image

    if not data:
        raise BadRequest(f"{where} is empty")
    try:
        with warnings.catch_warnings():
            # Pillow's own bomb guard (MAX_IMAGE_PIXELS) warns or raises at open; ours is checked below.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError:
        raise TooLarge(f"{where} is larger than the server's limit of {max_pixels} pixels", "pixels") from None
    except Exception:  # noqa: BLE001 - any unreadable header: the client's bytes are not an image we take
        raise BadRequest(f"{where} is not a readable JPEG or PNG file") from None
    w, h = im.size
    if w <= 0 or h <= 0:
        im.close()
        raise BadRequest(f"{where} has no pixels")
    if w * h > max_pixels:
        im.close()
        raise TooLarge(f"{where} of {w}x{h} pixels is larger than the server's limit of {max_pixels} pixels", "pixels")
    return im


def pil_rgb(data: bytes, max_pixels: int, where: str = "image") -> Any:
    """A JPEG or PNG file decoded by Pillow, as an RGB PIL image (pil_open's checks first)."""
    from PIL import Image

    im = pil_open(data, max_pixels, where)
    with im:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                im.load()
                return im if im.mode == "RGB" else im.convert("RGB")
        except Image.DecompressionBombError:
            raise TooLarge(f"{where} is larger than the server's limit of {max_pixels} pixels", "pixels") from None
        except Exception:  # noqa: BLE001 - truncated or corrupt data after a valid header
            w, h = im.size
            raise BadRequest(f"{where} ({im.format} {w}x{h}) is truncated or corrupt") from None


def pil_decode(data: bytes, max_pixels: int = 1 << 30) -> np.ndarray:
    """A file's RGB pixels as Pillow decodes them: the reference of "the same tensor" for encoded
    images (goprep's decoder equals it byte for byte)."""
    return np.asarray(pil_rgb(data, max_pixels))
