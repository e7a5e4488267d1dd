"""Row builders of the tables about hardware figures and recipes (no speedups).

GPU figures are formatted by :mod:`roofline.units`; kernel byte counts are printed by
sympy from the recipe registry. Each table is built with its export name.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline import units
from roofline.recipes import FORMATS, FP8_BLOCK, RECIPE_LIST, Mode, Recipe
from roofline.specs import GPU_KEYS, TOP_KEYS, GpuSpec
from roofline.symbols import HARDWARE_SYMBOLS
from site_gen.context import Table, gpu_page, recipe_page, rel
from site_gen.markup import safe
from site_gen.markup.formulas import latex_of


def basis(gpu: GpuSpec) -> str:
    """Where the GPU's efficiencies come from: "assumed" when both are, the basis when
    both share it, else each fraction's first word ("GEMM measured, memory assumed")."""
    if gpu.gemm_efficiency_assumed and gpu.mem_efficiency_assumed:
        return "assumed"
    if gpu.gemm_basis == gpu.mem_basis:
        return gpu.gemm_basis
    return f"GEMM {_word(gpu.gemm_basis)}, memory {_word(gpu.mem_basis)}"


def _word(basis_text: str) -> str:
    """The basis's first word: "measured" of "measured: torchao, H100 SXM"."""
    return basis_text.split(":")[0].strip()


@dataclass(frozen=True)
class EfficiencyBasis:
    """One efficiency fraction of torchao's model and how it was obtained."""

    label: str  # "GEMM fraction", as a list item starts
    name: str  # "GEMM efficiency", as a row or a title names it
    key: str  # its spec key
    value: str  # formatted
    basis: str  # the text of its basis
    basis_key: str  # the key that states it (absent from a file: efficiency_basis stands in)
    assumed: bool


def efficiency_bases(gpu: GpuSpec) -> tuple[EfficiencyBasis, EfficiencyBasis]:
    """The GEMM and memory fractions, each with its own basis (``gemm_efficiency_basis``,
    ``mem_efficiency_basis``, falling back to ``efficiency_basis``)."""
    return (
        EfficiencyBasis(
            "GEMM fraction",
            "GEMM efficiency",
            "pct_achievable_gemm_tops",
            units.fraction(gpu.pct_achievable_gemm_tops),
            gpu.gemm_basis,
            "gemm_efficiency_basis",
            gpu.gemm_efficiency_assumed,
        ),
        EfficiencyBasis(
            "Memory-bandwidth fraction",
            "memory efficiency",
            "pct_achievable_mem_bw",
            units.fraction(gpu.pct_achievable_mem_bw),
            gpu.mem_basis,
            "mem_efficiency_basis",
            gpu.mem_efficiency_assumed,
        ),
    )


def assumed_title(gpu: GpuSpec) -> str:
    """The title of a GPU page's box on assumed efficiencies of torchao's model ("" when
    both were measured): which of the two is assumed."""
    assumed = [e.name for e in efficiency_bases(gpu) if e.assumed]
    if not assumed:
        return ""
    what = "Efficiencies" if len(assumed) > 1 else assumed[0][0].upper() + assumed[0][1:]
    return f"{what} assumed (torchao's model)"


def block_peak_text(gpu: GpuSpec) -> str:
    """The block-scaled fp8 peak as given, or what stands in for it when absent."""
    given = gpu.fp8_block_scaled_peak_tops
    if given is not None:
        return units.tflops_with_unit(given)
    if gpu.fp8_peak_tops is None:
        return units.MISSING
    return f"{units.tflops_with_unit(gpu.fp8_peak_tops)} (not given: the fp8 peak)"


def platform_text(gpu: GpuSpec) -> str:
    """The software platform, and whether it was given or derived from the vendor."""
    if gpu.platform is None:
        return "unknown"
    return gpu.platform if gpu.platform_given else f"{gpu.platform} (from the vendor)"


def native_formats(gpu: GpuSpec) -> str:
    """The GPU's native formats, comma-separated, or "none"."""
    return ", ".join(gpu.native_formats) or "none"


