"""MkDocs hook: typeset every page's math with KaTeX at build time (site_gen.output.mathrender).

``on_post_page`` runs after the search plugin has indexed the page, so the search index
keeps the TeX text while the written HTML carries KaTeX's output. One node process
serves the whole build and ends in ``on_post_build`` (or when the build fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from site_gen.output.mathrender import PageMath

_MATH = PageMath()


def on_config(config: Any, **_: Any) -> Any:
    """Point the renderer at the KaTeX the build installed into the docs."""
    _MATH.close()
    _MATH.katex_js = Path(config["docs_dir"]) / "generated" / "katex" / "katex.min.js"
    return config


def on_post_page(output: str, page: Any, **_: Any) -> str:
    """The page with its formulas typeset (a KaTeX error fails the build)."""
    return _MATH.typeset(output, page.file.src_uri)


def on_post_build(**_: Any) -> None:
    """End the node process."""
    _MATH.close()


def on_build_error(**_: Any) -> None:
    """End the node process of a failed build too."""
    _MATH.close()
