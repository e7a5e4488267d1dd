"""The one rule of a source entry: where a figure, a measurement set or a model preset
was read (``[[gpu.sources]]``, ``[set.source]``, ``[[model.sources]]``).

A source entry is a table of a URL (:func:`roofline.datafiles.text.url_problem`), the date
it was read, optionally the commit a pinned URL names, and a note; each file says which
of those keys it has and which are required (:class:`SourceRule`), and a spec file's
entries add ``figures`` (checked by :mod:`roofline.specs.descriptors`). Every file applies
the same checks to the keys it has:

* unknown keys, with the nearest known one; missing required keys;
* ``url``: http(s), a host, no whitespace, control, invisible or bidi characters;
* ``read_on``: a TOML date (not a date-time);
* ``commit``: 7 to 40 lower-case hex digits;
* ``note``: non-empty text, trimmed, without control, invisible or bidi characters, at
  most ``note_limit`` characters; markup (<, > and the backtick) only where the file allows it
  (``plain_note``: a model preset's notes are plain text, as its other text is).

Calibration files cite no sources of their own: their ``sets`` name measurement sets.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from roofline.datafiles.text import (
    URL_EXPECTED,
    KeyProblem,
    describe,
    length_problem,
    text_problems,
    unknown_key,
    url_problem,
)


@dataclass(frozen=True)
class Source:
    """Where a set or a model preset was read: URL, date read, commit when the URL pins
    one, and a note (a spec file's sources add the figures they back: ``specs.model``)."""

    url: str
    read_on: dt.date
    commit: str | None = None
    note: str = ""


#: A git commit, as a pinned source names it.
COMMIT = re.compile(r"[0-9a-f]{7,40}")
COMMIT_EXPECTED = "7 to 40 lower-case hex digits (a git commit)"
READ_ON_EXPECTED = "a TOML date, e.g. 2026-11-30"
#: The longest source note (the longest bundled one has about 500 characters).
SOURCE_NOTE_LIMIT = 1000


@dataclass(frozen=True)
class SourceRule:
    """The source entry of one kind of file: its keys (key -> required), the longest
    note (None: only the cap on every string of a file,
    :data:`roofline.datafiles.text.MAX_STRING_CHARS`) and whether the note is plain text
    (no markup characters)."""

    keys: Mapping[str, bool]
    note_limit: int | None = SOURCE_NOTE_LIMIT
    plain_note: bool = False

    def problems(self, prefix: str, table: Mapping[str, Any]) -> list[KeyProblem]:
        """Every problem of the source entry ``table``, each key named ``prefix.key``.
        Keys the rule does not check itself (a spec's ``figures``) are the caller's."""
        known = [f"{prefix}.{key}" for key in self.keys]
        problems = [unknown_key(f"{prefix}.{key}", known) for key in table if key not in self.keys]
        problems += [
            KeyProblem(f"{prefix}.{key}", "a value (the key is required)", "nothing")
            for key, required in self.keys.items()
            if required and key not in table
        ]
        if "url" in table:
            received = url_problem(table["url"])
            if received:
                problems.append(KeyProblem(f"{prefix}.url", URL_EXPECTED, received))
        read_on = table.get("read_on")
        if "read_on" in table and not (
            isinstance(read_on, dt.date) and not isinstance(read_on, dt.datetime)
        ):
            problems.append(KeyProblem(f"{prefix}.read_on", READ_ON_EXPECTED, describe(read_on)))
        commit = table.get("commit")
        if "commit" in table and not (isinstance(commit, str) and COMMIT.fullmatch(commit)):
            problems.append(KeyProblem(f"{prefix}.commit", COMMIT_EXPECTED, describe(commit)))
        if "note" in table:
            problems += self.note_problems(f"{prefix}.note", table["note"])
        return problems

    def note_problems(self, key: str, note: Any) -> list[KeyProblem]:
        """A note: non-empty trimmed text, no control, invisible or bidi characters."""
        if not isinstance(note, str):
            return [KeyProblem(key, "a string", describe(note))]
        problems = text_problems(key, note, plain=self.plain_note)
        if not note.strip():
            problems.append(KeyProblem(key, "a non-empty string", describe(note)))
        elif note != note.strip():
            expected = "text without leading or trailing whitespace"
            problems.append(KeyProblem(key, expected, describe(note)))
        too_long = length_problem(key, note, self.note_limit) if self.note_limit else None
        return [*problems, too_long] if too_long else problems
