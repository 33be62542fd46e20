"""Turning a request's encoded image into an (H, W, 3) uint8 RGB array: the one place the server
decodes, so goprep's own decoder can replace Pillow here later.

Pillow reads the file's header first (``Image.open`` is lazy): the format is checked (JPEG or PNG
only, whatever the client calls it) and width x height against the pixel limit before a single pixel
is decoded, so a tiny file that claims 60000x60000, or a highly compressible PNG that would inflate to
gigabytes, costs the server only its header. OpenCV's ``imdecode`` is not used: it takes any format
it knows up to 2^30 pixels.
"""

from __future__ import annotations

import io
import warnings

import numpy as np

from .errors import BadRequest, TooLarge

FORMATS = ("JPEG", "PNG")


def decode_image(data: bytes, max_pixels: int) -> np.ndarray:
    """The RGB pixels of a JPEG or PNG file; BadRequest when it is neither or is corrupt, TooLarge when
    its header claims more than ``max_pixels`` pixels (checked before decoding)."""
    from PIL import Image

    if not data:
        raise BadRequest("empty image")
    try:
        with warnings.catch_warnings():
            # Pillow's own bomb guard (MAX_IMAGE_PIXELS) warns or raises at open; ours is checked below.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.DecompressionBombError:
        raise TooLarge(f"image is larger than the server's limit of {max_pixels} pixels", "pixels") from None
    except Exception:  # noqa: BLE001 - any unreadable header: the client's bytes are not an image we take
        raise BadRequest("image is not a readable JPEG or PNG file") from None
    with im:
        w, h = im.size
        if w <= 0 or h <= 0:
            raise BadRequest("image has no pixels")
        if w * h > max_pixels:
            raise TooLarge(f"image of {w}x{h} pixels is larger than the server's limit of {max_pixels} pixels",
                            "pixels")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                im.load()
                rgb = im if im.mode == "RGB" else im.convert("RGB")
                return np.asarray(rgb)
        except Image.DecompressionBombError:
            raise TooLarge(f"image is larger than the server's limit of {max_pixels} pixels", "pixels") from None
        except Exception:  # noqa: BLE001 - truncated or corrupt data after a valid header
            raise BadRequest(f"image data ({im.format} {w}x{h}) is truncated or corrupt") from None
