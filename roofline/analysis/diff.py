"""Compare two spec databases: what changed in the figures and in the guidance.

:func:`diff_specs` returns a :class:`SpecDiff`: GPUs added and removed, every changed
:class:`~roofline.specs.GpuSpec` field (provenance included), and what the changes do to
the guidance of :mod:`roofline.analysis.guidance`: speedup deltas at the canonical shape and for
the llama aggregate, flips of the recommended recipe at the canonical shape, and
break-even shifts. Both sides are evaluated with the *current* model, so the diff
isolates the spec change. :mod:`roofline.analysis.diff_report` renders it (``to_markdown``,
``to_json``) and reads the JSON back (``from_json``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from roofline.analysis.guidance import BREAK_EVEN_KN, MODES, GpuGuidance, gpu_guidance
from roofline.model.build import MODEL_VERSION
from roofline.specs import GpuSpec, Source, SpecDatabase

#: Speedups that moved by less than this (absolute) are not reported.
SPEEDUP_EPSILON = 1e-6
#: Break-even M values within this relative tolerance count as unchanged.
BREAK_EVEN_RTOL = 1e-6
#: Rows per Markdown table; the JSON report always has every row.
MAX_TABLE_ROWS = 80
NO_CHANGES = "No changes: BASE and HEAD give the same specs and guidance."
SHAPES = ("canonical", "llama")

Plain = Any  # a JSON-compatible value: None, bool, int, float, str, list, dict


@dataclass(frozen=True)
class FieldChange:
    """One GpuSpec field of one GPU, old -> new (JSON-compatible values)."""

    gpu: str
    field: str
    old: Plain
    new: Plain

    @property
    def relative_change(self) -> float | None:
        """(new - old) / old for numbers; None otherwise (or when old is 0)."""
        if _is_number(self.old) and _is_number(self.new) and self.old != 0:
            return (self.new - self.old) / self.old
        return None


@dataclass(frozen=True)
class SpeedupDelta:
    """A GPU x mode x recipe speedup at a shape set ("canonical" or "llama") that moved.

    ``old`` is None for a GPU added (``new_gpu``) or a recipe it could not compute
    before; ``new`` is None for one it can no longer compute.
    """

    gpu: str
    mode: str
    recipe: str
    shape: str
    old: float | None
    new: float | None
    old_support: str | None
    new_support: str | None
    new_gpu: bool = False

    @property
    def delta(self) -> float | None:
        """new - old, when both exist."""
        return None if self.old is None or self.new is None else self.new - self.old


@dataclass(frozen=True)
class RecommendationFlip:
    """The best native recipe at the canonical shape changed (None = stay in bf16)."""

    gpu: str
    mode: str
    old: str | None
    new: str | None
    old_speedup: float
    new_speedup: float


@dataclass(frozen=True)
class BreakEvenShift:
    """A native recipe's break-even M for K = N = ``kn`` moved.

    M values: a float, None (never pays off within the grid) or -inf (always pays off).
    """

    gpu: str
    mode: str
    recipe: str
    kn: int
    old: float | None
    new: float | None


@dataclass(frozen=True)
class NewGpu:
    """A GPU only HEAD has: its hardware figures and best native recipe per mode."""

    name: str
    figures: dict[str, Plain]
    best: dict[str, tuple[str | None, float]]  # mode -> (recipe or None = bf16, speedup)


@dataclass(frozen=True)
class SpecDiff:
    """Everything that differs between two spec databases, figures and guidance."""

    base: str
    head: str
    model_version: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    fields: tuple[FieldChange, ...] = ()
    speedups: tuple[SpeedupDelta, ...] = ()
    flips: tuple[RecommendationFlip, ...] = ()
    break_even: tuple[BreakEvenShift, ...] = ()
    new_gpus: tuple[NewGpu, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the two databases give the same specs and guidance."""
        return not (
            self.added
            or self.removed
            or self.fields
            or self.speedups
            or self.flips
            or self.break_even
        )

    @property
    def changed_gpus(self) -> tuple[str, ...]:
        """GPUs present on both sides with at least one changed field, in order."""
        return tuple(dict.fromkeys(c.gpu for c in self.fields))

    def summary(self) -> str:
        """One line: counts of each kind of change."""
        if self.empty:
            return NO_CHANGES
        parts = [
            _count(len(self.added), "GPU added", "GPUs added"),
            _count(len(self.removed), "GPU removed", "GPUs removed"),
            _count(len(self.changed_gpus), "GPU changed", "GPUs changed")
            + (f" ({_count(len(self.fields), 'field', 'fields')})" if self.fields else ""),
            _count(len(self.speedups), "speedup moved", "speedups moved"),
            _count(len(self.flips), "recommendation flip", "recommendation flips"),
            _count(len(self.break_even), "break-even shift", "break-even shifts"),
        ]
        return ", ".join(p for p in parts if not p.startswith("0 ")) + "."


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- field comparison ------------------------------------------------------------------


def plain(value: Any) -> Plain:
    """``value`` as JSON-compatible data: tuples -> lists, dates -> ISO, sources -> dicts."""
    if isinstance(value, Source):
        return {k: plain(getattr(value, k)) for k in ("url", "read_on", "figures", "note")}
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value


def field_changes(old: GpuSpec, new: GpuSpec) -> list[FieldChange]:
    """Every GpuSpec field whose value differs, in declaration order."""
    changes = []
    for f in dataclasses.fields(GpuSpec):
        before, after = plain(getattr(old, f.name)), plain(getattr(new, f.name))
        if before != after:
            changes.append(FieldChange(new.name, f.name, before, after))
    return changes


