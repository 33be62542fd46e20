"""What a loader reads: ``Samples``, the encoded images (paths or bytes) with their integer labels,
from a list (``files``) or an ImageFolder-style directory (``image_folder``, torchvision's order)."""

from __future__ import annotations

import os
from typing import Any, List, Optional, Sequence, Tuple

from .._errors import InvalidArgumentError

# What goprep decodes (JPEG and PNG); torchvision's ImageFolder also lists BMP, TIFF, WebP, ... files,
# which goprep would fail on, so the folder reader leaves them out.
EXTENSIONS = (".jpg", ".jpeg", ".png")


class Samples:
    """Encoded images and their labels, in a fixed order (the index of a sample is its position).

    ``items``: paths (``str`` / ``os.PathLike``) or encoded bytes (``bytes``, ``bytearray``,
    ``memoryview``), read by goprep's decoders at batch time; ``labels``: one int per item;
    ``classes``: the class names of an ImageFolder (label ``k`` is ``classes[k]``), else None."""

    def __init__(self, items: Sequence[Any], labels: Optional[Sequence[int]] = None,
                 classes: Optional[List[str]] = None) -> None:
        items = list(items)
        if not items:
            raise InvalidArgumentError("is empty: a loader needs at least one image", argument="items")
        for k, x in enumerate(items):
            if not isinstance(x, (str, os.PathLike, bytes, bytearray, memoryview)):
                raise InvalidArgumentError(f"must be a path (str, os.PathLike) or encoded bytes, got "
                                           f"{type(x).__name__}", argument=f"items[{k}]")
        if labels is None:
            labels = range(len(items))  # no labels: each sample's index stands for it
        labels = list(labels)
        if len(labels) != len(items):
            raise InvalidArgumentError(f"must have one label per item ({len(items)}), got {len(labels)}",
                                       argument="labels")
        for k, y in enumerate(labels):
            if isinstance(y, bool) or not hasattr(y, "__index__"):
                raise InvalidArgumentError(f"must be an integer, got {type(y).__name__}", argument=f"labels[{k}]")
        self.items = items
        self.labels = [int(y) for y in labels]
        self.classes = classes

    def __len__(self) -> int:
        return len(self.items)

    def name(self, i: int) -> str:
        """How errors name sample ``i``: its path, or ``item i (N bytes)`` for encoded bytes."""
        x = self.items[i]
        if isinstance(x, (str, os.PathLike)):
            return os.fspath(x)
        return f"item {i} ({len(memoryview(x).cast('B'))} bytes)"

    def __repr__(self) -> str:
        cls = f", {len(self.classes)} classes" if self.classes is not None else ""
        return f"<goprep.data.Samples: {len(self.items)} images{cls}>"


def files(items: Sequence[Any], labels: Optional[Sequence[int]] = None) -> Samples:
    """``Samples`` from a list of paths or encoded bytes and their labels (None: each sample's index)."""
    return Samples(items, labels)


def image_folder(root: Any, extensions: Tuple[str, ...] = EXTENSIONS) -> Samples:
    """An ImageFolder-style directory (``root/<class>/**/<file>``) as torchvision's ``ImageFolder``
    lists it: classes are the sorted subfolder names, label ``k`` the ``k``-th; files walked per class
    with ``os.walk(followlinks=True)`` in sorted order, kept when their lower-cased name ends with one
    of ``extensions`` (JPEG and PNG by default: what goprep decodes). A class with no such file raises
    ``FileNotFoundError``, as torchvision does."""
    if not isinstance(root, (str, os.PathLike)):
        raise InvalidArgumentError(f"must be a directory path, got {type(root).__name__}", argument="root")
    root = os.path.expanduser(os.fspath(root))
    if not os.path.isdir(root):
        raise FileNotFoundError(f"root: {root!r} is not a directory")
    exts = tuple(e.lower() for e in extensions)
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {root}.")
    items: List[str] = []
    labels: List[int] = []
    empty = []
    for k, cls in enumerate(classes):
        n = len(items)
        for here, _, names in sorted(os.walk(os.path.join(root, cls), followlinks=True)):
            for fname in sorted(names):
                if fname.lower().endswith(exts):
                    items.append(os.path.join(here, fname))
                    labels.append(k)
        if len(items) == n:
            empty.append(cls)
    if empty:
        raise FileNotFoundError(f"Found no valid file for the classes {', '.join(empty)}. "
                                f"Supported extensions are: {', '.join(exts)}")
    return Samples(items, labels, classes)


def as_samples(source: Any, labels: Optional[Sequence[int]]) -> Samples:
    """A loader's ``source`` as ``Samples``: Samples as they are, a directory path as an ImageFolder,
    a list of paths or bytes with ``labels``."""
    if isinstance(source, Samples):
        if labels is not None:
            raise InvalidArgumentError("give labels in the Samples, not beside them", argument="labels")
        return source
    if isinstance(source, (str, os.PathLike)):
        if labels is not None:
            raise InvalidArgumentError("an ImageFolder's labels are its class folders", argument="labels")
        return image_folder(source)
    if isinstance(source, (list, tuple)):
        return Samples(source, labels)
    raise InvalidArgumentError(f"must be a list of paths or bytes, a directory path or goprep.data.Samples, got "
                               f"{type(source).__name__}", argument="source")
