"""Whitespace compaction of the written HTML (the mkdocs hook ``docs/compact_hook.py``).

mkdocs-material's templates indent every navigation item, and the Jinja blocks leave
runs of blank lines behind: on a page of this site that is about half of the navigation's
bytes. In HTML's normal flow a run of white space renders exactly like one space, so
:func:`compact_html` replaces each run of white space that holds a line break by a single
line break, which changes no rendering, and leaves alone every element whose white space
is significant or whose text is not HTML (``pre``, ``textarea``, ``script``, ``style``,
``code``), and every tag as it is (an attribute value is data: the Cite buttons' snippets
hold blank lines). Runs without a line break (a space between two words) are left as they
are.
"""

from __future__ import annotations

import re

#: Elements whose content keeps its exact white space.
VERBATIM = ("pre", "textarea", "script", "style", "code")
_VERBATIM_ELEMENT = re.compile(
    r"<(?P<tag>" + "|".join(VERBATIM) + r")\b[^>]*>.*?</(?P=tag)\s*>",
    re.DOTALL | re.IGNORECASE,
)
#: A tag (its quoted attribute values may hold line breaks: the Cite buttons' snippets),
#: left whole, or else a run of white space that holds at least one line break.
#: The tag's expression is unrolled (a run of plain characters, then each quoted value
#: and the plain run after it) rather than one alternation tried per character: the same
#: language, matched with fewer steps.
_TAG_OR_BROKEN_RUN = re.compile(
    r"(?P<tag><[^>\"']*(?:(?:\"[^\"]*\"|'[^']*')[^>\"']*)*>)|[ \t\r\f]*\n[ \t\r\n\f]*"
)


def _compact_text(part: str) -> str:
    return _TAG_OR_BROKEN_RUN.sub(lambda m: m["tag"] or "\n", part)


def compact_html(page_html: str) -> str:
    """``page_html`` with every white-space run that holds a line break made one ``\\n``,
    outside ``pre``, ``textarea``, ``script``, ``style`` and ``code`` elements."""
    parts, last = [], 0
    for match in _VERBATIM_ELEMENT.finditer(page_html):
        parts.append(_compact_text(page_html[last : match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_compact_text(page_html[last:]))
    return "".join(parts)
