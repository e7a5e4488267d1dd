"""Shape CSV files, read as a stream.

Blocks of bytes are checked for UTF-8, parsed into int64 columns (a vectorized path for
plain rows, the :mod:`csv` module for anything else: quotes, blank lines, spaces) and
never held whole as text, so a 10**6-row file costs tens of megabytes, not gigabytes.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from roofline.errors import RooflineError
from roofline.shapes.core import DIMS, Shape, dim_in_range, parse_dim
from roofline.shapes.table import Names, ShapeTable

BLOCK_BYTES = 1 << 20  # read and parse a file 1 MiB at a time
MAX_LINE_BYTES = 1 << 20  # a longer line is not a shapes row (csv caps fields at 128 KiB)
_BOM = b"\xef\xbb\xbf"
_FLUSH_ROWS = 1 << 16
_COMMA, _NEWLINE, _CR, _QUOTE = (ord(c) for c in ',\n\r"')
_MAX_DIGITS = 10  # the digits of MAX_DIM; longer fields take the csv path
_PAD = np.zeros(_MAX_DIGITS, dtype=np.uint8)
_DIGIT_SLOTS = np.arange(_MAX_DIGITS)
_PLACE_VALUES = 10 ** np.arange(_MAX_DIGITS - 1, -1, -1, dtype=np.int64)


#: A block's names: (UTF-8 bytes end to end, byte lengths), str (stripped), or no column.
_BlockNames = tuple[bytes, np.ndarray] | list[str] | None


class ShapesFileError(RooflineError):
    """A shapes file that cannot be read or parsed; the message names the file."""


def _header_error(origin: str, header: Sequence[str]) -> ShapesFileError:
    got = ",".join(header) if header else "nothing"
    got = got if len(got) <= 60 else got[:57] + "..."
    return ShapesFileError(
        f"{origin}: line 1: expected a header with columns M,K,N (optional name), got {got}"
    )


class _Columns:
    """Where M, K, N (and name) sit in a file's header; collects the parsed rows."""

    def __init__(self, header: Sequence[str], origin: str) -> None:
        fields = [h.strip() for h in header]
        if any(d not in fields for d in DIMS):
            raise _header_error(origin, fields)
        for wanted in (*DIMS, "name"):
            if fields.count(wanted) > 1:
                raise ShapesFileError(f"{origin}: line 1: column {wanted} appears twice")
        self.origin = origin
        self.width = len(fields)
        self.dim_index = [fields.index(d) for d in DIMS]
        self.name_index = fields.index("name") if "name" in fields else None
        self._rows: list[list[int]] = [[], [], []]
        self._row_names: list[str] = []
        self._chunks: list[list[np.ndarray]] = [[], [], []]
        self._name_bytes = bytearray()  # grows in place: no joined copy at the end
        self._name_lengths: list[np.ndarray] = []

    def add_row(self, row: list[str], line: int) -> None:
        """One csv row (the slow path): every dimension checked, errors name the line."""
        for i, (dim, index) in enumerate(zip(DIMS, self.dim_index, strict=True)):
            text = row[index] if index < len(row) else ""
            self._rows[i].append(parse_dim(text, f"{self.origin}: line {line}: column {dim}"))
        if self.name_index is not None:
            name = row[self.name_index] if self.name_index < len(row) else ""
            self._row_names.append(name.strip())
        if len(self._rows[0]) >= _FLUSH_ROWS:
            self.flush()

    def add_arrays(self, dims: list[np.ndarray], names: _BlockNames) -> None:
        """Rows parsed (and checked) by the vectorized path; names as (bytes, lengths)
        or, when some needed stripping, as str."""
        self.flush()
        for chunks, values in zip(self._chunks, dims, strict=True):
            chunks.append(values)
        if isinstance(names, list):
            self.add_names(names)
        elif names is not None:
            self._name_bytes += names[0]
            self._name_lengths.append(names[1])

    def flush(self) -> None:
        """Move the slow path's Python ints and names into arrays and bytes."""
        if self._rows[0]:
            for chunks, rows in zip(self._chunks, self._rows, strict=True):
                chunks.append(np.array(rows, dtype=np.int64))
                rows.clear()
        if self._row_names:
            self.add_names(self._row_names)
            self._row_names = []

    def add_names(self, names: list[str]) -> None:
        """Names as str, stored as UTF-8 bytes."""
        encoded = [name.encode("utf-8") for name in names]
        self._name_bytes += b"".join(encoded)
        self._name_lengths.append(np.fromiter(map(len, encoded), np.int64, len(encoded)))

    def table(self) -> ShapeTable:
        """The collected shapes; ShapesFileError when there are none."""
        self.flush()
        if not self._chunks[0]:
            raise ShapesFileError(
                f"{self.origin}: expected at least one shape row after the header"
            )
        m, k, n = (self._concatenate(chunks) for chunks in self._chunks)
        names = Names.from_lengths(self._name_bytes, self._name_lengths)
        return ShapeTable(m, k, n, names if names.nonempty() else None)

    @staticmethod
    def _concatenate(chunks: list[np.ndarray]) -> np.ndarray:
        # One column at a time, its pieces freed at once: peak memory + 1 column, not + 3.
        column = np.concatenate(chunks)
        chunks.clear()
        return column


