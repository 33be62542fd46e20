"""Geometry after the resize, and the sizing rules of torchvision and ultralytics.

After the resize, every crop, flip and pad only moves the image on its two axes, independently. Each
axis is then described by ``Axis``: the current axis has ``n`` coordinates, those in ``[lo, hi)``
show resized content, the others padding, and coordinate ``o`` shows content coordinate ``a + s*o``.
Any chain of crops, flips and pads composes into that form, so crop -> resize -> crop -> pad fuses
into one pass; ``emit`` writes it as the engine's canvas, output view and (when a pad follows a crop
of the content) frame.

The sizing functions reproduce the libraries' integer rules exactly (docs/API.md lists them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from ._errors import InvalidArgumentError, ShapeError


@dataclass(frozen=True)
class Axis:
    """One axis of the image after the resize (see the module docstring)."""

    n: int
    lo: int
    hi: int
    a: int
    s: int

    @staticmethod
    def identity(n: int) -> "Axis":
        return Axis(n, 0, n, 0, 1)

    @property
    def padded(self) -> bool:
        """Whether some coordinate shows padding."""
        return self.lo > 0 or self.hi < self.n

    def view(self, o0: int, step: int, n: int) -> "Axis":
        """The axis seen through a view: new coordinate o reads old coordinate o0 + step*o."""
        if self.lo >= self.hi:
            return Axis(n, 0, 0, 0, 1)
        if step == 1:
            lo, hi = self.lo - o0, self.hi - o0
        else:  # o0 - o in [lo, hi)  <=>  o in (o0 - hi, o0 - lo]
            lo, hi = o0 - self.hi + 1, o0 - self.lo + 1
        lo, hi = max(lo, 0), min(hi, n)
        if lo >= hi:
            return Axis(n, 0, 0, 0, 1)
        return Axis(n, lo, hi, self.a + self.s * o0, self.s * step)

    def pad(self, before: int, after: int) -> "Axis":
        """The axis with ``before`` / ``after`` coordinates of padding added."""
        n = self.n + before + after
        if self.lo >= self.hi:
            return Axis(n, 0, 0, 0, 1)
        return Axis(n, self.lo + before, self.hi + before, self.a - self.s * before, self.s)

    def natural(self, r: int) -> Tuple[int, int]:
        """The coordinates whose content coordinate lies in the resized length ``r``."""
        if self.s == 1:
            lo, hi = -self.a, r - self.a
        else:
            lo, hi = self.a - r + 1, self.a + 1
        return max(lo, 0), min(hi, self.n)


def emit(rows: Axis, cols: Axis, rh: int, rw: int) -> Tuple[Dict[str, int], Dict[str, int], Optional[Dict[str, int]]]:
    """The engine's canvas, output view and frame (or None) for two axes over an ``rh x rw`` resize."""

    def needs_frame(ax: Axis, r: int) -> bool:
        return ax.lo < ax.hi and (ax.lo, ax.hi) != ax.natural(r)

    framed = needs_frame(rows, rh) or needs_frame(cols, rw)
    parts = [_emit_axis(rows, rh, framed), _emit_axis(cols, rw, framed)]
    (ch, ct, y0, sy, vh, ft), (cw, cl, x0, sx, vw, fl) = parts
    canvas = {"h": ch, "w": cw, "top": ct, "left": cl}
    post = {"y0": y0, "x0": x0, "sy": sy, "sx": sx, "h": vh, "w": vw}
    frame = {"h": rows.n, "w": cols.n, "top": ft, "left": fl} if framed else None
    return canvas, post, frame


def _emit_axis(ax: Axis, r: int, framed: bool) -> Tuple[int, int, int, int, int, int]:
    """(canvas length, content place, view start, view step, view length, frame top) of one axis."""
    if ax.lo >= ax.hi:  # padding only: a view over the canvas's padding, after the content
        return r + ax.n, 0, r, 1, ax.n, 0
    if framed:  # canvas = the content; the view shows its visible part; the frame adds the padding
        return r, 0, ax.a + ax.s * ax.lo, ax.s, ax.hi - ax.lo, ax.lo
    # No frame: the canvas holds the content and all the padding the view shows.
    ends = (ax.a, ax.a + ax.s * (ax.n - 1))
    place = max(0, -min(ends))
    length = max(place + r, max(ends) + place + 1)
    return length, place, ax.a + place, ax.s, ax.n, 0


