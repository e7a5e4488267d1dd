"""White-space compaction of the written HTML (site_gen/output/compact.py, docs/compact_hook.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from site_gen.output.compact import compact_html


def test_runs_with_a_line_break_become_one_line_break() -> None:
    page = "<ul>\n    \n  <li>\n\n      <a>x</a>  y\n</li>\n</ul>"
    assert compact_html(page) == "<ul>\n<li>\n<a>x</a>  y\n</li>\n</ul>"


def test_verbatim_elements_keep_their_white_space() -> None:
    kept = [
        "<pre><code>a\n\n    b</code></pre>",
        '<textarea id="t">\n\n  x</textarea>',
        "<script>\n  var a = 1;\n\n</script>",
        "<style>\n\n  p { }</style>",
        "<code>a\n   b</code>",
    ]
    for element in kept:
        assert (
            compact_html(f"<p>\n\n  </p>{element}<p>\n  x</p>") == f"<p>\n</p>{element}<p>\nx</p>"
        )


@given(st.text(alphabet=" \t\n<>/abpre", max_size=60))
def test_compacting_is_idempotent_and_only_removes_white_space(page: str) -> None:
    once = compact_html(page)
    assert compact_html(once) == once
    assert once.split() == page.split() or "".join(once.split()) == "".join(page.split())


def test_attribute_values_keep_their_line_breaks() -> None:
    button = '<button data-latex="[cite](x)\n\n$$\nT = x\n$$\n" title="a\n  b">Cite</button>'
    assert compact_html(f"<div>\n\n  {button}\n\n</div>") == f"<div>\n{button}\n</div>"
