"""The one boundary where strings become page text: Markdown, HTML, URLs and CSV cells.

Spec files and commit subjects come from pull requests, so every string the site shows is
treated as hostile text unless it was built here. The rules:

* **Text** (:func:`md_text`): any string placed in a generated Markdown page is HTML-escaped
  and every character Markdown or its extensions could act on is written as a numeric
  character reference, so it shows verbatim and can start no link, image, emphasis, table
  cell, attribute list (``{: onclick=...}``), math, snippet or HTML. Line breaks and other
  control characters become one space, so a value cannot leave its line (a heading, a
  table row, an indented admonition). Character references display correctly in every
  place a value lands: Markdown text, headings, table cells, raw HTML and attributes.
* **Markup** built by the helpers here (:func:`link`, :func:`code`, :func:`math`,
  :func:`strong`, :func:`breakable`) is :class:`Md`: trusted Markdown that also carries the
  plain text that exports write. Templates render everything else through
  :func:`environment_finalize`, so forgetting to escape is impossible.
* **URLs** (:func:`http_url`) are accepted only as absolute ``http``/``https`` URLs with a
  host, after parsing; link targets inside the site (:func:`site_path`) only as relative
  paths of safe characters.
* **CSV cells** (:func:`csv_cell`) that a spreadsheet would run as a formula get a leading
  apostrophe (OWASP's CSV-injection advice); numbers are left as they are.

Underscores between two letters or digits are left alone (recipe names and keys read
naturally; Python-Markdown never reads an intraword underscore as emphasis); others are
escaped.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from typing import Any

from markupsafe import Markup

from roofline.errors import spreadsheet_safe

#: Characters with a meaning in Markdown, its extensions (attr_list braces, arithmatex
#: dollars, tables' pipes) or HTML, written as character references wherever they occur.
_ALWAYS = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*[]{}|$#&<>\"'"})
#: What acts only at the start of a line: list markers, headings, quotes, setext and
#: fence rules, admonitions (``!!!``), details (``???``), tabs (``===``).
_LINE_START = re.compile(r"^( ?)([-+*=#>~!?]|\d+[.)](?:\s|$))")
#: An underscore that is not between two letters or digits can start emphasis.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SPACES = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_SITE_PATH = re.compile(r"^(?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_.-]*(?:#[A-Za-z0-9_-]+)?$")
#: Longest URL accepted anywhere on the site (browsers and servers handle far more; spec
#: files never need it).
MAX_URL_LENGTH = 2000


class Md(Markup):
    """Trusted Markdown built by this module, with the plain text exports write.

    A :class:`markupsafe.Markup`, so Jinja's autoescape leaves it alone; ``plain`` is
    what a CSV or JSON export shows for it (a link's text, a code span's content).
    """

    plain: str

    def __new__(cls, markup: object = "", plain: str | None = None) -> Md:
        obj = super().__new__(cls, markup)
        # Markup's own operations (``+``, ``join``, ``indent``) build new instances
        # without ``plain``: their text is then the markup's tag-free text.
        obj.plain = Markup(markup).striptags() if plain is None else plain
        return obj


def one_line(value: object) -> str:
    """``value`` as text on one line: line breaks and control characters become spaces."""
    return _SPACES.sub(" ", str(value))


def md_text(value: object) -> Markup:
    """``value`` as Markdown that renders verbatim and can contain no markup."""
    if isinstance(value, Md):
        return value
    out = one_line(value).translate(_ALWAYS)  # HTML's specials too, in one pass
    out = _EDGE_UNDERSCORE.sub("&#95;", out)
    start = _LINE_START.match(out)
    if start:
        at = len(start.group(1))
        out = f"{out[:at]}&#{ord(out[at])};{out[at + 1 :]}"
    return Markup(out)


def plain(value: object) -> object:
    """What an export shows for a cell: an :class:`Md`'s plain text, other values as given."""
    if isinstance(value, Md):
        return value.plain
    if isinstance(value, Markup):
        return value.striptags()
    return value


