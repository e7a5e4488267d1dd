"""Python-Markdown's inline step, skipped for text that no inline pattern can match.

Python-Markdown tries every inline pattern (code, math, links, HTML, entities, emphasis
...) on every piece of text, table cells included: on the site's pages that is about a
third of mkdocs' Markdown time, mostly spent on cells such as ``1.234`` in which no
pattern can start. Each pattern the site's extensions register needs one of a few
characters to match (a backtick, ``$``, a backslash, ``[``, ``<``, ``&``, ``*`` or ``_``,
or two spaces before a line break); text without any of them comes out of the inline
step unchanged, so :class:`QuickInlineProcessor` returns it at once.

That holds only for the patterns it knows: :data:`TRIGGERS` lists each by name with its
regular expression's digest. When a page's Markdown instance has a pattern that is not
listed, or one whose expression differs (another extension, another Python-Markdown),
every text takes the full inline step, as without this module.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from markdown import Extension, Markdown
from markdown.treeprocessors import InlineProcessor

#: Each known inline pattern: (sha256 of its regular expression, prefix of 12 hex digits;
#: the characters one of which every match contains). Python-Markdown 3.x's own patterns
#: and pymdownx.arithmatex's inline math, as ``tests/test_inline.py`` checks them.
TRIGGERS: dict[str, tuple[str, str]] = {
    "backtick": ("231bee70302e", "`"),  # a backtick (after backslashes or not)
    "arithmatex-inline": ("80f5928a7df7", r"\$|\\"),  # $...$ or \(...\)
    "escape": ("51a11c21258d", r"\\"),
    "reference": ("0aca4cbc7f79", r"\["),
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


def pattern_digest(expression: str) -> str:
    """The first 12 hex digits of the sha256 of a pattern's regular expression."""
    return hashlib.sha256(expression.encode()).hexdigest()[:12]


def quiet_text(patterns: Any) -> re.Pattern[str] | None:
    """A regular expression that finds, in any text one of ``patterns`` (a registry of
    inline patterns) can match, a character that match needs; None when a pattern is not
    one of :data:`TRIGGERS` (then nothing can be skipped)."""
    needed: list[str] = []
    for name in patterns._data:  # the registry's names (no public list)
        known = TRIGGERS.get(name)
        expression = getattr(patterns[name], "compiled_re", None)
        if known is None or expression is None or pattern_digest(expression.pattern) != known[0]:
            return None
        needed.append(known[1])
    return re.compile("|".join(dict.fromkeys(needed)))


class QuickInlineProcessor(InlineProcessor):
    """Python-Markdown's InlineProcessor, returning text that holds none of the patterns'
    needed characters as it is (what trying every pattern on it would return)."""

    def __init__(self, md: Markdown) -> None:
        super().__init__(md)
        self.quiet: re.Pattern[str] | None = None

    def run(self, tree: Any, ancestors: list[str] | None = None) -> Any:
        """Check the page's patterns (extensions may add some after this one), then run."""
        self.quiet = quiet_text(self.inlinePatterns)
        return super().run(tree, ancestors)

    def _InlineProcessor__handleInline(self, data: str, patternIndex: int = 0) -> str:
        """The base class's (private) per-text step, skipped where nothing can match."""
        if self.quiet is not None and self.quiet.search(data) is None:
            return data
        return super()._InlineProcessor__handleInline(data, patternIndex)


class QuickInline(Extension):
    """The Markdown extension that puts :class:`QuickInlineProcessor` in place of the
    inline step (only where that step is Python-Markdown's own class)."""

    def extendMarkdown(self, md: Markdown) -> None:
        """Replace the ``inline`` tree processor."""
        if type(md.treeprocessors["inline"]) is InlineProcessor:
            md.treeprocessors.register(QuickInlineProcessor(md), "inline", INLINE_PRIORITY)
