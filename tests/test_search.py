"""The quick search parser (site_gen.output.search) splits pages as Material's does.

Both parsers read the same HTML, the shared small site's pages and generated fragments
(nested skipped and excluded elements, headings with and without ids, ``pre``, permalinks,
void and stray end tags); their sections must be equal in every field the index reads.
The quick index must also be the one the site's mkdocs set-up uses, and stay out of the
way of a Material it was not written for.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser.site_fixtures import site_mkdocs_config
from hypothesis import given, settings
from hypothesis import strategies as st
from material.plugins.search.plugin import Parser, SearchIndex
from mkdocs.config import load_config

from site_gen.output import search

ROOT = Path(__file__).resolve().parents[1]


def _sections(parser_class: type[Parser], html: str) -> list[tuple] | str:
    """The sections ``parser_class`` makes of ``html``, or the error it raises (Material's
    parser fails on some malformed HTML: the quick one must fail alike)."""
    parser = parser_class()
    try:
        parser.feed(html)
        parser.close()
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"
    return [
        (repr(s), s.el.tag, dict(s.el.attrs), s.id, s.depth, s.title, s.text, s.is_excluded())
        for s in parser.data
    ]


@pytest.fixture(scope="module")
def plugins():
    """The site's plugins after their own ``on_config`` (browser.site_fixtures.site_mkdocs_config)."""
    return site_mkdocs_config().plugins


def test_the_quick_index_is_on_for_the_site(plugins) -> None:
    assert search.source_digest() == search.KNOWN_SOURCE, "Material's search parser changed"
    assert search.install(plugins)
    assert type(plugins["material/search"].search_index) is search.QuickSearchIndex
    assert not search.install(plugins)  # once only: it is no longer Material's own index


def test_the_hook_runs_after_the_search_plugin_made_its_index() -> None:
    config = load_config(str(ROOT / "mkdocs.yml"))
    handlers = [getattr(h, "__module__", "") for h in config.plugins.events["config"]]
    assert handlers.index("material.plugins.search.plugin") < handlers.index("docs/hooks.py")


def test_another_material_is_left_alone(plugins, monkeypatch) -> None:
    plugin = plugins["material/search"]
    monkeypatch.setattr(plugin, "search_index", SearchIndex(**plugin.config))
    monkeypatch.setattr(search, "KNOWN_SOURCE", "000000000000")
    assert not search.install(plugins)
    assert type(plugin.search_index) is SearchIndex


def test_same_sections_on_the_site_pages(small_site_dir: Path) -> None:
    # What the index parses is a page's content: the article of a built page. A third of
    # the pages (each kind of page is there several times) and the largest two.
    pages = sorted(small_site_dir.rglob("index.html"))
    assert len(pages) > 40
    largest = sorted(pages, key=lambda p: p.stat().st_size)[-2:]
    for page in sorted({*pages[::3], *largest}):
        text = page.read_text("utf-8")
        html = text[text.find("<article") : text.rfind("</article>")]
        assert html, page
        assert _sections(search.QuickParser, html) == _sections(Parser, html), page


_TEXT = st.sampled_from(
    [
        *("a b", " ", "\n", "x\ny", "1.5 µs", "<&>", "  \n  ", "T_{x}", "&amp; &lt;p&gt;"),
        # what the tokenizer treats apart: the quick parser leaves such HTML to it
        *("a < b", "<!-- c -->", "<!DOCTYPE html>", "<?x?>", "&#124;", "&amp"),
    ]
)
_OPEN = st.sampled_from(
    [
        "<div>",
        "<p>",
        "<pre>",
        "<code>",
        "<li>",
        "<ul>",
        "<sub>",
        "<span>",
        "<h1 id='t'>",
        "<h2 id='a'>",
        "<h2>",
        "<h3 id='b'>",
        "<a class='headerlink' href='#a'>",
        "<div data-search-exclude>",
        "<span data-search-exclude>",
        "<div class='linenodiv'>",
        "<script>",
        "<style>",
        "<object>",
        "<img src='x'>",
        "<br>",
        "<BR/>",
        "<br />",
        '<img alt="a &amp; b" src=x>',
        '<P Title="a&quot;b">',
        '<span\nclass="headerlink"\n>',
        '<a class="headerlink" href="#a" title="Permanent link">',
        '<h2 id="b" data-search-exclude>',
        '<td align="right">',
    ]
)
_CLOSE = st.sampled_from(
    [
        "</div>",
        "</p>",
        "</pre>",
        "</code>",
        "</li>",
        "</ul>",
        "</sub>",
        "</span>",
        "</h1>",
        "</h2>",
        "</h3>",
        "</a>",
        "</script>",
        "</style>",
        "</object>",
    ]
)


@st.composite
def _fragments(draw) -> str:
    """HTML that opens and closes elements in any order, with text between."""
    parts: list[str] = []
    opened: list[str] = []
    for _ in range(draw(st.integers(1, 40))):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            tag = draw(_OPEN)
            parts.append(tag)
            opened.append(tag[1:].split(">")[0].split()[0])
        elif choice == 1 and opened:
            parts.append(f"</{opened.pop()}>")  # a matching end tag
        elif choice == 2:
            parts.append(draw(_CLOSE))  # any end tag, often a stray one
        else:
            parts.append(draw(_TEXT))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(_fragments())
def test_same_sections_on_any_fragment(html: str) -> None:
    assert _sections(search.QuickParser, html) == _sections(Parser, html)


def test_the_site_pages_take_the_quick_tokenizer(small_site_dir: Path) -> None:
    # Else the quick parser would quietly fall back to HTMLParser on every page.
    pages = sorted(small_site_dir.rglob("index.html"))
    for page in pages[::5]:
        text = page.read_text("utf-8")
        html = text[text.find("<article") : text.rfind("</article>")]
        assert search.plain_tokens(html) is not None, page


def test_the_tokenizer_leaves_what_it_does_not_know_to_htmlparser() -> None:
    for html in ("<p>a < b</p>", "<p><!-- c --></p>", "<a href=x>", "<script>x</script>"):
        assert search.plain_tokens(html) is None, html
    assert search.plain_tokens('<p class="a" hidden>x &amp; y</p><br/>') is not None


def test_open_elements_refuse_what_would_lose_count() -> None:
    elements = search.OpenElements()
    with pytest.raises(TypeError):
        elements.insert(0, object())
    with pytest.raises(TypeError):
        elements.extend([])
