"""``roofline model --format csv|json`` and the ``roofline models`` list.

CSV: one row per (GEMM, recipe), bf16 first, then one ``total`` row per recipe and one for
the best per-GEMM mix (recipe ``mix``); columns ``row, gemm, kind, M, K, N, groups, count,
recipe, runs_in, best, forward_s, backward_s, total_s, speedup, fallbacks, reason``. A GEMM
a recipe cannot run has ``runs_in`` bf16, its bf16 time and the reason. Text cells are
:func:`~roofline.errors.spreadsheet_safe`.

JSON (``FORMAT_VERSION`` 1), times in seconds per training step::

    {"format": "roofline-model", "version": 1, "model": {"name", "display_name", "sources"},
     "gpu", "mode": "training", "tokens", "ep", "model_kind": "torchao"|"calibrated",
     "fusion", "candidates": {"recipes": [...], "chosen": TEXT},
     "assumed_parameters": [KEY, ...],
     "gemms": [{"key", "block", "name", "kind", "M", "K", "N", "groups", "count", "best",
                "times": {RECIPE or "bf16": {"forward_s", "backward_s", "total_s",
                                              "speedup"}},
                "excluded": {RECIPE: REASON}}],
     "totals": {RECIPE or "bf16": {"forward_s", "backward_s", "total_s", "speedup",
                                    "fallbacks": [KEY, ...]}},
     "mix": {"forward_s", "backward_s", "total_s", "speedup", "recipes": {KEY: RECIPE}},
     "best_single": RECIPE or null}
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from roofline.analysis.policy import BF16_NAME, ModelPlan, ModelTotal, StepTime
from roofline.errors import printable, spreadsheet_safe
from roofline.presets import ModelDatabase, ModelPreset, PresetGemm

FORMAT_VERSION = 1
#: The mix's name in the machine-readable formats.
MIX_NAME = "mix"
CSV_COLUMNS = (
    "row",
    "gemm",
    "kind",
    "M",
    "K",
    "N",
    "groups",
    "count",
    "recipe",
    "runs_in",
    "best",
    "forward_s",
    "backward_s",
    "total_s",
    "speedup",
    "fallbacks",
    "reason",
)


def _time_json(time: StepTime, baseline: StepTime) -> dict[str, float]:
    return {
        "forward_s": time.forward_s,
        "backward_s": time.backward_s,
        "total_s": time.total_s,
        "speedup": baseline.total_s / time.total_s,
    }


def _total_json(total: ModelTotal) -> dict[str, Any]:
    return {**_time_json(total.time, total.baseline), "fallbacks": list(total.fallbacks)}


def model_json(plan: ModelPlan, assumed: Sequence[str], how: str) -> str:
    """The ``--format json`` document (see the module docstring)."""
    preset = plan.model
    gemms = []
    for gemm in plan.gemms:
        inst = gemm.instance
        base = gemm.times[BF16_NAME]
        gemms.append(
            {
                "key": inst.key,
                "block": inst.block,
                "name": inst.name,
                "kind": str(inst.kind),
                "M": inst.M,
                "K": inst.K,
                "N": inst.N,
                "groups": inst.groups,
                "count": inst.count,
                "best": gemm.best,
                "times": {name: _time_json(t, base) for name, t in gemm.times.items()},
                "excluded": dict(gemm.excluded),
            }
        )
    totals = {t.recipe: _total_json(t) for t in (plan.baseline, *plan.singles())}
    mix = plan.mix()
    best = plan.best_single()
    document = {
        "format": "roofline-model",
        "version": FORMAT_VERSION,
        "model": {
            "name": preset.name,
            "display_name": preset.display_name,
            "sources": [_source_json(s) for s in preset.sources],
        },
        "gpu": plan.gpu.name,
        "mode": "training",
        "tokens": plan.tokens,
        "ep": plan.ep,
        "model_kind": "calibrated" if plan.calibrated else "torchao",
        "fusion": plan.fusion,
        "candidates": {"recipes": list(plan.recipes), "chosen": how},
        "assumed_parameters": list(assumed),
        "gemms": gemms,
        "totals": totals,
        "mix": {
            **_time_json(mix.time, mix.baseline),
            "recipes": {g.instance.key: g.best for g in plan.gemms},
        },
        "best_single": None if best is None else best.recipe,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def _source_json(source: Any) -> dict[str, Any]:
    return {
        "url": source.url,
        "read_on": source.read_on.isoformat(),
        "commit": source.commit,
        "note": source.note,
    }


def model_csv(plan: ModelPlan) -> str:
    """The ``--format csv`` text (see the module docstring)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for gemm in plan.gemms:
        inst = gemm.instance
        dims = [
            spreadsheet_safe(inst.key),
            str(inst.kind),
            inst.M,
            inst.K,
            inst.N,
            inst.groups,
            inst.count,
        ]
        for name in (BF16_NAME, *plan.recipes):
            runs_in = name if name in gemm.times else BF16_NAME
            time = gemm.time_in(name)
            reason = spreadsheet_safe(gemm.excluded.get(name, ""))
            writer.writerow(
                [
                    "gemm",
                    *dims,
                    name,
                    runs_in,
                    str(gemm.best == name).lower(),
                    *_numbers(time, gemm.times[BF16_NAME]),
                    "",
                    reason,
                ]
            )
    mix = plan.mix()
    for total in (plan.baseline, *plan.singles(), mix):
        name = MIX_NAME if total is mix else total.recipe
        fallbacks = "" if name in (BF16_NAME, MIX_NAME) else len(total.fallbacks)
        writer.writerow(
            [
                "total",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                name,
                "",
                "",
                *_numbers(total.time, total.baseline),
                fallbacks,
                "",
            ]
        )
    return buffer.getvalue()


