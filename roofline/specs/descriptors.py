"""Spec keys as typed descriptors: each kind of key validates a value and writes its own
JSON Schema, so the lint and the published schema come from one definition (as mkdocs'
``config_options`` do).

Every descriptor has the attributes readers use: ``kind``, ``description``,
``required``, ``choices``, ``range``, ``plain`` (text fields that refuse the markup
characters ``<``, ``>`` and backtick) and ``requires`` (keys an entry must also give when
it gives this one). No text field accepts control characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from roofline.datafiles.core import SUBNORMAL_HINT, is_subnormal
from roofline.datafiles.sources import SourceRule
from roofline.errors import nearest
from roofline.publish.slugs import MAX_NAME_LENGTH
from roofline.specs.ranges import NumberRange
from roofline.specs.text import (
    MARKUP_OR_CONTROL,
    NON_FINITE_HINT,
    KeyProblem,
    describe,
    is_finite,
    is_number,
    name_problem,
    text_problems,
    text_schema,
    url_schema,
)

#: The suffix of a ``plain`` key's description: the rule it adds.
PLAIN_RULE = "; no < > or `"


@dataclass(frozen=True)
class KeySpec:
    """One key of a spec file: what it holds, whether required, and its rules.

    Subclasses implement :meth:`validate` (every problem of a present value) and
    :meth:`schema` (the same rules as JSON Schema).
    """

    key: str
    about: str
    required: bool = False
    choices: tuple[str, ...] = ()
    range: NumberRange | None = None
    plain: bool = False
    requires: tuple[str, ...] = ()
    kind: ClassVar[str] = ""

    @property
    def description(self) -> str:
        """What the key holds, with the markup rule of ``plain`` keys."""
        return self.about + (PLAIN_RULE if self.plain else "")

    def missing(self) -> KeyProblem:
        """The problem of a required key that is absent."""
        return KeyProblem(self.key, f"{self.kind} ({self.description})", "nothing (missing)")

    def validate(self, value: Any) -> list[KeyProblem]:
        """Every problem of ``value``; empty when it is accepted."""
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of the key, with its description."""
        return {**self._schema(), "description": self.description}

    def _schema(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class Number(KeySpec):
    """A finite number within ``range``; ``noun`` names it in range messages and ``hint``
    guesses the mistake behind a finite value out of range."""

    noun: str = "number"
    hint: Callable[[float], str] | None = None
    type_expected: str = ""  # the message for a non-number; default "a number (...)"
    integer: bool = False  # a count: 132, not 132.5 (132.0 is accepted, as TOML may write it)
    kind: ClassVar[str] = "number"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not is_number(value):
            expected = self.type_expected or f"a number ({self.description})"
            return [KeyProblem(self.key, expected, describe(value))]
        if self.integer and is_finite(value) and value != int(value):
            return [KeyProblem(self.key, f"a {self.noun} ({self.description})", describe(value))]
        if self.range is None or self.range.contains(value):
            return []
        return [KeyProblem(self.key, self.range_expected(), describe(value), self.why(value))]

    def range_expected(self) -> str:
        """What an out-of-range value was expected to be."""
        assert self.range is not None
        return f"a finite {self.noun} in {self.range.text()}"

    def why(self, value: float) -> str:
        """The likely mistake behind an out-of-range number, or ""."""
        if not is_finite(value):
            return NON_FINITE_HINT
        if is_subnormal(value):
            return SUBNORMAL_HINT
        return self.hint(value) if self.hint else ""

    def _schema(self) -> dict[str, Any]:
        kind = "integer" if self.integer else "number"
        return {"type": kind, **(self.range.schema() if self.range else {})}


@dataclass(frozen=True)
class Text(KeySpec):
    """A string; with ``choices``, its first word (before any ``:``) is one of them."""

    kind: ClassVar[str] = "string"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not isinstance(value, str):
            return [KeyProblem(self.key, f"a string ({self.description})", describe(value))]
        problems = text_problems(self.key, value, self.plain)
        if self.choices and value.split(":")[0].strip() not in self.choices:
            expected = f"one of {', '.join(self.choices)}"
            problems.append(KeyProblem(self.key, expected, describe(value)))
        return problems

    def _schema(self) -> dict[str, Any]:
        prop = text_schema(self.plain)
        if self.choices:
            prop["pattern"] = "^(" + "|".join(self.choices) + ")"
        return prop


@dataclass(frozen=True)
class Choice(Text):
    """A string that is exactly one of ``choices``."""

    def validate(self, value: Any) -> list[KeyProblem]:
        if isinstance(value, str) and value in self.choices:
            return []
        return [KeyProblem(self.key, f"one of {', '.join(self.choices)}", describe(value))]

    def _schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.choices)}


