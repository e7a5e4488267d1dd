"""Orchestration: gather -> render -> draw -> write -> mkdocs build --strict (-> serve).

:func:`build_site` is the only function that writes files. Stage timings are printed as
the build goes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import logging
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from roofline.errors import RooflineError
from roofline.specs import GpuSpec, SpecDatabase, load_specs
from site_gen import config, pool
from site_gen.assets import KATEX_VERSION, install_katex
from site_gen.cache import (
    BuildCache,
    copy_site,
    digest,
    files_digest,
    gpu_digest,
    model_digest,
    tool_versions,
)
from site_gen.formulas import Formula, instantiated_for_gpu
from site_gen.gather import gather
from site_gen.render import PlotJob, chart_key, render_pages

WORKERS = 2
PLOT_BATCH = 6


class StageTimer:
    """Prints ``[stage] ... seconds`` lines and keeps the totals."""

    def __init__(self, stream=sys.stdout) -> None:
        self.stream = stream
        self.start = time.perf_counter()
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        print(f"[build] {name:<8} {detail}", file=self.stream, flush=True)
        began = time.perf_counter()
        yield
        self.timings[name] = time.perf_counter() - began
        print(
            f"[build] {name:<8} done in {self.timings[name]:5.1f} s", file=self.stream, flush=True
        )

    def total(self) -> float:
        """Seconds since the build began."""
        return time.perf_counter() - self.start


def generate_docs(
    specs: SpecDatabase,
    instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]]] | None = None,
) -> tuple[dict[str, str], list[PlotJob]]:
    """Gather and render without drawing or writing (used by the golden tests)."""
    atlas = gather(specs)
    if instantiated is None:
        instantiated = {gpu.name: instantiated_for_gpu(gpu) for gpu in specs.values()}
    return render_pages(atlas, instantiated)


def _batches(jobs: list[PlotJob], size: int) -> list[list[PlotJob]]:
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


def write_generated(pages: dict[str, str], charts: dict[str, str], docs_dir: Path) -> Path:
    """Write every generated file into a temp folder, then swap it into place."""
    prefix = config.GENERATED_DIRNAME + "/"
    final = docs_dir / config.GENERATED_DIRNAME
    staging = docs_dir / f".{config.GENERATED_DIRNAME}.tmp"
    old = docs_dir / f".{config.GENERATED_DIRNAME}.old"
    for leftover in (staging, old):
        shutil.rmtree(leftover, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for path, text in {**pages, **charts}.items():
            if not path.startswith(prefix):
                raise ValueError(f"generated path outside {prefix}: {path}")
            target = staging / path.removeprefix(prefix)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, "utf-8")
        install_katex(staging / "katex")
        if final.exists():
            final.rename(old)
        staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return final


def run_mkdocs(site_dir: Path, mkdocs_yml: Path = config.MKDOCS_YML) -> None:
    """``mkdocs build --strict`` into ``site_dir``; raises on any warning."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("[mkdocs] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    try:
        cfg = load_config(str(mkdocs_yml), site_dir=str(site_dir.resolve()), strict=True)
        # Snippet paths are relative to the working directory; pin them to this docs_dir.
        cfg.mdx_configs.setdefault("pymdownx.snippets", {})["base_path"] = [cfg.docs_dir]
        build(cfg)
    finally:
        logger.removeHandler(handler)


