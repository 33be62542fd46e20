"""Turning a request's encoded images into (H, W, 3) uint8 RGB arrays: the one place the server
decodes, with goprep's own decoder (libjpeg-turbo, libpng): one call per request, the images decoded in
parallel with the GIL released, byte for byte what Pillow's ``convert("RGB")`` gives.

The header of every file is read first: the format is checked (JPEG or PNG only, whatever the client
calls it) and width x height against the pixel limit before a single pixel is decoded, so a tiny file
that claims 60000x60000, or a highly compressible PNG that would inflate to gigabytes, costs the
server only its header. OpenCV's ``imdecode`` is not used: it takes any format it knows up to 2^30
pixels.
"""

from __future__ import annotations

from typing import List, Sequence

import numpy as np

from .errors import BadRequest, TooLarge


def decode_images(files: Sequence[bytes], max_pixels: int) -> List[np.ndarray]:
    """The RGB pixels of JPEG or PNG files; BadRequest when one is neither or is corrupt (naming its
    index), TooLarge when its header claims more than ``max_pixels`` pixels (checked before decoding)."""
    from .. import _decode
    from .._errors import DecodeError

    try:
        return _decode.decode_rgb(files, max_pixels)
    except DecodeError as e:
        where = (e.argument or "data").replace("data", "image", 1)
        if e.code == "too_large":
            raise TooLarge(f"{where}: larger than the server's limit of {max_pixels} pixels ({e.detail})", "pixels") from None
        raise BadRequest(f"{where} is not a readable JPEG or PNG file: {e.detail}") from None


def decode_image(data: bytes, max_pixels: int) -> np.ndarray:
    """One file's RGB pixels (decode_images of one)."""
    return decode_images([data], max_pixels)[0]