@dataclass(frozen=True)
class Name(Text):
    """A GPU's name: it names its pages, so it needs a slug and has a length limit."""

    def validate(self, value: Any) -> list[KeyProblem]:
        problems = super().validate(value)
        problem = name_problem(value) if isinstance(value, str) else None
        if problem:
            problems.append(KeyProblem(self.key, *problem))
        return problems

    def _schema(self) -> dict[str, Any]:
        prop = super()._schema()
        # At least one slug character; no leading or trailing whitespace.
        prop.update(minLength=1, maxLength=MAX_NAME_LENGTH, pattern="[A-Za-z0-9]")
        prop["not"] = {"anyOf": [prop["not"], {"pattern": r"^\s|\s$"}]}
        return prop


@dataclass(frozen=True)
class TextList(KeySpec):
    """A list of strings, each one of ``choices`` when there are choices."""

    kind: ClassVar[str] = "string_list"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return [KeyProblem(self.key, "a list of strings", describe(value))]
        return [p for item in value for p in self.item_problems(item)]

    def item_problems(self, item: str) -> list[KeyProblem]:
        """The problems of one item."""
        problems = text_problems(self.key, item, self.plain)
        if self.choices and item not in self.choices:
            expected = f"items from {', '.join(self.choices)}"
            problems.append(KeyProblem(self.key, expected, describe(item)))
        return problems

    def _schema(self) -> dict[str, Any]:
        items = (
            {"enum": [str(c) for c in self.choices]} if self.choices else text_schema(self.plain)
        )
        return {"type": "array", "items": items}


@dataclass(frozen=True)
class Prefixes(TextList):
    """Device-name prefixes: a query is stripped, so an empty or space-led one is useless."""

    def item_problems(self, item: str) -> list[KeyProblem]:
        problems = super().item_problems(item)
        if not item.strip():
            expected = "non-empty prefixes (an empty one matches every query)"
            problems.append(KeyProblem(self.key, expected, describe(item)))
        elif item != item.lstrip():
            expected = (
                "prefixes without leading whitespace (queries are stripped: it never matches)"
            )
            problems.append(KeyProblem(self.key, expected, describe(item)))
        return problems

    def _schema(self) -> dict[str, Any]:
        prop = super()._schema()
        prop["items"]["pattern"] = r"^\S"
        return prop


@dataclass(frozen=True)
class NumberTable(KeySpec):
    """A table of numbers within ``range``, keyed by plain names (dtypes)."""

    kind: ClassVar[str] = "table"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not isinstance(value, dict):
            return [KeyProblem(self.key, self._type_expected(), describe(value))]
        problems = []
        if not all(is_number(v) for v in value.values()):
            problems.append(KeyProblem(self.key, self._type_expected(), describe(value)))
        else:
            problems += [p for name in value for p in text_problems(self.key, name, plain=True)]
        return problems + [p for name, v in value.items() for p in self._value_problems(name, v)]

    @staticmethod
    def _type_expected() -> str:
        return "a table of numbers, e.g. { bf16 = 794.0 }"

    def _value_problems(self, name: str, value: Any) -> list[KeyProblem]:
        if not is_number(value) or self.range is None or self.range.contains(value):
            return []
        hint = "given in FLOP/s instead of TFLOP/s?" if is_finite(value) and value > 0 else ""
        expected = f"finite TFLOP/s values in {self.range.text()}"
        return [KeyProblem(self.key, expected, f"{name!r} = {describe(value)}", hint)]

    def _schema(self) -> dict[str, Any]:
        values = {"type": "number", **(self.range.schema() if self.range else {})}
        return {
            "type": "object",
            "propertyNames": {"not": {"pattern": MARKUP_OR_CONTROL.pattern}},
            "additionalProperties": values,
        }