def _numbers(time: StepTime, baseline: StepTime) -> list[float]:
    # repr of a float: full precision, round-trips exactly
    return [time.forward_s, time.backward_s, time.total_s, baseline.total_s / time.total_s]


# -- roofline models -------------------------------------------------------------------


def _layers(preset: ModelPreset) -> str:
    return "+".join(str(block.layers) for block in preset.blocks)


def _per_layer(preset: ModelPreset) -> str:
    return "+".join(str(sum(g.count for g in block.gemms)) for block in preset.blocks)


def _experts(preset: ModelPreset) -> str:
    moe = [b for b in preset.blocks if b.experts is not None]
    return ", ".join(f"{b.experts}, top-{b.top_k}" for b in moe[:1]) or "-"


def _cut(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 3] + "..."


def models_text(database: ModelDatabase) -> str:
    """``roofline models``: a row per preset, its sources' URLs under it."""
    heads = ("name", "model", "layers", "experts", "GEMMs/layer")
    rows = [
        [_cut(p.name, 24), _cut(p.display_name, 28), _layers(p), _experts(p), _per_layer(p)]
        for p in database
    ]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(heads)]
    presets = "preset" if len(database) == 1 else "presets"
    lines = [f"{len(database)} model {presets} in {printable(database.origin)}", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip())
    for preset, row in zip(database, rows, strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        lines += [f"  {printable(source.url)}" for source in preset.sources]  # whole: copyable
    lines += [
        "",
        "layers and GEMMs/layer: per block of layers, in file order (the output head is a",
        "block of one layer); roofline model NAME --gpu G --tokens M shows every GEMM",
    ]
    return "\n".join(lines) + "\n"


def _preset_gemm_json(gemm: PresetGemm) -> dict[str, Any]:
    return {
        "name": gemm.name,
        "K": gemm.K,
        "N": gemm.N,
        "count": gemm.count,
        "kind": str(gemm.kind),
        "note": gemm.note,
    }


def models_json(database: ModelDatabase) -> str:
    """``roofline models --format json``: every preset, block and GEMM with its sources."""
    models = [
        {
            "name": p.name,
            "display_name": p.display_name,
            "notes": p.notes,
            "blocks": [
                {
                    "name": b.name,
                    "layers": b.layers,
                    "experts": b.experts,
                    "top_k": b.top_k,
                    "gemms": [_preset_gemm_json(g) for g in b.gemms],
                }
                for b in p.blocks
            ],
            "sources": [_source_json(s) for s in p.sources],
        }
        for p in database
    ]
    return json.dumps({"origin": database.origin, "models": models}, indent=2)
