"""What the page cache (:mod:`site_gen.output.mkdocs_cache`) reads off mkdocs' objects:
tables of contents and the navigation as plain data, the files a page includes or links,
the search plugin's index; and the hard link that stands in for copying a generated file.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import os
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mkdocs.structure.toc import TableOfContents

#: What every pymdownx.snippets line holds; a line of the plain form names one file.
SNIPPET_MARK = "-8<-"
SNIPPET_LINE = re.compile(r"-+8<-+\s+(['\"])([\w./-]+)\1")
#: A mkdocstrings block: ``::: identifier`` at the start of a line.
API_BLOCK = re.compile(r"^:::\s+\S", re.MULTILINE)


def toc_data(toc: TableOfContents | None) -> list[dict[str, Any]] | None:
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


def nav_data(items: list[Any]) -> list[Any]:
    """Everything a page's navigation shows: kinds, titles, URLs, front matter, order."""
    data: list[Any] = []
    for item in items:
        kind = type(item).__name__
        entry = [kind, item.title, getattr(item, "url", None), getattr(item, "meta", None)]
        if item.children:
            entry.append(nav_data(item.children))
        data.append(entry)
    return data


def link_static(file: Any, dirty: bool = False, made: set[str] | None = None) -> None:
    """``File.copy_file`` for a generated static file: a hard link, else a copy;
    ``made``: the folders this build has made so far (one set per build), so a folder of
    many charts is made once, not asked for again per file (three system calls each)."""
    del dirty  # the build is never dirty
    dest = file.abs_dest_path
    folder = os.path.dirname(dest)
    if made is None or folder not in made:
        os.makedirs(folder, exist_ok=True)
        if made is not None:
            made.add(folder)
    try:
        os.link(file.abs_src_path, dest)
    except OSError:  # another file system, links not allowed, or already there
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dest)
        shutil.copyfile(file.abs_src_path, dest)


#: A relative link or image source in a page's body (no scheme, no leading slash).
_RELATIVE_TARGET = re.compile(r'(?:href|src)="(?![a-zA-Z][a-zA-Z0-9+.-]*:|/)([^"#?]+)[^"]*"')


def static_targets(page: Any, files: Any) -> list[str]:
    """The static files (not pages) the rendered body of ``page`` links to or shows."""
    folder = posixpath.dirname(page.file.dest_uri)
    found = set()
    for target in _RELATIVE_TARGET.findall(page.content or ""):
        path = posixpath.normpath(posixpath.join(folder, unquote(html.unescape(target))))
        file = files.get_file_from_path(path)
        if file is not None and not file.is_documentation_page():
            found.add(path)
    return sorted(found)


def snippets(markdown: str, config: Any) -> list[tuple[str, str]] | None:
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


def search_entries(config: Any) -> list[Any] | bool | None:
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
