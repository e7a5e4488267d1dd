"""Orchestration: gather -> render -> draw -> write -> mkdocs build --strict (-> serve).

:func:`build_site` is the only function that writes files. Stage timings are printed as
the build goes.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import logging
import multiprocessing
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from roofline.specs import SpecDatabase, load_specs
from site_gen import config, pool
from site_gen.assets import install_katex
from site_gen.formulas import Formula, instantiated_for_gpu
from site_gen.gather import gather
from site_gen.render import PlotJob, render_pages

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


def build_site(specs_path: str | None, site_dir: Path, serve: bool) -> None:
    """``roofline build``: the site from ``specs_path`` (None: bundled) into ``site_dir``."""
    build(specs_path, Path(site_dir))
    if serve:
        serve_site(Path(site_dir))


def build(
    specs_path: str | None,
    site_dir: Path,
    root: Path = config.REPO_ROOT,
) -> dict[str, float]:
    """Build the reference site from ``specs_path`` (None: bundled database) into ``site_dir``.

    ``root`` holds ``mkdocs.yml`` and ``docs/`` (the repository, or a copy in tests).

    Stages: load specs, gather (evaluate everything once), LaTeX (in a pool of 2 workers,
    overlapping gather), render Markdown, draw SVG charts (same pool), write
    ``docs/generated/`` (swapped in when complete), ``mkdocs build --strict``.
    """
    timer = StageTimer()
    with timer.stage("specs", specs_path or "bundled database"):
        specs = load_specs(specs_path)
    context = multiprocessing.get_context("fork")
    with context.Pool(WORKERS) as workers:
        latex_jobs = workers.map_async(pool.latex_for, list(specs.values()))
        with timer.stage("gather", f"{len(specs)} GPUs x modes x recipes x fusion"):
            atlas = gather(specs)
        with timer.stage("latex", "instantiated formulas (pool)"):
            instantiated = dict(latex_jobs.get())
        with timer.stage("render", "Markdown, CSV"):
            pages, jobs = render_pages(atlas, instantiated)
        with timer.stage("plots", f"{len(jobs)} SVG charts on {WORKERS} workers"):
            charts = dict(
                item
                for batch in workers.imap_unordered(pool.draw_many, _batches(jobs, PLOT_BATCH))
                for item in batch
            )
    with timer.stage("write", f"{len(pages)} pages and files, {len(charts)} charts, KaTeX"):
        write_generated(pages, charts, root / "docs")
    with timer.stage("mkdocs", f"build --strict -> {site_dir}"):
        run_mkdocs(site_dir, root / "mkdocs.yml")
    timer.timings["total"] = timer.total()
    print(f"[build] site built in {timer.total():.1f} s: {site_dir.resolve()}", flush=True)
    return timer.timings
