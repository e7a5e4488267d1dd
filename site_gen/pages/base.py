"""What every page module shares: its typed input, its output, and the Jinja environment.

A page module is a function ``render(site, ...) -> PageOutput``: from the gathered
:class:`SiteInput` (and the GPU, recipe or result it is about) to the files it adds
(the page, its tables' CSV and JSON exports) and the charts it asks for. Page modules
import this floor (and the row and chart builders beside it), never each other.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2
from markupsafe import Markup

from roofline.analysis.history import SpecHistory
from roofline.model.build import MODEL_VERSION
from site_gen import config
from site_gen.charts.jobs import PlotJob, chart_facts
from site_gen.context import Table
from site_gen.gather.dense import Atlas
from site_gen.markup import exports, safe
from site_gen.markup.formulas import Formula, symbolic_formulas

#: Formulas of one GPU per (mode, recipe), as build.py instantiates them.
Instantiated = dict[str, dict[tuple[str, str], tuple[Formula, ...]]]


@dataclass(frozen=True)
class SiteInput:
    """Everything pages are made from: the atlas, the formulas and the spec history."""

    atlas: Atlas
    instantiated: Instantiated
    history: SpecHistory
    #: Symbolic formulas per (mode, recipe), shared by GPU x recipe and recipe pages.
    symbolic: dict[tuple[str, str], list[Formula]]
    #: The calculator's model script (:func:`roofline.publish.jscode.calculator_script`)
    #: when the build made it on its pool or found it in its cache (None: made on demand).
    models_js: str | None = None

    @classmethod
    def of(
        cls,
        atlas: Atlas,
        instantiated: Instantiated,
        history: SpecHistory | None = None,
        models_js: str | None = None,
    ) -> SiteInput:
        """The input of one build; a missing history is recorded as such."""
        symbolic = {
            (mode.value, r.name): symbolic_formulas(mode, r.name)
            for mode in config.MODES
            for r in atlas.recipes(mode)
        }
        history = history or SpecHistory(note="the build was not given a history")
        return cls(atlas, instantiated, history, symbolic, models_js)


@dataclass
class PageOutput:
    """What page modules return: files (path -> text) and the charts to draw."""

    files: dict[str, str] = field(default_factory=dict)
    charts: list[PlotJob] = field(default_factory=list)

    def add(self, other: PageOutput) -> None:
        """Merge ``other`` into this output (files of the same path must not collide)."""
        clash = set(self.files) & set(other.files)
        if clash:
            raise ValueError(f"two pages write {sorted(clash)[0]}")
        self.files.update(other.files)
        self.charts.extend(other.charts)


def environment() -> jinja2.Environment:
    """The Jinja environment: templates from ``site_gen/templates``, StrictUndefined.

    Every ``{{ value }}`` is escaped as Markdown text (:func:`site_gen.markup.safe.md_text`)
    unless it is markup built by :mod:`site_gen.markup.safe` or a macro: autoescape plus a
    ``finalize`` hook make :mod:`site_gen.markup.safe` the one place where strings become page
    text. ``join`` escapes its items the same way; ``path`` passes a relative link target
    of the site and ``external_link`` an http(s) URL (both refuse anything else).
    """
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("site_gen", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=safe.environment_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        join=safe.md_join,
        path=lambda target: Markup(safe.site_path(target)),
        external_link=safe.external_link,
        code=safe.code,
        attribute=safe.attribute,
    )
    # Numbers a template quotes come from config and the registries, never typed in it.
    env.globals.update(model_version=MODEL_VERSION, config=config, facts=chart_facts())
    return env


@functools.cache
def shared_environment() -> jinja2.Environment:
    """One environment per process: templates compile once for every page."""
    return environment()


def render(template: str, page_path: str, **context: Any) -> str:
    """``template`` rendered for the docs-relative ``page_path``."""
    return shared_environment().get_template(template).render(page_path=page_path, **context)


def page(
    path: str,
    template: str,
    tables: Sequence[Table] = (),
    /,
    *,
    output: str | None = None,
    export_folder: str | None = None,
    **context: Any,
) -> PageOutput:
    """A page (or snippet) and the exports of its ``tables``.

    ``path`` is the page the links are relative to; ``output`` the file written when
    that differs (a snippet included by a hand-written page); ``export_folder`` where the
    exports go when not beside the page.
    """
    files = exports.attach_exports(path, tables, folder=export_folder)
    files[output or path] = render(template, path, **context)
    return PageOutput(files)
