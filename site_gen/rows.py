"""Row builders of the speedup tables several pages share.

Every number and every choice (best, ranking, break-even M, aggregate) comes from the
decision layer (:mod:`roofline.guidance`, through :mod:`site_gen.gather`) and every
number is formatted by :mod:`roofline.units`; this module only lays them out as
:class:`~site_gen.context.Table` cells with their export names.
"""

from __future__ import annotations

from roofline import guidance, units
from roofline.capability import Support
from roofline.recipes import Mode
from site_gen import config, safe
from site_gen.context import SUPPORT_BADGE, Cell, Table, gpu_page, recipe_result_page, rel
from site_gen.gather import Atlas, RecipeResult, best_at_canonical, table_sets

DASH = units.MISSING


def fmt_m(value: float | None) -> str:
    """A break-even M searched over the site's curve grid (:func:`roofline.units.break_even_m`)."""
    return units.break_even_m(value, config.CURVE_M[0], config.CURVE_M[-1])


def result_link(result: RecipeResult, page: str) -> str:
    """Link from ``page`` to the GPU x mode x recipe page of ``result``."""
    return rel(recipe_result_page(result.gpu, result.mode, result.recipe.name), page)


def llama_names() -> tuple[str, ...]:
    """Names of the llama shapes, in table order."""
    return tuple(s.name for s in next(t for t in table_sets() if t.name == "llama").shapes)


def matrix_cell(result: RecipeResult, value: float | None, page: str, best: bool) -> safe.Md:
    """A home matrix cell: the speedup linking to the GPU x recipe page."""
    link = result_link(result, page)
    support = result.capability.support
    if value is None or support is Support.IMPOSSIBLE:
        return safe.link(DASH, link)
    text = safe.concat(units.speedup(value))
    if support is Support.HYPOTHETICAL:
        text = safe.concat(safe.emphasis(text), "†")
    if best:
        text = safe.strong(text)
    return safe.link(text, link)


def matrix_table(atlas: Atlas, mode: Mode, shape_set: str, page: str) -> Table:
    """GPU x recipe speedups of ``mode`` at a shape set; the best native one in bold."""
    recipes = atlas.recipes(mode)
    header = ("GPU", *(safe.breakable(r.name) for r in recipes))
    table = Table(header, name=f"matrix-{mode.value}-{shape_set}")
    for gpu in atlas.gpus:
        results = atlas.for_gpu(gpu.name, mode)
        values = [r.aggregate_speedup(shape_set) if r.computable else None for r in results]
        best, _ = guidance.pick_best(
            {r.recipe.name: v for v, r in zip(values, results, strict=True) if r.native and v}
        )
        cells = [
            matrix_cell(r, v, page, r.recipe.name == best)
            for v, r in zip(values, results, strict=True)
        ]
        table.rows.append((safe.link(gpu.name, rel(gpu_page(gpu), page)), *cells))
    return table


def best_table(atlas: Atlas, page: str) -> Table:
    """Per GPU, the best native recipe at the canonical shape in each mode."""
    rows = []
    for gpu in atlas.gpus:
        row: list[Cell] = [safe.link(gpu.name, rel(gpu_page(gpu), page))]
        for mode in config.MODES:
            best = best_at_canonical(atlas, gpu.name, mode)
            if best is None:
                row.append("stay in bf16")
            else:
                text = f"{best.recipe.name}, {units.speedup(best.canonical_speedup)}"
                row.append(safe.link(text, result_link(best, page)))
        rows.append(tuple(row))
    header = ("GPU", *(f"best {mode.value} recipe" for mode in config.MODES))
    return Table(header, rows, name="best")


def break_even_table(results: list[RecipeResult], page: str, name: str) -> Table:
    """Recipe x K=N break-even M (speedup = 1)."""
    header = ("recipe", "support", *(f"K=N={kn}" for kn in config.BREAK_EVEN_KN))
    table = Table(header, name=name)
    for r in results:
        values = (fmt_m(r.break_even(kn)) if r.computable else DASH for kn in config.BREAK_EVEN_KN)
        badge = SUPPORT_BADGE[r.capability.support]
        table.rows.append((safe.link(r.recipe.name, result_link(r, page)), badge, *values))
    return table


