"""Math typeset at build time: KaTeX under one node process per build.

pymdownx.arithmatex (``generic: true``) leaves ``<div class="arithmatex">\\[...\\]</div>``
and ``<span class="arithmatex">\\(...\\)</span>`` in the pages, and the formula macros
write the same ``div`` by hand. :class:`PageMath` (driven by the mkdocs hook
``docs/math_hook.py``) replaces the TeX inside each such element by KaTeX's MathML
(``output: "mathml"``), which Chromium, Firefox and Safari lay out natively, so a page
shows its formulas as soon as it is parsed, with no script and no network; the KaTeX
stylesheet and fonts still style them. KaTeX's HTML rendering (absolutely positioned
spans, about six times the bytes of the MathML) is not written: it made a GPU x recipe
page about 270 KB heavier and only duplicated what the MathML already shows. Runs of
upright letters become one ``<mi>`` (:func:`merge_upright_letters`). The element and its
class stay, so styles and tests keep finding it; the TeX itself stays in the MathML
``<annotation>`` of inline math and, for formula blocks, in the copy buttons'
``data-latex`` (the annotation, a third copy there, is dropped).

One ``node`` process per build renders every page: the hook sends one JSON line per
page (all its expressions) and reads one JSON line back. Identical expressions are
rendered once per build. KaTeX runs with ``throwOnError`` and ``strict: "error"`` and
trusts nothing (``\\href``, ``\\url``, ``\\htmlClass``... are refused): an expression
it cannot typeset fails the build with a message naming the page and the expression,
so no page ever ships raw TeX.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

#: An element arithmatex (or a formula macro) wrote: its tag, class and escaped TeX.
MATH_ELEMENT = re.compile(
    r'<(?P<tag>div|span) class="(?P<cls>(?:[^"]* )?arithmatex(?: [^"]*)?)">'
    r"(?P<body>[^<]*)</(?P=tag)>"
)
#: Every element that claims to hold TeX (to catch one MATH_ELEMENT missed); one already
#: typeset (KaTeX's markup inside) is left alone, so typesetting twice changes nothing.
MATH_CLASS = re.compile(
    r'<(?:div|span) class="(?:[^"]* )?arithmatex(?: [^"]*)?">(?!<span class="katex)'
)
#: arithmatex's generic delimiters: display ``\[ \]``, inline ``\( \)``.
DELIMITERS = {("\\[", "\\]"): True, ("\\(", "\\)"): False}

#: A displayed formula may be wider than the column and scroll sideways in its box, so
#: the box is a named keyboard stop from the start (WCAG 2.1.1); atlas.js drops the stop
#: from a box it sees fit, without having to measure every formula of a long page.
DISPLAY_BOX_ATTRS = ' tabindex="0" role="group" aria-label="Formula"'

#: A run of two or more upright one-letter identifiers, as KaTeX's MathML writes
#: ``\mathrm{gemm}`` (one ``<mi mathvariant="normal">`` per letter).
UPRIGHT_RUN = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){2,}')
_UPRIGHT_LETTER = re.compile(r'<mi mathvariant="normal">([A-Za-z])</mi>')


def merge_upright_letters(markup: str) -> str:
    """KaTeX's MathML with each run of upright one-letter ``<mi>`` made one ``<mi>``.

    MathML draws an identifier of more than one letter upright and lays adjacent ``<mi>``
    out with no space between them, so ``<mi>gemm</mi>`` looks exactly like KaTeX's four
    elements; it is a third of their bytes, and a screen reader reads the word instead of
    spelling it. A single letter keeps its ``mathvariant`` (alone it would be italic).
    """
    return UPRIGHT_RUN.sub(
        lambda m: "<mi>" + "".join(_UPRIGHT_LETTER.findall(m[0])) + "</mi>", markup
    )


#: KaTeX's TeX annotation of a formula, dropped from a formula block (class ``ra-math``)
#: whose Copy LaTeX button carries the same TeX in its ``data-latex``.
ANNOTATION = re.compile(
    r'<semantics>(?P<body>.*)<annotation encoding="application/x-tex">[^<]*</annotation>'
    r"</semantics>",
    re.DOTALL,
)
#: The class of a formula block written by the formula macros (site_gen/templates/macros.j2),
#: each with its Copy LaTeX button.
FORMULA_BLOCK_CLASS = "ra-math"


def drop_annotation(markup: str) -> str:
    """KaTeX's MathML without its ``<semantics>`` wrapper and TeX ``<annotation>``."""
    return ANNOTATION.sub(lambda m: m["body"], markup, count=1)


#: The node side: one JSON request per line in, one JSON answer per line out.
NODE_SCRIPT = r"""
"use strict";
const katex = require(process.argv[1]);
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  const items = JSON.parse(line);
  const out = [];
  for (let i = 0; i < items.length; i++) {
    const refused = [];
    try {
      const markup = katex.renderToString(items[i][0], {
        displayMode: items[i][1], throwOnError: true, strict: "error", output: "mathml",
        // Untrusted: KaTeX would draw \href & co. as red text; fail like any other error.
        trust: (context) => { refused.push(context.command); return false; },
      });
      // KaTeX's MathML output has no display wrapper; keep the one its HTML output has,
      // so the stylesheet's block layout (and atlas.css) still applies.
      out.push(items[i][1] ? '<span class="katex-display">' + markup + "</span>" : markup);
      if (refused.length) throw new Error("untrusted command(s) " + refused.join(", "));
    } catch (err) {
      process.stdout.write(JSON.stringify({ error: i, message: String(err.message) }) + "\n");
      return;
    }
  }
  process.stdout.write(JSON.stringify({ html: out }) + "\n");
});
"""


