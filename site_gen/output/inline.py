"""Python-Markdown's inline step, skipped for text that no inline pattern can match.

Python-Markdown tries every inline pattern (code, math, links, HTML, entities, emphasis
...) on every piece of text, table cells included: on the site's pages that is about a
third of mkdocs' Markdown time, mostly spent on cells such as ``1.234`` in which no
pattern can start. Each pattern the site's extensions register needs one of a few
characters to match (a backtick, ``$``, a backslash, ``[``, ``<``, ``&``, ``*`` or ``_``,
or two spaces before a line break); text without any of them comes out of the inline
step unchanged, so :class:`QuickInlineProcessor` returns it at once. Text that holds some
of them (a link, an underscore in a recipe name) is tried only with the patterns whose
characters it holds: a cell with one link needs the link patterns, not the other ten.

That holds only for the patterns it knows: :data:`TRIGGERS` lists each by name with its
regular expression's digest. When a page's Markdown instance has a pattern that is not
listed, or one whose expression differs (another extension, another Python-Markdown),
every text takes the full inline step, as without this module.

A link's text (``[...]``) is found by Python-Markdown's link patterns from a table of
where each bracket closes, made for the whole text every time the text changes, which it
does after every link: one Python step per character, about a twentieth of mkdocs' time
on this site's link-heavy tables. :func:`bracket_ends` makes the same table with one
step per bracket; the link patterns use it where their table maker is the one it was
written against (:data:`BRACKET_ENDS_SOURCE`).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from typing import Any

from markdown import Extension, Markdown
from markdown.inlinepatterns import LinkInlineProcessor
from markdown.treeprocessors import InlineProcessor
from markdown.util import AtomicString

#: Each known inline pattern: (sha256 of its regular expression, prefix of 12 hex digits;
#: the characters one of which every match contains). Python-Markdown 3.x's own patterns,
#: pymdownx.arithmatex's inline math and mkdocs-autorefs' references, as
#: ``tests/test_inline.py`` checks them.
TRIGGERS: dict[str, tuple[str, str]] = {
    "backtick": ("231bee70302e", "`"),  # a backtick (after backslashes or not)
    "arithmatex-inline": ("80f5928a7df7", r"\$|\\"),  # $...$ or \(...\)
    "escape": ("51a11c21258d", r"\\"),
    "reference": ("0aca4cbc7f79", r"\["),
    # mkdocs-autorefs' cross-references ([title][identifier]), registered by the
    # mkdocstrings plugin on every page: Python-Markdown's reference expression.
    "mkdocs-autorefs": ("0aca4cbc7f79", r"\["),
    "link": ("0aca4cbc7f79", r"\["),
    "short_reference": ("0aca4cbc7f79", r"\["),
    "image_link": ("3bd0cb9cfeed", r"\["),  # ![
    "image_reference": ("3bd0cb9cfeed", r"\["),
    "short_image_ref": ("3bd0cb9cfeed", r"\["),
    "autolink": ("7cc379585f40", "<"),
    "automail": ("64b9f843dff4", "<"),
    "html": ("47eec514cf83", "<"),
    "linebreak": ("75df45fedc69", "  \n"),
    "entity": ("59f41c098c4b", "&"),
    "em_strong": ("1d6aeef067c2", r"\*|_"),
}
#: Python-Markdown's priority of its "inline" tree processor.
INLINE_PRIORITY = 20
#: sha256 (first 12 hex digits) of the source of Python-Markdown's
#: ``LinkInlineProcessor._findBracketEnds`` that :func:`bracket_ends` reproduces (3.11).
BRACKET_ENDS_SOURCE = "1ff5566b258d"
_BRACKET = re.compile(r"[\[\]]")


def pattern_digest(expression: str) -> str:
    """The first 12 hex digits of the sha256 of a pattern's regular expression."""
    return hashlib.sha256(expression.encode()).hexdigest()[:12]


def needed_text(patterns: Any) -> list[re.Pattern[str]] | None:
    """Per pattern of ``patterns`` (a registry of inline patterns, in the order the
    inline step tries them), a regular expression that finds in any text the pattern can
    match a character that match needs; None when a pattern is not one of
    :data:`TRIGGERS` (then nothing can be skipped)."""
    needed: list[re.Pattern[str]] = []
    # The registry's names (no public list), in the order the step tries the patterns.
    for name in sorted(patterns._data, key=patterns.get_index_for_name):
        known = TRIGGERS.get(name)
        expression = getattr(patterns[name], "compiled_re", None)
        if known is None or expression is None or pattern_digest(expression.pattern) != known[0]:
            return None
        needed.append(_compiled(known[1]))
    return needed


def quiet_text(patterns: Any) -> re.Pattern[str] | None:
    """A regular expression that finds, in any text one of ``patterns`` can match, a
    character that match needs; None when a pattern is not one of :data:`TRIGGERS`."""
    needed = needed_text(patterns)
    return None if needed is None else _any_of(needed)