def ranked_table(results: list[RecipeResult], page: str, name: str) -> Table:
    """Recipes ranked by aggregate speedup over the llama shapes (computable ones first)."""
    names = llama_names()
    header = ("rank", "recipe", "support", "all four GEMMs", *names, "fused: all four")
    table = Table(header, name=name)
    computable = [r for r in results if r.computable]
    order = guidance.rank_order([r.aggregate_speedup("llama") for r in computable])
    for rank, r in enumerate((computable[i] for i in order), 1):
        table.rows.append((
            str(rank), safe.link(r.recipe.name, result_link(r, page)),
            SUPPORT_BADGE[r.capability.support], units.speedup(r.aggregate_speedup("llama")),
            *(units.speedup(float(v)) for v in r.speedup_at("llama")),
            units.speedup(r.aggregate_speedup("llama", fusion=True)),
        ))  # fmt: skip
    for r in results:
        if not r.computable:
            link = safe.link(r.recipe.name, result_link(r, page))
            table.rows.append(("—", link, "not computable", *(DASH for _ in range(len(names) + 2))))
    return table


def _fmt_column(name: str, value: float) -> str:
    if name.startswith("fwd_"):
        return str(int(value))
    if name.endswith("_spdp"):
        return f"{value:.4f}"
    return f"{value:.4e}"


def columns_table(result: RecipeResult, shape_set: str, names: tuple[str, ...] = ()) -> Table:
    """torchao's columns for one shape set, plus the fused speedup (and shape names)."""
    cols = result.table(shape_set)
    fused = result.table(shape_set, fusion=True)[guidance.SPEEDUP]
    keys = list(cols)
    header = (*(("name",) if names else ()), *keys, f"{guidance.SPEEDUP}_fused")
    table = Table(header, raw=[], name=shape_set)
    for i in range(len(cols[keys[0]])):
        row = [_fmt_column(k, float(cols[k][i])) for k in keys]
        table.rows.append((*((names[i],) if names else ()), *row, f"{float(fused[i]):.4f}"))
        raw = [int(cols[k][i]) if k.startswith("fwd_") else float(cols[k][i]) for k in keys]
        table.raw.append((*((names[i],) if names else ()), *raw, float(fused[i])))  # type: ignore[union-attr]
    return table


def speedup_summary(result: RecipeResult) -> dict[str, str]:
    """Headline numbers of a GPU x recipe page, formatted."""
    return {
        "canonical": units.speedup(result.canonical_speedup),
        "canonical_fused": units.speedup(float(result.speedup_at("canonical", True)[0])),
        "llama": units.speedup(result.aggregate_speedup("llama")),
        "break_even": fmt_m(result.break_even(config.CANONICAL_KN)),
    }


def headline_table(result: RecipeResult) -> Table:
    """The summary row under a GPU x recipe page's title."""
    summary = speedup_summary(result)
    kn = config.CANONICAL_KN
    header = (f"M = {config.CANONICAL_M}, K = N = {kn}", "with fusion",
              "llama shapes (all four)", f"break-even M at K = N = {kn}")  # fmt: skip
    row = (safe.strong(summary["canonical"]), summary["canonical_fused"], summary["llama"],
           summary["break_even"])  # fmt: skip
    return Table(header, [row], name="headline")


def page_break_even_table(result: RecipeResult) -> Table:
    """Break-even M of one GPU x recipe per K = N, unfused and fused."""
    table = Table(("K=N", "break-even M", "break-even M (fused)"), name="break-even")
    for kn in config.BREAK_EVEN_KN:
        unfused, fused = result.break_even(kn), result.break_even(kn, fusion=True)
        table.rows.append((str(kn), fmt_m(unfused), fmt_m(fused)))
    return table


def recipe_gpus_table(results: list[RecipeResult], page: str, name: str) -> Table:
    """One recipe in one mode on every GPU: headline speedups and break-even M."""
    kn = config.CANONICAL_KN
    header = ("GPU", "support", f"M={config.CANONICAL_M}, K=N={kn}", "llama (all four)",
              f"break-even M at K=N={kn}")  # fmt: skip
    table = Table(header, name=name)
    for r in results:
        gpu_link = safe.link(r.gpu.name, result_link(r, page))
        if not r.computable:
            table.rows.append((gpu_link, "not computable", DASH, DASH, DASH))
            continue
        summary = speedup_summary(r)
        badge = SUPPORT_BADGE[r.capability.support]
        table.rows.append(
            (gpu_link, badge, summary["canonical"], summary["llama"], summary["break_even"])
        )
    return table
