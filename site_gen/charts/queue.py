"""The build's charts, queued as the pages ask for them: cached ones at once, the rest
drawn in batches on the pool while the pages are still being rendered (and then while
mkdocs runs), instead of all after the last page.

The queue does not draw: ``submit`` (given by the build) starts a batch on the pool and
returns its pending result, a list of (path, SVG) per chart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from site_gen import config
from site_gen.cache import BuildCache
from site_gen.charts.jobs import PlotJob
from site_gen.keys import chart_cache_key


class ChartQueue:
    """Charts by first path: the cached SVGs and the jobs still being drawn."""

    def __init__(self, cache: BuildCache, submit: Callable[[list[PlotJob]], Any]) -> None:
        self.cache = cache
        self.submit = submit
        self.cached: dict[str, str] = {}  # first path -> SVG
        self.missing: list[PlotJob] = []
        self._keys: dict[str, str] = {}
        self._batch: list[PlotJob] = []
        self._pending: list[Any] = []

    def add(self, job: PlotJob) -> None:
        """Take one distinct chart: from the cache, or into the next batch to draw."""
        key = self._keys[job.path] = chart_cache_key(job)
        svg = self.cache.get("charts", key)
        if svg is not None:
            self.cached[job.path] = svg
            return
        self.missing.append(job)
        self._batch.append(job)
        if len(self._batch) >= config.PLOT_BATCH:
            self.flush()

    def flush(self) -> None:
        """Start the batch gathered so far."""
        if self._batch:
            self._pending.append(self.submit(self._batch))
            self._batch = []

    def charts(self, jobs: list[PlotJob]) -> dict[str, str]:
        """Every path of the cached ones of ``jobs`` -> its SVG."""
        return _every_path(jobs, self.cached)

    def placeholders(self, jobs: list[PlotJob], svg: str) -> dict[str, str]:
        """Every path of the ones of ``jobs`` still being drawn -> ``svg``."""
        return _every_path(jobs, {job.path: svg for job in self.missing})

    def finish(
        self,
        jobs: list[PlotJob],
        folders: list[Path],
        write: Callable[[Path, bytes], None],
        copy: Callable[[Path, Path], None],
    ) -> int:
        """Wait for the drawings, store them in the cache and ``write(path, bytes)`` each
        to every path of its job in the first folder (over its placeholder), then
        ``copy(written, path)`` it to the same path in each other folder; returns how
        many were drawn."""
        self.flush()
        drawn = {path: svg for pending in self._pending for path, svg in pending.get()}
        for job in self.missing:
            self.cache.put("charts", self._keys[job.path], drawn[job.path])
        files = _every_path(jobs, {job.path: drawn[job.path] for job in self.missing})
        first, *others = folders
        for path, svg in files.items():
            write(first / path, svg.encode())
            for folder in others:
                copy(first / path, folder / path)
        return len(self.missing)


def _every_path(jobs: list[PlotJob], by_first: dict[str, str]) -> dict[str, str]:
    """Each path of the ``jobs`` whose first path ``by_first`` holds -> that value. ``jobs``
    is the final list: a job may have gained copies since it was added."""
    return {path: by_first[j.path] for j in jobs if j.path in by_first for path in j.paths}
