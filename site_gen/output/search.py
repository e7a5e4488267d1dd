"""Material's search index, made with the same parser on faster bookkeeping and tokenizing.

mkdocs-material's search plugin splits every page's HTML into sections with an
``html.parser`` subclass (``material.plugins.search.plugin.Parser``). On every tag and
every piece of text that parser asks whether the open elements include a skipped one
(``skip.intersection(context)``: a set of ``Element`` against the list of open ones)
and whether the section's heading is open (``el in context``). ``Element`` compares and
hashes by its tag alone, so each question compares every open element: on this site's
pages, a third of the index's time and about 15 million ``Element.__eq__`` calls per
build.

:class:`QuickParser` is Material's parser, every method its own, with the two
collections replaced by ones that answer the same questions from a count of the open
tags: :class:`OpenElements` (the list of open elements, with a count per tag) and
:class:`SkippedTags` (the skip set, as the tags it holds: a set of ``Element`` holds one
per tag, since they compare by tag). The sections, and so ``search_index.json``, are the
same (``tests/test_search.py`` checks it on the site's pages and on generated HTML).

Material's parser is an ``html.parser.HTMLParser``, whose tokenizer is Python code run
per tag and per attribute: about a third of the index's time. On HTML made only of text
and well-formed tags (quoted or no attribute values, nothing the tokenizer treats
specially: no comment, declaration, raw ``<``, ``script`` or ``style``), which is what
Python-Markdown writes, :meth:`QuickParser.feed` finds every token with one regular
expression and calls the same handlers with the same arguments, in the same order, that
``HTMLParser`` would; any other HTML, in whole, goes through ``HTMLParser``
(:func:`plain_tokens` says which). With another ``html.parser`` than the one this was
written against (:data:`KNOWN_TOKENIZER`, the digest of the module's source), every
page goes through ``HTMLParser``.

The whole module holds for the Material it was written against: :data:`KNOWN_SOURCE` is
the digest of Material's ``Parser``, ``Element`` and
``SearchIndex.add_entry_from_context``. With any other Material the search index is
left as Material makes it.
"""

from __future__ import annotations

import functools
import hashlib
import html.parser
import inspect
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from material.plugins.search.plugin import Element, Parser, SearchIndex

#: sha256 (first 12 hex digits) of the source of Material's ``Parser``, ``Element`` and
#: ``SearchIndex.add_entry_from_context`` this module was written against (9.8.2).
KNOWN_SOURCE = "3b0483bed94b"
#: sha256 (first 12 hex digits) of the source of the ``html.parser`` module whose
#: tokenizing :meth:`QuickParser.feed` reproduces on plain HTML (CPython 3.11.7's).
KNOWN_TOKENIZER = "2fc512ae95be"
#: White space as ``HTMLParser`` ends a tag name at (no other: a vertical tab, say, is part
#: of a name there).
_WS = r"[ \t\n\r\f]"
#: One attribute: a name (without what the tokenizer treats apart), then maybe ``=`` and
#: a quoted value; as two groups (:data:`_ATTRIBUTES`) or none (inside :data:`_TOKEN`).
_NAME, _VALUE = r"""[^\s"'<>/=`]+""", r"""(?:"[^"]*"|'[^']*')"""
_ATTRIBUTES = re.compile(rf"{_WS}+({_NAME})(?:{_WS}*={_WS}*({_VALUE}))?")
_ANY_ATTRIBUTES = rf"(?:{_WS}+{_NAME}(?:{_WS}*={_WS}*{_VALUE})?)*"
#: A run of text, a start tag (name, attributes, "/" of a self-closing one) or an end tag.
_TOKEN = re.compile(
    rf"([^<]+)"
    rf"|<([a-zA-Z][-.a-zA-Z0-9:_]*)({_ANY_ATTRIBUTES}){_WS}*(/?)>"
    rf"|</([a-zA-Z][-.a-zA-Z0-9:_]*){_WS}*>"
)
#: Elements whose content ``HTMLParser`` reads as raw text (the known one's: ``script`` and
#: ``style``): left to it.
_RAW_TEXT = frozenset(html.parser.HTMLParser.CDATA_CONTENT_ELEMENTS)


def source_digest() -> str:
    """The digest :data:`KNOWN_SOURCE` is compared with, of the installed Material."""
    return _digest(
        inspect.getsource(Parser)
        + inspect.getsource(SearchIndex.add_entry_from_context)
        + inspect.getsource(Element)
    )


def _digest(source: str) -> str:
    """The first 12 hex digits of the sha256 of ``source``: the known digests' form."""
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def _tag(item: Element | str) -> str:
    """What an ``Element`` compares by (its tag); a tag name as it is."""
    return item.tag if isinstance(item, Element) else item


