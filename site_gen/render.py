"""Stage 2: pure renderers. Each returns strings (Markdown, CSV) or plot jobs; none writes.

:func:`render_pages` turns an :class:`~site_gen.gather.Atlas` plus the formulas into a
mapping ``docs-relative path -> text`` and a list of :class:`PlotJob` for the charts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup

from roofline.capability import Support, matrix
from roofline.diff import fmt_m, fmt_speedup, fmt_value
from roofline.formulas import MODEL_VERSION
from roofline.history import HistoryEntry, SpecHistory
from roofline.recipes import FORMATS, RECIPE_LIST, Mode, Recipe
from roofline.specs import GPU_KEYS, TOP_KEYS, GpuSpec
from site_gen import calculator, config, exports, safe
from site_gen import context as ctx
from site_gen.formulas import (
    Formula,
    equation_index,
    latex_of,
    methodology_formulas,
    symbolic_formulas,
)
from site_gen.gather import Atlas, RecipeResult, best_at_canonical, decision_map, table_sets

GEN = config.GENERATED_DIRNAME


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


def environment() -> jinja2.Environment:
    """The Jinja environment: templates from ``site_gen/templates``, StrictUndefined.

    Every ``{{ value }}`` is escaped as Markdown text (:func:`site_gen.safe.md_text`)
    unless it is markup built by :mod:`site_gen.safe` or a macro: autoescape plus a
    ``finalize`` hook make :mod:`site_gen.safe` the one place where strings become page
    text. ``join`` escapes its items the same way; ``path`` passes a relative link target
    of the site and ``external_link`` an http(s) URL (both refuse anything else).
    """
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("site_gen", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=safe.environment_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        join=safe.md_join,
        path=lambda target: Markup(safe.site_path(target)),
        external_link=safe.external_link,
        code=safe.code,
        attribute=safe.attribute,
    )
    env.globals.update(model_version=MODEL_VERSION, config=config)
    return env


def _canonical(value: Any) -> Any:
    """A JSON-able, order-stable form of plot arguments (arrays by their bytes)."""
    if isinstance(value, np.ndarray):
        return [
            "ndarray",
            str(value.dtype),
            list(value.shape),
            hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest(),
        ]
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


class Renderer:
    """Collects pages and plot jobs for one atlas."""

    def __init__(
        self,
        atlas: Atlas,
        instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]]],
        history: SpecHistory | None = None,
    ):
        self.atlas = atlas
        self.history = history or SpecHistory(note="the build was not given a history")
        self.instantiated = instantiated
        self.env = environment()
        self.pages: dict[str, str] = {}
        self.plots: list[PlotJob] = []
        self.drawn: dict[str, PlotJob] = {}  # chart content key -> its drawing
        self.symbolic = {
            (mode.value, r.name): symbolic_formulas(mode, r.name)
            for mode in config.MODES
            for r in atlas.recipes(mode)
        }

    def page(self, path: str, template: str, **context: Any) -> None:
        """Render ``template`` with ``context`` into ``path`` (docs-relative).

        Every table in ``context`` is also exported as CSV and JSON beside the page.
        """
        self.pages.update(exports.attach_exports(path, context))
        self.pages[path] = self.env.get_template(template).render(page_path=path, **context)

    def plot(self, path: str, kind: str, **kwargs: Any) -> str:
        """Queue a chart; returns its docs-relative path.

        Charts are content-addressed: a chart whose inputs equal an earlier one's (e.g.
        mxfp8_cublas and mxfp8_emulated share every formula) is drawn once and written
        to every path that shows it, so identical recipes cost one drawing.
        """
        key = chart_key(kind, kwargs)
        if key in self.drawn:
            self.drawn[key].copies.append(path)
        else:
            self.drawn[key] = PlotJob(path, kind, kwargs)
            self.plots.append(self.drawn[key])
        return path

    # -- pages ----------------------------------------------------------------------

    def render_all(self) -> None:
        """Every page of the site."""
        self.home()
        self.gpus_index()
        for gpu in self.atlas.gpus:
            self.gpu(gpu)
            for mode in config.MODES:
                for result in self.atlas.for_gpu(gpu.name, mode):
                    self.gpu_recipe(result)
        self.recipes_index()
        for recipe in RECIPE_LIST:
            self.recipe(recipe)
        self.methodology()
        self.specs()
        self.equations()
        self.data()
        self.changes()
        self.pages[f"{GEN}/nav.json"] = json.dumps(self.nav(), indent=1) + "\n"

    def home(self) -> None:
        """The matrix snippet included by the hand-written ``docs/index.md``."""
        page = "index.md"  # links are relative to the page that includes the snippet
        best_rows = []
        for gpu in self.atlas.gpus:
            row = [safe.link(gpu.name, ctx.rel(ctx.gpu_page(gpu), page))]
            for mode in config.MODES:
                best = best_at_canonical(self.atlas, gpu.name, mode)
                if best is None:
                    row.append("stay in bf16")
                else:
                    link = ctx.rel(ctx.recipe_result_page(gpu, mode, best.recipe.name), page)
                    speedup = ctx.fmt_speedup(float(best.speedup_at("canonical")[0]))
                    row.append(safe.link(f"{best.recipe.name}, {speedup}", link))
            best_rows.append(tuple(row))
        best_table = ctx.Table(("GPU", "best training recipe", "best inference recipe"), best_rows)
        matrices = {
            (mode.value, shape): ctx.matrix_table(self.atlas, mode, shape, page)
            for mode in config.MODES
            for shape in ("canonical", "llama")
        }
        self.pages.update(
            exports.attach_exports(
                page, {"best": best_table, "matrix": matrices}, folder=f"{GEN}/home"
            )
        )
        self.pages[f"{GEN}/_snippets/home_matrix.md.txt"] = self.env.get_template(
            "home_matrix.md.j2"
        ).render(best_table=best_table, matrices=matrices, modes=config.MODES, page_path=page)

    def gpus_index(self) -> None:
        """The GPU list."""
        page = f"{GEN}/gpus/index.md"
        table = ctx.Table(
            (
                "GPU",
                "vendor",
                "architecture",
                "bf16 TFLOP/s",
                "fp8 TFLOP/s",
                "fp4 TFLOP/s",
                "memory TB/s",
                "efficiency basis",
            )
        )
        for gpu in self.atlas.gpus:
            table.rows.append(
                (
                    safe.link(gpu.name, ctx.rel(ctx.gpu_page(gpu), page)),
                    gpu.vendor or "—",
                    gpu.architecture or "—",
                    _tflops(gpu.bf16_peak_tops),
                    _tflops(gpu.fp8_peak_tops),
                    _tflops(gpu.fp4_peak_tops),
                    f"{gpu.peak_mem_bw_bytes_sec / 1e12:g}",
                    _basis(gpu),
                )
            )
        self.page(page, "gpus_index.md.j2", table=table)

    def gpu(self, gpu: GpuSpec) -> None:
        """One GPU: specs, ridge points, roofline, recipe guidance."""
        page = ctx.gpu_page(gpu)
        folder = ctx.gpu_dir(gpu)
        slug = config.slug(gpu.name)
        ceilings = [
            (fmt, gpu.value(key))
            for fmt, key in ((f.name, f.peak.spec_key) for f in FORMATS.values())
            if gpu.value(key) is not None
        ]
        self.plot(
            f"{folder}/img/roofline.svg",
            "roofline",
            title=f"Roofline of {gpu.name}",
            bandwidth_bytes_s=gpu.peak_mem_bw_bytes_sec,
            eta_mem=gpu.pct_achievable_mem_bw,
            eta_gemm=gpu.pct_achievable_gemm_tops,
            ceilings=ceilings,
            points=ctx.roofline_points(gpu),
        )
        modes = []
        for mode in config.MODES:
            results = self.atlas.for_gpu(gpu.name, mode)
            dmap = decision_map(self.atlas, gpu.name, mode)
            self.plot(
                f"{folder}/img/decision-{mode.value}.svg",
                "decision",
                title=f"{gpu.name}: fastest native {mode.value} recipe",
                heat_m=config.HEAT_M,
                heat_kn=config.HEAT_KN,
                best=dmap.best,
                recipes=dmap.recipes,
                mark=ctx.heat_mark(),
            )
            best = best_at_canonical(self.atlas, gpu.name, mode)
            modes.append(
                {
                    "mode": mode.value,
                    "decision_img": f"img/decision-{mode.value}.svg",
                    "native": dmap.recipes,
                    "best": None
                    if best is None
                    else {
                        "name": best.recipe.name,
                        "speedup": ctx.fmt_speedup(float(best.speedup_at("canonical")[0])),
                        "link": ctx.rel(ctx.recipe_result_page(gpu, mode, best.recipe.name), page),
                    },
                    "break_even": ctx.break_even_table(results, page),
                    "ranked": ctx.ranked_table(results, page),
                    "links": [self._result_link(r, page) for r in results],
                }
            )
        self.page(
            page,
            "gpu.md.j2",
            gpu=gpu,
            slug=slug,
            spec_rows=_spec_rows(gpu),
            ridge=ctx.ridge_table(gpu),
            modes=modes,
            sources=gpu.source_records,
            basis=_basis(gpu),
        )

    def _result_link(self, result: RecipeResult, page: str) -> dict[str, str]:
        return {
            "name": result.recipe.name,
            "support": result.capability.support.value,
            "badge": ctx.SUPPORT_BADGE[result.capability.support],
            "link": ctx.rel(
                ctx.recipe_result_page(result.gpu, result.mode, result.recipe.name), page
            ),
            "speedup": ctx.fmt_speedup(float(result.speedup_at("canonical")[0]))
            if result.computable
            else "—",
        }

    def gpu_recipe(self, result: RecipeResult) -> None:
        """One GPU x mode x recipe: formulas, heatmap, curves, breakdown, tables, CSV."""
        gpu, mode, recipe = result.gpu, result.mode, result.recipe
        page = ctx.recipe_result_page(gpu, mode, recipe.name)
        stem = config.recipe_page_name(mode, recipe.name)
        title = f"{gpu.name}: {mode.value} with {recipe.name}"
        common = dict(
            gpu=gpu,
            mode=mode.value,
            recipe=recipe,
            title=title,
            support=result.capability.support.value,
            reason=result.capability.reason,
            intro=ctx.recipe_intro(recipe),
            gpu_link=ctx.rel(ctx.gpu_page(gpu), page),
            recipe_link=ctx.rel(ctx.recipe_page(recipe.name), page),
        )
        if not result.computable:
            self.page(page, "gpu_recipe.md.j2", computable=False, **common)
            return
        img = f"{ctx.gpu_dir(gpu)}/img/{stem}"
        self.plot(
            f"{img}-heatmap.svg",
            "heatmap",
            title="",
            heat_m=config.HEAT_M,
            heat_kn=config.HEAT_KN,
            speedup=result.heat,
            mark=ctx.heat_mark(),
        )
        self.plot(
            f"{img}-curves.svg", "curves", title="", curve_m=config.CURVE_M, curves=result.curves
        )
        self.plot(
            f"{img}-breakdown.svg",
            "breakdown",
            title="",
            shape_labels=[f"M={m}, K={k}, N={n}" for m, k, n in config.BREAKDOWN_SHAPES],
            recipe_label="low precision",
            terms=_breakdown_terms(result),
        )
        llama_names = tuple(
            s.name for s in next(t for t in table_sets() if t.name == "llama").shapes
        )
        tables = {
            "llama": ctx.columns_table(result, "llama", llama_names),
            "pow2": ctx.columns_table(result, "pow2"),
            "break-even": _page_break_even(result),
        }
        self.page(
            page,
            "gpu_recipe.md.j2",
            computable=True,
            symbolic=self.symbolic[(mode.value, recipe.name)],
            instantiated=self.instantiated[gpu.name][(mode.value, recipe.name)],
            headline=_headline(ctx.speedup_summary(result)),
            tables=tables,
            calculator=calculator.widget(page, gpu.name, mode.value, recipe.name),
            calculator_link=ctx.rel("calculator.md", page),
            data_link=ctx.rel(
                exports.evaluation_path(gpu, mode.value, recipe.name, False) + ".json", page
            ),
            img_prefix=f"img/{stem}",
            kernels=_kernel_rows(recipe, mode),
            **common,
        )

    def recipes_index(self) -> None:
        """The recipe list."""
        page = f"{GEN}/recipes/index.md"
        table = ctx.Table(("recipe", "family", "needs", "modes", "summary"))
        for r in RECIPE_LIST:
            table.rows.append(
                (
                    safe.link(r.name, ctx.rel(ctx.recipe_page(r.name), page)),
                    r.family.value,
                    r.native_format,
                    ", ".join(m.value for m in r.modes),
                    r.summary,
                )
            )
        self.page(page, "recipes_index.md.j2", table=table)

    def recipe(self, recipe: Recipe) -> None:
        """One recipe across all GPUs: one chart and one table per mode."""
        page = ctx.recipe_page(recipe.name)
        sections = []
        for mode in recipe.modes:
            results = [self.atlas.get(g.name, mode, recipe.name) for g in self.atlas.gpus]
            series = [
                (r.gpu.name, r.native, r.curves[config.CANONICAL_KN])
                for r in results
                if r.computable
            ]
            chart = None
            if series:
                chart = self.plot(
                    f"{GEN}/recipes/img/{recipe.name}-{mode.value}.svg",
                    "compare",
                    title=f"{recipe.name} ({mode.value}): speedup vs M at K = N = "
                    f"{config.CANONICAL_KN}",
                    curve_m=config.CURVE_M,
                    series=series,
                )
            table = ctx.Table(
                (
                    "GPU",
                    "support",
                    f"M={config.CANONICAL_M}, K=N={config.CANONICAL_KN}",
                    "llama (all four)",
                    f"break-even M at K=N={config.CANONICAL_KN}",
                )
            )
            for r in results:
                link = ctx.rel(ctx.recipe_result_page(r.gpu, mode, recipe.name), page)
                if not r.computable:
                    gpu_link = safe.link(r.gpu.name, link)
                    table.rows.append((gpu_link, "not computable", "—", "—", "—"))
                    continue
                summary = ctx.speedup_summary(r)
                table.rows.append(
                    (
                        safe.link(r.gpu.name, link),
                        ctx.SUPPORT_BADGE[r.capability.support],
                        summary["canonical"],
                        summary["llama"],
                        summary["break_even"],
                    )
                )
            sections.append(
                {
                    "mode": mode.value,
                    "chart": None if chart is None else ctx.rel(chart, page),
                    "table": table,
                    "formulas": self.symbolic[(mode.value, recipe.name)],
                    "kernels": _kernel_rows(recipe, mode),
                }
            )
        self.page(
            page, "recipe.md.j2", recipe=recipe, intro=ctx.recipe_intro(recipe), sections=sections
        )

    def methodology(self) -> None:
        """The model derived step by step, traffic tables, assumptions, deviations."""
        traffic = []
        for recipe in RECIPE_LIST:
            for mode in recipe.modes:
                traffic.append(
                    {
                        "recipe": recipe,
                        "mode": mode.value,
                        "link": ctx.rel(ctx.recipe_page(recipe.name), f"{GEN}/methodology.md"),
                        "rows": _kernel_rows(recipe, mode),
                        "gemms": _gemm_rows(recipe, mode),
                        "structured": self.symbolic[(mode.value, recipe.name)][0],
                    }
                )
        from roofline.symbols import HARDWARE_SYMBOLS

        symbols = ctx.Table(("symbol", "spec key", "meaning", "unit"))
        for hw in HARDWARE_SYMBOLS:
            symbols.rows.append(
                (safe.math(hw.latex), safe.code(hw.spec_key), hw.description, hw.unit)
            )
        self.page(
            f"{GEN}/methodology.md",
            "methodology.md.j2",
            formulas=methodology_formulas(),
            traffic=traffic,
            symbols=symbols,
            recipes=RECIPE_LIST,
        )

    def equations(self) -> None:
        """The equation index, included by the hand-written ``docs/equations.md``."""
        groups = equation_index()
        self.pages[f"{GEN}/_snippets/equations.md.txt"] = self.env.get_template(
            "equations.md.j2"
        ).render(groups=groups, count=sum(len(f) for _, f in groups), page_path="equations.md")

    def data(self) -> None:
        """``generated/data/``, the calculator's scripts and the Data page's file list."""
        files = exports.data_files(self.atlas)
        self.pages.update(files)
        self.pages.update(calculator.scripts(self.atlas.specs))
        gpus = [{"name": g.name, "slug": config.slug(g.name)} for g in self.atlas.gpus]
        evaluations = sum(1 for p in files if p.endswith(".json")) - 3
        self.pages[f"{GEN}/_snippets/data.md.txt"] = self.env.get_template("data.md.j2").render(
            gpus=gpus,
            evaluations=evaluations,
            data_dir=ctx.rel(exports.DATA_DIR, "data.md"),
            sets=table_sets(),
            page_path="data.md",
        )

    def specs(self) -> None:
        """All GPUs side by side, the spec file format and the capability matrix."""
        page = f"{GEN}/specs.md"
        keys = ctx.Table(("key", "type", "required", "description"))
        for key, spec in GPU_KEYS.items():
            choices = f" (one of: {', '.join(spec.choices)})" if spec.choices else ""
            keys.rows.append(
                (
                    safe.code(key),
                    spec.kind,
                    "yes" if spec.required else "no",
                    spec.description + choices,
                )
            )
        top = ctx.Table(("key", "description"), [(safe.code(k), v) for k, v in TOP_KEYS.items()])
        caps = matrix(self.atlas.specs)
        symbols = {
            Support.NATIVE: "✓ native",
            Support.HYPOTHETICAL: "~ hypothetical",
            Support.IMPOSSIBLE: "✗",
        }
        cap_table = ctx.Table(("GPU", *(safe.breakable(r.name) for r in RECIPE_LIST)))
        for gpu in self.atlas.gpus:
            cap_table.rows.append(
                (
                    safe.link(gpu.name, ctx.rel(ctx.gpu_page(gpu), page)),
                    *(symbols[caps[gpu.name][r.name].support] for r in RECIPE_LIST),
                )
            )
        side = _side_by_side(self.atlas.gpus, page)
        warnings = [str(w) for w in self.atlas.specs.warnings]
        self.page(
            page,
            "specs.md.j2",
            keys=keys,
            top=top,
            cap_table=cap_table,
            side=side,
            origin=self.atlas.specs.origin,
            warnings=warnings,
        )

    # -- navigation -----------------------------------------------------------------

    def changes(self) -> None:
        """The spec and model history, one entry per commit, from roofline.history."""
        entries = [_history_entry(e) for e in self.history.entries]
        self.page(f"{GEN}/changes.md", "changes.md.j2", entries=entries,
                  note=self.history.note, spec_path=self.history.path,
                  truncated=self.history.truncated, shallow=self.history.shallow)  # fmt: skip

    def nav(self) -> dict[str, Any]:
        """The GPUs and Recipes sections, for ``docs/hooks.py``."""
        gpus: list[Any] = [f"{GEN}/gpus/index.md"]
        for gpu in self.atlas.gpus:
            entries: list[Any] = [ctx.gpu_page(gpu)]
            for mode in config.MODES:
                entries.append(
                    {
                        mode.value.capitalize(): [
                            {r.recipe.name: ctx.recipe_result_page(gpu, mode, r.recipe.name)}
                            for r in self.atlas.for_gpu(gpu.name, mode)
                        ]
                    }
                )
            # mkdocs prints nav titles into the HTML as they are: escape them here.
            gpus.append({str(safe.md_text(gpu.name)): entries})
        recipes: list[Any] = [f"{GEN}/recipes/index.md"]
        recipes += [{r.name: ctx.recipe_page(r.name)} for r in RECIPE_LIST]
        return {"GPUs": gpus, "Recipes": recipes}


# -- helpers -------------------------------------------------------------------------


def _tflops(value: float | None) -> str:
    return "—" if value is None else f"{value / 1e12:,.0f}"


def _basis(gpu: GpuSpec) -> str:
    return "assumed" if gpu.efficiency_assumed else gpu.efficiency_basis


def _spec_rows(gpu: GpuSpec) -> ctx.Table:
    table = ctx.Table(("figure", "spec key", "value"))
    rows = (
        ("dense bf16 peak", "bf16_peak_tops", _tflops(gpu.bf16_peak_tops) + " TFLOP/s"),
        (
            "dense fp8 peak",
            "fp8_peak_tops",
            _tflops(gpu.fp8_peak_tops) + (" TFLOP/s" if gpu.fp8_peak_tops else " (none)"),
        ),
        (
            "dense fp4 peak",
            "fp4_peak_tops",
            _tflops(gpu.fp4_peak_tops) + (" TFLOP/s" if gpu.fp4_peak_tops else " (none)"),
        ),
        (
            "peak memory bandwidth",
            "peak_mem_bw_bytes_sec",
            f"{gpu.peak_mem_bw_bytes_sec / 1e12:g} TB/s",
        ),
        (
            "achievable GEMM fraction",
            "pct_achievable_gemm_tops",
            f"{gpu.pct_achievable_gemm_tops:g}",
        ),
        ("achievable memory fraction", "pct_achievable_mem_bw", f"{gpu.pct_achievable_mem_bw:g}"),
        (
            "kernel launch floor",
            "kernel_launch_overhead_s",
            f"{gpu.kernel_launch_overhead_s * 1e6:g} µs",
        ),
        ("efficiency basis", "efficiency_basis", gpu.efficiency_basis),
        ("peak basis", "peak_basis", gpu.peak_basis),
        ("accumulate dtype", "accumulate_dtype", gpu.accumulate_dtype),
        ("native formats", "native_formats", ", ".join(gpu.native_formats) or "none"),
    )
    for label, key, value in rows:
        table.rows.append((label, safe.code(key), value))
    for dtype, tflops in gpu.measured_matmul_tflops.items():
        table.rows.append(
            (
                f"measured matmul, {dtype} (context only)",
                safe.code("measured_matmul_tflops"),
                f"{tflops:g} TFLOP/s",
            )
        )
    return table


def _side_by_side(gpus: list[GpuSpec], page: str) -> ctx.Table:
    table = ctx.Table(
        (
            "GPU",
            "bf16",
            "fp8",
            "fp4",
            "TB/s",
            "η GEMM",
            "η mem",
            "basis",
            "native formats",
            "bf16 ridge (FLOP/B)",
        )
    )
    for gpu in gpus:
        ridge = gpu.ridge_point_flop_per_byte("bf16_peak_tops") or 0.0
        table.rows.append(
            (
                safe.link(gpu.name, ctx.rel(ctx.gpu_page(gpu), page)),
                _tflops(gpu.bf16_peak_tops),
                _tflops(gpu.fp8_peak_tops),
                _tflops(gpu.fp4_peak_tops),
                f"{gpu.peak_mem_bw_bytes_sec / 1e12:g}",
                f"{gpu.pct_achievable_gemm_tops:g}",
                f"{gpu.pct_achievable_mem_bw:g}",
                _basis(gpu),
                ", ".join(gpu.native_formats) or "none",
                f"{ridge:,.0f}",
            )
        )
    return table


def _kernel_rows(recipe: Recipe, mode: Mode) -> ctx.Table:
    table = ctx.Table(
        ("#", "tensor", "kernel", "bytes read", "bytes written", "read fused with --fusion")
    )
    for i, kernel in enumerate(recipe.plan(mode).kernels, 1):
        table.rows.append(
            (
                str(i),
                kernel.role.value,
                kernel.description,
                safe.math(latex_of(kernel.read_bytes)),
                safe.math(latex_of(kernel.write_bytes)),
                "yes" if mode is Mode.TRAINING and kernel.fuses_under_fusion else "no",
            )
        )
    return table


def _gemm_rows(recipe: Recipe, mode: Mode) -> ctx.Table:
    table = ctx.Table(("GEMM", "format", "scale reads"))
    block = recipe.scaling.gemm_scale_block
    for gemm, fmt in recipe.plan(mode).gemm_formats.items():
        scales = f"1 byte per {block} operand elements" if block and fmt.name != "bf16" else "—"
        table.rows.append((gemm.value, fmt.name, scales))
    return table


def _headline(summary: dict[str, str]) -> ctx.Table:
    """The summary row under a GPU x recipe page's title."""
    kn = config.CANONICAL_KN
    header = (f"M = {config.CANONICAL_M}, K = N = {kn}", "with fusion",
              "llama shapes (all four)", f"break-even M at K = N = {kn}")  # fmt: skip
    row = (safe.strong(summary["canonical"]), summary["canonical_fused"], summary["llama"],
           summary["break_even"])  # fmt: skip
    return ctx.Table(header, [row])


