"""Static reference site generator for Roofline Atlas.

The pipeline reads from the module names: ``gather`` (evaluate every GPU x mode x recipe
once, vectorized) -> ``pages`` (one module per page kind: typed inputs to Markdown, CSV,
JSON and chart jobs, through ``render`` and the templates, every string escaped by
``safe``) -> ``charts``/``plots`` (SVG) -> ``write`` (private staging folders, the swap)
-> ``mkdocs`` (``build.run_mkdocs`` with the page cache ``mkdocs_cache`` and build-time
math ``mathrender``). ``guard`` refuses site folders the build must not replace;
``cache`` and ``keys`` make rebuilds incremental. Entry point:
:func:`site_gen.build.build_site` (``roofline build``).
"""

from __future__ import annotations
