"""Row builders of the tables about hardware figures and recipes (no speedups).

GPU figures are formatted by :mod:`roofline.units`; kernel byte counts are printed by
sympy from the recipe registry. Each table is built with its export name.
"""

from __future__ import annotations

from roofline import units
from roofline.capability import Support, matrix
from roofline.recipes import FORMATS, RECIPE_LIST, Mode, Recipe
from roofline.specs import GPU_KEYS, TOP_KEYS, GpuSpec, SpecDatabase
from roofline.symbols import HARDWARE_SYMBOLS
from site_gen import safe
from site_gen.context import Table, gpu_page, recipe_page, rel
from site_gen.formulas import latex_of


def basis(gpu: GpuSpec) -> str:
    """Where the GPU's efficiencies come from ("assumed" when copied from H100's)."""
    return "assumed" if gpu.efficiency_assumed else gpu.efficiency_basis


def native_formats(gpu: GpuSpec) -> str:
    """The GPU's native formats, comma-separated, or "none"."""
    return ", ".join(gpu.native_formats) or "none"


def spec_table(gpu: GpuSpec) -> Table:
    """A GPU page's specification: each figure with its spec key."""
    rows = (
        ("dense bf16 peak", "bf16_peak_tops", units.tflops_with_unit(gpu.bf16_peak_tops)),
        ("dense fp8 peak", "fp8_peak_tops", units.tflops_with_unit(gpu.fp8_peak_tops)),
        ("dense fp4 peak", "fp4_peak_tops", units.tflops_with_unit(gpu.fp4_peak_tops)),
        ("peak memory bandwidth", "peak_mem_bw_bytes_sec",
         units.format_value(gpu.peak_mem_bw_bytes_sec, "bytes/s")),
        ("achievable GEMM fraction", "pct_achievable_gemm_tops",
         units.fraction(gpu.pct_achievable_gemm_tops)),
        ("achievable memory fraction", "pct_achievable_mem_bw",
         units.fraction(gpu.pct_achievable_mem_bw)),
        ("kernel launch floor", "kernel_launch_overhead_s",
         units.microseconds(gpu.kernel_launch_overhead_s)),
        ("efficiency basis", "efficiency_basis", gpu.efficiency_basis),
        ("peak basis", "peak_basis", gpu.peak_basis),
        ("accumulate dtype", "accumulate_dtype", gpu.accumulate_dtype),
        ("native formats", "native_formats", native_formats(gpu)),
    )  # fmt: skip
    table = Table(("figure", "spec key", "value"), name="spec-rows")
    for label, key, value in rows:
        table.rows.append((label, safe.code(key), value))
    for dtype, tflops in gpu.measured_matmul_tflops.items():
        table.rows.append((f"measured matmul, {dtype} (context only)",
                           safe.code("measured_matmul_tflops"), f"{tflops:g} TFLOP/s"))  # fmt: skip
    return table


def ridge_table(gpu: GpuSpec) -> Table:
    """Ridge points per format: at peak figures and at achievable figures."""
    header = ("format", "peak (TFLOP/s)", "ridge at peak (FLOP/byte)",
              "ridge at achievable (FLOP/byte)")  # fmt: skip
    table = Table(header, name="ridge")
    for fmt in FORMATS.values():
        key = fmt.peak.spec_key
        peak, ridge = gpu.value(key), gpu.ridge_point_flop_per_byte(key)
        if peak is None or ridge is None:
            table.rows.append((fmt.name, "not supported", "—", "—"))
            continue
        achievable = ridge * gpu.pct_achievable_gemm_tops / gpu.pct_achievable_mem_bw
        table.rows.append((fmt.name, units.tflops(peak), units.flop_per_byte(ridge),
                           units.flop_per_byte(achievable)))  # fmt: skip
    return table


def gpus_table(gpus: list[GpuSpec], page: str) -> Table:
    """The GPU list: vendor, architecture, peaks, bandwidth, efficiency basis."""
    header = ("GPU", "vendor", "architecture", "bf16 TFLOP/s", "fp8 TFLOP/s", "fp4 TFLOP/s",
              "memory TB/s", "efficiency basis")  # fmt: skip
    table = Table(header, name="table")
    for gpu in gpus:
        table.rows.append((
            safe.link(gpu.name, rel(gpu_page(gpu), page)), gpu.vendor or "—",
            gpu.architecture or "—", units.tflops(gpu.bf16_peak_tops),
            units.tflops(gpu.fp8_peak_tops), units.tflops(gpu.fp4_peak_tops),
            units.tb_per_s(gpu.peak_mem_bw_bytes_sec), basis(gpu),
        ))  # fmt: skip
    return table


def side_by_side_table(gpus: list[GpuSpec], page: str) -> Table:
    """Every GPU's figures in one table (the Specs page)."""
    header = ("GPU", "bf16", "fp8", "fp4", "TB/s", "η GEMM", "η mem", "basis", "native formats",
              "bf16 ridge (FLOP/B)")  # fmt: skip
    table = Table(header, name="side")
    for gpu in gpus:
        ridge = gpu.ridge_point_flop_per_byte("bf16_peak_tops") or 0.0
        table.rows.append((
            safe.link(gpu.name, rel(gpu_page(gpu), page)), units.tflops(gpu.bf16_peak_tops),
            units.tflops(gpu.fp8_peak_tops), units.tflops(gpu.fp4_peak_tops),
            units.tb_per_s(gpu.peak_mem_bw_bytes_sec),
            units.fraction(gpu.pct_achievable_gemm_tops),
            units.fraction(gpu.pct_achievable_mem_bw), basis(gpu), native_formats(gpu),
            units.flop_per_byte(ridge),
        ))  # fmt: skip
    return table


SUPPORT_SYMBOL = {
    Support.NATIVE: "✓ native",
    Support.HYPOTHETICAL: "~ hypothetical",
    Support.IMPOSSIBLE: "✗",
}


def capability_table(specs: SpecDatabase, page: str) -> Table:
    """GPU x recipe support (native, hypothetical, impossible)."""
    caps = matrix(specs)
    table = Table(("GPU", *(safe.breakable(r.name) for r in RECIPE_LIST)), name="cap-table")
    for gpu in specs.values():
        support = (SUPPORT_SYMBOL[caps[gpu.name][r.name].support] for r in RECIPE_LIST)
        table.rows.append((safe.link(gpu.name, rel(gpu_page(gpu), page)), *support))
    return table


def gpu_keys_table() -> Table:
    """The keys of a spec file's ``[[gpu]]`` tables."""
    table = Table(("key", "type", "required", "description"), name="keys")
    for key, spec in GPU_KEYS.items():
        choices = f" (one of: {', '.join(spec.choices)})" if spec.choices else ""
        required = "yes" if spec.required else "no"
        table.rows.append((safe.code(key), spec.kind, required, spec.description + choices))
    return table


def top_keys_table() -> Table:
    """The top-level keys of a spec file."""
    return Table(("key", "description"), [(safe.code(k), v) for k, v in TOP_KEYS.items()],
                 name="top")  # fmt: skip


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
        table.rows.append((str(i), kernel.role.value, kernel.description,
                           safe.math(latex_of(kernel.read_bytes)),
                           safe.math(latex_of(kernel.write_bytes)), fused))  # fmt: skip
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
