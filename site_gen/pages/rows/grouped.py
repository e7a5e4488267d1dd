"""Row builders of the grouped-GEMM (MoE) pages.

Every number comes from :mod:`site_gen.gather.grouped` (the compiled grouped models) or
from the GPU's calibrated parameters (:mod:`roofline.calibration.params`), and every
number is formatted by :mod:`roofline.units` or :mod:`site_gen.pages.rows.validation`; cells are
plain text or :class:`site_gen.markup.safe.Md`. The calibrated model leads; torchao's value of
the same cell stands beside (or below) it.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable

import numpy as np

from roofline import units
from roofline.calibration.params import CalibratedParameters
from roofline.model.build import build_model
from roofline.model.grouped import Layout, gemm_shape, rearrange_kernels
from roofline.model.terms import Quantity
from roofline.publish.latex import symbolic
from roofline.publish.slugs import slug
from roofline.recipes import Gemm, Mode, Recipe
from roofline.symbols import CALIBRATION_SYMBOLS, HardwareSymbol
from site_gen.context import Cell, Table, set_links
from site_gen.gather.grouped import (
    DEFAULT_TOKENS,
    GROUPS,
    TOKENS,
    ExpertShape,
    GroupedResult,
    ShapeTimes,
)
from site_gen.markup import safe
from site_gen.pages.rows.validation import parameter_text, source_text

DASH = units.MISSING
CALIBRATED, TORCHAO = "calibrated", "torchao"
NUMBER = "---:"


class Part(enum.Enum):
    """What a term of a grouped layer is, for the per-term tables."""

    BF16 = "bf16 grouped GEMMs (the baseline)"
    GEMM_2D3D = "2D-3D GEMMs (output, grad_input)"
    GEMM_2D2D = "2D-2D GEMM (grad_weight)"
    ACTIVATION_CASTS = "activation casts (input, grad_output)"
    WEIGHT_CASTS = "3D weight casts"
    REARRANGE = "scale rearrangements"


def part_of(key: str) -> Part:
    """The part a term key belongs to (``gemm.output.lowp`` is a 2D-3D GEMM)."""
    kind, name, *rest = key.split(".")
    if kind == "gemm":
        if rest == ["bf16"]:
            return Part.BF16
        layout = gemm_shape(Gemm(name), grouped=True).layout
        return Part.GEMM_2D2D if layout is Layout.GROUPED_2D2D else Part.GEMM_2D3D
    if kind == "rearrange":
        return Part.REARRANGE
    if kind == "cast":
        return Part.WEIGHT_CASTS if name == "weight" else Part.ACTIVATION_CASTS
    return Part.BF16  # the bf16 activation of fused inference (not shown on these pages)


def parts_of(keys: Iterable[str]) -> list[Part]:
    """The parts a model's terms fall in, in :class:`Part` order."""
    found = {part_of(k) for k in keys}
    return [p for p in Part if p in found]


def _us(seconds: float) -> str:
    """Microseconds to four significant digits (the exports have seconds in full)."""
    value = seconds / units.MICRO
    return units.magnitude(value)


def shape_title(shape: ExpertShape) -> str:
    """``DeepSeek-V3 expert_gate_proj``."""
    return f"{shape.title} {shape.gemm}"


def shape_dims(shape: ExpertShape) -> str:
    """``K = 7168, N = 2048, top-8 of 256 experts``."""
    return f"K = {shape.K}, N = {shape.N}, top-{shape.top_k} of {shape.experts} experts"


# -- speedup over G --------------------------------------------------------------------


def _speedup_cell(result: GroupedResult, index: int, t: int, g: int) -> Cell:
    """The calibrated speedup in bold, torchao's in parentheses; — where the shape's
    experts cannot be split into G per device or the recipe cannot take the shape."""
    shape, times, ref = result.shapes[index], result.times[index], result.torchao.times[index]
    if times.skipped or not shape.allows(GROUPS[g]):
        return DASH
    calibrated = units.speedup(float(times.speedup[t, g]))
    return safe.concat(safe.strong(calibrated), f" ({units.speedup(float(ref.speedup[t, g]))})")


def speedup_table(result: GroupedResult, tokens: int) -> Table:
    """Speedup over the bf16 grouped layer at ``tokens`` tokens per device: a row per
    expert count G, a column per model preset (its first expert GEMM,
    :func:`shape_line`), each cell the calibrated model's speedup (bold) with torchao's
    in parentheses. Few columns: Material gives every column at least 5rem, and the table
    has to fit beside the navigation."""
    header = ("G", *(shape.title for shape in result.shapes))
    table = Table(header, align=(NUMBER,) * len(header), name=f"speedup-over-groups-{tokens}")
    t = TOKENS.index(tokens)
    for g, groups in enumerate(GROUPS):
        cells = [_speedup_cell(result, i, t, g) for i in range(len(result.shapes))]
        table.rows.append((str(groups), *cells))
    return table


def shape_line(shape: ExpertShape) -> str:
    """``DeepSeek-V3: expert_gate_proj, K = 7168, N = 2048, top-8 of 256 experts; M =
    32768 or 131072`` (the routed rows at each of :data:`TOKENS`)."""
    rows = " or ".join(str(shape.routed_m(t)) for t in TOKENS)
    return f"{shape.title}: {shape.gemm}, {shape_dims(shape)}; M = {rows}"


def skipped_notes(result: GroupedResult) -> list[str]:
    """Why a shape has no numbers (the recipe's block size does not divide it)."""
    return [
        f"{shape_title(s)}: {t.skipped}"
        for s, t in zip(result.shapes, result.times, strict=True)
        if t.skipped
    ]