def serve_site(site_dir: Path, port: int = 8000) -> None:
    """Serve ``site_dir`` on http://127.0.0.1:port until interrupted."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"[build] serving {site_dir} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


class BuildError(RooflineError):
    """A build stage failed; the previous site folder was left untouched."""


def build_site(specs_path: str | None, site_dir: Path, serve: bool, use_cache: bool = True
               ) -> None:  # fmt: skip
    """``roofline build``: the site from ``specs_path`` (None: bundled) into ``site_dir``."""
    build(specs_path, Path(site_dir), cache=BuildCache(enabled=use_cache))
    if serve:
        serve_site(Path(site_dir))


@contextlib.contextmanager
def _failing_as(stage: str, site_dir: Path) -> Iterator[None]:
    """Turn any failure of ``stage`` into a BuildError that says the site is unchanged."""
    try:
        yield
    except RooflineError:
        raise
    except Exception as exc:
        detail = str(exc).strip() or type(exc).__name__
        raise BuildError(
            f"build failed in stage {stage}: {detail}\n"
            f"the previous site in {site_dir} was left exactly as it was"
        ) from exc


@functools.cache
def _code_digest(*names: str) -> str:
    """Digest of some site_gen modules (read once per build process)."""
    return files_digest([config.PACKAGE_DIR / n for n in names], config.PACKAGE_DIR)


def _latex_key(gpu: GpuSpec) -> str:
    code = _code_digest("formulas.py", "config.py")
    return digest("latex", model_digest(), code, gpu_digest(gpu))


def _chart_cache_key(job: PlotJob) -> str:
    return digest("chart", chart_key(job.kind, job.kwargs), _code_digest("plots.py"),
                  tool_versions())  # fmt: skip


def _site_key(root: Path, pages: dict[str, str], chart_keys: dict[str, str]) -> str:
    """Digest of every input of the mkdocs run, charts by their cache keys (not bytes).

    Keys come from content, not from the drawn SVGs, so the lookup can happen before
    the charts are finished (they are drawn while mkdocs runs).
    """
    docs = root / "docs"
    written = [p for p in docs.rglob("*") if p.is_file()
               and config.GENERATED_DIRNAME not in p.relative_to(docs).parts[:1]]  # fmt: skip
    page_digests = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in pages.items()}
    mkdocs_yml = (root / "mkdocs.yml").read_text("utf-8")
    return digest("site", files_digest(written, root), page_digests, chart_keys,
                  KATEX_VERSION, mkdocs_yml, tool_versions())  # fmt: skip


def swap_into_place(staging: Path, site_dir: Path) -> None:
    """Replace ``site_dir`` by the complete build in ``staging`` (two renames)."""
    old = site_dir.with_name(f".{site_dir.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if site_dir.exists():
        site_dir.rename(old)
    staging.rename(site_dir)
    shutil.rmtree(old, ignore_errors=True)


#: Stands in for a chart still being drawn while mkdocs runs; replaced before the swap.
PLACEHOLDER_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>' + "\n"


def _start_charts(workers, jobs: list[PlotJob], cache: BuildCache):
    """Cached charts now; the rest start drawing on the pool (returned as a pending result)."""
    keys = {job.path: _chart_cache_key(job) for job in jobs}
    charts: dict[str, str] = {}
    missing = []
    for job in jobs:
        svg = cache.get("charts", keys[job.path])
        if svg is None:
            missing.append(job)
        else:
            charts.update((path, svg) for path in job.paths)
    pending = workers.map_async(pool.draw_many, _batches(missing, PLOT_BATCH))
    chart_keys = {path: keys[job.path] for job in jobs for path in job.paths}
    return charts, missing, pending, chart_keys


def _finish_charts(pending, missing: list[PlotJob], cache: BuildCache,
                   folders: list[Path]) -> int:  # fmt: skip
    """Wait for the drawn charts, store them, write them over their placeholders."""
    drawn = dict(item for batch in pending.get() for item in batch)
    for job in missing:
        cache.put("charts", _chart_cache_key(job), drawn[job.path])
    for folder in folders:
        for path, svg in drawn.items():
            (folder / path).write_text(svg, "utf-8")
    return len(drawn)


def build(
    specs_path: str | None,
    site_dir: Path,
    root: Path = config.REPO_ROOT,
    cache: BuildCache | None = None,
) -> dict[str, float]:
    """Build the reference site from ``specs_path`` (None: bundled database) into ``site_dir``.

    ``root`` holds ``mkdocs.yml`` and ``docs/`` (the repository, or a copy in tests).

    Stages: load specs, gather (evaluate everything once), LaTeX and git history (in a
    pool of 2 workers, overlapping gather), render Markdown, write ``docs/generated/``
    (swapped in when complete; charts still being drawn get placeholders), ``mkdocs build
    --strict`` into a staging folder while the pool draws the charts, then the charts over
    their placeholders; the staging folder replaces ``site_dir`` only when the whole build
    succeeded. Evaluations,
    formulas, charts and the mkdocs output are reused from ``cache`` when their inputs
    are unchanged (pass ``BuildCache(enabled=False)`` for a cold build).
    """
    cache = cache if cache is not None else BuildCache()
    site_dir = Path(site_dir)
    timer = StageTimer()
    with timer.stage("specs", specs_path or "bundled database"):
        specs = load_specs(specs_path)
    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS) as workers:
        instantiated = {g.name: cache.get("latex", _latex_key(g)) for g in specs.values()}
        missing = [g for g in specs.values() if instantiated[g.name] is None]
        latex_jobs = workers.map_async(pool.latex_for, missing)
        history_job = workers.apply_async(pool.history_for, (specs_path,))
        with timer.stage("gather", f"{len(specs)} GPUs x modes x recipes x fusion"), \
                _failing_as("gather", site_dir):  # fmt: skip
            atlas = gather(specs, cache)
        with timer.stage("latex", f"instantiated formulas of {len(missing)} GPUs (pool)"), \
                _failing_as("latex", site_dir):  # fmt: skip
            for name, formulas in latex_jobs.get():
                instantiated[name] = formulas
                cache.put("latex", _latex_key(specs[name]), formulas)
        with timer.stage("history", "spec and model changes from git (pool)"), \
                _failing_as("history", site_dir):  # fmt: skip
            history = history_job.get()
        with timer.stage("render", "Markdown, CSV"), _failing_as("render", site_dir):
            pages, jobs = render_pages(atlas, instantiated, history)
        with timer.stage("plots", f"{len(jobs)} SVG charts: cached ones now, the rest on "
                         f"{WORKERS} workers while mkdocs runs"), \
                _failing_as("plots", site_dir):  # fmt: skip
            charts, missing, pending, chart_keys = _start_charts(workers, jobs, cache)
            placeholders = {path: PLACEHOLDER_SVG for job in missing for path in job.paths}
        with timer.stage("write", f"{len(pages)} pages and files, {len(chart_keys)} charts, "
                         "KaTeX"), _failing_as("write", site_dir):  # fmt: skip
            write_generated(pages, {**charts, **placeholders}, root / "docs")
        site_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.tmp-", dir=site_dir.parent))
        try:
            with timer.stage("mkdocs", f"build --strict -> {site_dir}"), \
                    _failing_as("mkdocs", site_dir):  # fmt: skip
                key = _site_key(root, pages, chart_keys)
                stored = cache.site(key)
                if stored is not None:
                    copy_site(stored, staging)
                else:
                    run_mkdocs(staging, root / "mkdocs.yml")
            with timer.stage("charts", f"waiting for {len(missing)} drawings"), \
                    _failing_as("plots", site_dir):  # fmt: skip
                _finish_charts(pending, missing, cache, [root / "docs", staging])
            if stored is None:
                cache.put_site(key, staging)
            swap_into_place(staging, site_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    timer.timings["total"] = timer.total()
    print(f"[build] cache: {cache.summary()}", flush=True)
    print(f"[build] site built in {timer.total():.1f} s: {site_dir.resolve()}", flush=True)
    return timer.timings
