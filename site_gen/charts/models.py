"""The model x GPU page's chart as a job: the linear layers' time per training step, per recipe.

One horizontal bar per recipe (bf16, each candidate recipe, the best per-GEMM mix),
stacked by the model's GEMMs in the calibrated model, torchao's model's total marked
beside each bar. :func:`time_chart` asks for it (a :class:`~site_gen.charts.jobs.PlotJob`
of plain data); :func:`site_gen.charts.draw.models.model_time_svg` draws it in a worker.
"""

from __future__ import annotations

import numpy as np

from roofline.analysis.policy import BF16_NAME, ModelPlan
from site_gen.charts.jobs import PlotJob
from site_gen.gather.models import ModelRun

#: Stacked segments at most: the largest GEMMs by name, then the rest as one.
MAX_SEGMENTS = 8
MIX_LABEL = "best per-GEMM mix"


def segment_groups(plan: ModelPlan) -> list[tuple[str, list[int]]]:
    """(label, indices into ``plan.gemms``) per segment: GEMMs of the same name in
    different blocks together, largest bf16 time first, the smallest lumped together
    beyond :data:`MAX_SEGMENTS`."""
    by_name: dict[str, list[int]] = {}
    for index, g in enumerate(plan.gemms):
        by_name.setdefault(g.instance.name, []).append(index)

    def bf16_s(indices: list[int]) -> float:
        return sum(plan.gemms[i].times[BF16_NAME].total_s for i in indices)

    ordered = sorted(by_name.items(), key=lambda item: -bf16_s(item[1]))
    if len(ordered) <= MAX_SEGMENTS:
        return ordered
    kept, rest = ordered[: MAX_SEGMENTS - 1], ordered[MAX_SEGMENTS - 1 :]
    lumped = [i for _, indices in rest for i in indices]
    return [*kept, (f"{len(rest)} smaller GEMMs", lumped)]


def _bar_seconds(
    plan: ModelPlan, groups: list[tuple[str, list[int]]]
) -> tuple[list[str], np.ndarray]:
    """Bar labels (bf16, each recipe, the mix) and seconds per bar and segment; bf16
    alone when no recipe is a candidate (the mix would be bf16 again)."""
    names = [BF16_NAME, *plan.recipes, MIX_LABEL] if plan.recipes else [BF16_NAME]
    seconds = np.zeros((len(names), len(groups)))
    for row, name in enumerate(names):
        for col, (_, indices) in enumerate(groups):
            gemms = [plan.gemms[i] for i in indices]
            if name == MIX_LABEL:
                seconds[row, col] = sum(g.times[g.best].total_s for g in gemms)
            else:
                seconds[row, col] = sum(g.time_in(name).total_s for g in gemms)
    return names, seconds


def time_chart(run: ModelRun, path: str) -> PlotJob:
    """The stacked time chart of one model on one GPU (docs-relative SVG ``path``)."""
    plan = run.calibrated
    groups = segment_groups(plan)
    names, seconds = _bar_seconds(plan, groups)
    torchao = run.torchao
    reference = [
        torchao.baseline.time.total_s
        if name == BF16_NAME
        else torchao.mix().time.total_s
        if name == MIX_LABEL
        else torchao.total(name).time.total_s
        for name in names
    ]
    title = (
        f"{run.preset.display_name} on {run.gpu.name}: linear layers per training step,"
        f"\n{run.tokens:,} tokens per device (calibrated model)"
    )
    return PlotJob(
        path,
        "model_time",
        dict(
            title=title,
            bars=names,
            segments=[label for label, _ in groups],
            seconds=seconds,
            reference_s=reference,
        ),
    )