def _not_text(origin: str, raw: bytes, offset: int, position: int, line: int) -> ShapesFileError:
    byte = raw[position]
    what = "a NUL" if byte == 0 else f"0x{byte:02x}"
    if offset + position in (0, 1) and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        what += ", a UTF-16 byte-order mark"
    return ShapesFileError(
        f"{origin}: not a UTF-8 text CSV file (byte {offset + position} on line {line} is "
        f"{what}); save it as CSV UTF-8"
    )


def _decode(origin: str, raw: bytes, offset: int, line: int) -> str:
    """UTF-8 text without NULs, or ShapesFileError naming the byte's offset and line."""
    bad = raw.find(b"\0")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start if bad < 0 else min(bad, exc.start)
    else:
        if bad < 0:
            return text
    raise _not_text(origin, raw, offset, bad, line + raw.count(b"\n", 0, bad))


def _byte_blocks(handle: io.BufferedIOBase, origin: str) -> Iterator[tuple[bytes, int, int]]:
    """(bytes, file offset, first line number) blocks that end after a newline (the last
    one may not); a UTF-8 BOM at the start (spreadsheet CSV) is dropped."""
    carry = handle.read(len(_BOM))
    offset, line = (len(_BOM), 1) if carry == _BOM else (0, 1)
    carry = b"" if offset else carry
    while True:
        data = handle.read(BLOCK_BYTES)
        chunk = carry + data
        if not data:
            if chunk:
                yield chunk, offset, line
            return
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            if len(chunk) > MAX_LINE_BYTES:
                raise ShapesFileError(
                    f"{origin}: line {line} is longer than {MAX_LINE_BYTES} bytes; "
                    "not a shapes CSV file"
                )
            carry = chunk
            continue
        block, carry = chunk[:cut], chunk[cut:]
        yield block, offset, line
        offset += cut
        line += block.count(b"\n")


def _fast_block(raw: bytes, columns: _Columns) -> tuple[list[np.ndarray], _BlockNames] | None:
    """Rows of a block parsed with numpy, or None when any row needs the csv module.

    Taken only for plain rows: exactly the header's number of fields, no quotes, dims of
    1-10 ASCII digits within the rule, LF or CRLF line ends. Then the fields are what
    ``csv`` would give, so both paths agree; anything else returns None."""
    if not raw.endswith(b"\n") or _QUOTE in raw:
        return None
    b = np.frombuffer(raw, dtype=np.uint8)
    sep_mask = (b == _COMMA) | (b == _NEWLINE)
    seps = np.flatnonzero(sep_mask)
    width = columns.width
    if len(seps) % width:
        return None
    kinds = b[seps].reshape(-1, width)
    if np.any(kinds[:, :-1] != _COMMA) or np.any(kinds[:, -1] != _NEWLINE):
        return None
    if np.any(np.diff(seps, prepend=-1) - 1 > csv.field_size_limit()):  # csv refuses these
        return None
    ends = seps.copy()
    starts = np.empty_like(seps)
    starts[0], starts[1:] = 0, seps[:-1] + 1
    crs = np.flatnonzero(b == _CR)
    if len(crs):  # a CR is only allowed as the CRLF line end (the block ends with LF)
        if np.any(b[crs + 1] != _NEWLINE):
            return None
        ends[width - 1 :: width] -= b[ends[width - 1 :: width] - 1] == _CR
    starts, ends = starts.reshape(-1, width), ends.reshape(-1, width)
    # Each dim field's last 10 bytes (the buffer padded in front): numbers without a loop.
    windows = _windows(np.concatenate((_PAD, b)))
    dims = []
    for index in columns.dim_index:
        value = _digits_value(windows, starts[:, index], ends[:, index])
        if value is None or not np.all(dim_in_range(value)):
            return None  # the csv path names the bad line
        dims.append(value)
    names = None
    if columns.name_index is not None:
        names = _name_bytes(b, starts[:, columns.name_index], ends[:, columns.name_index])
        if names is None:  # a name to strip: str.strip's idea of whitespace, per name
            column = columns.name_index
            pairs = zip(starts[:, column].tolist(), ends[:, column].tolist(), strict=True)
            names = [raw[s:e].decode("utf-8").strip() for s, e in pairs]
    return dims, names