# ---------------------------------------------------------------------------------------------
# sizing rules


def shorter_side(h: int, w: int, size: Optional[int], max_size: Optional[int]) -> Tuple[int, int]:
    """torchvision's ``Resize(int)``: the shorter side becomes ``size``, the longer
    ``int(size * long / short)``; ``max_size`` caps the longer side (then the shorter becomes
    ``int(max_size * short / long)``). ``size=None`` with ``max_size``: the longer side becomes it."""
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if max_size is None:
            raise InvalidArgumentError("is None, which needs max_size", argument="size")
        new_short, new_long = int(max_size * short / long), max_size
    else:
        new_short, new_long = size, int(size * long / short)
        if max_size is not None:
            if max_size <= size:
                raise InvalidArgumentError(
                    f"must be greater than size ({size}) for the shorter side, got {max_size}", argument="max_size"
                )
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
    new_short, new_long = max(new_short, 1), max(new_long, 1)
    return (new_long, new_short) if w <= h else (new_short, new_long)


def center_crop_geometry(h: int, w: int, ch: int, cw: int) -> Tuple[Tuple[int, int, int, int], Tuple[int, int]]:
    """torchvision's ``center_crop``: pad (left, top, right, bottom) with zeros where the crop is
    larger than the image (``(c - s) // 2`` before, ``(c - s + 1) // 2`` after), then crop at
    ``int(round((s - c) / 2.0))`` of the padded size (Python rounds halves to even)."""
    pl = (cw - w) // 2 if cw > w else 0
    pt = (ch - h) // 2 if ch > h else 0
    pr = (cw - w + 1) // 2 if cw > w else 0
    pb = (ch - h + 1) // 2 if ch > h else 0
    ph, pw = h + pt + pb, w + pl + pr
    return (pl, pt, pr, pb), (int(round((ph - ch) / 2.0)), int(round((pw - cw) / 2.0)))


def ultralytics_letterbox(
    h: int, w: int, out_h: int, out_w: int, scaleup: bool, auto: bool, stride: int
) -> Tuple[float, int, int, int, int, int, int]:
    """ultralytics' ``LetterBox`` (center=True): ``r = min(out_h / h, out_w / w)`` (at most 1 unless
    ``scaleup``), content ``int(round(w * r)) x int(round(h * r))``, the padding ``d`` per axis (with
    ``auto``, ``d % stride``) split as ``int(round(d/2 - 0.1))`` before and ``int(round(d/2 + 0.1))``
    after. Returns (r, content h, content w, top, bottom, left, right)."""
    r = min(out_h / h, out_w / w)
    if not scaleup:
        r = min(r, 1.0)
    nw, nh = max(1, int(round(w * r))), max(1, int(round(h * r)))
    dw, dh = out_w - nw, out_h - nh
    if auto:
        dw, dh = dw % stride, dh % stride
    if dw < 0 or dh < 0:  # only when rounding up a 1-pixel side overshoots the target
        raise ShapeError(f"the content of {nh}x{nw} does not fit {out_h}x{out_w}", argument="size")
    top, bottom = int(round(dh / 2 - 0.1)), int(round(dh / 2 + 0.1))
    left, right = int(round(dw / 2 - 0.1)), int(round(dw / 2 + 0.1))
    return r, nh, nw, top, bottom, left, right


def parse_padding(padding: Any) -> Tuple[int, int, int, int]:
    """torchvision's ``Pad`` padding: an int (all sides), ``(left/right, top/bottom)`` or
    ``(left, top, right, bottom)``; returned as (left, top, right, bottom)."""

    def ok(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) or type(v).__name__ in ("int64", "int32")

    if ok(padding):
        p = (int(padding),) * 4
    elif isinstance(padding, (tuple, list)) and len(padding) in (1, 2, 4) and all(ok(v) for v in padding):
        v = [int(x) for x in padding]
        p = (v[0],) * 4 if len(v) == 1 else (v[0], v[1], v[0], v[1]) if len(v) == 2 else (v[0], v[1], v[2], v[3])
    else:
        raise InvalidArgumentError(
            f"must be an int, (left/right, top/bottom) or (left, top, right, bottom) ints, got {padding!r}",
            argument="padding",
        )
    if min(p) < 0:
        raise InvalidArgumentError(f"must not be negative, got {padding!r}", argument="padding")
    return p
