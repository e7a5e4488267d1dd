"""``roofline model``'s text output: the header, the per-GEMM table with each GEMM's best
recipe, the totals of each recipe and of the best mix, and the GEMMs each recipe cannot run
(:mod:`roofline.cli.model` runs the command).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from roofline.analysis.policy import BF16_NAME, ModelPlan
from roofline.capability import Support, classify
from roofline.errors import printable
from roofline.model.build import MODEL_VERSION
from roofline.recipes import Mode, get_recipe

#: The table fits a 100-column terminal; a GEMM name too long for it is cut with "...".
LINE_WIDTH = 100
_MIN_NAME_WIDTH = 12


def assumed_sentence(plan: ModelPlan, assumed: Sequence[str]) -> str:
    """The note naming the calibrated parameters ``plan``'s GPU has assumed, not measured."""
    gpu = printable(plan.gpu.name)
    return (
        f"{gpu}: calibrated {', '.join(assumed)} assumed, not measured "
        f'(roofline specs show "{gpu}" --calibrated lists the fallbacks)'
    )


def _ms(seconds: float) -> str:
    """Milliseconds, 4 significant digits without an exponent from 0.001 ms up."""
    ms = seconds * 1e3
    return f"{ms:.0f}" if ms >= 1000 else f"{ms:#.4g}".rstrip(".")


def _x(speedup: float) -> str:
    return f"{speedup:.2f}x"


def _wrap(text: str, indent: str = "", first: str | None = None) -> list[str]:
    start = indent if first is None else first
    return textwrap.wrap(
        text, LINE_WIDTH, initial_indent=start, subsequent_indent=indent, break_on_hyphens=False
    ) or [start.rstrip()]


def _candidates_text(plan: ModelPlan) -> str:
    """The candidates, each marked where it is not native."""
    if not plan.recipes:
        return "none (see --include-hypothetical, --recipes)"
    grouped = any(g.instance.groups > 1 for g in plan.gemms)
    names = []
    for name in plan.recipes:
        recipe = get_recipe(name, Mode.TRAINING)
        dense = classify(plan.gpu, recipe, Mode.TRAINING).support
        moe = classify(plan.gpu, recipe, Mode.TRAINING, True).support if grouped else dense
        mark = "" if dense is Support.NATIVE else f" ({dense})"
        if not mark and moe is not Support.NATIVE:
            mark = f" (grouped GEMMs {moe})"
        names.append(name + mark)
    return ", ".join(names)


def candidates_how(recipes: Sequence[str] | None, include_hypothetical: bool) -> str:
    """How the candidate recipes were chosen, in words."""
    if recipes is not None:
        return "given by --recipes"
    if include_hypothetical:
        return "the recipes native or hypothetical on this GPU"
    return "the recipes whose dense GEMMs run natively on this GPU"


def _header(plan: ModelPlan, assumed: Sequence[str], how: str) -> list[str]:
    preset = plan.model
    lines = _wrap(
        f"{printable(preset.display_name)} ({printable(preset.name)}) on "
        f"{printable(plan.gpu.name)}, "
        f"training: {plan.tokens} tokens per step per device, ep {plan.ep}"
    )
    for block in preset.blocks:
        if block.experts is not None and block.top_k is not None:
            lines += _wrap(
                f"{printable(block.name)}: {block.experts // plan.ep} of {block.experts} "
                f"experts per device, top-{block.top_k}: expert GEMMs of "
                f"{plan.tokens * block.top_k} routed rows in {block.experts // plan.ep} groups",
                "  ",
            )
    if plan.calibrated:
        which = "the calibrated model (fitted on published measurements)"
    else:
        which = f"torchao's model ({MODEL_VERSION})"
    fusion = "on" if plan.fusion else "off"
    lines += _wrap(f"model: {which}; fusion: {fusion}")
    if assumed:
        lines += _wrap(f"assumed: {assumed_sentence(plan, assumed)}", "  ", "")
    lines += _wrap(f"candidates ({how}): {_candidates_text(plan)}", "  ", "")
    return lines


_GEMM_HEADS = ("GEMM", "kind", "M", "K", "N", "G", "count", "bf16 ms", "best", "ms", "speedup")
# Gap before each column: one space between the dimension columns, two elsewhere.
_GEMM_GAPS = (0, 2, 2, 1, 1, 1, 1, 2, 2, 1, 2)
_LEFT = {0, 1, 8}  # text columns, left-aligned
_BEST = 8
_MIN_RECIPE_WIDTH = len("mxfp8_cublas_rceil")


def _gemm_cells(plan: ModelPlan) -> list[list[str] | str]:
    """Table rows (cells) with a block heading (a str) before each block's GEMMs."""
    blocks = {block.name: block for block in plan.model.blocks}
    rows: list[list[str] | str] = []
    current = None
    for gemm in plan.gemms:
        inst = gemm.instance
        if inst.block != current:
            current = inst.block
            block = blocks[inst.block]
            many = "layer" if block.layers == 1 else "layers"
            rows.append(f"{printable(block.name)} ({block.layers} {many})")
        best = gemm.best
        rows.append(
            [
                "  " + printable(inst.name),
                str(inst.kind),
                str(inst.M),
                str(inst.K),
                str(inst.N),
                str(inst.groups),
                str(inst.count),
                _ms(gemm.times[BF16_NAME].total_s),
                best,
                _ms(gemm.times[best].total_s),
                _x(gemm.speedup(best)),
            ]
        )
    return rows


