"""Row builders of the GPU x recipe page's own tables (headline, break-even, breakdown) and
of a recipe's table across GPUs; the shared speedup cells are :mod:`site_gen.pages.rows.speedup`."""

from __future__ import annotations

from roofline import units
from roofline.analysis.error_bands import ErrorBand
from site_gen import config
from site_gen.context import SUPPORT_BADGE, Cell, Table
from site_gen.gather.dense import RecipeResult
from site_gen.markup import safe
from site_gen.pages.rows.speedup import (
    CALIBRATED,
    DASH,
    TORCHAO,
    band_text,
    break_even_range,
    fmt_m,
    result_link,
    speedup_range,
    speedup_summary,
    with_range,
)


def headline_table(result: RecipeResult, band: ErrorBand | None = None) -> Table:
    """The summary under a GPU x recipe page's title: a row per model (calibrated first,
    its canonical speedup in bold), the plausible range where efficiencies are assumed,
    and the calibrated speedups' cross-validated error ``band``."""
    kn = config.CANONICAL_KN
    header = (
        "model",
        f"M = {config.CANONICAL_M}, K = N = {kn}",
        "with fusion",
        "llama shapes (all four)",
        f"break-even M at K = N = {kn}",
    )
    calibrated, torchao = speedup_summary(result), speedup_summary(result.torchao)
    rows: list[tuple[Cell, ...]] = [
        (
            "calibrated model",
            safe.strong(calibrated["canonical"]),
            calibrated["canonical_fused"],
            calibrated["llama"],
            calibrated["break_even"],
        ),
        (
            "torchao model",
            torchao["canonical"],
            torchao["canonical_fused"],
            torchao["llama"],
            torchao["break_even"],
        ),
    ]
    spread = (
        speedup_range(result),
        speedup_range(result, "canonical_fused"),
        speedup_range(result, "llama"),
        break_even_range(result),
    )
    if any(spread):
        rows.append(
            ("plausible range (assumed parameters)", *(value or units.MISSING for value in spread))
        )
    if band is not None:
        text = band_text(band)
        rows.append(("calibrated: cross-validated error band", text, text, text, DASH))
    return Table(header, rows, name="headline")


def page_break_even_table(result: RecipeResult) -> Table:
    """Break-even M of one GPU x recipe per K = N, unfused and fused, in both models."""
    header = (
        "K=N",
        f"break-even M ({CALIBRATED})",
        f"fused ({CALIBRATED})",
        f"break-even M ({TORCHAO})",
        f"fused ({TORCHAO})",
    )
    table = Table(header, name="break-even")
    for kn in config.BREAK_EVEN_KN:
        cells = [
            fmt_m(r.break_even(kn, fusion))
            for r in (result, result.torchao)
            for fusion in (False, True)
        ]
        table.rows.append((str(kn), *cells))
    return table


def recipe_gpus_table(
    results: list[RecipeResult], page: str, name: str, bands: list[ErrorBand]
) -> Table:
    """One recipe in one mode on every GPU: headline speedups and break-even M of the
    calibrated model with its cross-validated error band (``bands``, one per result),
    torchao's canonical speedup beside them."""
    kn = config.CANONICAL_KN
    shape = f"M={config.CANONICAL_M}, K=N={kn}"
    header = (
        "GPU",
        "support",
        f"{shape} ({CALIBRATED})",
        "CV error band",
        f"{shape} ({TORCHAO})",
        f"llama, all four ({CALIBRATED})",
        f"break-even M at K=N={kn} ({CALIBRATED})",
    )
    table = Table(header, name=name)
    for r, band in zip(results, bands, strict=True):
        gpu_link = safe.link(r.gpu.name, result_link(r, page))
        if not r.computable:
            table.rows.append((gpu_link, "not computable", DASH, DASH, DASH, DASH, DASH))
            continue
        summary = speedup_summary(r)
        badge = SUPPORT_BADGE[r.capability.support]
        table.rows.append(
            (
                gpu_link,
                badge,
                with_range(summary["canonical"], r),
                band_text(band),
                units.speedup(r.torchao.canonical_speedup),
                summary["llama"],
                summary["break_even"],
            )
        )
    return table


def breakdown_table(result: RecipeResult, labels: list[tuple[str, str, bool]]) -> Table:
    """Time of each GEMM and cast kernel at the breakdown shapes, in both models (µs): a row
    per kernel, a column per shape and model (fewer, shorter cells than a row per shape).

    ``labels``: (term key, label, is bf16 baseline) per model term (both models have the
    same terms under the same keys).
    """
    shapes = [f"M={m}, K={k}, N={n}" for m, k, n in config.BREAKDOWN_SHAPES]
    header = (
        "kernel",
        "side",
        *(f"{shape}, {model} (µs)" for shape in shapes for model in (CALIBRATED, TORCHAO)),
    )
    table = Table(header, raw=[], name="breakdown")
    for key, label, baseline in labels:
        side = "bf16" if baseline else "low precision"
        times_us = [
            float(r.term_times[key][i]) * 1e6
            for i in range(len(shapes))
            for r in (result, result.torchao)
        ]
        table.rows.append((label, side, *(_us(t) for t in times_us)))
        table.raw.append((label, side, *times_us))  # type: ignore[union-attr]
    return table


def _us(value: float) -> str:
    """Microseconds to four significant digits (the export has them in full)."""
    return units.magnitude(value)
