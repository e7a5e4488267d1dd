"""Row builders of the speedup tables several pages share.

Every number and every choice (best, ranking, break-even M, aggregate) comes from the
decision layer (:mod:`roofline.analysis.guidance`, through :mod:`site_gen.gather.decisions`)
and every number is formatted by :mod:`roofline.units`; this module only lays them out as
:class:`~site_gen.context.Table` cells with their export names.

The pages lead with the calibrated model: the results given here are calibrated ones
(:attr:`RecipeResult.calibrated`), and torchao's value of the same combination
(:attr:`RecipeResult.torchao`) stands beside each headline number, in a column whose
header names the model. Where a GPU's efficiencies are assumed, a headline number also
carries its plausible range (:attr:`RecipeResult.spread`).
"""

from __future__ import annotations

from roofline import units
from roofline.analysis import guidance
from roofline.analysis.error_bands import ErrorBand, model_band
from roofline.capability import Support
from roofline.evaluate import compile_model
from roofline.recipes import Mode
from site_gen import config
from site_gen.context import SUPPORT_BADGE, Cell, Table, gpu_page, recipe_result_page, rel
from site_gen.gather.decisions import best_at_canonical
from site_gen.gather.dense import Atlas, RecipeResult, table_sets
from site_gen.markup import safe

DASH = units.MISSING
#: How a column header names its model (exports carry the headers as column names).
CALIBRATED = "calibrated"
TORCHAO = "torchao"
#: Marks a calibrated number that rests on a fallback (no measurement on the GPU for a
#: parameter its recipe uses), beside its cross-validated error band.
FALLBACK_MARK = "*"
#: Marks a GPU whose calibrated efficiencies are assumed (no calibration data).
ASSUMED_MARK = "‡"


def fmt_m(value: float | None) -> str:
    """A break-even M searched over the site's curve grid (:func:`roofline.units.break_even_m`)."""
    return units.break_even_m(value, config.CURVE_M[0], config.CURVE_M[-1])


def speedup_range(result: RecipeResult, key: str = "canonical") -> str:
    """The plausible range of a calibrated headline speedup (``1.10–1.90×``); "" when no
    assumed parameter moves it (both ends print the same)."""
    if key not in result.spread:
        return ""
    low, high = (units.speedup(v).removesuffix("×") for v in result.spread[key])
    return "" if low == high else f"{low}–{high}×"


def break_even_range(result: RecipeResult) -> str:
    """The plausible range of the calibrated break-even M at the canonical K = N."""
    if "break_even" not in result.spread:
        return ""
    low, high = (fmt_m(v) for v in result.spread["break_even"])
    return "" if low == high else f"{low} – {high}"


def with_range(text: str, result: RecipeResult, key: str = "canonical") -> str:
    """``text`` followed by the plausible range in parentheses, when there is one."""
    spread = speedup_range(result, key)
    return f"{text} ({spread})" if spread else text


#: M x K x N of the canonical shape: the size the site's headline numbers are at (the
#: llama shapes and whole models are of the same size or larger).
CANONICAL_MKN = float(config.CANONICAL_M * config.CANONICAL_KN * config.CANONICAL_KN)


def error_band(
    atlas: Atlas, gpu_name: str, mode: Mode, recipe: str, mkn: float = CANONICAL_MKN
) -> ErrorBand:
    """The cross-validated error band of ``recipe``'s calibrated numbers on a GPU at
    shapes of ``mkn``'s size (:func:`roofline.analysis.error_bands.model_band`)."""
    model = compile_model(mode, recipe, calibrated=True).model
    return model_band(atlas.specs[gpu_name], atlas.calibration(gpu_name), model, mkn)


def band_text(band: ErrorBand) -> str:
    """``±23%``, or ``±33%*`` when the number rests on a fallback."""
    return band.short() + (FALLBACK_MARK if band.fallback else "")


def gpu_cell(atlas: Atlas, gpu_name: str, link: str) -> safe.Md:
    """A GPU's name linking to its page, marked when its efficiencies are assumed."""
    if atlas.has_calibration_data(gpu_name):
        return safe.link(gpu_name, link)
    return safe.concat(safe.link(gpu_name, link), ASSUMED_MARK)