# -- guidance comparison ---------------------------------------------------------------


class _GuidanceCache:
    """gpu_guidance per distinct GpuSpec value (history diffs reuse unchanged GPUs)."""

    def __init__(self) -> None:
        self._cache: dict[str, GpuGuidance] = {}

    def get(self, gpu: GpuSpec) -> GpuGuidance:
        key = repr(gpu)
        if key not in self._cache:
            self._cache[key] = gpu_guidance(gpu)
        return self._cache[key]


def _speedup_value(g: GpuGuidance | None, key: tuple[Any, str], shape: str) -> float | None:
    if g is None or key not in g.recipes:
        return None
    r = g.recipes[key]
    return r.canonical_speedup if shape == "canonical" else r.llama_speedup


def _support(g: GpuGuidance | None, key: tuple[Any, str]) -> str | None:
    return None if g is None or key not in g.recipes else g.recipes[key].support.value


def speedup_deltas(name: str, old: GpuGuidance | None, new: GpuGuidance) -> list[SpeedupDelta]:
    """Speedups of one GPU that moved (every computable one when ``old`` is None)."""
    rows = []
    keys = list(dict.fromkeys([*(old.recipes if old else {}), *new.recipes]))
    for key in keys:
        for shape in SHAPES:
            before, after = _speedup_value(old, key, shape), _speedup_value(new, key, shape)
            s_before, s_after = _support(old, key), _support(new, key)
            moved = (
                old is None
                or (before is None) != (after is None)
                or s_before != s_after
                or (before is not None and abs(after - before) > SPEEDUP_EPSILON)
            )
            if moved:
                rows.append(
                    SpeedupDelta(
                        name,
                        key[0].value,
                        key[1],
                        shape,
                        before,
                        after,
                        s_before,
                        s_after,
                        new_gpu=old is None,
                    )
                )
    return rows


def _same_m(a: float | None, b: float | None) -> bool:
    if a is None or b is None or math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=BREAK_EVEN_RTOL)


def break_even_shifts(name: str, old: GpuGuidance, new: GpuGuidance) -> list[BreakEvenShift]:
    """Break-even changes of recipes native on either side, per K = N."""
    rows = []
    keys = dict.fromkeys([*old.recipes, *new.recipes])
    for key in keys:
        a, b = old.recipes.get(key), new.recipes.get(key)
        if not ((a and a.native) or (b and b.native)):
            continue
        for kn in BREAK_EVEN_KN:
            before = a.break_even[kn] if a else None
            after = b.break_even[kn] if b else None
            if not _same_m(before, after):
                rows.append(BreakEvenShift(name, key[0].value, key[1], kn, before, after))
    return rows


def recommendation_flips(name: str, old: GpuGuidance, new: GpuGuidance) -> list[RecommendationFlip]:
    """Modes whose best native recipe at the canonical shape changed."""
    rows = []
    for mode in MODES:
        (r0, s0), (r1, s1) = old.best_canonical[mode], new.best_canonical[mode]
        if r0 != r1:
            rows.append(RecommendationFlip(name, mode.value, r0, r1, s0, s1))
    return rows


NEW_GPU_FIGURES = (
    "bf16_peak_tops",
    "fp8_peak_tops",
    "fp4_peak_tops",
    "peak_mem_bw_bytes_sec",
    "pct_achievable_gemm_tops",
    "pct_achievable_mem_bw",
    "efficiency_basis",
    "native_formats",
)


def new_gpu(gpu: GpuSpec, guidance: GpuGuidance) -> NewGpu:
    """The summary of a GPU only HEAD has."""
    figures = {key: plain(getattr(gpu, key)) for key in NEW_GPU_FIGURES}
    best = {mode.value: guidance.best_canonical[mode] for mode in MODES}
    return NewGpu(gpu.name, figures, best)


def _delta_order(row: SpeedupDelta) -> tuple[int, float]:
    delta = row.delta
    return (0, -abs(delta)) if delta is not None else (1, 0.0)


def diff_specs(
    base: SpecDatabase, head: SpecDatabase, cache: _GuidanceCache | None = None
) -> SpecDiff:
    """Compare ``base`` with ``head``: figures, then the guidance they give.

    GPUs are matched by name (a rename is a removal plus an addition). Guidance is
    computed only for GPUs added or with changed fields.
    """
    cache = cache or _GuidanceCache()
    added = tuple(n for n in head if n not in base)
    removed = tuple(n for n in base if n not in head)
    fields: list[FieldChange] = []
    speedups: list[SpeedupDelta] = []
    flips: list[RecommendationFlip] = []
    shifts: list[BreakEvenShift] = []
    new_gpus: list[NewGpu] = []
    for name in head:
        if name in added:
            guidance = cache.get(head[name])
            new_gpus.append(new_gpu(head[name], guidance))
            speedups += speedup_deltas(name, None, guidance)
            continue
        changes = field_changes(base[name], head[name])
        if not changes:
            continue
        fields += changes
        old, new = cache.get(base[name]), cache.get(head[name])
        speedups += speedup_deltas(name, old, new)
        flips += recommendation_flips(name, old, new)
        shifts += break_even_shifts(name, old, new)
    speedups.sort(key=_delta_order)  # stable: equal keys keep GPU/mode/recipe order
    return SpecDiff(
        base=base.origin,
        head=head.origin,
        model_version=MODEL_VERSION,
        added=added,
        removed=removed,
        fields=tuple(fields),
        speedups=tuple(speedups),
        flips=tuple(flips),
        break_even=tuple(shifts),
        new_gpus=tuple(new_gpus),
    )
