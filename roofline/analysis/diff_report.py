"""The spec diff as a report: JSON (exact, round-trips) and GitHub-flavoured Markdown.

Numbers are formatted by :mod:`roofline.units`, the same formats as the site's.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from roofline import units
from roofline.analysis.diff import (
    MAX_TABLE_ROWS,
    BreakEvenShift,
    FieldChange,
    NewGpu,
    Plain,
    RecommendationFlip,
    SpecDiff,
    SpeedupDelta,
)
from roofline.analysis.guidance import BREAK_EVEN_M_GRID, CANONICAL_SHAPE
from roofline.publish.table import markdown_table
from roofline.shapes import LLAMA_M

# -- JSON ------------------------------------------------------------------------------


def _m_to_json(m: float | None) -> float | str | None:
    if m is None:
        return "never"
    return "always" if math.isinf(m) else m


def _m_from_json(value: float | str | None) -> float | None:
    if value == "never":
        return None
    return float("-inf") if value == "always" else value


def to_dict(diff: SpecDiff) -> dict[str, Any]:
    """The diff as JSON-compatible data (break-even M: a number, "never" or "always")."""
    data = dataclasses.asdict(diff)
    data["added"], data["removed"] = list(diff.added), list(diff.removed)
    for row in data["break_even"]:
        row["old"], row["new"] = _m_to_json(row["old"]), _m_to_json(row["new"])
    data["summary"] = diff.summary()
    data["canonical_shape"] = list(CANONICAL_SHAPE)
    return data


def to_json(diff: SpecDiff) -> str:
    """The diff as JSON: sorted keys, floats as repr (exact round trip), newline-ended."""
    return json.dumps(to_dict(diff), indent=2, sort_keys=True, allow_nan=False) + "\n"


def from_json(text: str) -> SpecDiff:
    """Read :func:`to_json` output back into a :class:`SpecDiff`."""
    data = json.loads(text)
    shifts = []
    for row in data["break_even"]:
        row = dict(row, old=_m_from_json(row["old"]), new=_m_from_json(row["new"]))
        shifts.append(BreakEvenShift(**row))
    return SpecDiff(
        base=data["base"],
        head=data["head"],
        model_version=data["model_version"],
        added=tuple(data["added"]),
        removed=tuple(data["removed"]),
        fields=tuple(FieldChange(**row) for row in data["fields"]),
        speedups=tuple(SpeedupDelta(**row) for row in data["speedups"]),
        flips=tuple(RecommendationFlip(**row) for row in data["flips"]),
        break_even=tuple(shifts),
        new_gpus=tuple(
            NewGpu(g["name"], g["figures"], {m: tuple(b) for m, b in g["best"].items()})
            for g in data["new_gpus"]
        ),
    )


# -- Markdown --------------------------------------------------------------------------


def _cell(text: str) -> str:
    """Table-safe text: pipes escaped, newlines folded, long text shortened."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= 120 else text[:117] + "..."


def fmt_value(value: Plain) -> str:
    """A field value as the report shows it."""
    if value is None:
        return "(absent)"
    if isinstance(value, float):
        return units.significant(value, None)
    if isinstance(value, list):
        items = [v["url"] if isinstance(v, dict) and "url" in v else v for v in value]
        return ", ".join(map(str, items)) or "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k} = {v}" for k, v in value.items()) or "(none)"
    return str(value) if value != "" else '""'


def _fmt_change(change: FieldChange) -> str:
    rel = change.relative_change
    return "" if rel is None else units.percent(rel, signed=True)


def fmt_m(m: float | None) -> str:
    """A break-even M searched over the guidance grid (:func:`roofline.units.break_even_m`)."""
    return units.break_even_m(m, BREAK_EVEN_M_GRID[0], BREAK_EVEN_M_GRID[-1])


def _table(headers: list[str], rows: list[list[str]], what: str) -> list[str]:
    shown = rows[:MAX_TABLE_ROWS]
    lines = markdown_table(headers, ([_cell(c) for c in row] for row in shown))
    if len(rows) > MAX_TABLE_ROWS:
        lines.append(
            f"\n... and {len(rows) - MAX_TABLE_ROWS} more {what} (all in `--format json`)."
        )
    return [*lines, ""]


def _header(diff: SpecDiff) -> list[str]:
    m, k, n = CANONICAL_SHAPE
    return [
        "# Spec diff",
        "",
        f"**{diff.summary()}**",
        "",
        f"- Base: `{diff.base}`",
        f"- Head: `{diff.head}`",
        f"- Model version: `{diff.model_version}` (both sides evaluated with it)",
        f"- Shapes: canonical M={m}, K={k}, N={n}; llama = aggregate of torchao's four "
        f"llama GEMMs at M={LLAMA_M} (summed bf16 time / summed low-precision time)",
        "",
    ]


