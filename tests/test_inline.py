"""The quick inline step (site_gen.output.inline) gives Python-Markdown's own output.

Every text is converted with the site's Markdown extensions (mkdocs.yml) twice, without
and with :class:`~site_gen.output.inline.QuickInline`; the HTML must be equal. The fast
path must also be on for the site's extensions (else it would quietly do nothing) and off
as soon as a pattern it does not know is registered.
"""

from __future__ import annotations

import markdown
import pytest
from browser.site_fixtures import site_mkdocs_config
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown.inlinepatterns import LinkInlineProcessor, SimpleTagInlineProcessor

from site_gen.output.inline import (
    QuickInline,
    QuickInlineProcessor,
    bracket_ends,
    quick_links,
    quiet_text,
)

SAMPLES = [
    "| GPU | speedup |\n|---|--:|\n| H100 | 1.23× |\n| B200 &#124; x | [link](a.md) |\n",
    "Plain text, numbers 1.5 and 2e-3; nothing to match.\n",
    "Some `code`, **bold**, _em_, a ![image](x.svg) and <span>html</span> &amp; more.\n",
    "Math $x^2$ and \\(y\\), an escape \\* and a line  \nbreak, <https://example.com>.\n",
    "- item with [ref][r]\n\n[r]: https://example.com\n",
    '<div markdown="1">\n\n| a | b |\n|---|---|\n| 1 | `2` |\n\n</div>\n',
    "!!! note\n    Admonition with *emphasis* and plain 3.14.\n",
    # each pattern alone in a text
    *("a `b` c", "a $b$ c", "a \\(b\\) c", "a \\* c", "a [b](c.md) d", "a ![b](c.svg)"),
    *("a <https://e.org> b", "a <x@e.org> b", "a <b>c</b>", "a  \nb", "1 &#124; 2", "a *b* _c_"),
]


@pytest.fixture(scope="module")
def site_config():
    """The site's Markdown extensions and their settings as mkdocs builds its pages, with
    what the plugins add (browser.site_fixtures.site_mkdocs_config). The one Markdown extension the
    project's hooks add is QuickInline, which the tests add themselves."""
    return site_mkdocs_config()


def test_the_site_registers_autorefs(site_config) -> None:
    md = markdown.Markdown(
        extensions=site_config.markdown_extensions, extension_configs=site_config.mdx_configs
    )
    assert "mkdocs-autorefs" in md.inlinePatterns


def _convert(config, text: str, quick: bool) -> str:
    extensions = [*config.markdown_extensions, *([QuickInline()] if quick else [])]
    md = markdown.Markdown(extensions=extensions, extension_configs=config.mdx_configs)
    return md.convert(text)


def test_quick_inline_is_on_for_the_site(site_config) -> None:
    md = markdown.Markdown(
        extensions=[*site_config.markdown_extensions, QuickInline()],
        extension_configs=site_config.mdx_configs,
    )
    assert isinstance(md.treeprocessors["inline"], QuickInlineProcessor)
    quiet = quiet_text(md.inlinePatterns)
    assert quiet is not None
    assert quiet.search("| 1.234 | 5 µs |") is None
    for needed in ("`", "$", "\\", "[", "<", "&", "*", "_", "  \n"):
        assert quiet.search(f"a{needed}b") is not None


def test_an_unknown_pattern_turns_it_off(site_config) -> None:
    md = markdown.Markdown(extensions=site_config.markdown_extensions)
    md.inlinePatterns.register(SimpleTagInlineProcessor(r"()~~(.+?)~~", "del"), "del", 65)
    assert quiet_text(md.inlinePatterns) is None
    md = markdown.Markdown(extensions=[*site_config.markdown_extensions, QuickInline()])
    md.inlinePatterns.register(SimpleTagInlineProcessor(r"()~~(.+?)~~", "del"), "del", 65)
    assert md.convert("a ~~b~~ c") == "<p>a <del>b</del> c</p>"


@pytest.mark.parametrize("text", SAMPLES)
def test_same_html(site_config, text: str) -> None:
    assert _convert(site_config, text, True) == _convert(site_config, text, False)


#: Text built from the characters the patterns need and ordinary ones.
_PIECES = st.sampled_from(
    [
        *("`", "$", "\\", "[", "]", "(", ")", "!", "<", ">", "&", ";", "#", "*", "_", "|", "-"),
        *(
            "  \n",
            "\n",
            "\n\n",
            " ",
            "a",
            "1.5",
            "x",
            "http://e.org",
            "@",
            "amp",
            "µs",
            ":",
            "&amp;",
        ),
    ]
)


def _outcome(config, text: str, quick: bool) -> str:
    """The HTML, or the error: a line that starts with ``:::`` is a mkdocstrings block,
    whose unknown identifier (``:::`x``) fails the conversion with or without the quick
    step; it must fail alike."""
    try:
        return _convert(config, text, quick)
    except Exception as exc:  # the same error either way is the same behaviour
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_same_html_for_any_text(site_config, text: str) -> None:
    assert _outcome(site_config, text, True) == _outcome(site_config, text, False)


def test_a_mkdocstrings_block_fails_alike(site_config) -> None:
    """The case hypothesis found (``:::`` then a backtick) fails in both, the same way."""
    quick, plain = _outcome(site_config, ":::`", True), _outcome(site_config, ":::`", False)
    assert quick == plain and quick.startswith(("PluginError", "ModuleNotFoundError")), quick


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="[]a!(", max_size=60))
def test_bracket_ends_are_python_markdowns(text: str) -> None:
    assert bracket_ends(text) == LinkInlineProcessor._findBracketEnds(text)


def test_the_site_link_patterns_get_the_quick_bracket_ends(site_config) -> None:
    md = markdown.Markdown(
        extensions=[*site_config.markdown_extensions, QuickInline()],
        extension_configs=site_config.mdx_configs,
    )
    md.convert("a [b](c.md)")  # the inline step gives them out when it runs
    links = [p for p in md.inlinePatterns if isinstance(p, LinkInlineProcessor)]
    assert len(links) >= 3
    assert all(p._findBracketEnds is bracket_ends for p in links)


def test_an_unknown_bracket_table_maker_is_left_alone(monkeypatch) -> None:
    class Other(LinkInlineProcessor):
        @staticmethod
        def _findBracketEnds(data: str) -> list[int | None]:
            return [None] * (len(data) + 1)

    other = Other(r"\[", None)
    assert quick_links([other]) == 0
    assert other._findBracketEnds is Other._findBracketEnds
