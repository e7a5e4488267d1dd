"""Exceptions raised by the roofline package.

Every error a user can cause (a bad spec file, an unknown name, an invalid shape) is a
:class:`RooflineError`; the CLI prints its message and exits with status 2, never a
traceback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


class RooflineError(Exception):
    """Base class: bad input from a user. Raised by every public entry point."""


class UnknownNameError(RooflineError, KeyError):
    """An unknown GPU, recipe, mode or quantity name. Raised by the registries' lookups."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class ShapeError(RooflineError, ValueError):
    """A shape that is not positive integers or breaks a recipe's block divisibility."""


class UnsupportedError(RooflineError):
    """A recipe the GPU cannot evaluate: a peak it needs is missing (e.g. fp4 on H100)."""


#: Problems a report lists; the rest are counted (the same as roofline.datafiles.core's).
MAX_LISTED_PROBLEMS = 50


class ProblemsError(RooflineError):
    """A data file with problems (spec, measurement, calibration or preset file).

    ``str()`` is a heading and every listed problem indented; :meth:`report_lines` is
    what the CLI prints: one line per problem, each starting ``error:`` (or
    ``warning:``) once, the first :data:`MAX_LISTED_PROBLEMS` and then a count.
    """

    problems: tuple[Problem, ...]
    unlisted: int
    heading: str

    def _init(self, heading: str, problems: Iterable[Any], unlisted: int) -> None:
        self.problems = tuple(problems)
        self.unlisted = unlisted
        self.heading = heading
        shown = self.problems[:MAX_LISTED_PROBLEMS]
        lines = [heading, *(f"  {p}" for p in shown)]
        more = self.hidden()
        if more:
            lines.append(f"  ... and {more} more problem(s), not shown")
        super().__init__("\n".join(lines))

    def hidden(self) -> int:
        """Problems found but not listed."""
        return max(0, len(self.problems) - MAX_LISTED_PROBLEMS) + self.unlisted

    def report_lines(self) -> list[str]:
        """``error: <problem>`` per listed problem (``warning:`` for a warning)."""
        lines = [
            f"{getattr(p, 'severity', 'error')}: {p}" for p in self.problems[:MAX_LISTED_PROBLEMS]
        ]
        more = self.hidden()
        if more:
            file = self.problems[0].file if self.problems else "the file"
            lines.append(f"error: {file}: {more} more problem(s), not shown")
        return lines


def nearest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (case-insensitive), or None when nothing is close."""
    options = list(choices)
    lowered = {c.lower(): c for c in options}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


def unknown(kind: str, name: str, choices: Iterable[str]) -> UnknownNameError:
    """An :class:`UnknownNameError` listing the valid choices and the nearest one."""
    options = sorted(choices)
    message = f"unknown {kind} {name!r}; valid: {', '.join(options)}"
    guess = nearest(name, options)
    if guess:
        message += f". Did you mean {guess!r}?"
    return UnknownNameError(message)


# -- text that reaches a terminal or a spreadsheet ---------------------------------

# C0 controls except tab and newline, DEL, C1 controls (\x9b is a one-byte CSI), and the
# invisible characters that reorder or hide text (bidi overrides and isolates, LRM/RLM,
# the Arabic letter mark, line/paragraph separators, the BOM). Zero-width joiners stay:
# emoji and several scripts need them.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters other than newline and tab shown
    as escapes (ESC -> ``\\x1b``, CSI -> ``\\x9b``, BEL -> ``\\x07``, a bidi override ->
    ``\\u202e``), so spec or shape data can neither run terminal sequences nor hide text."""
    if _UNPRINTABLE.search(text) is None:  # the common case: no copy
        return text
    return _UNPRINTABLE.sub(_escape, text)


# A cell starting with one of these runs as a formula in Excel, LibreOffice and Sheets.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: str) -> str:
    """A CSV text cell a spreadsheet shows as text: a leading ``'`` before ``= + - @`` (and
    tab, CR), as OWASP's CSV-injection advice says. Only for text cells, never numbers."""
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


@dataclass(frozen=True)
class Problem:
    """One problem of a data file (spec, measurement, calibration, model-preset or
    error-band file), the one record every loader reports with.

    ``entry`` is how the message names the entry the problem is in ("gpu 'H100'",
    "set 'x' (#2)", "model 'llama3-8b' (#1)", "parameters"; None at the top level),
    ``key`` the dotted key inside it, ``expected`` the form the file should have and
    ``received`` what it holds (quoted by repr, cut short). ``name`` is the entry's own
    name as written (a GPU's name, a set's id), where it has one. Every kind prints the
    same way: ``<file>: <entry>: key '<key>': expected <form>, received <value> (<hint>)``.
    """

    file: str
    entry: str | None
    key: str | None
    expected: str
    received: str
    severity: str = "error"
    hint: str = ""
    name: str | None = None

    @property
    def field(self) -> str | None:
        """The key (the name the measurement, calibration and preset loaders used)."""
        return self.key

    def __str__(self) -> str:
        where = self.file
        if self.entry:
            where += f": {self.entry}"
        if self.key:
            where += f": key {self.key!r}"
        # The severity is the reader's prefix (``error:``/``warning:``), not repeated here.
        text = f"{where}: expected {self.expected}, received {self.received}"
        # Received values are quoted by repr already; printable() guards the rest.
        return printable(f"{text} ({self.hint})" if self.hint else text)


#: A problem of a calibration, measurement, preset or error-band file: the one record,
#: under the name those loaders have always raised.
DataProblem = Problem


class SpecProblem(Problem):
    """A problem of a spec file: :class:`Problem` with the entry named by its GPU
    (``gpu 'H100'``); ``gpu`` is that name as written, ``severity`` "error" or "warning"."""

    def __init__(
        self,
        file: str,
        gpu: str | None,
        key: str | None,
        expected: str,
        received: str,
        severity: str = "error",
        hint: str = "",
    ) -> None:
        entry = f"gpu {gpu!r}" if gpu else None
        super().__init__(file, entry, key, expected, received, severity, hint, gpu)

    @property
    def gpu(self) -> str | None:
        """The GPU entry's name (or ``#n``), None at the top level."""
        return self.name


class SpecError(ProblemsError):
    """A spec file with errors; carries every problem found, reported together.
    ``unlisted``: problems the linter counted but did not keep (errors among them)."""

    def __init__(self, problems: Iterable[Problem], unlisted: int = 0) -> None:
        problems = tuple(problems)
        errors = sum(p.severity == "error" for p in problems) + unlisted
        self._init(f"{errors} problem(s) in spec file:", problems, unlisted)


class DataFileError(ProblemsError):
    """A data file with errors; carries every problem found, reported together.
    ``unlisted``: problems a linter counted but did not keep."""

    def __init__(self, kind: str, problems: Iterable[Problem], unlisted: int = 0) -> None:
        problems = tuple(problems)
        self._init(f"{len(problems) + unlisted} problem(s) in {kind}:", problems, unlisted)