def _any_of(needed: list[re.Pattern[str]]) -> re.Pattern[str]:
    """One expression that finds what any of ``needed`` finds."""
    return _compiled("|".join(dict.fromkeys(n.pattern for n in needed)))


def bracket_ends(data: str) -> list[int | None]:
    """For each index of ``data`` (and its end), the index just past the ``]`` that closes
    a bracket opened before it, None where none does: Python-Markdown's
    ``LinkInlineProcessor._findBracketEnds``, one step per bracket instead of per character.

    Between two brackets the depth does not change, so the indexes from one bracket's
    next to the following bracket (included) are opened at one depth and all closed by
    the same ``]``: they are kept as one run on the stack and filled with one slice.
    """
    ends: list[int | None] = [None] * (len(data) + 1)
    depth = 0
    runs: list[tuple[int, int, int]] = []  # (first index, past the last, depth), waiting
    start = 0
    brackets = [m.start() for m in _BRACKET.finditer(data)]
    for last in (*brackets, len(data)):
        while runs and depth < runs[-1][2]:  # the ``]`` before ``start`` closed them
            first, past, _ = runs.pop()
            ends[first:past] = [start] * (past - first)
        runs.append((start, last + 1, depth))
        if last < len(data):
            depth += 1 if data[last] == "[" else -1
        start = last + 1
    return ends


@functools.lru_cache(maxsize=1)
def _known_bracket_ends() -> bool:
    """Whether the installed link patterns make their table as :func:`bracket_ends` does."""
    made = getattr(LinkInlineProcessor, "_findBracketEnds", None)
    try:
        source = inspect.getsource(made) if made is not None else ""
    except (OSError, TypeError):
        return False
    return pattern_digest(source) == BRACKET_ENDS_SOURCE


def quick_links(patterns: Any) -> int:
    """Give each link pattern of ``patterns`` :func:`bracket_ends` (where its own table
    maker is the known one); returns how many it gave it to."""
    if not _known_bracket_ends():
        return 0
    given = 0
    known = LinkInlineProcessor._findBracketEnds
    for pattern in patterns:
        maker = getattr(type(pattern), "_findBracketEnds", None)
        if isinstance(pattern, LinkInlineProcessor) and maker is known:
            pattern._findBracketEnds = bracket_ends  # an instance's: shadows the static one
            given += 1
    return given


@functools.lru_cache(maxsize=64)
def _compiled(expression: str) -> re.Pattern[str]:
    return re.compile(expression)


class QuickInlineProcessor(InlineProcessor):
    """Python-Markdown's InlineProcessor, returning text that holds none of the patterns'
    needed characters as it is (what trying every pattern on it would return)."""

    def __init__(self, md: Markdown) -> None:
        super().__init__(md)
        self.quiet: re.Pattern[str] | None = None
        self.needed: list[re.Pattern[str]] | None = None

    def run(self, tree: Any, ancestors: list[str] | None = None) -> Any:
        """Check the page's patterns (extensions may add some after this one), then run."""
        self.needed = needed_text(self.inlinePatterns)
        self.quiet = _any_of(self.needed) if self.needed is not None else None
        quick_links(self.inlinePatterns)
        return super().run(tree, ancestors)

    def _InlineProcessor__handleInline(self, data: str, patternIndex: int = 0) -> str:
        """The base class's (private) per-text step: skipped where nothing can match, and
        where something can, each pattern tried only on text that holds what it needs.

        The loop is Python-Markdown's own: a pattern that matched is tried again past
        its placeholder, one that did not is passed with the start back at 0. A pattern
        whose needed characters are nowhere in the text cannot match, so passing it at
        once is what trying it would do (placeholders hold none of those characters)."""
        needed, quiet = self.needed, self.quiet
        if needed is None or quiet is None or isinstance(data, AtomicString):
            return super()._InlineProcessor__handleInline(data, patternIndex)
        if quiet.search(data) is None:
            return data
        apply = self._InlineProcessor__applyPattern
        start = 0
        while patternIndex < len(needed):
            if needed[patternIndex].search(data) is None:
                patternIndex, start = patternIndex + 1, 0
                continue
            data, matched, start = apply(
                self.inlinePatterns[patternIndex], data, patternIndex, start
            )
            if not matched:
                patternIndex += 1
        return data


class QuickInline(Extension):
    """The Markdown extension that puts :class:`QuickInlineProcessor` in place of the
    inline step (only where that step is Python-Markdown's own class)."""

    def extendMarkdown(self, md: Markdown) -> None:
        """Replace the ``inline`` tree processor."""
        if type(md.treeprocessors["inline"]) is InlineProcessor:
            md.treeprocessors.register(QuickInlineProcessor(md), "inline", INLINE_PRIORITY)
