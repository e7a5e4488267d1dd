"""Field checks of a model-preset file: the problem list (cut short after MAX_PROBLEMS),
keys, plain text, names, bounded integers, arrays of tables, GEMM kinds and duplicate names.
:mod:`roofline.presets.lint` adds the entry rules and the loading on top."""

from __future__ import annotations

import re
from typing import Any

from roofline.datafiles.problems import Collector
from roofline.datafiles.text import length_problem
from roofline.errors import nearest
from roofline.presets.model import LinearKind
from roofline.specs.text import describe, text_problems

KIND = "model presets"

_TOML_NAMES = {
    "model": "[[model]]",
    "sources": "[[model.sources]]",
    "block": "[[model.block]]",
    "gemm": "[[model.block.gemm]]",
}


class FieldLinter(Collector):
    """Collects every problem of one file (the first MAX_PROBLEMS, then a count)."""

    file_kind = KIND

    # -- single fields ------------------------------------------------------------------

    def keys(self, entry: str | None, prefix: str, table: dict[str, Any], known: dict[str, bool]):
        """Unknown keys of ``table`` (named ``prefix + key``) and the missing required ones."""
        for key in table:
            if key not in known:
                guess = nearest(key, list(known))
                hint = f"; did you mean {guess!r}?" if guess else f"; valid: {', '.join(known)}"
                self.error(entry, f"{prefix}{key}", "a known key", f"unknown key {key!r}{hint}")
        for key, needed in known.items():
            if needed and key not in table:
                self.error(entry, f"{prefix}{key}", "a value (the key is required)", "nothing")

    def text(self, entry: str, field: str, value: Any, limit: int) -> str | None:
        """Non-empty plain text: no control, invisible or markup characters, trimmed."""
        if not isinstance(value, str):
            self.error(entry, field, "a string", describe(value))
            return None
        before = self.count()
        self.key_problems(entry, text_problems(field, value, plain=True))  # invisible ones too
        if not value.strip():
            self.error(entry, field, "a non-empty string", describe(value))
        elif value != value.strip():
            self.error(entry, field, "text without leading or trailing whitespace", describe(value))
        too_long = length_problem(field, value, limit)
        if too_long:
            self.key_problems(entry, [too_long])
        return value if self.count() == before else None

    def name(
        self,
        entry: str,
        field: str,
        value: Any,
        pattern: re.Pattern[str],
        expected: str,
        limit: int,
    ) -> str | None:
        if isinstance(value, str) and len(value) <= limit and pattern.fullmatch(value):
            return value
        self.error(entry, field, expected.format(limit=limit), describe(value))
        return None

    def integer(self, entry: str, field: str, value: Any, low: int, high: int) -> int | None:
        if type(value) is int and low <= value <= high:
            return value
        self.error(entry, field, f"an integer from {low} to {high}", describe(value))
        return None

    def tables(
        self, entry: str | None, field: str, table: dict[str, Any], key: str, high: int
    ) -> list[dict[str, Any]]:
        """``table[key]``: an array of 1 to ``high`` tables, else [] (recorded; a missing key
        is reported by :meth:`keys`)."""
        if key not in table:
            return []
        value = table[key]
        toml = _TOML_NAMES[key]
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            self.error(entry, field, f"an array of {toml} tables", describe(value))
            return []
        if not 1 <= len(value) <= high:
            self.error(entry, field, f"1 to {high} {toml} tables", f"{len(value)} tables")
            return []
        return value

    def kind(self, entry: str, field: str, value: Any) -> LinearKind | None:
        valid = [k.value for k in LinearKind]
        if isinstance(value, str) and value in valid:
            return LinearKind(value)
        guess = nearest(value, valid) if isinstance(value, str) else None
        received = describe(value) + (f"; did you mean {guess!r}?" if guess else "")
        self.error(entry, field, f"one of {', '.join(valid)}", received)
        return None

    def duplicates(self, entry: str | None, prefix: str, names: list[Any], field: str) -> None:
        """Every later use of a name already used in the list (compared case-insensitively)."""
        first: dict[str, int] = {}
        for index, name in enumerate(names):
            if not isinstance(name, str):
                continue
            key = name.lower()
            if key in first:
                received = f"{describe(name)}, also the {field} of {prefix}[{first[key]}]"
                self.error(entry, f"{prefix}[{index}].{field}", f"a {field} used once", received)
            first.setdefault(key, index)