def _page_break_even(result: RecipeResult) -> ctx.Table:
    from site_gen.gather import break_even_m

    table = ctx.Table(("K=N", "break-even M", "break-even M (fused)"))
    for kn in config.BREAK_EVEN_KN:
        table.rows.append(
            (
                str(kn),
                ctx.fmt_m(break_even_m(result.curves[kn])),
                ctx.fmt_m(break_even_m(result.curves_fused[kn])),
            )
        )
    return table


def _breakdown_terms(result: RecipeResult) -> list[tuple[str, bool, np.ndarray]]:
    from roofline.formulas import Quantity, build_model

    model = build_model(result.mode, result.recipe)
    terms = []
    for term in model.terms:
        baseline = term.quantity in (Quantity.BF16_GEMM, Quantity.BF16_OVERHEAD)
        label = f"{term.key.split('.')[1]} GEMM" if term.is_gemm else f"cast: {term.label}"
        terms.append((label, baseline, np.asarray(result.term_times[term.key], dtype=float)))
    return terms


MAX_SPEEDUP_ROWS = 8


def _history_entry(entry: HistoryEntry) -> dict[str, Any]:
    """One commit of the Changes page: its summary and compact tables of what moved."""
    diff = entry.diff
    out: dict[str, Any] = {
        "date": entry.date[:10], "subject": entry.subject, "sha": entry.sha[:12],
        "model_changed": entry.model_changed, "model_version": entry.model_version,
        "previous_model": entry.previous_model_version, "note": entry.note,
        "summary": diff.summary() if diff else "", "added": diff.added if diff else (),
        "removed": diff.removed if diff else (), "fields": None, "flips": None,
        "speedups": None, "more_speedups": 0, "break_even": "",
    }  # fmt: skip
    if diff is None:
        return out
    if diff.fields:
        out["fields"] = ctx.Table(("GPU", "field", "old", "new"), [
            (c.gpu, safe.code(c.field), fmt_value(c.old), fmt_value(c.new)) for c in diff.fields
        ])  # fmt: skip
    if diff.flips:
        out["flips"] = ctx.Table(("GPU", "mode", "was", "now"), [
            (f.gpu, f.mode, f"{f.old or 'bf16'} ({fmt_speedup(f.old_speedup)})",
             f"{f.new or 'bf16'} ({fmt_speedup(f.new_speedup)})") for f in diff.flips
        ])  # fmt: skip
    moved = [d for d in diff.speedups if not d.new_gpu]
    if moved:
        out["speedups"] = ctx.Table(("GPU", "mode", "recipe", "shape", "was", "now"), [
            (d.gpu, d.mode, d.recipe, d.shape, fmt_speedup(d.old), fmt_speedup(d.new))
            for d in moved[:MAX_SPEEDUP_ROWS]
        ])  # fmt: skip
        out["more_speedups"] = max(0, len(moved) - MAX_SPEEDUP_ROWS)
    if diff.break_even:
        shown = [f"{b.gpu} {b.mode} {b.recipe} at K=N={b.kn}: {fmt_m(b.old)} → {fmt_m(b.new)}"
                 for b in diff.break_even[:5]]  # fmt: skip
        rest = len(diff.break_even) - len(shown)
        out["break_even"] = "; ".join(shown) + (f"; and {rest} more" if rest > 0 else "")
    return out


def render_pages(
    atlas: Atlas,
    instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]]],
    history: SpecHistory | None = None,
) -> tuple[dict[str, str], list[PlotJob]]:
    """All generated pages (path -> text) and the charts to draw."""
    renderer = Renderer(atlas, instantiated, history)
    renderer.render_all()
    return renderer.pages, renderer.plots
