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

A page with a mkdocstrings block (``::: roofline``, the API page) has its body keyed by
the sources of the packages it documents besides (:mod:`site_gen.output.api_docs`), and
keeps what rendering it registered: mkdocstrings' inventory entries (``objects.inv``) and
the anchors autorefs resolves, registered again, in the same order, when it is restored.
Its HTML (step 2) is made on every build.

Anchor validation still runs over every page (from the stored anchors), and results are
stored only after the whole mkdocs run succeeded: a page that warned (a strict-mode
failure) is never cached. Static files from ``docs/generated`` are hard-linked into the
site instead of copied (:func:`link_static`).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import InclusionLevel
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc

from site_gen.cache import BuildCache, digest, files_digest, tool_versions
from site_gen.keys import build_date, code_closure_digest
from site_gen.output import api_docs, page_parts
from site_gen.split import Split

KIND = "pages"
#: Entries kept per page of a build: this build's and one earlier version (older ones are
#: pruned, oldest first).
KEEP_PER_PAGE = 2
#: zlib level of the stored HTML (a page is mostly navigation: it shrinks about tenfold).
HTML_COMPRESSION = 1


class PageCache(BasePlugin):
    """The mkdocs plugin (registered by :func:`installed`, not by mkdocs.yml)."""

    def __init__(self, cache: BuildCache, generated: Path, helpers: int = 0) -> None:
        super().__init__()
        self.cache = cache
        #: Forked processes that make pages beside this one (site_gen.split).
        self.helpers = helpers
        self._split: Split | None = None
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
        made: set[str] = set()  # folders made in the site by the links below
        for file in files:
            source = file.abs_src_path
            if (
                not file.is_documentation_page()
                and source is not None
                and Path(source).is_relative_to(self.generated)  # a file under it
            ):
                file.copy_file = functools.partial(page_parts.link_static, file, made=made)
        return files

    def on_nav(self, nav: Any, config: Any, files: Any) -> Any:
        """Every page's inputs are known: fork the helpers that make bodies (step 1)."""
        if self.helpers:
            pages = files.documentation_pages(inclusion=InclusionLevel.is_included)
            work = functools.partial(self._body_in_helper, config=config, files=files)
            self._split = Split([f.src_uri for f in pages], work, self.helpers)
        return nav

    def on_pre_page(self, page: Any, config: Any, files: Any) -> Any:
        """Route the page's Markdown rendering through the cache."""
        page.render = functools.partial(self._render, page, page.render)
        return page

    def on_env(self, env: Any, config: Any, files: Any) -> Any:
        """Every body is made: the helpers of step 1 are done."""
        self.close()
        return env

    # -- step 1: the body ------------------------------------------------------------

    def _body_key(self, page: Any, snippets: list[tuple[str, str]]) -> str:
        return digest(
            "body",
            self._global,
            self._files_key,
            page.file.src_uri,
            page.url,
            page.markdown,
            page.meta,
            snippets,
        )

    def _render(self, page: Any, render: Any, config: Any, files: Any) -> None:
        theirs = self._theirs(page)
        snippets = self._cacheable(page, config)
        if snippets is None:
            render(config, files)
            return
        key = self._body_key(page, snippets)
        stored = self._get(key)
        made = stored is None and theirs and (self._split.result(page.file.src_uri) or {}).get(key)
        if made and self._restore_body(page, made, files, config):
            self._keep(key, made)
            return
        if stored is not None and self._restore_body(page, stored, files, config):
            return
        with api_docs.recording(config) as registered:
            render(config, files)
        self._keep(key, self._body(page, files, registered))

    @staticmethod
    def _cacheable(page: Any, config: Any) -> list[tuple[str, str]] | None:
        """What keys a page's body besides its Markdown: the files it includes, and for a
        mkdocstrings block (``::: roofline``) the sources it documents; None when the
        page cannot be keyed (its body is then made every time)."""
        snippets = page_parts.snippets(page.markdown, config)
        if snippets is None or not page_parts.API_BLOCK.search(page.markdown):
            return snippets
        sources = api_docs.sources_key(page.markdown)
        return None if sources is None else [*snippets, ("mkdocstrings", sources)]

    @staticmethod
    def _body(page: Any, files: Any, registered: list[Any] | None = None) -> dict[str, Any]:
        """What step 1 made of ``page``, as it is stored; ``registered``: what a
        mkdocstrings block registered with autorefs and the inventory meanwhile."""
        links = page.links_to_anchors
        return {
            "content": page.content,
            "toc": page_parts.toc_data(page.toc),
            "title": page._title_from_render,
            "anchors": sorted(page.present_anchor_ids or ()),
            "links": None if links is None else {f.src_uri: dict(v) for f, v in links.items()},
            "static": page_parts.static_targets(page, files),
            "registered": registered or [],
        }

    def _body_in_helper(self, src_uri: str, config: Any, files: Any) -> dict[str, Any]:
        """In a helper: step 1 of one page as mkdocs makes it (its plugins' events up to
        the Markdown), ``{key: body}``; nothing for a page the cache holds (this process
        finds it there) or one made every time."""
        file = files.get_file_from_path(src_uri)
        page = file.page if file.page is not None else Page(None, file, config)
        config._current_page = page
        page = config.plugins.on_pre_page(page, config=config, files=files)
        page.read_source(config)
        page.markdown = config.plugins.on_page_markdown(
            page.markdown, page=page, config=config, files=files
        )
        snippets = self._cacheable(page, config)
        if snippets is None:
            return {}
        key = self._body_key(page, snippets)
        if self.cache.holds(KIND, key):
            return {}
        with api_docs.recording(config) as registered:
            Page.render(page, config, files)  # mkdocs' own, not the cache's stand-in
        return {key: self._body(page, files, registered)}

    def _theirs(self, page: Any) -> bool:
        """Whether a helper makes ``page`` (else this process claims it)."""
        return self._split is not None and not self._split.mine(page.file.src_uri)

    @staticmethod
    def _restore_body(page: Any, stored: dict[str, Any], files: Any, config: Any) -> bool:
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
        api_docs.replay(config, page, stored.get("registered", []))
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
        index = page_parts.search_entries(config)
        if self._nav_key is None:  # every page has been read and rendered by now
            self._nav_key = digest(
                page_parts.nav_data(nav.items), nav.homepage and nav.homepage.url
            )
            if self.helpers and not dirty and index is not False:
                step = {"build": build, "config": config, "nav": nav, "env": env}
                step |= {"doc_files": doc_files, "index": index}
                pages = {f.src_uri: f.page for f in doc_files}
                work = functools.partial(self._html_in_helper, pages=pages, step=step)
                self._split = Split(list(pages), work, self.helpers)
        theirs = self._theirs(page)
        if excluded or dirty or index is False or page_parts.API_BLOCK.search(page.markdown or ""):
            build(page, config, doc_files, nav, env, dirty, excluded)
            return
        key = self._html_key(page)
        stored = self._get(key)
        if stored is None and theirs:
            stored = (self._split.result(page.file.src_uri) or {}).get(key)
            if stored is not None:
                self._keep(key, stored)
        if stored is None:
            self._keep(key, self._make_html(build, page, config, doc_files, nav, env, index))
            return
        dest = Path(page.file.abs_dest_path)
        if stored["html"] is not None:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zlib.decompress(stored["html"]))
        if index is not None:
            index.extend(copy.deepcopy(stored["search"]))

    def _html_key(self, page: Any) -> str:
        return digest(
            "html",
            self._global,
            self._files_key,
            self._nav_key,
            page.file.src_uri,
            page.url,
            page.title,
            page.content,
            page_parts.toc_data(page.toc),
            page.meta,
            page.canonical_url,
            page.edit_url,
            page.is_homepage,
        )

    @staticmethod
    def _make_html(
        build: Any, page: Any, config: Any, doc_files: Any, nav: Any, env: Any, index: Any
    ) -> dict[str, Any]:
        """mkdocs' step 2 for one page: the HTML it wrote and the search entries it added."""
        start = len(index) if index is not None else 0
        build(page, config, doc_files, nav, env)
        dest = Path(page.file.abs_dest_path)
        html = zlib.compress(dest.read_bytes(), HTML_COMPRESSION) if dest.is_file() else None
        search = copy.deepcopy(index[start:]) if index is not None else []
        return {"html": html, "search": search}

    def _html_in_helper(
        self, src_uri: str, pages: dict[str, Any], step: dict[str, Any]
    ) -> dict[str, Any]:
        """In a helper: step 2 of one page, ``{key: HTML and search entries}``; nothing for
        a page the cache holds (this process finds it there) or one made every time."""
        page = pages[src_uri]
        if page.file.inclusion.is_excluded() or page_parts.API_BLOCK.search(page.markdown or ""):
            return {}
        key = self._html_key(page)
        if self.cache.holds(KIND, key):
            return {}
        return {key: self._make_html(page=page, **step)}

    def close(self) -> None:
        """End the helpers of the step that is running, if any."""
        if self._split is not None:
            self._split.close()
            self._split = None

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


@contextlib.contextmanager
def installed(
    config: Any, cache: BuildCache, generated: Path, helpers: int = 0
) -> Iterator[PageCache]:
    """Register a :class:`PageCache` on a loaded mkdocs config for one ``build``, with
    ``helpers`` forked processes making the pages it does not hold beside this one.

    mkdocs offers no event around a page's template rendering, so
    ``mkdocs.commands.build._build_page`` is wrapped for the duration of the block (and
    restored after it); without that function (another mkdocs) only step 1 is cached.
    """
    from mkdocs.commands import build as mkdocs_build

    plugin = PageCache(cache, generated, helpers)
    config.plugins["roofline-page-cache"] = plugin
    original = getattr(mkdocs_build, "_build_page", None)
    if original is not None:
        mkdocs_build._build_page = functools.partial(plugin.build_page, original)
    try:
        yield plugin
    finally:
        plugin.close()
        if original is not None:
            mkdocs_build._build_page = original