def result_link(result: RecipeResult, page: str) -> str:
    """Link from ``page`` to the GPU x mode x recipe page of ``result``."""
    return rel(recipe_result_page(result.gpu, result.mode, result.recipe.name), page)


def recipe_cell(result: RecipeResult, page: str) -> safe.Md:
    """A recipe's name linking to its result page, breakable after underscores (long
    names would otherwise push the tables' model columns off narrow screens)."""
    return safe.link(safe.breakable(result.recipe.name), result_link(result, page))


def llama_names() -> tuple[str, ...]:
    """Names of the llama shapes, in table order."""
    return tuple(s.name for s in next(t for t in table_sets() if t.name == "llama").shapes)


def matrix_cell(
    result: RecipeResult, value: float | None, page: str, best: bool, fallback: bool = False
) -> safe.Md:
    """A home matrix cell: the speedup linking to the GPU x recipe page, marked
    :data:`FALLBACK_MARK` when it rests on a fallback."""
    link = result_link(result, page)
    support = result.capability.support
    if value is None or support is Support.IMPOSSIBLE:
        return safe.link(DASH, link)
    text = safe.concat(units.speedup(value), FALLBACK_MARK if fallback else "")
    if support is Support.HYPOTHETICAL:
        text = safe.concat(safe.emphasis(text), "†")
    elif support is Support.EMULATED:  # runs, as bf16 GEMMs: marked, not italic
        text = safe.concat(text, "‡")
    if best:
        text = safe.strong(text)
    return safe.link(text, link)


def matrix_table(
    atlas: Atlas, mode: Mode, shape_set: str, page: str, calibrated: bool = True
) -> Table:
    """GPU x recipe speedups of ``mode`` at a shape set; the best native one in bold.

    Of the calibrated model (export ``matrix-<mode>-<set>``) or torchao's
    (``matrix-<mode>-<set>-torchao``).
    """
    recipes = atlas.recipes(mode)
    header = ("GPU", *(safe.breakable(r.name) for r in recipes))
    if calibrated:
        header = (*header, "CV error band")
    suffix = "" if calibrated else "-torchao"
    table = Table(header, name=f"matrix-{mode.value}-{shape_set}{suffix}")
    for gpu in atlas.gpus:
        results = atlas.for_gpu(gpu.name, mode, calibrated)
        values = [r.aggregate_speedup(shape_set) if r.computable else None for r in results]
        best, _ = guidance.pick_best(
            {r.recipe.name: v for v, r in zip(values, results, strict=True) if r.native and v}
        )
        bands = [error_band(atlas, gpu.name, mode, r.recipe.name) for r in results]
        cells = [
            matrix_cell(r, v, page, r.recipe.name == best, calibrated and b.fallback)
            for v, r, b in zip(values, results, bands, strict=True)
        ]
        row = (gpu_cell(atlas, gpu.name, rel(gpu_page(gpu), page)), *cells)
        table.rows.append((*row, _bands_cell(bands)) if calibrated else row)
    return table


def _bands_cell(bands: list[ErrorBand]) -> str:
    """A matrix row's bands: ``±23%`` for its measured numbers, ``±33%*`` for those on a
    fallback (each once, measured first)."""
    texts = dict.fromkeys(band_text(b) for b in sorted(bands, key=lambda b: b.fallback))
    return "; ".join(texts)


def _best_cell(atlas: Atlas, gpu: str, mode: Mode, page: str, calibrated: bool) -> Cell:
    best = best_at_canonical(atlas, gpu, mode, calibrated)
    if best is None:
        return "stay in bf16"
    text = f"{best.recipe.name}, {units.speedup(best.canonical_speedup)}"
    if not calibrated:
        return text
    band = band_text(error_band(atlas, gpu, mode, best.recipe.name))
    return safe.link(with_range(f"{text} {band}", best), result_link(best, page))


def best_table(atlas: Atlas, page: str) -> Table:
    """Per GPU, the best native recipe at the canonical shape in each mode: by the
    calibrated model (with its plausible range where efficiencies are assumed), then by
    torchao's."""
    rows = []
    for gpu in atlas.gpus:
        row: list[Cell] = [gpu_cell(atlas, gpu.name, rel(gpu_page(gpu), page))]
        for mode in config.MODES:
            row += [
                _best_cell(atlas, gpu.name, mode, page, True),
                _best_cell(atlas, gpu.name, mode, page, False),
            ]
        rows.append(tuple(row))
    header = (
        "GPU",
        *(
            f"best {mode.value} recipe ({model})"
            for mode in config.MODES
            for model in (CALIBRATED, TORCHAO)
        ),
    )
    return Table(header, rows, name="best")


