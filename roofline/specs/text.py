"""The text rules of spec values: the shared ones (:mod:`roofline.datafiles.text`, named
here too, where the spec lint and older callers import them) and the spec file's own:
GPU names and the JSON Schema of text and URLs (:mod:`roofline.specs.schema`).
"""

from __future__ import annotations

from typing import Any

from roofline.datafiles.core import INVISIBLE
from roofline.datafiles.text import (
    CONTROL,
    MARKUP,
    MARKUP_OR_CONTROL,
    MAX_URL_LENGTH,
    URL_EXPECTED,
    URL_REFUSED,
    KeyProblem,
    TomlProblem,
    describe,
    escape_controls,
    found,
    is_finite,
    is_number,
    load_toml,
    text_problems,
    toml_string,
    url_problem,
)
from roofline.publish.slugs import MAX_NAME_LENGTH, slug

__all__ = [
    "CONTROL",
    "MARKUP",
    "MARKUP_OR_CONTROL",
    "MAX_URL_LENGTH",
    "NON_FINITE_HINT",
    "URL_EXPECTED",
    "URL_REFUSED",
    "KeyProblem",
    "TomlProblem",
    "describe",
    "escape_controls",
    "found",
    "is_finite",
    "is_number",
    "load_toml",
    "name_problem",
    "text_problems",
    "text_schema",
    "toml_string",
    "url_problem",
    "url_schema",
]

NON_FINITE_HINT = (
    "nan, inf and numbers beyond the float range (about 1.8e308; TOML reads 1e400 as inf) "
    "are not figures"
)


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


def url_schema() -> dict[str, Any]:
    """The JSON Schema of a source URL: the rules of :func:`url_problem`."""
    return {
        "type": "string",
        "pattern": "^https?://[^/?#]",
        "maxLength": MAX_URL_LENGTH,
        "not": {"pattern": f"{URL_REFUSED.pattern}|{INVISIBLE.pattern}"},
    }
