"""Typed page contexts, built in one place from the gathered :class:`~site_gen.gather.Atlas`.

Templates only read these records; they never compute. Links are relative to the page
that shows them (MkDocs resolves and validates them in strict mode).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import numpy as np

from roofline.capability import Support
from roofline.recipes import Mode, Recipe
from roofline.specs import GpuSpec
from site_gen import config, safe
from site_gen.gather import Atlas, RecipeResult, break_even_m, table_sets

GEN = config.GENERATED_DIRNAME


def gpu_dir(gpu: GpuSpec) -> str:
    """Docs-relative folder of a GPU's pages."""
    return f"{GEN}/gpus/{config.slug(gpu.name)}"


def gpu_page(gpu: GpuSpec) -> str:
    """Docs-relative path of a GPU page."""
    return f"{gpu_dir(gpu)}/index.md"


def recipe_result_page(gpu: GpuSpec, mode: Mode, recipe: str) -> str:
    """Docs-relative path of a GPU x mode x recipe page."""
    return f"{gpu_dir(gpu)}/{config.recipe_page_name(mode, recipe)}.md"


def recipe_page(recipe: str) -> str:
    """Docs-relative path of a recipe page."""
    return f"{GEN}/recipes/{recipe}.md"


def rel(target: str, page: str) -> str:
    """``target`` (docs-relative) as a link from ``page`` (docs-relative)."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


def fmt_speedup(value: float) -> str:
    """1.234 -> 1.23×."""
    return f"{value:.2f}×"


def fmt_m(value: float | None) -> str:
    """A break-even M for a table: 'never' when speedup stays below 1."""
    if value is None:
        return f"never (≤ {int(config.CURVE_M[-1]):,})"
    if value == float("-inf"):
        return f"< {int(config.CURVE_M[0])}"
    return f"{round(value):,}"


SUPPORT_BADGE = {
    Support.NATIVE: "native",
    Support.HYPOTHETICAL: "hypothetical†",
    Support.IMPOSSIBLE: "not computable",
}


@dataclass(frozen=True)
class Cell:
    """A linked speedup cell."""

    text: safe.Md
    link: str
    support: str
    best: bool = False


@dataclass(frozen=True)
class Row:
    """A table row: a header and cells."""

    head: str
    cells: tuple[str, ...]
    link: str = ""


@dataclass
class Table:
    """A Markdown table: header and rows of cells.

    A cell is plain text (a ``str``, escaped when the table is rendered, so spec text can
    never become markup) or :class:`site_gen.safe.Md` built by the helpers there (links,
    code, math), which also carries the plain text that exports write.
    """

    header: tuple[str | safe.Md, ...]
    rows: list[tuple[str | safe.Md, ...]] = field(default_factory=list)
    align: tuple[str, ...] = ()
    #: Full-precision values behind the formatted rows (exports use them when set).
    raw: list[tuple[object, ...]] | None = None
    #: Links (relative to the page) to this table's CSV and JSON exports, set by the renderer.
    exports: tuple[str, str] | None = None

    def markdown(self) -> safe.Md:
        """GitHub-flavoured Markdown (every text cell escaped), then the export links."""

        def row(cells: tuple[object, ...]) -> str:
            return "| " + " | ".join(safe.md_text(c) for c in cells) + " |"

        align = self.align or ("---",) * len(self.header)
        lines = [row(self.header), "|" + "|".join(align) + "|"]
        lines += [row(r) for r in self.rows]
        if self.exports:
            csv_link, json_link = self.exports
            lines += ["", f'<small class="ra-export">Download: {safe.link("CSV", csv_link)} · '
                      f"{safe.link('JSON', json_link)}</small>"]  # fmt: skip
        return safe.Md("\n".join(lines), "")


def cell_for(result: RecipeResult, value: float | None, page: str, best: bool) -> Cell:
    """A home/overview matrix cell linking to the GPU x recipe page."""
    link = rel(recipe_result_page(result.gpu, result.mode, result.recipe.name), page)
    support = result.capability.support
    if value is None or support is Support.IMPOSSIBLE:
        return Cell("—", link, support.value)
    text = safe.concat(fmt_speedup(value))
    if support is Support.HYPOTHETICAL:
        text = safe.concat(safe.emphasis(text), "†")
    if best:
        text = safe.strong(text)
    return Cell(text, link, support.value, best)


def matrix_table(atlas: Atlas, mode: Mode, shape_set: str, page: str) -> Table:
    """GPU x recipe speedups of ``mode`` at a shape set; best native per row in bold."""
    recipes = atlas.recipes(mode)
    header = ("GPU", *(safe.breakable(r.name) for r in recipes))
    table = Table(header)
    for gpu in atlas.gpus:
        results = atlas.for_gpu(gpu.name, mode)
        values = [r.aggregate_speedup(shape_set) if r.computable else None for r in results]
        native = [v for v, r in zip(values, results, strict=True) if r.native and v is not None]
        best = max(native) if native else None
        cells = []
        for value, result in zip(values, results, strict=True):
            is_best = best is not None and best > 1 and value == best and result.native
            cell = cell_for(result, value, page, is_best)
            cells.append(safe.link(cell.text, cell.link))
        table.rows.append((safe.link(gpu.name, rel(gpu_page(gpu), page)), *cells))
    return table


def break_even_table(results: list[RecipeResult], page: str, fusion: bool = False) -> Table:
    """Recipe x K=N break-even M (speedup = 1)."""
    header = ("recipe", "support", *(f"K=N={kn}" for kn in config.BREAK_EVEN_KN))
    table = Table(header)
    for r in results:
        link = rel(recipe_result_page(r.gpu, r.mode, r.recipe.name), page)
        if not r.computable:
            table.rows.append(
                (
                    safe.link(r.recipe.name, link),
                    SUPPORT_BADGE[r.capability.support],
                    *("—" for _ in config.BREAK_EVEN_KN),
                )
            )
            continue
        curves = r.curves_fused if fusion else r.curves
        table.rows.append(
            (
                safe.link(r.recipe.name, link),
                SUPPORT_BADGE[r.capability.support],
                *(fmt_m(break_even_m(curves[kn])) for kn in config.BREAK_EVEN_KN),
            )
        )
    return table


def ranked_table(results: list[RecipeResult], page: str) -> Table:
    """Recipes ranked by aggregate speedup over the llama shapes (computable ones)."""
    llama = next(s for s in table_sets() if s.name == "llama")
    header = (
        "rank",
        "recipe",
        "support",
        "all four GEMMs",
        *(s.name for s in llama.shapes),
        "fused: all four",
    )
    table = Table(header)
    computable = sorted(
        (r for r in results if r.computable), key=lambda r: -r.aggregate_speedup("llama")
    )
    for rank, r in enumerate(computable, 1):
        link = rel(recipe_result_page(r.gpu, r.mode, r.recipe.name), page)
        table.rows.append(
            (
                str(rank),
                safe.link(r.recipe.name, link),
                SUPPORT_BADGE[r.capability.support],
                fmt_speedup(r.aggregate_speedup("llama")),
                *(fmt_speedup(v) for v in r.speedup_at("llama")),
                fmt_speedup(r.aggregate_speedup("llama", fusion=True)),
            )
        )
    for r in results:
        if not r.computable:
            link = rel(recipe_result_page(r.gpu, r.mode, r.recipe.name), page)
            table.rows.append(
                (
                    "—",
                    safe.link(r.recipe.name, link),
                    "not computable",
                    *("—" for _ in range(len(llama.shapes) + 2)),
                )
            )
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
    fused = result.table(shape_set, fusion=True)["r_fp8_gemm_and_ovhd_spdp"]
    keys = list(cols)
    header = (*(("name",) if names else ()), *keys, "r_fp8_gemm_and_ovhd_spdp_fused")
    table = Table(header, raw=[])
    for i in range(len(cols[keys[0]])):
        row = [_fmt_column(k, float(cols[k][i])) for k in keys]
        table.rows.append((*((names[i],) if names else ()), *row, f"{float(fused[i]):.4f}"))
        raw = [int(cols[k][i]) if k.startswith("fwd_") else float(cols[k][i]) for k in keys]
        table.raw.append((*((names[i],) if names else ()), *raw, float(fused[i])))  # type: ignore[union-attr]
    return table


def speedup_summary(result: RecipeResult) -> dict[str, str]:
    """Headline numbers of a GPU x recipe page."""
    canonical = float(result.speedup_at("canonical")[0])
    return {
        "canonical": fmt_speedup(canonical),
        "canonical_fused": fmt_speedup(float(result.speedup_at("canonical", True)[0])),
        "llama": fmt_speedup(result.aggregate_speedup("llama")),
        "break_even": fmt_m(break_even_m(result.curves[config.CANONICAL_KN])),
    }


def ridge_table(gpu: GpuSpec) -> Table:
    """Ridge points per format: at peak figures and at achievable figures."""
    table = Table(
        ("format", "peak (TFLOP/s)", "ridge at peak (FLOP/byte)", "ridge at achievable (FLOP/byte)")
    )
    for fmt, key in (
        ("bf16", "bf16_peak_tops"),
        ("fp8", "fp8_peak_tops"),
        ("fp4", "fp4_peak_tops"),
    ):
        peak = gpu.value(key)
        ridge = gpu.ridge_point_flop_per_byte(key)
        if peak is None or ridge is None:
            table.rows.append((fmt, "not supported", "—", "—"))
            continue
        achievable = ridge * gpu.pct_achievable_gemm_tops / gpu.pct_achievable_mem_bw
        table.rows.append((fmt, f"{peak / 1e12:,.0f}", f"{ridge:,.0f}", f"{achievable:,.0f}"))
    return table


def roofline_points(gpu: GpuSpec) -> list[tuple[str, str, float, float]]:
    """The llama GEMMs (forward, M = 16384) on the roofline, per available format."""
    from roofline.shapes import llama

    points = []
    for fmt, key, nbytes in (
        ("bf16", "bf16_peak_tops", 2.0),
        ("fp8", "fp8_peak_tops", 1.0),
        ("fp4", "fp4_peak_tops", 0.5),
    ):
        peak = gpu.value(key)
        if peak is None:
            continue
        for shape in llama():
            flops = 2.0 * shape.M * shape.K * shape.N
            moved = nbytes * (shape.M * shape.K + shape.K * shape.N) + 2.0 * shape.M * shape.N
            intensity = flops / moved
            attainable = min(peak, intensity * gpu.peak_mem_bw_bytes_sec)
            points.append((shape.name if fmt == "bf16" else "", fmt, intensity, attainable))
    return points


def recipe_intro(recipe: Recipe) -> dict[str, str]:
    """Summary lines of a recipe."""
    scaling = recipe.scaling
    block = f", block {scaling.block_size}" if scaling.block_size else ""
    return {
        "summary": recipe.summary,
        "scaling": f"{scaling.layout} ({scaling.scale_dtype} scales{block})",
        "native": recipe.native_format,
        "modes": ", ".join(m.value for m in recipe.modes),
    }


def heat_mark() -> tuple[int, int]:
    """The canonical shape, marked on heatmaps and decision maps."""
    return (config.CANONICAL_M, config.CANONICAL_KN)


def as_float(array: np.ndarray) -> np.ndarray:
    """A float64 copy (for pickling plain arrays to workers)."""
    return np.asarray(array, dtype=np.float64)
