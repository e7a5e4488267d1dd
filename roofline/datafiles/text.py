"""The text rules of every data file, and how a lint quotes what it received.

Every received value is quoted by ``repr`` (which escapes control characters) and cut
short, so a hostile file cannot recolour a terminal or flood it. One rule per thing:
text without control, invisible or bidi characters (:func:`text_problems`), a source URL
(:func:`url_problem`), reading TOML (:func:`load_toml`), and the last pass every loader
makes over a file that passed its own rules: no key or string value anywhere with a
control, invisible or bidi character, or longer than :data:`MAX_STRING_CHARS`
(:func:`string_problems`).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from roofline.datafiles.core import INVISIBLE, INVISIBLE_EXPECTED
from roofline.errors import nearest

MAX_URL_LENGTH = 2000
#: The longest key or string value any data file may hold anywhere (the longest text
#: field, a note, allows 4000 characters); a longer one is refused wherever it is.
MAX_STRING_CHARS = 10_000
# C0 controls (tab and newline included: no field needs them), DEL and C1 controls: they
# would move the cursor or recolour a terminal that prints the field.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
CONTROL_EXPECTED = "text without control characters"
# Markup characters, refused in fields that are names or labels (``plain`` keys).
MARKUP = re.compile(r"[<>`]")
MARKUP_OR_CONTROL = re.compile(r"[<>`\x00-\x1f\x7f-\x9f]")
# Characters refused in source URLs: whitespace, controls, those that end an HTML
# attribute, a Markdown autolink or a code span, and the backslash (browsers read it as "/").
URL_REFUSED = re.compile(r"""[\s<>"'\\`\x00-\x1f\x7f-\x9f]""")
URL_EXPECTED = (
    f"an http:// or https:// URL with a host, at most {MAX_URL_LENGTH} characters, "
    "without whitespace, control, invisible or bidi characters or any of < > \" ' \\ ` "
    "(percent-encode them)"
)


class KeyProblem(NamedTuple):
    """One problem of one key's value: the linter adds the file, the entry and severity."""

    key: str | None
    expected: str
    received: str
    hint: str = ""


def describe(value: Any) -> str:
    """Kind and repr of a received value, cut to 60 characters (repr escapes controls)."""
    kind = "boolean" if isinstance(value, bool) else type(value).__name__
    text = repr(value)
    return f"{kind} {text if len(text) < 60 else text[:57] + '...'}"


def found(value: str, match: re.Match[str]) -> str:
    """A received string and the refused character in it, both escaped."""
    return f"{describe(value)}, with {match.group()!r} at index {match.start()}"


def escape_controls(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``)."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def is_number(value: Any) -> bool:
    """True for an int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite(value: Any) -> bool:
    """True for a number that fits a float and is neither nan nor infinite."""
    try:
        return is_number(value) and math.isfinite(value)
    except OverflowError:  # an int beyond the float range
        return False


def text_problems(key: str, value: str, plain: bool) -> list[KeyProblem]:
    """Control characters and invisible or bidi characters (:data:`roofline.datafiles.core.
    INVISIBLE`) in any text, and markup in ``plain`` fields."""
    problems = []
    control = CONTROL.search(value)
    if control:
        problems.append(KeyProblem(key, CONTROL_EXPECTED, found(value, control)))
    hidden = INVISIBLE.search(value)
    if hidden:
        problems.append(KeyProblem(key, INVISIBLE_EXPECTED, found(value, hidden)))
    markup = MARKUP.search(value) if plain else None
    if markup:
        expected = "plain text without the characters < > `"
        problems.append(KeyProblem(key, expected, found(value, markup)))
    return problems


def string_problems(doc: Any, path: str = "") -> list[KeyProblem]:
    """Every key and string value of a parsed document, anywhere in it, with a control,
    invisible or bidi character or longer than :data:`MAX_STRING_CHARS`; each named by
    its dotted path (``gpu[0].sources[1].note``). The last pass of every loader: the
    fields a loader's own rules do not read as text (a name it only looks up, a key it
    only compares) are refused the same way as those it does."""
    problems: list[KeyProblem] = []
    stack: list[tuple[str, Any]] = [(path, doc)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                inner = f"{where}.{key}" if where else key
                problems += _string_problems(inner, key)
                stack.append((inner, value))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", value) for i, value in enumerate(item))
        elif isinstance(item, str):
            problems += _string_problems(where, item)
    return problems


def _string_problems(key: str, text: str) -> list[KeyProblem]:
    name = key if len(key) <= 200 else key[:200] + "..."
    too_long = length_problem(name, text, MAX_STRING_CHARS)
    return [too_long] if too_long else text_problems(name, text, plain=False)


def length_problem(key: str, text: str, limit: int) -> KeyProblem | None:
    """The problem of a text longer than ``limit`` characters, or None: the length rule
    of every text field (the count is received, not the text: it may be megabytes)."""
    if len(text) <= limit:
        return None
    return KeyProblem(key, f"at most {limit} characters", f"{len(text)} characters")


def unknown_key(key: str, valid: Iterable[str]) -> KeyProblem:
    """An unknown key, with the nearest valid one (or the list of valid ones) as the hint."""
    names = list(valid)
    guess = nearest(key, names)
    hint = f"did you mean {guess!r}?" if guess else f"valid keys: {', '.join(names)}"
    return KeyProblem(key, "a known key", f"unknown key {key!r}", hint)


def url_problem(url: Any) -> str | None:
    """What is wrong with a source URL (the received text), or None when it is accepted."""
    if url is None:
        return "nothing (missing)"
    if not isinstance(url, str):
        return describe(url)
    if len(url) > MAX_URL_LENGTH:
        return f"{len(url)} characters: {describe(url)}"
    refused = URL_REFUSED.search(url) or INVISIBLE.search(url)
    if refused:  # a bidi override would show the link text reversed ("...a?exe.png")
        return found(url, refused)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
    except ValueError:
        return f"{describe(url)}, which does not parse as a URL"
    if not url.startswith(("http://", "https://")):  # lower case, as the schema's pattern
        return f"{describe(url)}, scheme {parts.scheme!r}"
    if not parts.hostname:
        return f"{describe(url)}, with no host"
    return None


class TomlProblem(ValueError):
    """Text that is not readable TOML; the message is what a lint reports as received."""


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string, for the files the project writes: JSON's string
    escapes are TOML's, and DEL, which JSON leaves as it is and TOML refuses, is escaped
    too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def load_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads``, with every way it fails on hostile text raised as
    :class:`TomlProblem`: a syntax error, an integer beyond Python's 4300-digit conversion
    limit (a ValueError), or arrays nested deeply enough to exhaust the recursion limit."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlProblem(f"syntax error: {escape_controls(str(exc))}") from None
    except ValueError as exc:
        reason = escape_controls(str(exc).split(";")[0])
        raise TomlProblem(f"unreadable number: {reason}") from None
    except RecursionError:
        raise TomlProblem("arrays or tables nested too deeply to read") from None
