"""Math typeset at build time (site_gen/output/mathrender.py and the hook docs/math_hook.py)."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from site_gen.output.mathrender import MathError, PageMath, find_math

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "docs" / "math_hook.py"

DISPLAY = r'<div class="arithmatex ra-math">\[T = \frac{a &lt; b}{c}\]</div>'
INLINE = r'<span class="arithmatex">\(x_{i}\)</span>'


@pytest.fixture(scope="module")
def katex_js(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """KaTeX's dist/ from the cached tarball (skips without node or KaTeX)."""
    from site_gen.output.assets import KATEX_VERSION, cache_dir, install_katex

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if shutil.which("npm") is None and not (cache_dir() / f"katex-{KATEX_VERSION}.tgz").is_file():
        pytest.skip("npm is not installed and KaTeX is not cached")
    folder = tmp_path_factory.mktemp("katex")
    install_katex(folder)
    return folder / "katex.min.js"


@pytest.fixture()
def math(katex_js: Path):
    renderer = PageMath(katex_js=katex_js)
    yield renderer
    renderer.close()


def test_find_math_reads_both_delimiters_and_unescapes() -> None:
    found = find_math(f"<p>{DISPLAY} and {INLINE}</p>", "page.md")
    assert [(e.tag, e.cls, e.tex, e.display) for e in found] == [
        ("div", "arithmatex ra-math", r"T = \frac{a < b}{c}", True),
        ("span", "arithmatex", "x_{i}", False),
    ]


@pytest.mark.parametrize(
    "element",
    [
        '<span class="arithmatex">$x$</span>',
        '<div class="arithmatex">\\[x</div>',
        '<span class="arithmatex">\\(x<b>y</b>\\)</span>',
    ],
)
def test_find_math_refuses_what_is_not_plain_tex(element: str) -> None:
    with pytest.raises(MathError, match=r"page\.md"):
        find_math(f"<p>{element}</p>", "page.md")


def test_pages_get_katex_markup_and_keep_their_elements(math: PageMath) -> None:
    page = f"<p>before {INLINE} after</p>{DISPLAY}<p>{INLINE}</p>"
    out = math.typeset(page, "page.md")
    assert out.startswith('<p>before <span class="arithmatex"><span class="katex">')
    # A displayed formula is a box that may scroll: a named tab stop (atlas.js prunes).
    assert (
        '<div class="arithmatex ra-math" tabindex="0" role="group" aria-label="Formula">'
        '<span class="katex-display">'
    ) in out
    assert not re.search(r"\\[\[(]", re.sub(r"<annotation.*?</annotation>", "", out))
    assert out.count('class="katex"') == 3 and "</span> after</p>" in out
    # MathML only: no KaTeX HTML layout (the browser lays the MathML out).
    assert "katex-html" not in out and "katex-mathml" not in out
    assert out.count("<math ") == 3
    # An inline formula keeps its TeX in the MathML annotation (escaped); a formula block
    # (ra-math) drops it: its Copy LaTeX button carries the TeX.
    assert '<annotation encoding="application/x-tex">x_{i}</annotation>' in out
    assert out.count("<annotation") == 2 and r"\frac{a &lt; b}" not in out
    assert len(math.rendered) == 2  # the repeated inline formula was rendered once
    assert math.typeset(out, "page.md") == out  # typesetting twice changes nothing
    assert math.typeset("<p>no math</p>", "other.md") == "<p>no math</p>"


def test_upright_words_are_one_identifier(math: PageMath) -> None:
    page = r'<span class="arithmatex">\(P_{\mathrm{bf16}} \mathrm{d} x\)</span>'
    out = math.typeset(page, "page.md")
    # \mathrm{bf16}: one <mi> for the word (drawn upright, read as one word), the digits
    # apart; a lone upright letter keeps its mathvariant (alone it would be italic).
    assert "<mi>bf</mi><mn>16</mn>" in out and '<mi mathvariant="normal">d</mi>' in out
    assert '<mi mathvariant="normal">b</mi>' not in out


