"""Page-level cache for ``mkdocs build``: a page whose inputs are unchanged is not re-made.

mkdocs makes each page in two steps, and :class:`PageCache` keeps the result of each in
the build cache (kind ``pages``, checksummed like every entry):

1. **body** (``Page.render``: Markdown to HTML, table of contents, anchors, links to
   other pages' anchors), keyed by the page's Markdown and front matter, its path and
   URL, every file's path and URL (links resolve against them), ``mkdocs.yml``, the
   hooks, the generator's and model's code and the tool versions, and by the bytes of
   each file it includes with ``--8<-- "file"``; a page that includes files in any other
   way (block form, nested snippets) has its body made every time.
2. **HTML** (theme template, the search plugin's index entries, every ``on_page_context``
   and ``on_post_page`` handler, such as the math typesetting hook), keyed by the body,
   the title, the front matter, the whole navigation (titles, URLs and front matter of
   every page, which each page's nav and previous/next links show) and the same global
   inputs. A hit writes the stored HTML and adds the stored index entries, in the same
   order a full run would, so the site is byte-identical. Per-page handlers are
   therefore assumed to be functions of the page (hooks that count or collect across
   pages would miss the cached ones).

A page with a mkdocstrings block (``::: roofline``, the API page) is made in full on every
build, both steps: rendering it fills mkdocstrings' inventory (``objects.inv``) and the
anchors autorefs resolves, which restoring it would leave out.

Anchor validation still runs over every page (from the stored anchors), and results are
stored only after the whole mkdocs run succeeded: a page that warned (a strict-mode
failure) is never cached. Static files from ``docs/generated`` are hard-linked into the
site instead of copied (:func:`link_static`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import html
import os
import posixpath
import re
import shutil
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mkdocs.plugins import BasePlugin
from mkdocs.structure.toc import TableOfContents, get_toc

from site_gen.cache import BuildCache, digest, files_digest, tool_versions
from site_gen.keys import build_date, code_closure_digest

KIND = "pages"
#: Entries kept per page of a build: this build's and one earlier version (older ones are
#: pruned, oldest first).
KEEP_PER_PAGE = 2
#: zlib level of the stored HTML (a page is mostly navigation: it shrinks about tenfold).
HTML_COMPRESSION = 1
#: What every pymdownx.snippets line holds; a line of the plain form names one file.
SNIPPET_MARK = "-8<-"
SNIPPET_LINE = re.compile(r"-+8<-+\s+(['\"])([\w./-]+)\1")
#: A mkdocstrings block: ``::: identifier`` at the start of a line.
API_BLOCK = re.compile(r"^:::\s+\S", re.MULTILINE)


def _toc_data(toc: TableOfContents | None) -> list[dict[str, Any]] | None:
    """The table of contents as the tokens :func:`mkdocs.structure.toc.get_toc` reads."""
    if toc is None:
        return None

    def token(link: Any) -> dict[str, Any]:
        return {
            "level": link.level,
            "id": link.id,
            "name": link.title,
            "children": [token(child) for child in link.children],
        }

    return [token(link) for link in toc]


def _nav_data(items: list[Any]) -> list[Any]:
    """Everything a page's navigation shows: kinds, titles, URLs, front matter, order."""
    data: list[Any] = []
    for item in items:
        kind = type(item).__name__
        entry = [kind, item.title, getattr(item, "url", None), getattr(item, "meta", None)]
        if item.children:
            entry.append(_nav_data(item.children))
        data.append(entry)
    return data


def link_static(file: Any, dirty: bool = False) -> None:
    """``File.copy_file`` for a generated static file: a hard link, else a copy."""
    del dirty  # the build is never dirty
    dest = file.abs_dest_path
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    try:
        os.link(file.abs_src_path, dest)
    except OSError:  # another file system, links not allowed, or already there
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dest)
        shutil.copyfile(file.abs_src_path, dest)