def break_even_table(results: list[RecipeResult], page: str, name: str) -> Table:
    """Recipe x K=N break-even M (speedup = 1) of the calibrated model, and torchao's at
    the canonical K = N."""
    kn0 = config.CANONICAL_KN
    header = (
        "recipe",
        "support",
        *(f"K=N={kn} ({CALIBRATED})" for kn in config.BREAK_EVEN_KN),
        f"K=N={kn0} ({TORCHAO})",
    )
    table = Table(header, name=name)
    for r in results:
        kns = config.BREAK_EVEN_KN
        values = [fmt_m(r.break_even(kn)) if r.computable else DASH for kn in kns]
        values.append(fmt_m(r.torchao.break_even(kn0)) if r.computable else DASH)
        badge = SUPPORT_BADGE[r.capability.support]
        table.rows.append((recipe_cell(r, page), badge, *values))
    return table


def ranked_table(results: list[RecipeResult], page: str, name: str) -> Table:
    """Recipes ranked by the calibrated aggregate speedup over the llama shapes (computable
    ones first), torchao's aggregate beside it."""
    names = llama_names()
    header = (
        "rank",
        "recipe",
        "support",
        f"all four GEMMs ({CALIBRATED})",
        f"all four GEMMs ({TORCHAO})",
        *names,
        f"fused: all four ({CALIBRATED})",
    )
    table = Table(header, name=name)
    computable = [r for r in results if r.computable]
    order = guidance.rank_order([r.aggregate_speedup("llama") for r in computable])
    for rank, r in enumerate((computable[i] for i in order), 1):
        table.rows.append(
            (
                str(rank),
                recipe_cell(r, page),
                SUPPORT_BADGE[r.capability.support],
                units.speedup(r.aggregate_speedup("llama")),
                units.speedup(r.torchao.aggregate_speedup("llama")),
                *(units.speedup(float(v)) for v in r.speedup_at("llama")),
                units.speedup(r.aggregate_speedup("llama", fusion=True)),
            )
        )
    for r in results:
        if not r.computable:
            link = recipe_cell(r, page)
            table.rows.append(("—", link, "not computable", *(DASH for _ in range(len(names) + 3))))
    return table


def _fmt_column(name: str, value: float) -> str:
    if name.startswith("fwd_"):
        return str(int(value))
    if name.endswith("_spdp"):
        return f"{value:.4f}"
    return f"{value:.4e}"


def columns_table(result: RecipeResult, shape_set: str, names: tuple[str, ...] = ()) -> Table:
    """torchao's columns for one shape set, plus the fused speedup (and shape names).

    Exported as ``<set>`` for torchao's model (the columns its scripts print) and as
    ``<set>-calibrated`` for the calibrated model (the same column names).
    """
    cols = result.table(shape_set)
    fused = result.table(shape_set, fusion=True)[guidance.SPEEDUP]
    keys = list(cols)
    header = (*(("name",) if names else ()), *keys, f"{guidance.SPEEDUP}_fused")
    name = f"{shape_set}-calibrated" if result.calibrated else shape_set
    table = Table(header, raw=[], name=name)
    for i in range(len(cols[keys[0]])):
        row = [_fmt_column(k, float(cols[k][i])) for k in keys]
        table.rows.append((*((names[i],) if names else ()), *row, f"{float(fused[i]):.4f}"))
        raw = [int(cols[k][i]) if k.startswith("fwd_") else float(cols[k][i]) for k in keys]
        table.raw.append((*((names[i],) if names else ()), *raw, float(fused[i])))  # type: ignore[union-attr]
    return table


def speedup_summary(result: RecipeResult) -> dict[str, str]:
    """Headline numbers of a GPU x recipe page (in the result's model), formatted."""
    return {
        "canonical": units.speedup(result.canonical_speedup),
        "canonical_fused": units.speedup(float(result.speedup_at("canonical", True)[0])),
        "llama": units.speedup(result.aggregate_speedup("llama")),
        "break_even": fmt_m(result.break_even(config.CANONICAL_KN)),
    }
