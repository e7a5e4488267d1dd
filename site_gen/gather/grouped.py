"""Stage 1 for the grouped-GEMM (MoE) pages: each GPU x mode x recipe's grouped layers.

A grouped page tabulates a few representative expert GEMMs, taken from the bundled
model presets (:func:`roofline.presets.load_models`: the first routed-expert GEMM of each
MoE model), over expert counts :data:`site_gen.config.GROUPS` and tokens per device
:data:`site_gen.config.GROUPED_TOKENS`, in
both models (torchao's and the calibrated one), term by term. It also carries the
calibrated grouped terms' LaTeX with the GPU's numbers (:mod:`roofline.publish.latex`), printed
here so that the build cache keeps them with the numbers. Nothing here prints or writes.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from roofline.calibration.params import CalibratedParameters
from roofline.capability import Capability, Support, classify
from roofline.errors import ShapeError
from roofline.evaluate import compile_model, evaluate_terms
from roofline.model.build import build_model
from roofline.model.terms import Quantity, Term
from roofline.presets import LinearKind, load_models
from roofline.publish.latex import instantiated
from roofline.recipes import RECIPE_LIST, Mode, Recipe
from roofline.specs import GpuSpec, SpecDatabase
from site_gen.cache import BuildCache
from site_gen.config import GROUPED_DEFAULT_TOKENS as DEFAULT_TOKENS  # noqa: F401  (pages use it)
from site_gen.config import GROUPED_MODES, GROUPS
from site_gen.config import GROUPED_TOKENS as TOKENS
from site_gen.gather import cached, code_digest, gather_key, model_pair

#: The build cache's kind for grouped results (counted apart from the dense evaluations).
CACHE_KIND = "grouped"
#: The calibrated terms whose formulas a grouped page prints, in this order (those the
#: recipe has): the grouped GEMMs (the bf16 baseline, which gets the same rho, 2D-3D and
#: 2D-2D), every weight cast (3D), then one scale rearrangement of each kind (M groups of
#: the activation, per-group 3D weight scales, K groups); the others differ only in dims.
FORMULA_TERMS: tuple[str, ...] = (
    "gemm.output.bf16",
    "gemm.output.lowp",
    "gemm.grad_weight.lowp",
    "rearrange.output.lhs",
    "rearrange.output.rhs",
    "rearrange.grad_weight.lhs",
)


@dataclass(frozen=True)
class ExpertShape:
    """One routed-expert GEMM of a model preset: ``K x N`` per expert, ``top_k`` experts
    per token, ``experts`` in the layer."""

    model: str  # preset name
    title: str  # the model's display name
    gemm: str
    K: int
    N: int
    top_k: int
    experts: int

    def routed_m(self, tokens: int) -> int:
        """Rows of the grouped GEMM for ``tokens`` tokens per device: tokens x top_k."""
        return tokens * self.top_k

    def allows(self, groups: int) -> bool:
        """Whether ``groups`` experts per device can occur: a divisor of the experts."""
        return groups <= self.experts and self.experts % groups == 0


@functools.cache
def expert_shapes() -> tuple[ExpertShape, ...]:
    """The first routed-expert GEMM of each MoE preset of the bundled models file, one per
    distinct ``K x N``, in file order."""
    out: dict[tuple[int, int], ExpertShape] = {}
    for preset in load_models():
        for block in preset.blocks:
            gemm = next((g for g in block.gemms if g.kind is LinearKind.EXPERT), None)
            if gemm is None or block.experts is None or block.top_k is None:
                continue
            shape = ExpertShape(
                preset.name,
                preset.display_name,
                gemm.name,
                gemm.K,
                gemm.N,
                block.top_k,
                block.experts,
            )
            out.setdefault((gemm.K, gemm.N), shape)
            break
    return tuple(out.values())


@dataclass
class ShapeTimes:
    """One expert shape in one model: seconds per term and the totals, each an array over
    (:data:`TOKENS`, :data:`GROUPS`); empty with ``skipped`` when the recipe cannot take
    the shape (block divisibility)."""

    terms: dict[str, np.ndarray] = field(default_factory=dict)
    totals: dict[str, np.ndarray] = field(default_factory=dict)  # Quantity value -> seconds
    skipped: str = ""

    @property
    def speedup(self) -> np.ndarray:
        """Speedup over the bf16 grouped layer, over (tokens, G)."""
        return self.totals[Quantity.SPEEDUP.value]


@dataclass
class GroupedResult:
    """Everything a grouped page shows for one GPU x mode x recipe in one model."""

    gpu: GpuSpec
    mode: Mode
    recipe: Recipe
    capability: Capability
    calibrated: bool
    shapes: tuple[ExpertShape, ...]
    times: list[ShapeTimes] = field(default_factory=list)  # one per shape
    #: Calibrated results: term key -> LaTeX with the GPU's numbers (FORMULA terms).
    latex: dict[str, str] = field(default_factory=dict)
    #: On a calibrated result: torchao's result of the same combination.
    reference: GroupedResult | None = field(default=None, repr=False, compare=False)

    @property
    def torchao(self) -> GroupedResult:
        """torchao's result of this combination (itself when it is torchao's)."""
        return self.reference if self.reference is not None else self

    @property
    def computable(self) -> bool:
        """False when the GPU lacks a format the formulas need."""
        return self.capability.support is not Support.IMPOSSIBLE


def formula_terms(mode: Mode, recipe: Recipe) -> tuple[Term, ...]:
    """The calibrated grouped terms a page prints: the GEMMs of :data:`FORMULA_TERMS`, the
    weight casts, then its rearrangements."""
    model = build_model(mode, recipe, calibrated=True, grouped=True)
    by_key = {t.key: t for t in model.terms}
    picked = [by_key[k] for k in FORMULA_TERMS if k in by_key]
    weights = [t for t in model.terms if t.key.startswith("cast.weight.")]
    gemms = [t for t in picked if t.key.startswith("gemm.")]
    return (*gemms, *weights, *(t for t in picked if not t.key.startswith("gemm.")))


def _grid(shape: ExpertShape) -> tuple[np.ndarray, np.ndarray]:
    """(M, G) over (TOKENS, GROUPS) for one shape."""
    tokens, groups = np.meshgrid(np.array(TOKENS), np.array(GROUPS), indexing="ij")
    return (tokens * shape.top_k).astype(float), groups.astype(float)


def _shape_times(
    gpu: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    shape: ExpertShape,
    calibration: CalibratedParameters | None,
) -> ShapeTimes:
    m, g = _grid(shape)
    try:
        terms = evaluate_terms(
            gpu, mode, recipe, m, shape.K, shape.N, calibration=calibration, groups=g
        )
    except ShapeError as exc:  # a recipe's block size the shape does not divide
        return ShapeTimes(skipped=str(exc))
    compiled = compile_model(mode, recipe, calibrated=calibration is not None, grouped=True)
    totals = compiled.totals({k: np.asarray(v, dtype=float) for k, v in terms.items()})
    return ShapeTimes(
        {k: np.array(v) for k, v in terms.items()},
        {q.value: np.asarray(v, dtype=float) for q, v in totals.items()},
    )


def gather_grouped_one(
    gpu: GpuSpec, mode: Mode, recipe: Recipe, calibration: CalibratedParameters | None = None
) -> GroupedResult:
    """One GPU x mode x recipe's grouped layers in one model (calibrated with
    ``calibration``); the calibrated result also carries its formulas' LaTeX."""
    shapes = expert_shapes()
    result = GroupedResult(
        gpu,
        mode,
        recipe,
        classify(gpu, recipe, mode, grouped=True),
        calibration is not None,
        shapes,
    )
    if not result.computable:
        return result
    result.times = [_shape_times(gpu, mode, recipe, s, calibration) for s in shapes]
    if calibration is not None:
        result.latex = {
            t.key: instantiated(t.expr, gpu, calibration) for t in formula_terms(mode, recipe)
        }
    return result


