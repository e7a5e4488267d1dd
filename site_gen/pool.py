"""Worker-side entry points for the build's process pool (picklable, top-level)."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

from roofline.analysis.history import SPEC_PATH, SpecHistory, repo_root, spec_history
from roofline.errors import RooflineError
from roofline.evaluate import compile_model
from roofline.publish.jscode import calculator_script
from roofline.recipes import RECIPE_LIST
from roofline.specs import GpuSpec, SpecDatabase
from site_gen import config, keys
from site_gen.cache import BuildCache
from site_gen.charts.draw import gpu, heatmap, plots
from site_gen.charts.draw import models as model_charts
from site_gen.charts.draw import validation as validation_charts
from site_gen.charts.jobs import PlotJob
from site_gen.gather import dense
from site_gen.gather.validation import ValidationData, gather_validation
from site_gen.inputs import ModelInputs, bundled_inputs
from site_gen.markup.formulas import Formula, instantiated_for_gpu

_PLOTTERS = {
    "heatmap": heatmap.heatmap_svg,
    "curves": plots.curves_svg,
    "breakdown": plots.breakdown_svg,
    "roofline": gpu.roofline_svg,
    "decision": gpu.decision_svg,
    "compare": gpu.compare_svg,
    "validation": validation_charts.validation_svg,
    "cv_size": validation_charts.cv_size_svg,
    "model_time": model_charts.model_time_svg,
}


def close_inherited(fd: int) -> None:
    """Pool initializer: close the build lock's descriptor the worker inherited by fork.

    The lock stays held by the parent; a worker that outlives a killed build then
    cannot keep the build root locked.
    """
    with contextlib.suppress(OSError):
        os.close(fd)


def compile_models() -> int:
    """Compile every model the gather evaluates (each recipe x mode x fusion, torchao's and
    the calibrated one, and the grouped layers), in the build's process before the pool
    forks: the workers inherit them instead of each compiling its own copy (a few seconds
    of sympy each). Returns how many."""
    count = 0
    for recipe in RECIPE_LIST:
        for calibrated in (False, True):
            for mode in config.MODES:
                if mode not in recipe.plans:
                    continue
                for fusion in config.FUSIONS:
                    compile_model(mode, recipe, fusion, calibrated)
                    count += 1
                if mode in config.GROUPED_MODES:
                    compile_model(mode, recipe, False, calibrated, grouped=True)
                    count += 1
    return count


def models_script() -> str:
    """The calculator's model script (:func:`roofline.publish.jscode.calculator_script`),
    made on a worker while the others gather."""
    return calculator_script()


def draw(job: PlotJob) -> list[tuple[str, str]]:
    """Draw one chart: (docs-relative path, SVG text) for each path that shows it."""
    svg = _PLOTTERS[job.kind](**job.kwargs)
    return [(path, svg) for path in job.paths]


def draw_many(jobs: list[PlotJob]) -> list[tuple[str, str]]:
    """Draw a batch of charts in one task (fewer round trips)."""
    return [item for job in jobs for item in draw(job)]


def warm(
    specs: SpecDatabase, inputs: ModelInputs | None, cache: BuildCache, name: str
) -> tuple[Counter[str], Counter[str]]:
    """Evaluate one GPU's share of the gather into ``cache``; returns this task's cache
    hits and misses (the worker's copy of the cache counts them)."""
    cache.hits, cache.misses = Counter(), Counter()
    dense.gather(specs, cache, inputs, only=(name,))
    return cache.hits, cache.misses


def validation_of(specs: SpecDatabase, inputs: ModelInputs | None) -> ValidationData:
    """The Validation page's data (:func:`site_gen.gather.validation.gather_validation`)
    for a site of ``specs`` built from ``inputs`` (None: the bundled ones)."""
    return gather_validation(specs, inputs if inputs is not None else bundled_inputs())


def gather_on(
    workers: Pool,
    specs: SpecDatabase,
    cache: BuildCache,
    inputs: ModelInputs | None = None,
    validation: Any = None,
) -> dense.Atlas:
    """:func:`site_gen.gather.dense.gather`, its evaluations split over ``workers`` (one
    task per GPU, :func:`warm`), which store them in ``cache``; the gather here then reads
    them. The cache counts each record once, where it was made or found. Without an
    enabled cache there is nothing to hand results over in, and this process evaluates."""
    if not cache.enabled:
        return dense.gather(specs, cache, inputs)
    # The Validation page's data (every published set predicted, about a second) on a
    # worker too: else this process computes it alone after the evaluations, and a
    # one-GPU rebuild's second worker has nothing to do meanwhile.
    if validation is None:  # else already started (Early.start)
        validation = workers.apply_async(validation_of, (specs, inputs))
    tasks = [workers.apply_async(warm, (specs, inputs, cache, name)) for name in specs]
    found, made = Counter(cache.hits), Counter(cache.misses)
    for task in tasks:
        hits, misses = task.get()
        found, made = found + hits, made + misses
    before = Counter(cache.misses)
    atlas = dense.gather(specs, cache, inputs, validation=validation.get())
    # This gather's hits are the records the workers just made or found; a miss here is a
    # record a worker could not store, evaluated again.
    cache.hits, cache.misses = found, made + (cache.misses - before)
    return atlas


def latex_for(gpu: GpuSpec) -> tuple[str, dict[tuple[str, str], tuple[Formula, ...]]]:
    """Instantiated formulas of one GPU."""
    return gpu.name, instantiated_for_gpu(gpu)


def history_for(specs_path: str | None) -> SpecHistory:
    """The git history of the spec file the build uses (empty, with a note, outside git)."""
    if specs_path is None:
        return spec_history(config.REPO_ROOT, SPEC_PATH)
    path = Path(specs_path).resolve()
    try:
        root = repo_root(path.parent)
    except RooflineError as exc:
        return SpecHistory(note=f"no history: {exc}", path=str(specs_path))
    return spec_history(root, str(path.relative_to(root)))


class Early:
    """The formulas of the GPUs the cache lacks and the calculator's model script: made
    on a process forked before the compile (:meth:`start`), else on the workers. When
    that is little (a rebuild after a GPU or two changed), the Validation page's data as
    well: it compiles the models it needs itself, beside the build's own compile, instead
    of after it."""

    def __init__(
        self,
        cache: BuildCache,
        instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]] | None],
        specs: SpecDatabase,
        inputs: ModelInputs | None = None,
    ) -> None:
        self.cache = cache
        self.specs, self.inputs = specs, inputs
        self.models_key = keys.models_script_key()
        self.models_js = cache.get("models-js", self.models_key)
        self.missing = [g for g in specs.values() if instantiated[g.name] is None]
        self.latex_jobs: Any = None
        self.models_job: Any = None
        #: The Validation page's data, pending, when this process makes it.
        self.validation: Any = None

    def needed(self) -> bool:
        """Whether there is anything to make."""
        return bool(self.missing) or self.models_js is None

    def start(self, workers, own: bool = False) -> None:
        """Start what is to be made on ``workers`` (once); ``own``: a process of its own,
        which takes the Validation page's data too when there is little else to make (no
        script, formulas of at most one GPU per worker)."""
        if self.latex_jobs is not None:
            return
        # The script first: the longest task, in the queue before the formulas.
        if self.models_js is None:
            self.models_job = workers.apply_async(models_script)
        self.latex_jobs = workers.map_async(latex_for, self.missing)
        little = self.models_js is not None and len(self.missing) <= config.WORKERS
        if own and self.cache.enabled and little:
            self.validation = workers.apply_async(validation_of, (self.specs, self.inputs))

    def formulas(self) -> list[tuple[str, dict[tuple[str, str], tuple[Formula, ...]]]]:
        """(GPU name, formulas) of each GPU that lacked them."""
        return self.latex_jobs.get()

    def script(self) -> str:
        """The calculator's model script, stored in the cache when it was made."""
        if self.models_job is not None:
            self.models_js = self.models_job.get()
            self.models_job = None
            self.cache.put("models-js", self.models_key, self.models_js)
        return self.models_js