def optional_rows(gpu: GpuSpec) -> list[tuple[str, str, str]]:
    """The figures only the calibrated model or its scoring reads, where the entry gives
    them: the SM count (GEMM waves) and the last-level cache (warm benchmarks)."""
    rows = []
    if gpu.sm_count is not None:
        rows.append(("SMs (compute units)", "sm_count", units.count(gpu.sm_count)))
    if gpu.l2_cache_bytes is not None:
        cache = units.mebibytes(gpu.l2_cache_bytes)
        rows.append(("last-level cache (L2; Infinity Cache on AMD)", "l2_cache_bytes", cache))
    return rows


def spec_table(gpu: GpuSpec) -> Table:
    """A GPU page's specification: each figure with its spec key."""
    rows = (
        ("dense bf16 peak", "bf16_peak_tops", units.tflops_with_unit(gpu.bf16_peak_tops)),
        ("dense fp8 peak", "fp8_peak_tops", units.tflops_with_unit(gpu.fp8_peak_tops)),
        ("dense block-scaled fp8 peak (MX)", "fp8_block_scaled_peak_tops", block_peak_text(gpu)),
        ("dense fp4 peak", "fp4_peak_tops", units.tflops_with_unit(gpu.fp4_peak_tops)),
        (
            "peak memory bandwidth",
            "peak_mem_bw_bytes_sec",
            units.format_value(gpu.peak_mem_bw_bytes_sec, "bytes/s"),
        ),
        (
            "achievable GEMM fraction",
            "pct_achievable_gemm_tops",
            units.fraction(gpu.pct_achievable_gemm_tops),
        ),
        (
            "achievable memory fraction",
            "pct_achievable_mem_bw",
            units.fraction(gpu.pct_achievable_mem_bw),
        ),
        (
            "kernel launch floor",
            "kernel_launch_overhead_s",
            units.microseconds(gpu.kernel_launch_overhead_s),
        ),
        *optional_rows(gpu),
        *((f"{e.name} basis", e.basis_key, e.basis) for e in efficiency_bases(gpu)),
        ("peak basis", "peak_basis", gpu.peak_basis),
        ("accumulate dtype", "accumulate_dtype", gpu.accumulate_dtype),
        ("native formats", "native_formats", native_formats(gpu)),
        ("software platform", "platform", platform_text(gpu)),
        *(
            (f"software gap: {recipe}", "software_gaps", reason)
            for recipe, reason in gpu.software_gaps.items()
        ),
    )
    table = Table(("figure", "spec key", "value"), name="spec-rows")
    for label, key, value in rows:
        table.rows.append((label, safe.code(key), value))
    for dtype, tflops in gpu.measured_matmul_tflops.items():
        table.rows.append(
            (
                f"measured matmul, {dtype} (context only)",
                safe.code("measured_matmul_tflops"),
                f"{units.significant(tflops, None)} TFLOP/s",
            )
        )
    return table


def ridge_table(gpu: GpuSpec) -> Table:
    """Ridge points per format: at peak figures and at achievable figures."""
    header = (
        "format",
        "peak (TFLOP/s)",
        "ridge at peak (FLOP/byte)",
        "ridge at achievable (FLOP/byte)",
    )
    table = Table(header, name="ridge")
    # The block-scaled path gets a row only where its peak differs (is given).
    block = [FP8_BLOCK] if gpu.fp8_block_scaled_peak_tops is not None else []
    for fmt in (*FORMATS.values(), *block):
        key = fmt.peak.spec_key
        peak, ridge = gpu.value(key), gpu.ridge_point_flop_per_byte(key)
        name = f"{fmt.name} block-scaled (MX)" if fmt is FP8_BLOCK else fmt.name
        if peak is None or ridge is None:
            table.rows.append((name, "not supported", "—", "—"))
            continue
        achievable = ridge * gpu.pct_achievable_gemm_tops / gpu.pct_achievable_mem_bw
        table.rows.append(
            (name, units.tflops(peak), units.flop_per_byte(ridge), units.flop_per_byte(achievable))
        )
    return table


def gpus_table(gpus: list[GpuSpec], page: str) -> Table:
    """The GPU list: vendor, architecture, peaks, bandwidth, efficiency basis."""
    header = (
        "GPU",
        "vendor",
        "architecture",
        "bf16 TFLOP/s",
        "fp8 TFLOP/s",
        "fp4 TFLOP/s",
        "memory TB/s",
        "efficiency basis",
    )
    table = Table(header, name="table")
    for gpu in gpus:
        table.rows.append(
            (
                safe.link(gpu.name, rel(gpu_page(gpu), page)),
                gpu.vendor or "—",
                gpu.architecture or "—",
                units.tflops(gpu.bf16_peak_tops),
                units.tflops(gpu.fp8_peak_tops),
                units.tflops(gpu.fp4_peak_tops),
                units.tb_per_s(gpu.peak_mem_bw_bytes_sec),
                basis(gpu),
            )
        )
    return table


