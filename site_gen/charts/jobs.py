"""The charts of the site: what each one plots, as :class:`PlotJob` records (drawn later).

A page asks for its charts here; each distinct chart is drawn once (charts are
content-addressed by :func:`chart_key`) and written once: recipes whose formulas coincide,
such as mxfp8_cublas and mxfp8_cublas_rceil, link one file
(:func:`site_gen.pages.render.share_charts`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from roofline.capability import Support
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.model.torchao import gemm_time
from roofline.recipes import FORMATS, Mode, Recipe
from roofline.shapes import LLAMA_M, llama
from roofline.specs import GpuSpec
from roofline.symbols import ETA_GEMM, ETA_MEM, MEM_BW, K, M, N
from site_gen import config
from site_gen.context import GEN, gpu_dir
from site_gen.gather.decisions import DecisionMap
from site_gen.gather.dense import RecipeResult


@dataclass(frozen=True)
class PlotJob:
    """One chart to draw: docs-relative SVG path, plot function name and its arguments."""

    path: str
    kind: str
    kwargs: dict[str, Any]
    copies: list[str] = field(default_factory=list)  # more paths that show the same chart

    @property
    def paths(self) -> list[str]:
        """Every docs-relative path this drawing is written to."""
        return [self.path, *self.copies]


def _canonical(value: Any) -> Any:
    """A JSON-able, order-stable form of plot arguments (arrays by their bytes)."""
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ["ndarray", str(value.dtype), list(value.shape), digest]
    if isinstance(value, dict):
        return [[_canonical(k), _canonical(v)] for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def chart_key(kind: str, kwargs: dict[str, Any]) -> str:
    """A digest of a chart's kind and inputs: equal digests draw equal SVGs."""
    text = json.dumps([kind, _canonical(kwargs)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def dedupe(jobs: Iterable[PlotJob]) -> list[PlotJob]:
    """One job per distinct chart, in first-asked order; later equal ones become copies."""
    drawn: dict[str, PlotJob] = {}
    for job in jobs:
        key = chart_key(job.kind, job.kwargs)
        if key in drawn:
            drawn[key].copies.append(job.path)
        else:
            drawn[key] = PlotJob(job.path, job.kind, job.kwargs, list(job.copies))
    return list(drawn.values())


def heat_mark() -> tuple[int, int]:
    """The canonical shape, marked on heatmaps and decision maps."""
    return (config.CANONICAL_M, config.CANONICAL_KN)


# -- the roofline chart ------------------------------------------------------------------


@functools.cache
def _gemm_flops_and_bytes(fmt: str) -> tuple[Callable[..., float], Callable[..., float]]:
    """FLOP and bytes moved of an M x K @ K x N GEMM in ``fmt``, from the model's GEMM time.

    The model divides FLOP by the achievable peak and bytes by the achievable bandwidth;
    multiplying those back out gives the counts with the registry's bytes per element.
    """
    f = FORMATS[fmt]
    gemm = gemm_time(M, K, N, f, None)
    flops = gemm.compute * ETA_GEMM.symbol * f.peak.symbol
    moved = gemm.memory * ETA_MEM.symbol * MEM_BW.symbol
    return sympy.lambdify((M, K, N), flops), sympy.lambdify((M, K, N), moved)


def roofline_points(gpu: GpuSpec) -> list[tuple[str, str, float, float]]:
    """The llama GEMMs (forward) on the roofline per available format:
    (label, format, FLOP/byte, attainable FLOP/s)."""
    points = []
    for fmt in FORMATS.values():
        peak = gpu.value(fmt.peak.spec_key)
        if peak is None:
            continue
        flops_of, bytes_of = _gemm_flops_and_bytes(fmt.name)
        for shape in llama():
            intensity = float(flops_of(shape.M, shape.K, shape.N)) / float(
                bytes_of(shape.M, shape.K, shape.N)
            )
            attainable = min(peak, intensity * gpu.peak_mem_bw_bytes_sec)
            label = shape.name if fmt is FORMATS["bf16"] else ""
            points.append((label, fmt.name, intensity, attainable))
    return points


def roofline_chart(gpu: GpuSpec) -> PlotJob:
    """The GPU page's roofline: ceilings per format and the llama GEMMs."""
    ceilings = [
        (f.name, gpu.value(f.peak.spec_key))
        for f in FORMATS.values()
        if gpu.value(f.peak.spec_key) is not None
    ]
    return PlotJob(
        f"{gpu_dir(gpu)}/img/roofline.svg",
        "roofline",
        dict(
            title=f"Roofline of {gpu.name}",
            bandwidth_bytes_s=gpu.peak_mem_bw_bytes_sec,
            eta_mem=gpu.pct_achievable_mem_bw,
            eta_gemm=gpu.pct_achievable_gemm_tops,
            ceilings=ceilings,
            points=roofline_points(gpu),
        ),
    )


def decision_chart(gpu: GpuSpec, dmap: DecisionMap) -> PlotJob:
    """The GPU page's decision map of one mode (of the calibrated model, as the page asks)."""
    mode = dmap.mode.value
    return PlotJob(
        f"{gpu_dir(gpu)}/img/decision-{mode}.svg",
        "decision",
        dict(
            title=f"{gpu.name}: fastest native {mode} recipe (calibrated model)",
            heat_m=config.HEAT_M,
            heat_kn=config.HEAT_KN,
            best=dmap.best,
            recipes=dmap.recipes,
            mark=heat_mark(),
        ),
    )


# -- GPU x recipe charts -------------------------------------------------------------------


def breakdown_labels(result: RecipeResult) -> list[tuple[str, str, bool]]:
    """(term key, label, is bf16 baseline) of every model term, in term order (both models
    have the same terms under the same keys)."""
    model = build_model(result.mode, result.recipe)
    labels = []
    for term in model.terms:
        baseline = term.quantity in (Quantity.BF16_GEMM, Quantity.BF16_OVERHEAD)
        label = f"{term.key.split('.')[1]} GEMM" if term.is_gemm else f"cast: {term.label}"
        labels.append((term.key, label, baseline))
    return labels


def breakdown_terms(result: RecipeResult) -> list[tuple[str, bool, np.ndarray]]:
    """(label, is bf16 baseline, seconds per breakdown shape) of every model term."""
    return [
        (label, baseline, np.asarray(result.term_times[key], dtype=float))
        for key, label, baseline in breakdown_labels(result)
    ]


def _low_precision_share(result: RecipeResult) -> list[float]:
    """The low-precision time per breakdown shape as a % of the bf16 time (100 / speedup)."""
    bf16 = sum((t for _, base, t in breakdown_terms(result) if base), np.zeros(1))
    lowp = sum((t for _, base, t in breakdown_terms(result) if not base), np.zeros(1))
    return [float(v) for v in 100.0 * lowp / bf16]


def result_charts(result: RecipeResult, img: str) -> list[PlotJob]:
    """Heatmap, speedup-vs-M curves and time breakdown of a GPU x recipe page.

    For a calibrated result, torchao's model is drawn beside it: its speedup = 1 contour
    on the heatmap and its curves (dashed), its low-precision total on the breakdown.
    """
    shapes = [f"M={m}, K={k}, N={n}" for m, k, n in config.BREAKDOWN_SHAPES]
    reference = result.torchao if result.calibrated else None
    return [
        PlotJob(
            f"{img}-heatmap.svg",
            "heatmap",
            dict(
                title="",
                heat_m=config.HEAT_M,
                heat_kn=config.HEAT_KN,
                speedup=result.heat,
                mark=heat_mark(),
                reference=None if reference is None else reference.heat,
            ),
        ),
        PlotJob(
            f"{img}-curves.svg",
            "curves",
            dict(
                title="",
                curve_m=config.CURVE_M,
                curves=result.curves,
                reference=None if reference is None else reference.curves,
            ),
        ),
        PlotJob(
            f"{img}-breakdown.svg",
            "breakdown",
            dict(
                title="",
                shape_labels=shapes,
                recipe_label="low precision",
                terms=breakdown_terms(result),
                reference_share=None if reference is None else _low_precision_share(reference),
            ),
        ),
    ]


def compare_chart(recipe: Recipe, mode: Mode, results: list[RecipeResult]) -> PlotJob | None:
    """A recipe page's chart: its speedup vs M on every GPU that can compute it (of the
    results' model: the recipe page passes calibrated ones)."""
    kn = config.CANONICAL_KN
    # Emulated recipes run (solid lines), labelled so; hypothetical ones are dashed.
    series = [
        (
            f"{r.gpu.name} (emulated)" if r.capability.support is Support.EMULATED else r.gpu.name,
            r.native or r.capability.support is Support.EMULATED,
            r.curves[kn],
        )
        for r in results
        if r.computable
    ]
    if not series:
        return None
    # The model on a line of its own: with a long recipe name one line runs too wide.
    model = "\ncalibrated model" if results[0].calibrated else ""
    return PlotJob(
        f"{GEN}/recipes/img/{recipe.name}-{mode.value}.svg",
        "compare",
        dict(
            title=f"{recipe.name} ({mode.value}): speedup vs M at K = N = {kn}{model}",
            curve_m=config.CURVE_M,
            series=series,
        ),
    )


def _and_list(items: list[str]) -> str:
    """``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def chart_facts() -> dict[str, Any]:
    """Numbers the templates quote (grid ranges, shapes), from the grids the charts use."""
    return {
        "heat_m": (int(config.HEAT_M[0]), int(config.HEAT_M[-1])),
        "heat_kn": (int(config.HEAT_KN[0]), int(config.HEAT_KN[-1])),
        "curve_kn": config.BREAK_EVEN_KN,
        "curve_kn_text": _and_list([str(kn) for kn in config.BREAK_EVEN_KN]),
        "breakdown_shapes": len(config.BREAKDOWN_SHAPES),
        "llama_m": LLAMA_M,
    }