class PageCache(BasePlugin):
    """The mkdocs plugin (registered by :func:`installed`, not by mkdocs.yml)."""

    def __init__(self, cache: BuildCache, generated: Path) -> None:
        super().__init__()
        self.cache = cache
        self.generated = generated.resolve()
        self.pending: list[tuple[str, Any]] = []
        self.used: list[str] = []
        self._global = ""
        self._files_key = ""
        self._nav_key: str | None = None

    # -- keys ------------------------------------------------------------------------

    def on_config(self, config: Any) -> Any:
        """The inputs every page shares."""
        # The page templates of the pinned theme do not show the build date; if a theme
        # does, the date is an input of every page.
        dated = any(
            "build_date" in p.read_text("utf-8", "replace")
            for folder in config.theme.dirs
            for p in Path(folder).rglob("*.html")
        )
        # Our code mkdocs runs: the hooks, what they import, and this module.
        code = code_closure_digest(
            [Path(m.__file__) for m in config.hooks.values()] + [Path(__file__)]
        )
        # Installed themes are named by the tool versions; a theme folder of the project
        # (``custom_dir``) by its files.
        custom = [
            Path(d)
            for d in config.theme.dirs
            if not {"site-packages", "dist-packages"} & set(Path(d).resolve().parts)
        ]
        themes = [files_digest([p for p in d.rglob("*") if p.is_file()], d) for d in custom]
        self._global = digest(
            KIND,
            Path(config.config_file_path).read_text("utf-8"),
            code,
            themes,
            tool_versions(),
            sys.version,
            config.site_url or "",
            build_date() if dated else "",
        )
        return config

    def on_files(self, files: Any, config: Any) -> Any:
        """Key the list of pages (links resolve against it); link generated static files.

        Static files (charts, CSV, JSON) are not in the key: a build that adds or removes
        one export (the Changes page's, say) would otherwise miss every page. A body
        records the static files it links to instead, and is reused only while each of
        them is still there (:meth:`_restore_body`).
        """
        self._files_key = digest(
            sorted(
                (f.src_uri, f.dest_uri, f.url, str(f.inclusion))
                for f in files
                if f.is_documentation_page()
            )
        )
        for file in files:
            source = file.abs_src_path
            if (
                not file.is_documentation_page()
                and source is not None
                and self.generated in Path(source).parents
            ):
                file.copy_file = functools.partial(link_static, file)
        return files

    def on_pre_page(self, page: Any, config: Any, files: Any) -> Any:
        """Route the page's Markdown rendering through the cache."""
        page.render = functools.partial(self._render, page, page.render)
        return page

    # -- step 1: the body ------------------------------------------------------------

    def _render(self, page: Any, render: Any, config: Any, files: Any) -> None:
        snippets = _snippets(page.markdown, config)
        # A mkdocstrings block (``::: roofline``) is made every time: rendering it fills
        # mkdocstrings' inventory (objects.inv) and autorefs' anchors, which a restored
        # body would leave out.
        if snippets is None or API_BLOCK.search(page.markdown):
            render(config, files)
            return
        key = digest(
            "body",
            self._global,
            self._files_key,
            page.file.src_uri,
            page.url,
            page.markdown,
            page.meta,
            snippets,
        )
        stored = self._get(key)
        if stored is not None and self._restore_body(page, stored, files):
            return
        render(config, files)
        links = page.links_to_anchors
        self._keep(
            key,
            {
                "content": page.content,
                "toc": _toc_data(page.toc),
                "title": page._title_from_render,
                "anchors": sorted(page.present_anchor_ids or ()),
                "links": None if links is None else {f.src_uri: dict(v) for f, v in links.items()},
                "static": _static_targets(page, files),
            },
        )

    @staticmethod
    def _restore_body(page: Any, stored: dict[str, Any], files: Any) -> bool:
        static = stored.get("static")
        if static is None or any(files.get_file_from_path(path) is None for path in static):
            return False  # a static file it links to is gone: render (mkdocs warns)
        links = None
        if stored["links"] is not None:
            links = {files.get_file_from_path(uri): dict(v) for uri, v in stored["links"].items()}
            if None in links:
                return False  # a linked file is gone: not the same page after all
        page.content = stored["content"]
        page.toc = get_toc(stored["toc"] or [])
        page._title_from_render = stored["title"]
        page.present_anchor_ids = set(stored["anchors"])
        page.links_to_anchors = links
        return True

    # -- step 2: the HTML --------------------------------------------------------------

    def build_page(
        self,
        build: Any,
        page: Any,
        config: Any,
        doc_files: Any,
        nav: Any,
        env: Any,
        dirty: bool = False,
        excluded: bool = False,
    ) -> None:
        """Stands in for ``mkdocs.commands.build._build_page`` (see :func:`installed`)."""
        index = _search_entries(config)
        if excluded or dirty or index is False or API_BLOCK.search(page.markdown or ""):
            build(page, config, doc_files, nav, env, dirty, excluded)
            return
        if self._nav_key is None:  # every page has been read and rendered by now
            self._nav_key = digest(_nav_data(nav.items), nav.homepage and nav.homepage.url)
        key = digest(
            "html",
            self._global,
            self._files_key,
            self._nav_key,
            page.file.src_uri,
            page.url,
            page.title,
            page.content,
            _toc_data(page.toc),
            page.meta,
            page.canonical_url,
            page.edit_url,
            page.is_homepage,
        )
        stored = self._get(key)
        dest = Path(page.file.abs_dest_path)
        if stored is not None:
            if stored["html"] is not None:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(zlib.decompress(stored["html"]))
            if index is not None:
                index.extend(copy.deepcopy(stored["search"]))
            return
        start = len(index) if index is not None else 0
        build(page, config, doc_files, nav, env, dirty, excluded)
        html = zlib.compress(dest.read_bytes(), HTML_COMPRESSION) if dest.is_file() else None
        search = copy.deepcopy(index[start:]) if index is not None else []
        self._keep(key, {"html": html, "search": search})

    # -- storage -------------------------------------------------------------------------

    def _get(self, key: str) -> Any | None:
        stored = self.cache.get(KIND, key)
        self.used.append(key)
        return stored

    def _keep(self, key: str, value: Any) -> None:
        self.pending.append((key, value))

    def flush(self) -> None:
        """Store the pages made by a run that succeeded; prune old entries."""
        for key, value in self.pending:
            self.cache.put(KIND, key, value)
        self.pending.clear()
        self.cache.prune(KIND, keep=KEEP_PER_PAGE * len(self.used), protect=set(self.used))