class OpenElements(list):
    """The parser's open elements (a list, in document order) with a count of each tag,
    so that ``x in open`` (an ``Element`` or a tag name: equal by tag) is one lookup."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()  # only tags that are open: counts above 0

    def append(self, element: Element) -> None:
        """Open ``element``."""
        super().append(element)
        self.tags[element.tag] += 1

    def pop(self, index: int = -1) -> Element:
        """Close the last element (the parser only closes the innermost)."""
        element = super().pop(index)
        left = self.tags[element.tag] - 1
        if left:
            self.tags[element.tag] = left
        else:
            del self.tags[element.tag]
        return element

    def __contains__(self, item: object) -> bool:
        return _tag(item) in self.tags  # type: ignore[arg-type]

    def _unsupported(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("OpenElements keeps its tag counts through append and pop only")

    insert = extend = remove = clear = __setitem__ = __delitem__ = __iadd__ = _unsupported  # type: ignore[assignment]


class SkippedTags:
    """The parser's skip set as the tags it holds: Material's set holds ``Element``s and
    tag names, which compare and hash by tag, so it never holds two of one tag."""

    def __init__(self, items: Iterable[Element | str]) -> None:
        self.tags = {_tag(item) for item in items}

    def add(self, item: Element | str) -> None:
        """Skip ``item``'s tag."""
        self.tags.add(_tag(item))

    def remove(self, item: Element | str) -> None:
        """Stop skipping ``item``'s tag (KeyError if it is not skipped, as a set's)."""
        self.tags.remove(_tag(item))

    def __contains__(self, item: object) -> bool:
        return _tag(item) in self.tags  # type: ignore[arg-type]

    def intersection(self, open_elements: OpenElements) -> set[str]:
        """The skipped tags that are open (Material's parser tests only whether any is)."""
        return self.tags.intersection(open_elements.tags)


@functools.lru_cache(maxsize=1)
def _known_tokenizer() -> bool:
    """Whether the installed ``html.parser`` is the one :meth:`QuickParser.feed` mimics."""
    return _digest(inspect.getsource(html.parser)) == KNOWN_TOKENIZER


def plain_tokens(page_html: str) -> list[re.Match[str]] | None:
    """``page_html``'s tokens (matches of text, start and end tags, in order) when it is
    plain HTML, as the module's notes say; None when ``HTMLParser`` must read it."""
    if not _known_tokenizer():
        return None
    tokens, position = [], 0
    for token in _TOKEN.finditer(page_html):
        if token.start() != position:
            return None  # a "<" that starts no plain tag
        if token[2] is not None and token[2].lower() in _RAW_TEXT:
            return None
        tokens.append(token)
        position = token.end()
    return tokens if position == len(page_html) else None


def _attributes(text: str) -> list[tuple[str, str | None]]:
    """A tag's attributes as ``HTMLParser`` gives them: names in lower case, values
    unquoted and unescaped, None for a name without a value."""
    found = []
    for name, value in _ATTRIBUTES.findall(text):
        unquoted = html.unescape(value[1:-1]) if value else None
        found.append((name.lower(), unquoted))
    return found


class QuickParser(Parser):
    """Material's search parser with :class:`OpenElements` and :class:`SkippedTags`, and
    plain HTML tokenized by one regular expression (:meth:`feed`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skip = SkippedTags(self.skip)
        self.context = OpenElements()

    def feed(self, data: str) -> None:
        """``HTMLParser.feed``; when ``data`` is the whole input (nothing fed before) and
        plain HTML, its tokens go to the same handlers without ``HTMLParser``'s tokenizer
        (``close`` then has nothing left to do)."""
        tokens = None if self.rawdata else plain_tokens(data)
        if tokens is None:
            super().feed(data)
            return
        for text, tag, attributes, closed, end in (t.groups() for t in tokens):
            if text is not None:
                self.handle_data(html.unescape(text))
            elif end is not None:
                self.handle_endtag(end.lower())
            elif closed:
                self.handle_startendtag(tag.lower(), _attributes(attributes))
            else:
                self.handle_starttag(tag.lower(), _attributes(attributes))


class QuickSearchIndex(SearchIndex):
    """Material's search index, each page parsed by :class:`QuickParser`."""

    def add_entry_from_context(self, page: Any) -> None:
        """Material's own method but for the parser class: a page excluded by its front
        matter adds nothing; every section not excluded becomes an entry."""
        search = page.meta.get("search") or {}
        if search.get("exclude"):
            return
        parser = QuickParser()
        parser.feed(page.content)
        parser.close()
        for section in parser.data:
            if not section.is_excluded():
                self.create_entry_for_section(section, page.toc, page.url, page)


def install(plugins: Any) -> bool:
    """Give Material's search plugin in ``plugins`` (mkdocs' plugin collection, after
    the plugin's ``on_config``) a :class:`QuickSearchIndex`; True if it did. Nothing is
    changed without the plugin, before its index exists, or with another Material."""
    plugin = next((p for name, p in plugins.items() if name in ("material/search", "search")), None)
    index = getattr(plugin, "search_index", None)
    if type(index) is not SearchIndex or source_digest() != KNOWN_SOURCE:
        return False
    quick = QuickSearchIndex(**index.config)
    quick.entries = index.entries
    plugin.search_index = quick
    return True