def _gpus_section(diff: SpecDiff) -> list[str]:
    lines = []
    if diff.added:
        lines += ["## GPUs added", ""]
        lines += [f"- **{g.name}** (new): {_new_gpu_text(g)}" for g in diff.new_gpus]
        lines.append("")
    if diff.removed:
        lines += ["## GPUs removed", "", *(f"- **{n}**" for n in diff.removed), ""]
    return lines


def _new_gpu_text(gpu: NewGpu) -> str:
    f = gpu.figures
    peaks = "/".join(
        units.tflops(f[k]) for k in ("bf16_peak_tops", "fp8_peak_tops", "fp4_peak_tops")
    )
    best = "; ".join(
        f"{mode}: {name or 'bf16'} ({units.speedup(speedup)})"
        for mode, (name, speedup) in gpu.best.items()
    )
    return (
        f"bf16/fp8/fp4 {peaks} TFLOP/s, {units.tb_per_s(f['peak_mem_bw_bytes_sec'])} TB/s, "
        f"efficiencies {units.fraction(f['pct_achievable_gemm_tops'])}/"
        f"{units.fraction(f['pct_achievable_mem_bw'])} "
        f"({f['efficiency_basis']}), native {', '.join(f['native_formats']) or 'none'}; "
        f"best at canonical: {best}"
    )


def _fields_section(diff: SpecDiff) -> list[str]:
    if not diff.fields:
        return []
    lines = ["## Fields changed", ""]
    for gpu in diff.changed_gpus:
        rows = [
            [f"`{c.field}`", fmt_value(c.old), "->", fmt_value(c.new), _fmt_change(c)]
            for c in diff.fields
            if c.gpu == gpu
        ]
        lines += [f"### {gpu}", ""]
        lines += _table(["field", "old", "", "new", "change"], rows, "fields")
    return lines


def _support_text(row: SpeedupDelta) -> str:
    if row.new_gpu:
        return f"new GPU; {row.new_support}"
    if row.old_support != row.new_support:
        return f"{row.old_support or 'impossible'} -> {row.new_support or 'impossible'}"
    return row.new_support or ""


def _speedups_section(diff: SpecDiff) -> list[str]:
    if not diff.speedups:
        return []
    rows = []
    for r in diff.speedups:
        delta = units.speedup_delta(r.delta)
        rows.append(
            [
                r.gpu,
                r.mode,
                r.recipe,
                r.shape,
                units.speedup(r.old),
                "->",
                units.speedup(r.new),
                delta,
                _support_text(r),
            ]
        )
    headers = ["GPU", "mode", "recipe", "shape", "old", "", "new", "delta", "support"]
    return [
        "## Speedup deltas",
        "",
        "Largest |delta| first; hypothetical = the GPU lacks the format natively.",
        "",
        *_table(headers, rows, "speedups"),
    ]


def _flips_section(diff: SpecDiff) -> list[str]:
    if not diff.flips:
        return []
    rows = [
        [
            f.gpu,
            f.mode,
            f.old or "bf16",
            units.speedup(f.old_speedup),
            "->",
            f.new or "bf16",
            units.speedup(f.new_speedup),
        ]
        for f in diff.flips
    ]
    headers = ["GPU", "mode", "old best", "speedup", "", "new best", "speedup"]
    return [
        "## Recommendation flips (canonical shape)",
        "",
        *_table(headers, rows, "flips"),
    ]


def _break_even_section(diff: SpecDiff) -> list[str]:
    if not diff.break_even:
        return []
    rows = [
        [s.gpu, s.mode, s.recipe, str(s.kn), fmt_m(s.old), "->", fmt_m(s.new)]
        for s in diff.break_even
    ]
    return [
        "## Break-even shifts",
        "",
        "Smallest M from which the native recipe is faster than bf16, for K = N.",
        "",
        *_table(["GPU", "mode", "recipe", "K=N", "old M", "", "new M"], rows, "shifts"),
    ]


def to_markdown(diff: SpecDiff) -> str:
    """The diff as GitHub-flavoured Markdown, summary line first."""
    lines = _header(diff)
    if diff.empty:
        return "\n".join(lines).rstrip() + "\n"
    for section in (
        _gpus_section,
        _fields_section,
        _speedups_section,
        _flips_section,
        _break_even_section,
    ):
        lines += section(diff)
    return "\n".join(lines).rstrip() + "\n"