#: A relative link or image source in a page's body (no scheme, no leading slash).
_RELATIVE_TARGET = re.compile(r'(?:href|src)="(?![a-zA-Z][a-zA-Z0-9+.-]*:|/)([^"#?]+)[^"]*"')


def _static_targets(page: Any, files: Any) -> list[str]:
    """The static files (not pages) the rendered body of ``page`` links to or shows."""
    folder = posixpath.dirname(page.file.dest_uri)
    found = set()
    for target in _RELATIVE_TARGET.findall(page.content or ""):
        path = posixpath.normpath(posixpath.join(folder, unquote(html.unescape(target))))
        file = files.get_file_from_path(path)
        if file is not None and not file.is_documentation_page():
            found.add(path)
    return sorted(found)


def _snippets(markdown: str, config: Any) -> list[tuple[str, str]] | None:
    """``(path, sha256)`` of each file the page includes with pymdownx.snippets; None when
    the page cannot be keyed by them (a line not of the plain ``--8<-- "file"`` form, a
    snippet that includes more, another base path), so its body is always rendered."""
    found: list[tuple[str, str]] = []
    if SNIPPET_MARK not in markdown:
        return found
    docs = config.docs_dir
    if config.mdx_configs.get("pymdownx.snippets", {}).get("base_path") != [docs]:
        return None
    for line in markdown.splitlines():
        if SNIPPET_MARK not in line:
            continue
        match = SNIPPET_LINE.fullmatch(line.strip())
        if match is None or ".." in match.group(2).split("/"):
            return None
        try:
            data = (Path(docs) / match.group(2)).read_bytes()
        except OSError:
            return None
        if SNIPPET_MARK.encode() in data:
            return None
        found.append((match.group(2), hashlib.sha256(data).hexdigest()))
    return found


def _search_entries(config: Any) -> list[Any] | bool | None:
    """The search plugin's index entries (a list); None without search; False when a
    search plugin is there but not one whose per-page work the cache knows how to redo."""
    for name, plugin in config.plugins.items():
        if "search" not in name:
            continue
        if not getattr(plugin, "config", {}).get("enabled", True):
            continue
        index = getattr(getattr(plugin, "search_index", None), "entries", None)
        if type(plugin).__module__.startswith("material.plugins.search") and isinstance(
            index, list
        ):
            return index
        return False
    return None


@contextlib.contextmanager
def installed(config: Any, cache: BuildCache, generated: Path) -> Iterator[PageCache]:
    """Register a :class:`PageCache` on a loaded mkdocs config for one ``build``.

    mkdocs offers no event around a page's template rendering, so
    ``mkdocs.commands.build._build_page`` is wrapped for the duration of the block (and
    restored after it); without that function (another mkdocs) only step 1 is cached.
    """
    from mkdocs.commands import build as mkdocs_build

    plugin = PageCache(cache, generated)
    config.plugins["roofline-page-cache"] = plugin
    original = getattr(mkdocs_build, "_build_page", None)
    if original is not None:
        mkdocs_build._build_page = functools.partial(plugin.build_page, original)
    try:
        yield plugin
    finally:
        if original is not None:
            mkdocs_build._build_page = original
