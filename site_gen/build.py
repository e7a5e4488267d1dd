"""The stage sequence: guard -> gather -> pages -> charts -> output (-> serve).

:func:`build` is the only function that writes the site, and only through the output
stage. Stage timings are printed as the build goes (:mod:`site_gen.stages`). The stages:

* guard, :mod:`site_gen.output.guard`: the site-folder guard and the build lock (before any
  write); :mod:`site_gen.keys`: the digest of every input of a build with the manifests of
  what it wrote: a rebuild whose inputs are unchanged and whose site and ``docs/generated``
  still verify (sha256 of every file) does nothing at all;
* gather, :mod:`site_gen.gather`: every evaluation (one task per GPU) and the git
  history on the pool of :mod:`site_gen.pool`; the formulas and the calculator's script on
  a process forked before the models are compiled (:class:`site_gen.pool.Early`);
* pages, :mod:`site_gen.pages.render`: every page as text and the charts as jobs;
* charts (:mod:`site_gen.charts.queue`): cached ones at once, the rest drawn on the pool
  (:mod:`site_gen.charts.draw`) as the pages ask for them, while they render and mkdocs runs;
* output, :mod:`site_gen.output.write`: the private staging folders, the generated files
  written into them (hard links for unchanged ones), :mod:`site_gen.output.mkdocs` (``mkdocs
  build --strict``, its page cache in :mod:`site_gen.output.mkdocs_cache`) and the final
  swap by renames.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofline.datafiles.core import MAX_GPUS
from roofline.presets import load_models
from roofline.specs import load_specs
from site_gen import config, keys, pool
from site_gen.cache import BuildCache, max_cache_bytes
from site_gen.charts.queue import ChartQueue
from site_gen.gather.dense import gather
from site_gen.gather.models import check_model_gpus
from site_gen.inputs import DataPaths, ModelInputs, load_inputs
from site_gen.markup.formulas import instantiated_for_gpu
from site_gen.output.guard import (
    MARKER,
    BuildError,
    build_lock,
    check_site_dir,
    marker_text,
    work_root,
)
from site_gen.output.mkdocs import run_mkdocs, serve_site
from site_gen.output.write import (
    Staging,
    make_staging,
    remove_stale_staging,
    replace_file,
    replace_with_link,
    swap_into_place,
    sync_site_files,
    write_generated,
)
from site_gen.pages.render import render_pages
from site_gen.stages import StageTimer, failing_as

if TYPE_CHECKING:
    from roofline.specs import SpecDatabase
    from site_gen.charts.jobs import PlotJob
    from site_gen.markup.formulas import Formula

__all__ = [
    "MARKER",
    "PLACEHOLDER_SVG",
    "BuildError",
    "Staging",
    "build",
    "build_lock",
    "build_site",
    "check_site_dir",
    "generate_docs",
    "make_staging",
    "marker_text",
    "remove_stale_staging",
    "run_mkdocs",
    "swap_into_place",
    "write_generated",
]

#: Stands in for a chart still being drawn while mkdocs runs; replaced before the swap.
PLACEHOLDER_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>' + "\n"


def generate_docs(
    specs: SpecDatabase,
    instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]]] | None = None,
) -> tuple[dict[str, str], list[PlotJob]]:
    """Gather and render without drawing or writing (used by the golden tests)."""
    atlas = gather(specs)
    if instantiated is None:
        instantiated = {gpu.name: instantiated_for_gpu(gpu) for gpu in specs.values()}
    return render_pages(atlas, instantiated)


def build_site(
    specs_path: str | None,
    site_dir: Path,
    serve: bool,
    use_cache: bool = True,
    max_gpus: int = MAX_GPUS,
    docs_dir: Path | None = None,
    data: DataPaths | None = None,
) -> None:
    """``roofline build``: the site from ``specs_path`` (None: bundled) into ``site_dir``;
    ``max_gpus``: the spec file's GPU limit (``--max-gpus``); ``docs_dir``: a team's own
    pages, published under "Team pages"; ``data``: another calibration file and extra
    measurement sets (:mod:`site_gen.inputs`). From a checkout the repository is the build root;
    from an installed wheel, :func:`work_root` (the packaged mkdocs.yml and docs/ copied
    there under the lock)."""
    cache = BuildCache(enabled=use_cache)
    if config.is_checkout():
        root, sync = config.REPO_ROOT, None
    else:
        root, sync = work_root(site_dir, cache), config.SITE_FILES
    build(
        specs_path,
        Path(site_dir),
        root,
        cache,
        max_gpus,
        extra_docs=docs_dir,
        sync_from=sync,
        data=data,
    )
    if serve:
        serve_site(Path(site_dir))


# -- the build -------------------------------------------------------------------------


def build(
    specs_path: str | None,
    site_dir: Path,
    root: Path = config.REPO_ROOT,
    cache: BuildCache | None = None,
    max_gpus: int = MAX_GPUS,
    extra_docs: Path | None = None,
    sync_from: Path | None = None,
    data: DataPaths | None = None,
) -> dict[str, float]:
    """Build the reference site from ``specs_path`` (None: bundled database) into ``site_dir``.

    ``root`` holds ``mkdocs.yml`` and ``docs/`` (the repository, or a copy in tests);
    ``max_gpus`` caps the spec file's GPUs (:data:`roofline.datafiles.core.MAX_GPUS`);
    ``extra_docs``: a folder of a team's own pages, staged as ``docs/team/``;
    ``sync_from``: a folder whose mkdocs.yml and docs/ are first copied into ``root`` (an
    installed tool's package data into its work root), under the lock; ``data``: the
    calibration and measurement files in place of the bundled ones (None: bundled).

    First the guard (:func:`check_site_dir`) and the root's lock (:func:`build_lock`).
    When every input is unchanged since the last build and the site folder and
    ``docs/generated`` still hold exactly what it wrote, nothing more is done. Otherwise
    the stages: load specs, gather (evaluate everything once), LaTeX and git history (on
    a pool of 2 workers and one process of its own), render the pages, write the generated files
    into a private copy of the docs (charts still being drawn get placeholders there),
    ``mkdocs build --strict`` into a staging folder while the pool draws the charts, then
    the charts over their placeholders; the staging folders replace ``site_dir`` and
    ``docs/generated`` only when the whole build succeeded. Evaluations, formulas,
    charts, the history and mkdocs' pages are reused from ``cache`` when their inputs are
    unchanged and their checksums verify (pass ``BuildCache(enabled=False)`` for a cold
    build).
    """
    cache = cache if cache is not None else BuildCache()
    started_ns = time.time_ns()
    try:
        cache_bytes = max_cache_bytes()
    except ValueError as exc:
        raise BuildError(str(exc)) from None
    data = data if data is not None else DataPaths()
    root = Path(root).resolve()
    extra_docs = _team_docs(extra_docs)
    site_dir = check_site_dir(Path(site_dir), root, cache, extra_docs)
    timer = StageTimer()
    with build_lock(root) as lock_fd:
        if sync_from is not None:
            sync_site_files(sync_from, root)
        remove_stale_staging(root, site_dir)
        with timer.stage("inputs", "digest of every input; the last build's output verified"):
            key = (
                keys.input_key(specs_path, root, marker_text(), extra_docs, data.files())
                if cache.enabled
                else ""
            )
            unchanged = bool(key) and keys.outputs_unchanged(key, site_dir, root, cache)
        if unchanged:
            print(
                f"[build] inputs unchanged and {site_dir} verified: nothing to rebuild", flush=True
            )
        else:
            staging = make_staging(root, site_dir, extra_docs)
            try:
                _build_staged(
                    specs_path,
                    site_dir,
                    root,
                    cache,
                    staging,
                    timer,
                    lock_fd,
                    key,
                    max_gpus,
                    extra_docs,
                    data,
                )
            finally:
                staging.remove()
            cache.trim_to(cache_bytes, since_ns=started_ns)
    timer.timings["total"] = timer.total()
    print(f"[build] cache: {cache.summary()}", flush=True)
    print(f"[build] site built in {timer.total():.1f} s: {site_dir}", flush=True)
    return timer.timings


def _team_docs(extra_docs: Path | None) -> Path | None:
    """``--docs-dir``, resolved: a folder, or BuildError naming it."""
    if extra_docs is None:
        return None
    folder = Path(extra_docs).expanduser().resolve()
    if not folder.is_dir():
        what = "nothing there" if not folder.exists() else "not a folder"
        raise BuildError(
            f"--docs-dir {extra_docs}: expected a folder of Markdown pages, received {what}"
        )
    return folder


def _build_staged(
    specs_path: str | None,
    site_dir: Path,
    root: Path,
    cache: BuildCache,
    staging: Staging,
    timer: StageTimer,
    lock_fd: int,
    key: str,
    max_gpus: int = MAX_GPUS,
    extra_docs: Path | None = None,
    data: DataPaths | None = None,
) -> None:
    """The stages of :func:`build`, writing only into ``staging`` until the final swap."""
    data = data if data is not None else DataPaths()
    with timer.stage("specs", specs_path or "bundled database"):
        specs = load_specs(specs_path, max_gpus)
        check_model_gpus(load_models(), specs)  # before minutes of gather, not after
        inputs = load_inputs(specs, data.calibration, data.measurements)
    instantiated = {g.name: cache.get("latex", keys.latex_key(g)) for g in specs.values()}
    context = multiprocessing.get_context("fork")
    with contextlib.ExitStack() as stack:
        # Workers close their inherited copy of the lock, so a worker outliving a killed
        # build cannot keep the root locked.
        fork = functools.partial(
            context.Pool, initializer=pool.close_inherited, initargs=(lock_fd,)
        )
        # Sympy work that needs no compiled model (formulas, the calculator's script)
        # starts on a process of its own before the compile, which else leaves the
        # second core idle for its seconds.
        early = pool.Early(cache, instantiated, specs, inputs)
        if early.needed():
            early.start(stack.enter_context(fork(1)), own=True)
        # A GPU without stored formulas is new or changed (or the model is): its
        # evaluations are to be made, on workers that then inherit the compiled models.
        if not cache.enabled or None in instantiated.values():
            with timer.stage("compile", "the models the gather evaluates, before the pool forks"):
                pool.compile_models()
        workers = stack.enter_context(fork(config.WORKERS))
        queue = ChartQueue(cache, lambda batch: workers.apply_async(pool.draw_many, (batch,)))
        pages, jobs = _gather_and_render(
            specs_path,
            specs,
            site_dir,
            cache,
            workers,
            timer,
            instantiated,
            inputs,
            queue.add,
            early,
        )
        with (
            timer.stage(
                "plots",
                f"{len(jobs)} SVG charts: cached ones now, the rest on "
                f"{config.WORKERS} workers since the pages asked, while mkdocs runs",
            ),
            failing_as("plots", site_dir),
        ):
            queue.flush()
            charts = queue.charts(jobs)
            placeholders = queue.placeholders(jobs, PLACEHOLDER_SVG)
        previous = root / "docs" / config.GENERATED_DIRNAME
        with (
            timer.stage(
                "write",
                f"{len(pages)} pages and files, {len(charts)} charts, KaTeX "
                "(unchanged ones linked)",
            ),
            failing_as("write", site_dir),
        ):
            write_generated(pages, {**charts, **placeholders}, staging.docs, previous)
        with timer.stage("mkdocs", f"build --strict -> {site_dir}"), failing_as("mkdocs", site_dir):
            staging.site.mkdir()
            run_mkdocs(staging.site, staging.root / "mkdocs.yml", cache)
        with (
            timer.stage("charts", f"waiting for {len(queue.missing)} drawings"),
            failing_as("plots", site_dir),
        ):
            # A new file over each placeholder: never through a link. The site's copy is
            # a link to the docs' one (a file made is what costs, not its bytes).
            queue.finish(jobs, [staging.docs, staging.site], replace_file, replace_with_link)
    with timer.stage("swap", f"into {site_dir}"), failing_as("swap", site_dir):
        (staging.site / MARKER).write_text(marker_text(), "utf-8")
        outputs = _outputs(staging) if cache.enabled else None
        swap_into_place(staging, site_dir, root / "docs")
    # Recorded only when no input changed while the build ran.
    if (
        outputs is not None
        and key
        and (keys.input_key(specs_path, root, marker_text(), extra_docs, data.files()) == key)
    ):
        cache.put("outputs", key, outputs)
        cache.prune("outputs", keep=config.KEPT_OUTPUTS, protect={key})


def _outputs(staging: Staging) -> dict[str, Any] | None:
    site = keys.manifest(staging.site)
    generated = keys.manifest(staging.docs / config.GENERATED_DIRNAME)
    return None if site is None or generated is None else {"site": site, "generated": generated}


def _gather_and_render(
    specs_path: str | None,
    specs: SpecDatabase,
    site_dir: Path,
    cache: BuildCache,
    workers,
    timer: StageTimer,
    instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]] | None],
    inputs: ModelInputs | None,
    on_chart: Callable[[PlotJob], None] | None,
    early: pool.Early,
) -> tuple[dict[str, str], list[PlotJob]]:
    """Evaluations, formulas (``early``'s, else the pool's), history (pool), the
    calculator's model script (``early``'s, else the pool's) and the rendered pages;
    ``instantiated``: the formulas found in the cache (None: missing)."""
    early.start(workers)  # nothing more when its own process has started it
    history_key = keys.history_key(specs_path)
    history = cache.get("history", history_key)
    history_job = (
        None if history is not None else workers.apply_async(pool.history_for, (specs_path,))
    )
    with (
        timer.stage("gather", f"{len(specs)} GPUs x modes x recipes x fusion (pool)"),
        failing_as("gather", site_dir),
    ):
        atlas = pool.gather_on(workers, specs, cache, inputs, early.validation)
    with (
        timer.stage("latex", f"instantiated formulas of {len(early.missing)} GPUs (pool)"),
        failing_as("latex", site_dir),
    ):
        for name, formulas in early.formulas():
            instantiated[name] = formulas
            cache.put("latex", keys.latex_key(specs[name]), formulas)
    with (
        timer.stage("history", "spec and model changes from git (pool)"),
        failing_as("history", site_dir),
    ):
        if history_job is not None:
            history = history_job.get()
            cache.put("history", history_key, history)
    with (
        timer.stage("models", "the calculator's model script (pool)"),
        failing_as("models", site_dir),
    ):
        models_js = early.script()
    with timer.stage("render", "Markdown, CSV"), failing_as("render", site_dir):
        return render_pages(
            atlas, instantiated, history, on_chart, models_js, config.HELPERS, cache
        )
