"""Static reference site generator for Roofline Atlas.

The pipeline is ``gather`` (evaluate every GPU x mode x recipe once, vectorized) ->
``render`` (pure functions returning Markdown, SVG and CSV strings) -> ``write`` (one
function swaps the generated tree into ``docs/generated/``) -> ``mkdocs build --strict``.
Entry point: :func:`site_gen.build.build_site` (``roofline build``).
"""

from __future__ import annotations
