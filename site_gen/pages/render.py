"""Stage 2: the pages. :func:`render_pages` calls each page module of :mod:`site_gen.pages`.

Pure: it returns ``docs-relative path -> text`` (pages, snippets, CSV and JSON exports,
data files, the nav) and the :class:`~site_gen.charts.jobs.PlotJob` list for the charts, each
distinct chart once and at one path (:func:`share_charts`). Nothing here writes but the
build cache, which keeps the outputs of the pages of one GPU alone (:func:`_cached_outputs`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator

from roofline.analysis.history import SpecHistory
from roofline.recipes import RECIPE_LIST
from site_gen import config, keys
from site_gen.cache import BuildCache
from site_gen.charts.jobs import PlotJob, chart_key, dedupe
from site_gen.context import rel
from site_gen.gather.dense import Atlas
from site_gen.pages import (
    changes,
    data,
    equations,
    gpu,
    gpu_recipe,
    gpus_index,
    grouped,
    home,
    methodology,
    models,
    nav,
    recipe,
    recipes_index,
    specs,
    validation,
)
from site_gen.pages.base import Instantiated, PageOutput, SiteInput
from site_gen.split import Split

__all__ = ["PlotJob", "chart_key", "render_pages", "share_charts"]


def _relink(files: dict[str, str], moved: dict[str, str]) -> None:
    """Point the pages among ``files`` that link a chart of ``moved`` (old -> new
    docs-relative path) at its new path. Links are ``](target)`` (every page link goes
    through the ``path`` filter, which passes targets as they are); a moved chart that no
    page links is a bug, not a file to drop silently."""
    pages = [path for path in files if path.endswith(".md")]
    for old, new in moved.items():
        found = 0
        for page in pages:
            target = f"]({rel(old, page)})"
            found += files[page].count(target)
            files[page] = files[page].replace(target, f"]({rel(new, page)})")
        if not found:
            raise ValueError(f"chart {old} is shared with {new} but no page links it")


def share_charts(
    outputs: Iterable[PageOutput], on_chart: Callable[[PlotJob], None] | None = None
) -> PageOutput:
    """The pages' outputs merged, each distinct chart (by :func:`chart_key`) written once:
    at the path of the first page that asks for it, in render order. A later page that
    asks for an equal chart (recipes whose formulas coincide, such as mxfp8_cublas and
    mxfp8_cublas_rceil) links that file instead of a copy of its own, so the site holds
    no two equal charts. ``on_chart`` is told of each distinct chart as soon as a page
    asks for it (the build starts drawing it then)."""
    first: dict[str, str] = {}
    merged = PageOutput()
    for out in outputs:
        moved: dict[str, str] = {}
        charts: list[PlotJob] = []
        for job in out.charts:
            key = chart_key(job.kind, job.kwargs)
            if key not in first and on_chart is not None:
                on_chart(job)
            path = first.setdefault(key, job.path)
            if path == job.path:
                charts.append(job)
            else:
                moved[job.path] = path
        _relink(out.files, moved)
        merged.add(PageOutput(out.files, charts))
    merged.charts = dedupe(merged.charts)  # a page that asks twice for one chart
    return merged


def render_pages(
    atlas: Atlas,
    instantiated: Instantiated,
    history: SpecHistory | None = None,
    on_chart: Callable[[PlotJob], None] | None = None,
    models_js: str | None = None,
    helpers: int = 0,
    cache: BuildCache | None = None,
) -> tuple[dict[str, str], list[PlotJob]]:
    """All generated pages (path -> text) and the charts to draw (each announced to
    ``on_chart`` as soon as a page asks for it); ``models_js``: the calculator's model
    script when the build has it (None: made here); ``helpers``: forked processes that
    render pages from the end of the list meanwhile (:mod:`site_gen.split`); ``cache``:
    where the outputs of the pages of one GPU alone are kept (:func:`_cached_outputs`)."""
    site = SiteInput.of(atlas, instantiated, history, models_js)
    jobs, gpu_pages = _page_jobs(site)
    if cache is not None and cache.enabled:
        outputs = _cached_outputs(jobs, _gpu_page_keys(atlas, gpu_pages), cache, helpers)
    else:
        outputs = _shared_outputs(jobs, helpers)
    out = share_charts(outputs, on_chart)
    return out.files, out.charts


#: A page of one GPU alone by job name: (GPU name, page kind, mode, recipe name) of a
#: GPU x mode x recipe page (kind "dense" or "grouped"), or (GPU name, "model", "", preset
#: name) of a model x GPU page.
GpuPages = dict[str, tuple[str, str, str, str]]


def _gpu_page_keys(atlas: Atlas, gpu_pages: GpuPages) -> dict[str, str]:
    """The cache key of each page of one GPU alone (GPU x mode x recipe, dense and grouped;
    model x GPU), by job name."""
    gpu_keys = {g.name: keys.gpu_pages_key(g, atlas.calibration(g.name)) for g in atlas.gpus}
    return {
        name: keys.gpu_page_key(gpu_keys[gpu_name], kind, mode, recipe_name)
        for name, (gpu_name, kind, mode, recipe_name) in gpu_pages.items()
    }


def _cached_outputs(
    jobs: dict[str, Callable[[], PageOutput]],
    page_keys: dict[str, str],
    cache: BuildCache,
    helpers: int,
) -> Iterator[PageOutput]:
    """Each job's output in order, as :func:`_shared_outputs` makes them, but a page of one
    GPU alone (a GPU x mode x recipe page, dense or grouped, or a model x GPU page: nine
    pages in ten), taken from ``cache`` when its key
    (:func:`site_gen.keys.gpu_page_key`) is there and stored when made: a rebuild
    after one GPU's change renders that GPU's pages and the pages that show every GPU.
    The cache is read before any page is made, so the rest goes to the helpers."""
    # Kind "recipe-pages" (its name from when it held those alone) keeps them all.
    stored = {name: cache.get("recipe-pages", key) for name, key in page_keys.items()}
    made = _shared_outputs({n: j for n, j in jobs.items() if stored.get(n) is None}, helpers)
    for name in jobs:
        out = stored.get(name)
        if out is None:
            out = next(made)
            if name in page_keys:
                cache.put("recipe-pages", page_keys[name], out)
        yield out


def _shared_outputs(
    jobs: dict[str, Callable[[], PageOutput]], helpers: int
) -> Iterator[PageOutput]:
    """Each job's output, in order; with ``helpers``, some made by them (a job that
    failed there is made here, where its error is raised)."""
    if not helpers:
        yield from (make() for make in jobs.values())
        return
    split = Split(list(jobs), lambda name: jobs[name](), helpers, watch=None)
    try:
        for name, make in jobs.items():
            made = None if split.mine(name) else split.result(name)
            yield made if made is not None else make()
    finally:
        split.close()


def _page_jobs(site: SiteInput) -> tuple[dict[str, Callable[[], PageOutput]], GpuPages]:
    """Every page module's output to make, by a unique name, in a fixed order (the first
    asker of a chart keeps it), and which of them are pages of one GPU alone (GPU x mode x
    recipe, dense and grouped; model x GPU)."""
    atlas = site.atlas
    jobs: dict[str, Callable[[], PageOutput]] = {
        "home": functools.partial(home.render, site),
        "gpus": functools.partial(gpus_index.render, site),
    }
    gpu_pages: GpuPages = {}
    for g in atlas.gpus:
        jobs[f"gpu {g.name}"] = functools.partial(gpu.render, site, g)
        for mode in config.MODES:
            for result in atlas.for_gpu(g.name, mode):
                name = f"gpu {g.name} {mode.value} {result.recipe.name}"
                jobs[name] = functools.partial(gpu_recipe.render, site, result)
                gpu_pages[name] = (g.name, "dense", mode.value, result.recipe.name)
        for (gpu_name, mode, recipe_name), result in atlas.grouped.items():
            if gpu_name == g.name:
                name = f"grouped {gpu_name} {mode.value} {recipe_name}"
                jobs[name] = functools.partial(grouped.render, site, result)
                gpu_pages[name] = (gpu_name, "grouped", mode.value, recipe_name)
    jobs["recipes"] = functools.partial(recipes_index.render, site)
    for r in RECIPE_LIST:
        jobs[f"recipe {r.name}"] = functools.partial(recipe.render, site, r)
    for module in (methodology, validation, specs, equations, data, changes):
        jobs[f"module {module.__name__}"] = functools.partial(module.render, site)
    # The Models section page by page: a model x GPU page is that GPU's alone.
    for name, make, run in models.page_makers(site):
        jobs[name] = make
        if run is not None:
            gpu_pages[name] = (run.gpu.name, "model", "", run.preset.name)
    jobs[f"module {nav.__name__}"] = functools.partial(nav.render, site)
    return jobs, gpu_pages