# Bytes str.strip() would remove at a name's edge: ASCII whitespace, and any non-ASCII
# byte (it may start a no-break or ideographic space); such names take the str path.
_EDGE_CARE = np.zeros(256, dtype=bool)
_EDGE_CARE[[*range(9, 14), *range(28, 33), *range(128, 256)]] = True


def _name_bytes(
    b: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[bytes, np.ndarray] | None:
    """The name fields' bytes end to end and their lengths, or None when one needs strip()."""
    lengths = ends - starts
    filled = lengths > 0
    if np.any(_EDGE_CARE[b[starts[filled]]]) or np.any(_EDGE_CARE[b[ends[filled] - 1]]):
        return None
    offsets = np.cumsum(lengths) - lengths
    index = np.arange(int(lengths.sum())) + np.repeat(starts - offsets, lengths)
    return b[index].tobytes(), lengths


def _windows(padded: np.ndarray) -> np.ndarray:
    # windows[i] = padded[i : i + 10] = the 10 bytes before position i of the block
    return np.lib.stride_tricks.sliding_window_view(padded, _MAX_DIGITS)


def _digits_value(windows: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """The integers in fields [start, end) when each is 1-10 ASCII digits, else None."""
    lengths = ends - starts
    if np.any((lengths < 1) | (lengths > _MAX_DIGITS)):
        return None
    digits = windows[ends] - np.uint8(ord("0"))  # non-digits wrap around to > 9
    inside = (_MAX_DIGITS - lengths)[:, None] <= _DIGIT_SLOTS
    if np.any((digits > 9) & inside):
        return None
    return np.where(inside, digits, 0).astype(np.int64) @ _PLACE_VALUES


def _slow_rows(lines: Iterable[str], first_line: int, columns: _Columns) -> None:
    """Rows through the csv module (quotes, blank lines, spaces, short or long rows)."""
    reader = csv.reader(lines)
    try:
        for row in reader:
            if row:  # csv.DictReader skips blank lines too
                columns.add_row(row, first_line - 1 + reader.line_num)
    except csv.Error as exc:
        line = first_line - 1 + reader.line_num
        raise ShapesFileError(f"{columns.origin}: line {line}: not valid CSV ({exc})") from None


def _lines(text: str) -> io.StringIO:
    # newline="" as the csv module asks: lines split at LF, CRLF or CR, kept as they are.
    return io.StringIO(text, newline="")


def _parse_blocks(blocks: Iterator[tuple[bytes, int, int]], origin: str) -> ShapeTable:
    """The table of a file given as byte blocks (see :func:`_byte_blocks`)."""
    first = next(blocks, None)
    if first is None:
        raise _header_error(origin, [])
    raw, offset, line = first
    cut = raw.find(b"\n") + 1 or len(raw)
    header = next(csv.reader([_decode(origin, raw[:cut], offset, line)]), [])
    columns = _Columns(header, origin)
    pending = [(raw[cut:], offset + cut, line + 1)] if cut < len(raw) else []
    for raw, offset, line in _chain(pending, blocks):
        text = _decode(origin, raw, offset, line)
        if '"' in text:  # a quoted field may span blocks: one csv reader for the rest
            rest_lines = _chain_lines(text, blocks, origin)
            _slow_rows(rest_lines, line, columns)
            break
        fast = _fast_block(raw, columns)
        if fast is None:
            _slow_rows(_lines(text), line, columns)
        else:
            columns.add_arrays(*fast)
    return columns.table()


def _chain(
    head: list[tuple[bytes, int, int]], tail: Iterator[tuple[bytes, int, int]]
) -> Iterator[tuple[bytes, int, int]]:
    yield from head
    yield from tail


def _chain_lines(text: str, blocks: Iterator[tuple[bytes, int, int]], origin: str) -> Iterator[str]:
    yield from _lines(text)
    for raw, offset, line in blocks:
        yield from _lines(_decode(origin, raw, offset, line))


def read_shapes_file(path: str | os.PathLike[str]) -> ShapeTable:
    """Shapes from a CSV file with header ``M,K,N`` and an optional ``name`` column.

    UTF-8 with or without a BOM, LF or CRLF line ends; read as a stream. Every error
    is a :class:`ShapesFileError` naming the file (and line, column or byte)."""
    origin = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            return _parse_blocks(_byte_blocks(handle, origin), origin)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ShapesFileError(f"cannot read shapes file {origin!r}: {reason}") from None


def parse_shapes_csv(text: str, origin: str) -> list[Shape]:
    """Shapes from CSV text with header ``M,K,N`` and an optional ``name`` column."""
    raw = text.encode("utf-8", "surrogatepass")
    return _parse_blocks(_byte_blocks(io.BytesIO(raw), origin), origin).shapes()
