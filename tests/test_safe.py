"""The escaping boundary (site_gen.markup.safe), tried as an attacker would.

Every escaped value is rendered by Python-Markdown with the extensions of ``mkdocs.yml``
in each place the templates put values (paragraph, heading, table cell, admonition, list
item, link text, HTML attribute), then parsed: it must come back as the same text, with
no element, attribute or link of its own.
"""

from __future__ import annotations

import html.parser
from pathlib import Path

import markdown
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from site_gen.markup import safe

ROOT = Path(__file__).resolve().parent.parent

ATTACKS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "https://example.com/x>[y](javascript:alert(2))",
    "[click](javascript:alert(3))",
    "![x](javascript:alert(4))",
    "# heading {: onclick=alert(5) }",
    "text {: onmouseover=alert(6) }",
    "`code` **bold** *em* ~~del~~",
    "$\\href{javascript:alert(7)}{x}$",
    "| a | b |",
    "=cmd|' /C calc'!A0",
    '--8<-- "/etc/passwd"',
    ";--8<-- '/etc/passwd'",
    '!!! danger "x"',
    '=== "tab"',
    "??? note",
    "1. item",
    "    indented code",
    "line one\n# line two\n<script>alert(8)</script>",
    "\x1b]0;title\x07 \x9b31m red",
    "&lt;already&gt; &amp; &#60;script&#62;",
    "\\<script>",
    "<!-- comment --> <![CDATA[ x ]]>",
    '" onmouseover="alert(9)',
    "' onmouseover='alert(10)",
    "<a href='javascript:alert(11)'>x</a>",
    "[x]: javascript:alert(12)\n\n[x]",
    "<https://example.com>",
    "\u2028<script>\u2029",
]

EXTENSIONS = [
    "tables",
    "toc",
    "admonition",
    "attr_list",
    "md_in_html",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.tabbed",
    "pymdownx.arithmatex",
]


def _mkdocs_extensions() -> list[str]:
    """The Markdown extensions mkdocs.yml enables (snippets left out: it reads files)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    names = [next(iter(e)) if isinstance(e, dict) else e for e in config["markdown_extensions"]]
    return [n for n in names if n != "pymdownx.snippets"]


def test_extension_list_follows_mkdocs_yml() -> None:
    assert sorted(EXTENSIONS) == sorted(_mkdocs_extensions())


class _Collector(html.parser.HTMLParser):
    """Elements, attributes and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append("!--")


def _render(source: str) -> _Collector:
    out = markdown.markdown(source, extensions=EXTENSIONS)
    collector = _Collector()
    collector.feed(out)
    return collector


CONTEXTS = {
    # template line, the elements and attributes the template itself makes
    "paragraph": ("before {} after", {"p"}, set()),
    "heading": ("# {}", {"h1"}, {"id"}),
    "line start": ("{}", {"p"}, set()),
    "table cell": (
        "| a | b |\n|---|---|\n| {} | x |",
        {"table", "thead", "tbody", "tr", "th", "td"},
        set(),
    ),
    "admonition": ('!!! note "t"\n    {}', {"div", "p"}, {"class"}),
    "list item": ("- {}", {"ul", "li"}, set()),
    "link text": ("[{}](page.md)", {"p", "a"}, {"href"}),
    "emphasis": ("**{}**", {"p", "strong"}, set()),
    "html attribute": ('<div title="{}" markdown="0">x</div>', {"div"}, {"title", "markdown"}),
}


def _check(value: str, context: str) -> None:
    template, allowed_tags, allowed_attrs = CONTEXTS[context]
    escaped = str(safe.md_text(value))
    got = _render(template.format(escaped))
    assert set(got.tags) <= allowed_tags, (context, value, got.tags)
    assert {name for name, _ in got.attrs} <= allowed_attrs, (context, value, got.attrs)
    for name, attr in got.attrs:
        assert name != "href" or attr == "page.md", (context, value, attr)
    expected = safe.one_line(value)
    if context == "html attribute":
        assert ("title", expected) in got.attrs
    else:  # Markdown may drop a leading space and break lines: compare words
        assert " ".join(expected.split()) in " ".join("".join(got.text).split()), (
            context,
            value,
            got.text,
        )


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("value", ATTACKS)
def test_attacks_render_verbatim_and_inert(value: str, context: str) -> None:
    _check(value, context)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(sorted(CONTEXTS)),
)
def test_any_text_renders_verbatim_and_inert(value: str, context: str) -> None:
    assume(safe.one_line(value).strip())  # an empty value changes the template ("****" is a rule)
    _check(value, context)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="<>[](){}*_`$|\\!#=-+:;'\"&/ ajs", max_size=30),
    st.sampled_from(sorted(CONTEXTS)),
)
def test_markup_heavy_text_renders_verbatim_and_inert(value: str, context: str) -> None:
    assume(safe.one_line(value).strip())
    _check(value, context)


def test_yaml_front_matter_title_is_one_safe_scalar() -> None:
    for value in ATTACKS:
        doc = yaml.safe_load(f'title: "{safe.md_text(value)}"\n')
        assert list(doc) == ["title"]
        assert "\n" not in doc["title"] and "<" not in doc["title"]


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:x",
        "https://example.com/x>[y](javascript:alert(2))",
        'https://example.com/" onmouseover="alert(1)',
        "https://example.com/\nx",
        "//example.com/x",
        "https://",
        "ftp://example.com/x",
        "https://example.com/" + "a" * safe.MAX_URL_LENGTH,
    ],
)
def test_unsafe_urls_are_refused(url: str) -> None:
    with pytest.raises(safe.UnsafeUrlError):
        safe.external_link(url)


def test_http_urls_become_one_inert_link() -> None:
    url = "https://example.com/a_b?x=1&y=2#frag"
    got = _render(f"1. {safe.external_link(url)} (read 2026-11-29)")
    assert got.tags.count("a") == 1
    assert ("href", url) in got.attrs
    assert url in "".join(got.text)


@pytest.mark.parametrize(
    "target",
    ["javascript:alert(1)", "/etc/passwd", "a b.md", 'x.md" onclick="y', "https://example.com"],
)
def test_site_links_refuse_anything_but_relative_paths(target: str) -> None:
    with pytest.raises(ValueError, match="relative site path"):
        safe.link("x", target)


def test_link_cells_keep_their_plain_text() -> None:
    cell = safe.link("=cmd [x]", "../gpus/a-b/index.md")
    assert safe.plain(cell) == "=cmd [x]"
    assert str(cell) == "[&#61;cmd &#91;x&#93;](../gpus/a-b/index.md)"
    assert safe.plain(safe.strong(safe.concat(safe.emphasis("1.20×"), "†"))) == "1.20×†"
    assert safe.plain(safe.breakable("rowwise_with_gw_hp")) == "rowwise_with_gw_hp"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-cmd", "'-cmd"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-1.5", "-1.5"),
        ("+2e3", "+2e3"),
        ("NVIDIA", "NVIDIA"),
        (1.5, 1.5),
        (-3, -3),
    ],
)
def test_csv_cells_are_never_formulas(value: object, expected: object) -> None:
    assert safe.csv_cell(value) == expected