# -- time per part ---------------------------------------------------------------------


def _part_sums(times: ShapeTimes, parts: list[Part]) -> dict[Part, np.ndarray]:
    sums = {p: np.zeros_like(times.speedup) for p in parts}
    for key, value in times.terms.items():
        part = part_of(key)
        if part in sums:
            sums[part] = sums[part] + value
    return sums


def part_table(result: GroupedResult, index: int) -> Table:
    """One expert shape at :data:`DEFAULT_TOKENS` tokens per device: a row per part of the
    calibrated model's time and its low-precision total (µs), then its speedup and
    torchao's; a column per G the preset's experts allow (a row per G would need more
    columns than fit beside the navigation). Exported as shown (``parts-<model>``);
    :func:`terms_export` has every term in full."""
    shape, times, ref = result.shapes[index], result.times[index], result.torchao.times[index]
    allowed = [g for g, groups in enumerate(GROUPS) if shape.allows(groups)]
    header = ("µs", *(f"G={GROUPS[g]}" for g in allowed))
    table = Table(
        header, align=("---", *(NUMBER,) * len(allowed)), name=f"parts-{slug(shape.model)}"
    )
    t = TOKENS.index(DEFAULT_TOKENS)
    sums = _part_sums(times, parts_of(times.terms))
    for part, values in sums.items():
        table.rows.append((part.value, *(_us(float(values[t, g])) for g in allowed)))
    lowp = _lowp(times)
    table.rows.append(("low precision, in all", *(_us(float(lowp[t, g])) for g in allowed)))
    table.rows.append(
        (
            f"speedup ({CALIBRATED})",
            *(safe.strong(units.speedup(float(times.speedup[t, g]))) for g in allowed),
        )
    )
    table.rows.append(
        (f"speedup ({TORCHAO})", *(units.speedup(float(ref.speedup[t, g])) for g in allowed))
    )
    return table


def _lowp(times: ShapeTimes) -> np.ndarray:
    return times.totals[Quantity.LOWP_GEMM.value] + times.totals[Quantity.OVERHEAD.value]


def terms_export(result: GroupedResult) -> Table:
    """Every term of every shape, token count and G in both models, in seconds (the
    download behind the per-part tables; the page shows its export links only)."""
    keys = [k for t in result.times for k in t.terms]
    keys = list(dict.fromkeys(keys))
    header = (
        "expert GEMM",
        "K",
        "N",
        "tokens/device",
        "M",
        "G",
        "model",
        *keys,
        "bf16 total (s)",
        "low precision total (s)",
        "speedup",
    )
    table = Table(header, raw=[], name="terms")
    for i, shape in enumerate(result.shapes):
        for model, r in ((CALIBRATED, result), (TORCHAO, result.torchao)):
            times = r.times[i]
            if times.skipped:
                continue
            for t, tokens in enumerate(TOKENS):
                for g, groups in enumerate(GROUPS):
                    values = [float(times.terms[k][t, g]) for k in keys]
                    totals = (
                        float(times.totals[Quantity.BF16_GEMM.value][t, g]),
                        float(_lowp(times)[t, g]),
                        float(times.speedup[t, g]),
                    )
                    head = (
                        shape_title(shape),
                        shape.K,
                        shape.N,
                        tokens,
                        shape.routed_m(tokens),
                        groups,
                        model,
                    )
                    table.raw.append((*head, *values, *totals))  # type: ignore[union-attr]
    return table


# -- parameters and kernels ------------------------------------------------------------


@functools.cache
def model_symbols(mode: Mode, recipe: Recipe) -> tuple[HardwareSymbol, ...]:
    """The calibration parameters the recipe's calibrated grouped model uses, in symbol
    order."""
    model = build_model(mode, recipe, calibrated=True, grouped=True)
    used = set().union(*(t.expr.free_symbols for t in model.terms))
    return tuple(hw for hw in CALIBRATION_SYMBOLS if hw.symbol in used)


def parameters_table(result: GroupedResult, params: CalibratedParameters, validation: str) -> Table:
    """The calibrated parameters of the recipe's grouped model on this GPU: value, basis,
    source and the measurement sets behind it (linked to the Validation page)."""
    header = ("parameter", "meaning", "value", "basis", "source (sets)")
    table = Table(header, align=("---", "---", NUMBER, "---", "---"), name="parameters")
    for hw in model_symbols(result.mode, result.recipe):
        v = params.values[hw.spec_key]
        source: list[object] = [source_text(v.source, (), "")]
        if v.sets:
            source += [" (", set_links(v.sets, validation), ")"]
        table.rows.append(
            (
                safe.math(hw.latex),
                hw.description,
                parameter_text(v.value, hw.unit),
                v.basis.value,
                safe.concat(*source),
            )
        )
    return table


def rearrangements_table(mode: Mode, recipe: Recipe) -> Table:
    """The scale rearrangements a grouped layer of the recipe runs: scales moved, in the
    layer's symbols (printed by sympy)."""
    header = ("GEMM", "operand", "kind", "scales moved", "bytes (read + write)")
    table = Table(header, name="rearrangements")
    for k in rearrange_kernels(mode, recipe):
        table.rows.append(
            (
                k.gemm.value,
                k.operand,
                k.kind.value,
                safe.math(symbolic(k.scales)),
                safe.math(symbolic(k.bytes_moved)),
            )
        )
    return table
