"""MkDocs hooks: expand the GPUs and Recipes sections from the generated nav.

``roofline build`` writes ``docs/generated/nav.json`` (one entry per GPU, with its
training and inference recipe pages, and one per recipe). This hook swaps it into the
``nav`` of ``mkdocs.yml``, so ``mkdocs serve`` shows the same navigation as the build.

A page the navigation leaves out on purpose (``not_in_nav``: a GPU's recipe and grouped
pages, a model's page per GPU) is shown as under its nearest page that the navigation
lists, the folder's ``index.md`` above it (the GPU page, the model page): while it is
rendered, that page is marked active, so the sidebar shows its section and the tab of
its part of the site is highlighted, as on the page it was reached from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

from site_gen.output import search
from site_gen.output.inline import QuickInline

NAV_FILE = Path(__file__).parent / "generated" / "nav.json"
#: A team's own pages (``roofline build --docs-dir DIR`` copies them here).
TEAM_DIR = Path(__file__).parent / "team"
TEAM_TITLE = "Team pages"


# Last of the on_config handlers: the search plugin's own makes the index replaced here.
@event_priority(-100)
def on_config(config: Any, **_: Any) -> Any:
    """Replace the GPUs and Recipes placeholders with the generated sections; skip the
    inline Markdown step where it cannot change the text (site_gen.output.inline); make
    the search index with faster bookkeeping (site_gen.output.search)."""
    config["markdown_extensions"].append(QuickInline())
    search.install(config["plugins"])
    if not NAV_FILE.is_file():
        raise SystemExit(f"{NAV_FILE} is missing: run `roofline build` once to generate the pages")
    generated = json.loads(NAV_FILE.read_text("utf-8"))
    nav = []
    for entry in config["nav"]:
        title = next(iter(entry)) if isinstance(entry, dict) else None
        nav.append({title: generated[title]} if title in generated else entry)
    team = _team_pages()
    if team:
        nav.append({TEAM_TITLE: team})
    config["nav"] = nav
    return config


#: A Sphinx role left in a docstring as mkdocstrings renders it: ``:class:`~a.b.C```.
ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def on_page_content(html: str, page: Any, **_: Any) -> str:
    """On the API page, show Sphinx roles of the docstrings as code (``~`` keeps the last
    name, as Sphinx does)."""
    if ":::" not in page.markdown:
        return html
    return ROLE.sub(lambda m: f"<code>{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}</code>", html)


def on_files(files: Any, config: Any, **_: Any) -> Any:
    """Leave out the theme's source maps (``*.map``, 1.3 MB that only a debugger of
    mkdocs-material's own minified scripts reads; no page loads them). Maps of the docs
    themselves are kept."""
    theme_dirs = [Path(d).resolve() for d in config["theme"].dirs]
    # Only a map's path is resolved: resolving each of the site's ~15,000 files took a
    # second of every build.
    for file in [f for f in files if f.src_uri.endswith(".map")]:
        source = Path(file.abs_src_path or "").resolve()
        if any(source.is_relative_to(d) for d in theme_dirs):
            files.remove(file)
    return files


def _nav_parent(page: Any, nav: Any) -> Any:
    """The nearest listed page above ``page`` (None when it is listed or none is)."""
    if page in nav.pages:
        return None
    listed = {p.file.src_uri: p for p in nav.pages}
    parts = page.file.src_uri.split("/")[:-1]
    if page.file.name == "index":  # a folder's own index: look from the folder above
        parts = parts[:-1]
    while parts:
        found = listed.get("/".join([*parts, "index.md"]))
        if found is not None:
            return found
        parts = parts[:-1]
    return None


_ACTIVE: list[Any] = []


def on_page_context(context: Any, page: Any, nav: Any, **_: Any) -> Any:
    """Mark the nearest listed page above an unlisted one active while it renders."""
    parent = _nav_parent(page, nav)
    if parent is not None:
        parent.active = True
        _ACTIVE.append(parent)
    return context


def on_post_page(output: str, **_: Any) -> str:
    """Undo :func:`on_page_context`'s mark: the nav objects are shared by every page."""
    while _ACTIVE:
        _ACTIVE.pop().active = False
    return output


def _team_pages() -> list[str]:
    """The team's Markdown pages, index.md first, then by path (titles from the pages)."""
    if not TEAM_DIR.is_dir():
        return []
    pages = sorted(p.relative_to(TEAM_DIR.parent).as_posix() for p in TEAM_DIR.rglob("*.md"))
    first = f"{TEAM_DIR.name}/index.md"
    return sorted(pages, key=lambda p: p != first)