class MathError(RuntimeError):
    """KaTeX could not typeset an expression, or could not be run at all.

    Not a mkdocs ``BuildError`` on purpose: mkdocs would log it and raise a bare
    "Aborted with a BuildError!", and ``roofline build`` would lose the page and the
    expression from its one-line error.
    """


@dataclass(frozen=True)
class Expression:
    """One math element of a page: where it is, its TeX and whether it is displayed."""

    span: tuple[int, int]
    tag: str
    cls: str
    tex: str
    display: bool


def find_math(page_html: str, where: str) -> list[Expression]:
    """Every math element of ``page_html`` (MathError on one that is not plain TeX)."""
    found = []
    for match in MATH_ELEMENT.finditer(page_html):
        body = html.unescape(match["body"]).strip()
        display = next(
            (d for (op, cl), d in DELIMITERS.items() if body.startswith(op) and body.endswith(cl)),
            None,
        )
        if display is None or len(body) < 4:
            raise MathError(
                f"{where}: math element without \\[ \\] or \\( \\) delimiters: {body[:200]!r}"
            )
        found.append(Expression(match.span(), match["tag"], match["cls"], body[2:-2], display))
    claimed = len(MATH_CLASS.findall(page_html))
    if claimed != len(found):
        raise MathError(
            f"{where}: {claimed - len(found)} math element(s) hold markup, not "
            "plain TeX; arithmatex's output changed?"
        )
    return found


class KatexFailure(Exception):
    """KaTeX refused item ``index`` of a batch with ``message``."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


class KatexProcess:
    """One ``node`` process with KaTeX loaded, answering batches of expressions."""

    def __init__(self, katex_js: Path, node: str | None = None) -> None:
        node = node or shutil.which("node")
        if node is None:
            raise MathError(
                "`node` is not installed; the build typesets math with KaTeX "
                "under Node.js (Debian: `apt-get install -y nodejs`)"
            )
        if not katex_js.is_file():
            raise MathError(
                f"{katex_js} is missing: run `roofline build`, which installs "
                "KaTeX into docs/generated/katex/"
            )
        # Node's stderr goes to a file (a pipe nobody reads could fill and block it); the
        # file lives as long as the process, so no context manager.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._proc = subprocess.Popen(
            [node, "-e", NODE_SCRIPT, str(katex_js.resolve())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
        )

    def render(self, items: list[tuple[str, bool]]) -> list[str]:
        """KaTeX's markup (MathML) for each ``(tex, display)``; KatexFailure on the first
        refusal."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps(items) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        except OSError as exc:  # BrokenPipeError: node died
            raise MathError(f"KaTeX (node) stopped: {exc}; {self._stderr_tail()}") from exc
        if not line:
            raise MathError(
                f"KaTeX (node) exited (code {self._proc.wait()}): {self._stderr_tail()}"
            )
        answer = json.loads(line)
        if "error" in answer:
            raise KatexFailure(answer["error"], answer["message"])
        return answer["html"]

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read()[-2000:].decode("utf-8", "replace").strip() or "no message"

    def close(self) -> None:
        """End the node process (closing its input ends its read loop)."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()


@dataclass
class PageMath:
    """Typesets the math of each page of one build (the hook's state between pages)."""

    katex_js: Path | None = None
    rendered: dict[tuple[str, bool], str] = field(default_factory=dict)
    _process: KatexProcess | None = None

    def typeset(self, page_html: str, where: str) -> str:
        """``page_html`` with every math element's TeX replaced by KaTeX's MathML."""
        found = find_math(page_html, where)
        if not found:
            return page_html
        self._render_missing(found, where)
        parts, last = [], 0
        for expr in found:
            start, end = expr.span
            html_out = self.rendered[(expr.tex, expr.display)]
            if FORMULA_BLOCK_CLASS in expr.cls.split():
                # On the Equations page the TeX was a third copy of each formula (with
                # the Copy LaTeX and Cite buttons'); the page stays under 1 MB without it.
                html_out = drop_annotation(html_out)
            attrs = DISPLAY_BOX_ATTRS if expr.tag == "div" else ""
            parts += [
                page_html[last:start],
                f'<{expr.tag} class="{expr.cls}"{attrs}>',
                html_out,
                f"</{expr.tag}>",
            ]
            last = end
        parts.append(page_html[last:])
        return "".join(parts)

    def _render_missing(self, found: list[Expression], where: str) -> None:
        todo = list(
            dict.fromkeys(
                (e.tex, e.display) for e in found if (e.tex, e.display) not in self.rendered
            )
        )
        if not todo:
            return
        if self._process is None:
            if self.katex_js is None:
                raise MathError("PageMath.katex_js is not set (the hook's on_config sets it)")
            self._process = KatexProcess(self.katex_js)
        try:
            done = self._process.render(todo)
        except KatexFailure as exc:
            tex, _display = todo[exc.index]
            raise MathError(f"{where}: KaTeX cannot typeset {tex!r}: {exc.message}") from exc
        self.rendered.update(zip(todo, map(merge_upright_letters, done), strict=True))

    def close(self) -> None:
        """End the node process (if one was started) and forget the rendered expressions."""
        if self._process is not None:
            self._process.close()
            self._process = None
        self.rendered.clear()