def site_path(target: str) -> str:
    """A relative link inside the site; anything else (a scheme, ``..`` tricks with
    quotes or spaces) raises ``ValueError``: targets are built by the generator, not read
    from spec files, so a bad one is a bug."""
    if not _SITE_PATH.match(target.replace("../", "")) or target.startswith("/"):
        raise ValueError(f"not a relative site path: {target!r}")
    return target


def link(text: object, target: str) -> Md:
    """A Markdown link to a page of the site, its text escaped."""
    return Md(f"[{md_text(text)}]({site_path(target)})", str(plain(text)))


def code(text: object) -> Md:
    """Inline code. Written as ``<code>`` so escaped characters display correctly."""
    return Md(f"<code>{md_text(text)}</code>", str(text))


def strong(text: object) -> Md:
    """Bold text (an :class:`Md` inside keeps its markup)."""
    return Md(f"**{md_text(text)}**", str(plain(text)))


def emphasis(text: object) -> Md:
    """Italic text (an :class:`Md` inside keeps its markup)."""
    return Md(f"*{md_text(text)}*", str(plain(text)))


def concat(*parts: object) -> Md:
    """Parts side by side, each escaped unless it is already :class:`Md`."""
    return Md("".join(md_text(p) for p in parts), "".join(str(plain(p)) for p in parts))


def math(latex: str) -> Md:
    """Inline math from LaTeX printed by sympy (the model's own symbols, never spec text)."""
    return Md(f"${latex}$", latex)


def breakable(name: str) -> Md:
    """A long identifier that may wrap after each underscore (table headers)."""
    return Md("_<wbr>".join(str(md_text(part)) for part in name.split("_")), name)


class UnsafeUrlError(ValueError):
    """A URL that is not an absolute http(s) URL with a host."""


def http_url(url: str) -> str:
    """``url`` if it parses as an absolute ``http``/``https`` URL with a host and has no
    characters that could leave an attribute or a Markdown link; else UnsafeUrlError."""
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH:
        raise UnsafeUrlError(f"not a URL of at most {MAX_URL_LENGTH} characters: {url!r}")
    if _CONTROL.search(url) or any(c in url for c in " <>\"'`\\"):
        raise UnsafeUrlError(f"URL with spaces, quotes, angle brackets or controls: {url!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UnsafeUrlError(f"not an absolute http(s) URL with a host: {url!r}")
    return url


def external_link(url: str, text: object = None) -> Md:
    """An HTML link to an external http(s) URL (checked again here: defence in depth),
    its text the URL itself or ``text``, escaped (exports write the same text)."""
    safe = html.escape(http_url(url), quote=True)
    plain_text = url if text is None else str(plain(text))
    return Md(f'<a href="{safe}" rel="nofollow noopener">{md_text(plain_text)}</a>', plain_text)


def csv_cell(value: object) -> object:
    """A cell a spreadsheet will not run as a formula: text starting with ``= + - @`` or a
    tab/return gets a leading apostrophe (:func:`roofline.errors.spreadsheet_safe`, which
    the CLI's CSV uses too); numbers, also ``-1.5`` as text, pass."""
    if not isinstance(value, str):
        return value
    try:
        float(value)
    except ValueError:
        return spreadsheet_safe(value)
    return value


def environment_finalize(value: Any) -> Any:
    """Jinja ``finalize``: every ``{{ }}`` value that is not already markup is escaped text."""
    if hasattr(value, "__html__"):
        return value
    return md_text(value)


def md_join(values: Any, separator: str = "") -> Markup:
    """Jinja ``join`` that escapes each item as Markdown text (the built-in escapes HTML only)."""
    return Markup(md_text(separator) if separator else "").join(md_text(v) for v in values)


def attribute(value: object) -> Markup:
    """A value for an HTML attribute (quotes included in the escaping)."""
    return Markup(html.escape(str(value), quote=True))