def _gemm_table(plan: ModelPlan) -> list[str]:
    rows = _gemm_cells(plan)
    cells = [r for r in rows if isinstance(r, list)]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(_GEMM_HEADS)]
    # Over LINE_WIDTH (long names from a --models file, the longest recipe names), the best
    # recipe's column gives way down to _MIN_RECIPE_WIDTH, then the GEMM names; both are cut
    # with "..." (the totals, CSV and JSON keep them whole).
    budget = LINE_WIDTH - (sum(widths) - widths[0] - widths[_BEST]) - sum(_GEMM_GAPS)
    widths[_BEST] = min(widths[_BEST], max(_MIN_RECIPE_WIDTH, budget - widths[0]))
    widths[0] = min(widths[0], max(_MIN_NAME_WIDTH, budget - widths[_BEST]))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            value = _cut(value, widths[i])
            aligned = value.ljust(widths[i]) if i in _LEFT else value.rjust(widths[i])
            parts.append(" " * _GEMM_GAPS[i] + aligned)
        return "".join(parts).rstrip()

    out = [line(_GEMM_HEADS)]
    out += [line(row) if isinstance(row, list) else _cut(row, LINE_WIDTH) for row in rows]
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _totals_table(plan: ModelPlan) -> list[str]:
    totals = [plan.baseline, *plan.singles(), plan.mix()]
    width = max(len("recipe"), *(len(t.recipe) for t in totals))
    heads = ("forward ms", "backward ms", "total ms", "speedup", "fallbacks")
    out = [f"  {'recipe':{width}}  " + "  ".join(heads)]
    best = plan.best_single()
    for total in totals:
        time = total.time
        numbers = [_ms(time.forward_s), _ms(time.backward_s), _ms(time.total_s)]
        cells = [n.rjust(len(h)) for n, h in zip(numbers, heads, strict=False)]
        cells.append(_x(total.speedup).rjust(len(heads[3])))
        if total.recipe not in (BF16_NAME, plan.mix().recipe):
            cells.append(str(len(total.fallbacks)).rjust(len(heads[4])))
        is_best = best is not None and total.recipe == best.recipe
        mark = "  <- best" if is_best else ""
        out.append(f"  {total.recipe:{width}}  " + "  ".join(cells) + mark)
    return out


def _mix_lines(plan: ModelPlan) -> list[str]:
    chosen: dict[str, list[str]] = {}
    for gemm in plan.gemms:
        chosen.setdefault(gemm.best, []).append(printable(gemm.instance.key))
    ranked = sorted(chosen.items(), key=lambda item: -len(item[1]))  # stable: ties in order
    parts = [f"{name} for {len(keys)}" for name, keys in ranked]
    lines = _wrap(f"the mix runs {', '.join(parts)} of the {len(plan.gemms)} GEMMs", "    ", "  ")
    if BF16_NAME in chosen and len(chosen) > 1:
        lines += _wrap(f"kept in bf16: {', '.join(chosen[BF16_NAME])}", "    ", "  ")
    return lines


def _excluded_lines(plan: ModelPlan) -> list[str]:
    """Per recipe, the GEMMs it cannot run, grouped by reason."""
    lines = ["GEMMs a recipe cannot run (in that recipe's total they run in bf16):"]
    for name in plan.recipes:
        reasons: dict[str, list[str]] = {}
        for gemm in plan.gemms:
            if name in gemm.excluded:
                reasons.setdefault(gemm.excluded[name], []).append(printable(gemm.instance.key))
        for reason, keys in reasons.items():
            lines += _wrap(f"{name}: {', '.join(keys)}", "    ", "  ")
            lines += _wrap(printable(reason), "      ", "    ")
    if len(lines) == 1:
        lines.append("  none: every candidate recipe runs every GEMM")
    return lines


def model_table(plan: ModelPlan, assumed: Sequence[str], how: str) -> str:
    """The ``--format table`` text, at most :data:`LINE_WIDTH` columns for the presets;
    ``how``: how the candidates were chosen (:func:`candidates_how`)."""
    parts = [
        _header(plan, assumed, how),
        _wrap(
            "per GEMM: ms per training step (forward + backward, all count runs); G: experts "
            "per device (1: a dense GEMM); best: the least time, bf16 included"
        ),
        _gemm_table(plan),
        _wrap(
            "totals: every linear layer, ms per training step; fallbacks: GEMMs the recipe "
            "cannot run, which run in bf16 in its total"
        ),
        _totals_table(plan) + _mix_lines(plan),
        _excluded_lines(plan),
    ]
    return "\n\n".join("\n".join(part) for part in parts) + "\n"
