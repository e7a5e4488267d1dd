"""The one problem collector every data-file loader lints with.

A loader (spec, measurement, calibration, model-preset file) makes one
:class:`Collector` per file and reports each problem with the entry it is in, the key,
the expected form and what was received; the record is :class:`roofline.errors.Problem`,
so every kind of file prints its problems the same way. A collector keeps the first
:data:`roofline.datafiles.core.MAX_PROBLEMS` and counts the rest, and reads and parses
its file through the same steps for every kind (:meth:`Collector.read`,
:meth:`Collector.parse`, :meth:`Collector.strings`): the size cap, the refusal of a FIFO
or device, UTF-8, TOML, the table limit, and no key or string value with a control,
invisible or bidi character or beyond :data:`roofline.datafiles.text.MAX_STRING_CHARS`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from roofline.datafiles.core import MAX_PROBLEMS, FileRefused, read_text, tables_problem
from roofline.datafiles.text import KeyProblem, TomlProblem, load_toml, string_problems
from roofline.errors import DataFileError, Problem, ProblemsError

__all__ = ["Collector", "Problem"]


class Collector:
    """The problems of one file: the first ``limit`` kept, the rest counted.

    Subclasses name their entries (:meth:`make`) and their error (:meth:`exception`);
    ``file_kind`` names the file in the error's heading ("model presets").
    """

    file_kind = "data file"

    def __init__(self, file: str, limit: int = MAX_PROBLEMS) -> None:
        self.file = file
        self.limit = limit
        self.problems: list[Problem] = []
        self.unlisted = 0  # problems found but not kept
        self._unlisted_errors = 0

    # -- recording ----------------------------------------------------------------------

    def make(
        self,
        entry: str | None,
        key: str | None,
        expected: str,
        received: str,
        severity: str = "error",
        hint: str = "",
    ) -> Problem:
        """The record of one problem (a subclass names the entry its own way)."""
        return Problem(self.file, entry, key, expected, received, severity, hint)

    def add(self, problem: Problem) -> None:
        """Keep ``problem``, or count it once ``limit`` are kept."""
        if len(self.problems) < self.limit:
            self.problems.append(problem)
            return
        self.unlisted += 1
        self._unlisted_errors += problem.severity == "error"

    def error(
        self, entry: str | None, key: str | None, expected: str, received: str, hint: str = ""
    ) -> None:
        self.add(self.make(entry, key, expected, received, "error", hint))

    def warn(
        self, entry: str | None, key: str | None, expected: str, received: str, hint: str = ""
    ) -> None:
        self.add(self.make(entry, key, expected, received, "warning", hint))

    def key_problems(self, entry: str | None, problems: Iterable[KeyProblem]) -> None:
        """Record each problem of one key's value (the shared text and value rules)."""
        for problem in problems:
            self.add(
                self.make(
                    entry, problem.key, problem.expected, problem.received, "error", problem.hint
                )
            )

    def count(self) -> int:
        """Problems found, kept or not (warnings included)."""
        return len(self.problems) + self.unlisted

    def error_count(self) -> int:
        """Errors found, kept or not."""
        kept = sum(p.severity == "error" for p in self.problems)
        return kept + self._unlisted_errors

    def exception(self) -> ProblemsError:
        """The error listing this file's problems."""
        return DataFileError(self.file_kind, self.problems, self.unlisted)

    def raise_if_any(self) -> None:
        """Raise :meth:`exception` when any error was found."""
        if self.error_count():
            raise self.exception()

    # -- the steps every file goes through ------------------------------------------------

    def read(self, path: str | os.PathLike[str], what: str) -> str:
        """The text of the file at ``path`` (:func:`roofline.datafiles.core.read_text`:
        a regular file, at most the size cap, UTF-8); a refused file raises
        :meth:`exception` with that one problem."""
        try:
            return read_text(path, what)
        except FileRefused as exc:
            self.add(self.make(None, None, exc.expected, exc.received))
            raise self.exception() from None

    def parse(self, text: str) -> dict[str, Any]:
        """The parsed TOML document of ``text``, within the table limit; otherwise
        raises :meth:`exception` with that one problem."""
        try:
            doc = load_toml(text)
        except TomlProblem as exc:
            self.add(self.make(None, None, "valid TOML", str(exc)))
            raise self.exception() from None
        too_many = tables_problem(doc)
        if too_many:
            self.add(self.make(None, None, *too_many))
            raise self.exception()
        return doc

    def strings(self, doc: Any) -> None:
        """The last pass, once the file's own rules found no error: every key and string
        value, wherever it is, without control, invisible or bidi characters and within
        the length cap (:func:`roofline.datafiles.text.string_problems`), named by its
        dotted path. A field the file's rules check as text is reported by them instead,
        once."""
        if not self.error_count():
            self.key_problems(None, string_problems(doc))