def side_by_side_table(gpus: list[GpuSpec], page: str) -> Table:
    """Every GPU's figures in one table (the Specs page)."""
    header = (
        "GPU",
        "bf16",
        "fp8",
        "fp8 MX",
        "fp4",
        "TB/s",
        "η GEMM",
        "η mem",
        "basis",
        "native formats",
        "bf16 ridge (FLOP/B)",
    )
    table = Table(header, name="side")
    for gpu in gpus:
        ridge = gpu.ridge_point_flop_per_byte("bf16_peak_tops") or 0.0
        table.rows.append(
            (
                safe.link(gpu.name, rel(gpu_page(gpu), page)),
                units.tflops(gpu.bf16_peak_tops),
                units.tflops(gpu.fp8_peak_tops),
                units.tflops(gpu.value("fp8_block_scaled_peak_tops")),
                units.tflops(gpu.fp4_peak_tops),
                units.tb_per_s(gpu.peak_mem_bw_bytes_sec),
                units.fraction(gpu.pct_achievable_gemm_tops),
                units.fraction(gpu.pct_achievable_mem_bw),
                basis(gpu),
                native_formats(gpu),
                units.flop_per_byte(ridge),
            )
        )
    return table


def gpu_keys_table() -> Table:
    """The keys of a spec file's ``[[gpu]]`` tables."""
    table = Table(("key", "type", "required", "description"), name="keys")
    for key, spec in GPU_KEYS.items():
        listed = "keys from" if spec.kind == "table" else "one of"
        choices = f" ({listed}: {', '.join(spec.choices)})" if spec.choices else ""
        required = "yes" if spec.required else "no"
        table.rows.append((safe.code(key), spec.kind, required, spec.description + choices))
    return table


def top_keys_table() -> Table:
    """The top-level keys of a spec file."""
    return Table(
        ("key", "description"), [(safe.code(k), v) for k, v in TOP_KEYS.items()], name="top"
    )


def symbols_table() -> Table:
    """The hardware symbols of the formulas, with their spec keys and units."""
    table = Table(("symbol", "spec key", "meaning", "unit"), name="symbols")
    for hw in HARDWARE_SYMBOLS:
        table.rows.append((safe.math(hw.latex), safe.code(hw.spec_key), hw.description, hw.unit))
    return table


def kernels_table(recipe: Recipe, mode: Mode, name: str) -> Table:
    """The cast kernels a recipe runs in ``mode``, bytes printed by sympy."""
    header = ("#", "tensor", "kernel", "bytes read", "bytes written", "read fused with --fusion")
    table = Table(header, name=name)
    for i, kernel in enumerate(recipe.plan(mode).kernels, 1):
        fused = "yes" if mode is Mode.TRAINING and kernel.fuses_under_fusion else "no"
        table.rows.append(
            (
                str(i),
                kernel.role.value,
                kernel.description,
                safe.math(latex_of(kernel.read_bytes)),
                safe.math(latex_of(kernel.write_bytes)),
                fused,
            )
        )
    return table


def gemms_table(recipe: Recipe, mode: Mode, name: str) -> Table:
    """The GEMMs a recipe runs in ``mode``: operand format and scale reads."""
    table = Table(("GEMM", "format", "scale reads"), name=name)
    block = recipe.scaling.gemm_scale_block
    for gemm, fmt in recipe.plan(mode).gemm_formats.items():
        scales = f"1 byte per {block} operand elements" if block and fmt.name != "bf16" else "—"
        table.rows.append((gemm.value, fmt.name, scales))
    return table


def recipes_table(page: str) -> Table:
    """The recipe list."""
    table = Table(("recipe", "family", "needs", "modes", "summary"), name="table")
    for r in RECIPE_LIST:
        modes = ", ".join(m.value for m in r.modes)
        link = safe.link(r.name, rel(recipe_page(r.name), page))
        table.rows.append((link, r.family.value, r.native_format, modes, r.summary))
    return table


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
