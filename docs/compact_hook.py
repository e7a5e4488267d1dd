"""MkDocs hook: compact the white space of every written page (site_gen.output.compact).

Listed after ``docs/math_hook.py`` in mkdocs.yml, so its ``on_post_page`` sees the page
with its formulas typeset; the search plugin has indexed the page before either runs.
"""

from __future__ import annotations

from typing import Any

from site_gen.output.compact import compact_html


def on_post_page(output: str, **_: Any) -> str:
    """The page with each white-space run that holds a line break made one line break."""
    return compact_html(output)