def test_the_same_page_twice_gives_the_same_bytes(math: PageMath, katex_js: Path) -> None:
    page = f"<p>{INLINE}</p>{DISPLAY}"
    first = math.typeset(page, "a.md")
    other = PageMath(katex_js=katex_js)
    try:
        assert other.typeset(page, "a.md") == first
    finally:
        other.close()


@pytest.mark.parametrize(
    ("tex", "reason"),
    [
        (r"\frac{a", "Unexpected end of input"),
        (r"\undefinedmacro x", "Undefined control sequence"),
        (r"\href{javascript:alert(1)}{x}", r"untrusted command\(s\) \\href"),
        (r"\htmlClass{x}{y}", "HTML extension is disabled"),
    ],
)
def test_a_katex_error_names_the_page_and_the_expression(
    math: PageMath, tex: str, reason: str
) -> None:
    good = r'<span class="arithmatex">\(y\)</span>'
    bad = f'<span class="arithmatex">\\({tex}\\)</span>'
    with pytest.raises(MathError, match=reason) as info:
        math.typeset(good + bad, "gpus/x.md")
    assert str(info.value).startswith("gpus/x.md: KaTeX cannot typeset ")
    assert repr(tex) in str(info.value)
    # The process survives a refusal: the next page renders.
    assert 'class="katex"' in math.typeset(good, "next.md")


def test_a_missing_katex_is_a_clear_error(tmp_path: Path) -> None:
    renderer = PageMath(katex_js=tmp_path / "katex.min.js")
    with pytest.raises(MathError, match=r"katex\.min\.js is missing"):
        renderer.typeset(f"<p>{INLINE}</p>", "page.md")


def _mkdocs_project(tmp_path: Path, katex_js: Path, page: str) -> Path:
    """A one-page mkdocs project (default theme) with arithmatex and the math hook."""
    docs = tmp_path / "docs"
    (docs / "generated" / "katex").mkdir(parents=True)
    shutil.copy2(katex_js, docs / "generated" / "katex" / "katex.min.js")
    (docs / "index.md").write_text(page, "utf-8")
    (tmp_path / "mkdocs.yml").write_text(
        textwrap.dedent(f"""\
        site_name: t
        docs_dir: docs
        hooks: ["{HOOK}"]
        exclude_docs: "generated/"
        markdown_extensions:
          - pymdownx.arithmatex:
              generic: true
    """),
        "utf-8",
    )
    return tmp_path / "mkdocs.yml"


def _mkdocs_build(config_file: Path) -> Path:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    cfg = load_config(str(config_file), site_dir=str(config_file.parent / "site"), strict=True)
    build(cfg)
    return config_file.parent / "site" / "index.html"


def test_the_hook_typesets_a_mkdocs_build(tmp_path: Path, katex_js: Path) -> None:
    page = "# T\n\nInline $a_{1} < b$ and a block:\n\n$$\n\\frac{x}{y}\n$$\n"
    html = _mkdocs_build(_mkdocs_project(tmp_path, katex_js, page)).read_text("utf-8")
    assert html.count('class="katex"') == 2
    assert '<div class="arithmatex" tabindex="0" role="group" aria-label="Formula">' in html
    # The search index keeps the TeX (indexed before the hook runs), not KaTeX's markup.
    index = (tmp_path / "site" / "search" / "search_index.json").read_text("utf-8")
    assert "katex" not in index and "a_{1}" in index


def test_a_bad_formula_fails_the_mkdocs_build(tmp_path: Path, katex_js: Path) -> None:
    page = "# T\n\nFine $x$, broken $\\frac{a$.\n"
    with pytest.raises(MathError, match=r"index\.md: KaTeX cannot typeset '\\\\frac\{a'"):
        _mkdocs_build(_mkdocs_project(tmp_path, katex_js, page))
    assert not (tmp_path / "site" / "index.html").exists()