@dataclass(frozen=True)
class TextTable(KeySpec):
    """A table of plain one-line texts keyed by ``choices`` (e.g. recipe name -> reason);
    each text has at least one letter or digit."""

    kind: ClassVar[str] = "table"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not isinstance(value, dict):
            return [KeyProblem(self.key, self._type_expected(), describe(value))]
        return [p for name, text in value.items() for p in self._entry_problems(name, text)]

    def _type_expected(self) -> str:
        return f'a table of texts, e.g. {{ {self.choices[0]} = "why, with its source" }}'

    def _entry_problems(self, name: str, text: Any) -> list[KeyProblem]:
        problems = []
        who = repr(name) if name in self.choices else describe(name)  # repr escapes controls
        if name not in self.choices:
            guess = nearest(name, self.choices)
            hint = f"did you mean {guess!r}?" if guess else ""
            expected = f"keys from {', '.join(self.choices)}"
            problems.append(KeyProblem(self.key, expected, f"key {describe(name)}", hint))
        if not isinstance(text, str):
            expected = "a string for each key"
            problems.append(KeyProblem(self.key, expected, f"{describe(text)} for {who}"))
            return problems
        problems += text_problems(self.key, text, plain=True)
        if not _HAS_WORD.search(text):
            expected = "a text with at least one letter or digit"
            problems.append(KeyProblem(self.key, expected, f"{describe(text)} for {who}"))
        return problems

    def _schema(self) -> dict[str, Any]:
        text = {**text_schema(plain=True), "pattern": _HAS_WORD.pattern}
        return {
            "type": "object",
            "propertyNames": {"enum": list(self.choices)},
            "additionalProperties": text,
        }


# The same pattern in the lint (re.search) and the schema (an unanchored "pattern").
_HAS_WORD = re.compile("[A-Za-z0-9]")
SOURCE_KEYS = ("url", "read_on", "figures", "note")
#: A ``[[gpu.sources]]`` entry: a URL, optionally the date read, the figures it gives and a
#: note (no length limit of its own: the published schema has none).
SOURCE_RULE = SourceRule(
    {"url": True, "read_on": False, "figures": False, "note": False}, note_limit=None
)


@dataclass(frozen=True)
class Sources(KeySpec):
    """An array of ``[[gpu.sources]]`` tables; ``figures`` name keys of ``figure_keys``."""

    figure_keys: Callable[[], Iterable[str]] = tuple
    kind: ClassVar[str] = "sources"

    def validate(self, value: Any) -> list[KeyProblem]:
        if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
            return [KeyProblem(self.key, "an array of [[gpu.sources]] tables", describe(value))]
        known = set(self.figure_keys())
        return [p for i, s in enumerate(value) for p in self._source_problems(i, s, known)]

    def _source_problems(
        self, index: int, source: dict[str, Any], known: set[str]
    ) -> list[KeyProblem]:
        """The one source-entry rule (:data:`SOURCE_RULE`), and the figures it cites."""
        where = f"{self.key}[{index}]"
        problems = SOURCE_RULE.problems(where, source)
        figures = source.get("figures", [])
        if not isinstance(figures, list) or not all(
            isinstance(f, str) and f in known for f in figures
        ):
            expected = "a list of spec key names"
            problems.append(KeyProblem(f"{where}.figures", expected, describe(figures)))
        return problems

    def _schema(self) -> dict[str, Any]:
        properties = {
            "url": url_schema(),
            "read_on": {"type": "string", "format": "date"},
            "figures": {"type": "array", "items": {"enum": sorted(self.figure_keys())}},
            "note": text_schema(plain=False),
        }
        item = {"type": "object", "required": ["url"], "additionalProperties": False}
        return {"type": "array", "items": {**item, "properties": properties}}
