"""How the lint quotes what it received, and the text rules of spec values.

Every received value is quoted by ``repr`` (which escapes control characters) and cut
short, so a hostile file cannot recolour a terminal or flood it. The regular expressions
here are shared by the lint and the JSON Schema (:mod:`roofline.specs.schema`).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from roofline.datafiles.core import INVISIBLE, INVISIBLE_EXPECTED
from roofline.publish.slugs import MAX_NAME_LENGTH, slug

MAX_URL_LENGTH = 2000
NON_FINITE_HINT = (
    "nan, inf and numbers beyond the float range (about 1.8e308; TOML reads 1e400 as inf) "
    "are not figures"
)
# C0 controls (tab and newline included: no field needs them), DEL and C1 controls: they
# would move the cursor or recolour a terminal that prints the field.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
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
    """One problem of one key's value: the linter adds the file, GPU and severity."""

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
        problems.append(KeyProblem(key, "text without control characters", found(value, control)))
    hidden = INVISIBLE.search(value)
    if hidden:
        problems.append(KeyProblem(key, INVISIBLE_EXPECTED, found(value, hidden)))
    markup = MARKUP.search(value) if plain else None
    if markup:
        expected = "plain text without the characters < > `"
        problems.append(KeyProblem(key, expected, found(value, markup)))
    return problems


def text_schema(plain: bool) -> dict[str, Any]:
    """A string without control characters (nor markup when ``plain``), as JSON Schema."""
    refused = MARKUP_OR_CONTROL if plain else CONTROL
    return {"type": "string", "not": {"pattern": f"{refused.pattern}|{INVISIBLE.pattern}"}}


def name_problem(name: str) -> tuple[str, str] | None:
    """(expected, received) when ``name`` cannot name a GPU and its pages, else None."""
    received = describe(name)
    if not name.strip():
        return "a non-empty name", received
    if name != name.strip():
        return "a name without leading or trailing whitespace", received
    if len(name) > MAX_NAME_LENGTH:
        expected = f"a name of at most {MAX_NAME_LENGTH} characters"
        return expected, f"{len(name)} characters: {received}"
    page = slug(name)
    if not page:
        expected = "a name with at least one letter or digit (a-z, 0-9: they make its page slug)"
        return expected, f"{received}, whose page slug is empty"
    if len(page) > MAX_NAME_LENGTH:
        expected = f"a name whose page slug has at most {MAX_NAME_LENGTH} characters"
        return expected, f"{received}, whose slug has {len(page)}"
    return None


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


def url_schema() -> dict[str, Any]:
    """The JSON Schema of a source URL: the rules of :func:`url_problem`."""
    return {
        "type": "string",
        "pattern": "^https?://[^/?#]",
        "maxLength": MAX_URL_LENGTH,
        "not": {"pattern": f"{URL_REFUSED.pattern}|{INVISIBLE.pattern}"},
    }


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
