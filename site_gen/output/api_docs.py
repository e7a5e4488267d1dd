"""What the page cache needs of a mkdocstrings page (``::: roofline``, the API page).

Rendering such a page does more than make its body: mkdocstrings registers each
documented object with the autorefs plugin (the anchors cross-references resolve to)
and with its own inventory (``objects.inv``), and marks its handler used (a used
handler's style sheet is written, and its inventory by default). A body restored from
the cache must bring those registrations with it, so :func:`recording` keeps them, in
order, while the page renders, and :func:`replay` makes them again when the body is
restored: the site is then the one a full render makes (``tests/test_page_cache.py``
compares the bytes).

The body's key must follow what the page documents: :func:`sources_key` digests the
source files of every top-level package its blocks name (``::: roofline.calibrate``
names ``roofline``), found where Python imports them from, which is where mkdocstrings'
collector finds them in this project's builds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from site_gen.cache import digest, files_digest

#: The identifier of each mkdocstrings block: ``::: package.module.name``.
_BLOCK_IDENTIFIER = re.compile(r"^:::\s+([A-Za-z_][\w.]*)", re.MULTILINE)
#: One registration: ("anchor", identifier, anchor, title, primary) with autorefs,
#: ("inventory", name, domain, role, uri, priority, dispname) with mkdocstrings, or
#: ("handler", name): a mkdocstrings handler the page used.
Registration = tuple[Any, ...]


def sources_key(markdown: str) -> str | None:
    """Digest of the sources the page's blocks document (every ``.py`` and ``.pyi`` file
    of each top-level package they name, found on the interpreter's path, which is the
    collector's in these builds); None when a block's package is not found as a package
    folder (the body is then made every time)."""
    names = sorted({ident.split(".")[0] for ident in _BLOCK_IDENTIFIER.findall(markdown)})
    if not names:
        return None
    parts = []
    for name in names:
        folder = _package_folder(name)
        if folder is None:
            return None
        files = [p for p in folder.rglob("*.py*") if p.suffix in (".py", ".pyi")]
        parts.append((name, str(folder), files_digest(files, folder)))
    return digest(parts)


def _package_folder(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(locations[0]) if len(locations) == 1 else None


def _plugins(config: Any) -> tuple[Any, Any] | None:
    """(autorefs plugin, mkdocstrings' handlers) of a build that has both, else None."""
    autorefs = config.plugins.get("autorefs")
    mkdocstrings = config.plugins.get("mkdocstrings")
    if autorefs is None or mkdocstrings is None:
        return None
    return autorefs, mkdocstrings.handlers


@contextlib.contextmanager
def recording(config: Any) -> Iterator[list[Registration]]:
    """Within the block, every anchor registered with autorefs and every inventory entry
    registered with mkdocstrings is made as usual and appended to the yielded list."""
    registered: list[Registration] = []
    plugins = _plugins(config)
    if plugins is None:
        yield registered
        return
    autorefs, handlers = plugins
    inventory = handlers.inventory
    register_anchor, register_item = autorefs.register_anchor, inventory.register

    def anchor(
        page: Any,
        identifier: str,
        anchor: str | None = None,
        *,
        title: str | None = None,
        primary: bool = True,
    ) -> None:
        registered.append(("anchor", identifier, anchor, title, primary))
        register_anchor(page, identifier, anchor, title=title, primary=primary)

    def item(
        name: str,
        domain: str,
        role: str,
        uri: str,
        priority: int = 1,
        dispname: str | None = None,
    ) -> None:
        registered.append(("inventory", name, domain, role, uri, priority, dispname))
        register_item(name, domain, role, uri, priority, dispname)

    # Instance attributes in front of the methods, removed after the block.
    autorefs.register_anchor, inventory.register = anchor, item
    try:
        yield registered
    finally:
        del autorefs.register_anchor, inventory.register
    # The handlers the page used: mkdocstrings writes their style sheet (and, by
    # default, the inventory) only for handlers a build has used.
    registered.extend(("handler", h.name) for h in handlers.seen_handlers)


def replay(config: Any, page: Any, registered: list[Registration]) -> None:
    """Make ``registered`` (from :func:`recording`) again for ``page``, in order."""
    if not registered:
        return
    plugins = _plugins(config)
    if plugins is None:
        raise RuntimeError("a page with registrations restored into a build without them")
    autorefs, handlers = plugins
    for kind, *args in registered:
        if kind == "anchor":
            identifier, anchor, title, primary = args
            autorefs.register_anchor(page, identifier, anchor, title=title, primary=primary)
        elif kind == "inventory":
            handlers.inventory.register(*args)
        else:
            handlers.get_handler(*args)  # used, as rendering the page would have
