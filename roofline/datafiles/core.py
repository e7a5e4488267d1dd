"""The rules every data file shares: spec, measurement, calibration and model-preset files.

One place for the limits that keep a hostile or mistaken file from tying up CI (file
size, tables, GPUs, sets, points, presets, GEMMs, models x GPUs per build, problems
printed), for reading a file without blocking on a FIFO or reading a device, and for the
text and number rules each loader applies:

* text: no characters that hide or reorder text (bidi controls, zero-width and other
  default-ignorable code points, Hangul fillers, tag characters), and names compared by a
  *skeleton* (NFKC, case-folded, invisible characters dropped) so look-alike duplicates
  are caught;
* numbers: finite, within a float, and never subnormal (a 5e-324 efficiency divides to
  infinity).

The loaders (:mod:`roofline.specs.lint`, :mod:`roofline.measurements.lint`,
:mod:`roofline.calibration.data`, :mod:`roofline.presets.lint`) apply them; the format
pages (``docs/specs-format.md``, ``docs/measurements-format.md``,
``docs/models-format.md``) document them.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any

# -- limits --------------------------------------------------------------------------
# Each is an order of magnitude or more above the bundled files, and low enough that the
# slowest consumer (a site build, a calibration fit) stays within minutes.

#: Bytes per data file (the largest bundled file is about 95 KB).
MAX_FILE_BYTES = 4 * 1024 * 1024
#: TOML tables (and inline tables) per file, counted after parsing.
MAX_TABLES = 20_000
#: GPUs per spec file (the bundled database has 22); ``--max-gpus`` raises it. Each GPU
#: adds about 750 files and 18 MB to a site build.
MAX_GPUS = 64
#: Measurement sets per file (76 bundled) and points per set and per file (the largest
#: bundled set has 7): a calibration fit costs about 36 ms per point.
MAX_SETS = 256
MAX_POINTS_PER_SET = 200
MAX_POINTS_PER_FILE = 2000
#: Model presets per file (8 bundled) and GEMM tables per file (85 bundled).
MAX_MODELS = 64
MAX_GEMMS_PER_FILE = 1024
#: Model presets x GPUs a site build evaluates (8 x 22 = 176 bundled).
MAX_MODEL_GPUS = 1024
#: Problems listed in one report; the rest are counted.
MAX_PROBLEMS = 50


def model_gpus_problem(models: int, gpus: int) -> str | None:
    """The message when ``models`` presets x ``gpus`` GPUs exceed :data:`MAX_MODEL_GPUS`
    (each pair is a model page with its plans in both models), else None."""
    if models * gpus <= MAX_MODEL_GPUS:
        return None
    return (
        f"at most {MAX_MODEL_GPUS} model presets x GPUs per build, received {models} presets "
        f"x {gpus} GPUs = {models * gpus}; use fewer presets or a spec file with fewer GPUs"
    )


# -- reading -------------------------------------------------------------------------


class FileRefused(ValueError):
    """A data file refused before it is parsed: ``expected`` and ``received`` say why.
    Each loader turns it into its own one-problem error naming the file."""

    def __init__(self, expected: str, received: str) -> None:
        super().__init__(f"expected {expected}, received {received}")
        self.expected = expected
        self.received = received


def read_text(
    path: str | os.PathLike[str], what: str = "file", max_bytes: int = MAX_FILE_BYTES
) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (:func:`read_bytes`,
    then :func:`decode`); :class:`FileRefused` says why not, naming the file as ``what``
    ("spec file")."""
    return decode(read_bytes(path, what, max_bytes))


def bundled_text(name: str) -> str:
    """The text of the bundled data file ``roofline/data/<name>``, read like any other
    data file (:func:`read_text`: regular file, size cap, UTF-8 without a byte-order
    mark), so a packaging mistake is a :class:`FileRefused` naming the file."""
    resource = resources.files("roofline").joinpath(f"data/{name}")
    with resources.as_file(resource) as path:
        return read_text(path, f"bundled data file {name}")


def read_bytes(
    path: str | os.PathLike[str], what: str = "file", max_bytes: int = MAX_FILE_BYTES
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    Opened without blocking (a FIFO would otherwise wait for a writer) and checked with
    ``fstat`` on the open descriptor, so a device, FIFO or folder is refused before a
    byte is read; at most ``max_bytes + 1`` bytes are ever read. Raises
    :class:`FileRefused` (not readable, not a regular file, too large).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FileRefused(f"a readable {what}", exc.strerror or type(exc).__name__) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileRefused(f"a {what} that is a regular file", _file_kind(mode))
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise FileRefused(f"a readable {what}", reason) from None
    if len(data) > max_bytes:
        raise FileRefused(f"a file of at most {max_bytes} bytes", f"more than {max_bytes} bytes")
    return data


def decode(data: bytes) -> str:
    """``data`` as UTF-8 without a byte-order mark; :class:`FileRefused` otherwise."""
    if data.startswith(b"\xef\xbb\xbf"):
        # tomllib would report "Invalid statement (at line 1, column 1)", which hides why.
        raise FileRefused("UTF-8 text without a byte-order mark", "a byte-order mark (EF BB BF)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRefused("UTF-8 text", f"a byte that is not UTF-8 at offset {exc.start}") from None


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def file_name(path: str | os.PathLike[str]) -> str:
    """How messages name a file: the path as given."""
    return str(Path(path))


def count_tables(doc: Any) -> int:
    """Tables (dicts) in a parsed TOML document, the document itself included."""
    count, stack = 0, [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            count += 1
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def tables_problem(doc: Any) -> tuple[str, str] | None:
    """(expected, received) when ``doc`` holds more than :data:`MAX_TABLES` tables."""
    tables = count_tables(doc)
    if tables <= MAX_TABLES:
        return None
    return f"at most {MAX_TABLES} tables in a file", f"{tables} tables"


# -- text ----------------------------------------------------------------------------

# Unicode's default-ignorable code points (drawn as nothing: soft hyphen, combining
# grapheme joiner, Hangul fillers, zero-width marks and joiners, bidi embeddings,
# overrides and isolates, word joiner, invisible operators, variation selectors, the
# BOM, tag characters), the Arabic letter mark, line and paragraph separators and the
# interlinear annotation marks: each can make a name look like another or reverse the
# text after it.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
INVISIBLE_EXPECTED = "text without invisible or bidi characters"


def invisible_at(text: str) -> re.Match[str] | None:
    """The first invisible or bidi character of ``text``, or None."""
    return INVISIBLE.search(text)


def skeleton(text: str) -> str:
    """What ``text`` looks like, for finding look-alike duplicates: NFKC-normalised,
    case-folded, invisible characters dropped and whitespace runs made one space."""
    folded = unicodedata.normalize("NFKC", INVISIBLE.sub("", text)).casefold()
    return " ".join(folded.split())


# -- numbers -------------------------------------------------------------------------

#: The smallest positive normal float; anything nearer 0 (but not 0) is subnormal.
MIN_NORMAL = sys.float_info.min
SUBNORMAL_HINT = (
    f"a number closer to 0 than {MIN_NORMAL:.4g} (subnormal) loses its precision and "
    "divides to infinity"
)


def is_subnormal(value: Any) -> bool:
    """True for a non-zero number closer to 0 than the smallest normal float."""
    try:
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and value != 0
            and abs(value) < MIN_NORMAL
        )
    except OverflowError:  # an int beyond the float range is not subnormal
        return False


def all_finite(*values: float) -> bool:
    """True when every value is a finite float (derived values: products, quotients)."""
    try:
        return all(math.isfinite(v) for v in values)
    except OverflowError:
        return False