def _cached(
    gpu: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    cache: BuildCache,
    calibration: CalibratedParameters | None,
    calibration_key: str,
) -> GroupedResult:
    """One combination in one model, from the cache or evaluated (and then cached)."""
    # The presets are data outside model_digest: their shapes are part of the key.
    shapes = [dataclasses.asdict(s) for s in expert_shapes()]
    key = gather_key(
        "grouped",
        code_digest("gather/grouped.py"),
        gpu,
        calibration_key,
        mode.value,
        recipe.name,
        shapes,
    )
    return cached(
        cache,
        CACHE_KIND,
        key,
        lambda: gather_grouped_one(gpu, mode, recipe, calibration),
        stored=lambda result: {"times": result.times, "latex": result.latex},
        restored=lambda fields: GroupedResult(
            gpu,
            mode,
            recipe,
            classify(gpu, recipe, mode, grouped=True),
            calibration is not None,
            expert_shapes(),
            **fields,
        ),
    )


def gather_grouped(
    specs: SpecDatabase,
    calibrations: dict[str, CalibratedParameters],
    calibration_keys: dict[str, str],
    cache: BuildCache | None = None,
    gpus: Sequence[GpuSpec] | None = None,
) -> dict[tuple[str, Mode, str], GroupedResult]:
    """Every GPU (of ``gpus``, None: of ``specs``) x grouped mode x recipe, calibrated
    results (their ``reference`` torchao's), reusing cached ones; ``calibration_keys``
    digests each GPU's calibrated parameters."""
    cache = cache or BuildCache(enabled=False)
    out = {}
    for gpu in gpus if gpus is not None else specs.values():
        for mode in GROUPED_MODES:
            for recipe in (r for r in RECIPE_LIST if mode in r.plans):
                key = calibration_keys[gpu.name]
                torchao, calibrated = model_pair(
                    lambda c, gpu=gpu, mode=mode, recipe=recipe, key=key: _cached(
                        gpu, mode, recipe, cache, c, key if c is not None else ""
                    ),
                    calibrations[gpu.name],
                )
                calibrated.reference = torchao
                out[(gpu.name, mode, recipe.name)] = calibrated
    return out
