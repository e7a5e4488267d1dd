"""Many shapes as int64 columns, with their names kept compactly."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from roofline.shapes.core import DIMS, Shape


class Names(Sequence[str]):
    """Row names kept compactly: their UTF-8 bytes end to end and where each ends.

    10**6 names as str objects cost about 70 MB; this costs the bytes plus 8 a name. A
    slice shares the bytes and pickles only its own part (worker processes get it)."""

    def __init__(self, blob: bytes | bytearray, offsets: np.ndarray) -> None:
        self._blob = blob
        self._offsets = offsets  # int64, one more than names: name i is [o[i], o[i+1])

    @classmethod
    def from_lengths(cls, blob: bytes | bytearray, lengths: list[np.ndarray]) -> Names:
        """Names from their bytes end to end and the byte length of each."""
        offsets = np.zeros(sum(map(len, lengths)) + 1, dtype=np.int64)
        end = 1
        for part in lengths:  # no concatenated copy of the lengths
            np.cumsum(part, out=offsets[end : end + len(part)])
            offsets[end : end + len(part)] += offsets[end - 1]
            end += len(part)
        return cls(blob, offsets)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            return Names(self._blob, self._offsets[start : max(start, stop) + 1])
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(f"name index {index} out of range")
        start, stop = self._offsets[position : position + 2].tolist()
        return self._blob[start:stop].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        first, last = int(self._offsets[0]), int(self._offsets[-1])
        part = self._blob[first:last]
        bounds = (self._offsets - first).tolist()
        if part.isascii():  # byte offsets are character offsets: slice one str
            text = part.decode("ascii")
            return (text[a:b] for a, b in itertools.pairwise(bounds))
        return (part[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds))

    def nonempty(self) -> bool:
        """Whether any name has a character."""
        return bool(len(self)) and int(self._offsets[-1]) > int(self._offsets[0])

    def __reduce__(self) -> tuple[Any, ...]:
        first, last = int(self._offsets[0]), int(self._offsets[-1])
        return Names, (self._blob[first:last], self._offsets - first)


@dataclass(frozen=True)
class ShapeTable:
    """Shapes as int64 columns ``M``, ``K``, ``N`` and their names (None: all unnamed)."""

    M: np.ndarray
    K: np.ndarray
    N: np.ndarray
    names: Sequence[str] | None = None

    def __len__(self) -> int:
        return len(self.M)

    @classmethod
    def from_shapes(cls, shapes: Sequence[Shape]) -> ShapeTable:
        """The table of a list of shapes."""
        m, k, n = (np.array([getattr(s, d) for s in shapes], dtype=np.int64) for d in DIMS)
        names = [s.name for s in shapes]
        return cls(m, k, n, names if any(names) else None)

    def shapes(self) -> list[Shape]:
        """The rows as :class:`Shape` objects (small tables only: one object per row)."""
        names = self.names or [""] * len(self)
        rows = zip(self.M.tolist(), self.K.tolist(), self.N.tolist(), names, strict=True)
        return [Shape(m, k, n, name) for m, k, n, name in rows]
