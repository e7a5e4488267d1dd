"""Recommendations derived from the model: break-even M, best recipe, headline speedups.

This is the machinery the spec diff (:mod:`roofline.analysis.diff`) and the site share, so both
quote the same numbers:

* the **canonical shape** M = 8192, K = N = 4096 (:data:`CANONICAL_SHAPE`), the one shape
  the site quotes first;
* the **llama aggregate**: summed bf16 time over summed low-precision time across
  torchao's four llama GEMMs at M = 16384 (:func:`roofline.shapes.llama`), i.e. the
  speedup of the whole layer set, not a mean of per-GEMM speedups;
* the **break-even M** for K = N = kn: the smallest M from which the speedup stays >= 1,
  searched over :data:`BREAK_EVEN_M_GRID` (M = 16 ... 262144 in 1/16-octave steps) and
  interpolated linearly in log2 M between the two grid points around the crossing;
* the **best recipe** at a shape: the fastest recipe the GPU runs *natively* (hardware
  format and kernels: :func:`roofline.capability.classify`), when its speedup is > 1;
  otherwise stay in bf16 (:func:`best_of`, ties to the first recipe). Emulated and
  hypothetical recipes never compete;
* the **ranking** of recipes by a speedup, fastest first (:func:`rank_order`).

The rules themselves (:func:`break_even_from_curve`, :func:`aggregate_speedup`,
:func:`best_of`, :func:`pick_best`, :func:`rank_order`) work on numpy arrays, so the site
(which evaluates larger grids once, in :mod:`site_gen.gather.dense`) applies the very same
rules to its own arrays.

Every evaluation goes through :func:`roofline.evaluate.evaluate_columns`, one vectorised
call per GPU x mode x recipe. Recipes the GPU cannot compute (a missing peak) are
skipped; emulated and hypothetical ones (computable, not native) are included and marked.

Every function that evaluates takes ``calibrated=False``: torchao's model by default (what
``roofline diff`` compares), the calibrated model (:mod:`roofline.calibration`) with
``calibrated=True``, its parameters resolved against ``specs`` (the bundled database when
None; fallbacks are averaged over its GPUs). How uncertain a calibrated number is comes
from :func:`calibration_corners`: the assumed parameters at the ends of their ranges.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from roofline.calibration.params import Basis, CalibratedParameters
from roofline.capability import Support, classify
from roofline.evaluate import calibration_of, evaluate_columns
from roofline.recipes import RECIPE_LIST, Mode, Recipe, get_recipe
from roofline.shapes import llama
from roofline.specs import GpuSpec, SpecDatabase

#: The headline shape (M, K, N) the site and the diff quote first.
CANONICAL_M = 8192
CANONICAL_KN = 4096
CANONICAL_SHAPE: tuple[int, int, int] = (CANONICAL_M, CANONICAL_KN, CANONICAL_KN)

#: K = N values of the break-even tables (and of the site's speedup-vs-M curves).
BREAK_EVEN_KN: tuple[int, ...] = (1024, 2048, 4096, 8192, 16384)

#: M values searched for the break-even point: 1/16 octave from 16 to 262144.
BREAK_EVEN_M_GRID: np.ndarray = np.unique(np.round(2.0 ** np.arange(4.0, 18.0 + 1e-9, 1 / 16)))

#: Break-even below the first grid M: the recipe pays off at every M searched.
ALWAYS = float("-inf")

MODES: tuple[Mode, ...] = (Mode.TRAINING, Mode.INFERENCE)
SPEEDUP = "r_fp8_gemm_and_ovhd_spdp"


def break_even_from_curve(speedup: np.ndarray, m: np.ndarray = BREAK_EVEN_M_GRID) -> float | None:
    """Break-even M of a speedup curve sampled at ``m`` (ascending).

    Returns the smallest M from which the speedup stays >= 1, log2-interpolated between
    the last grid point below 1 and the next one; None when the speedup is below 1 at
    the largest M (never pays off within the grid); :data:`ALWAYS` (``-inf``) when it is
    >= 1 over the whole grid (pays off below the first M).
    """
    above = np.asarray(speedup) >= 1.0
    if not above[-1]:
        return None
    if above.all():
        return ALWAYS
    last_below = int(np.nonzero(~above)[0][-1])
    s0, s1 = speedup[last_below], speedup[last_below + 1]
    x0, x1 = np.log2(m[last_below]), np.log2(m[last_below + 1])
    frac = (1.0 - s0) / (s1 - s0) if s1 != s0 else 1.0
    return float(2.0 ** (x0 + frac * (x1 - x0)))


def baseline_time_s(columns: Mapping[str, np.ndarray]) -> np.ndarray:
    """The bf16 time per shape: its GEMMs plus, with inference fusion, its activation kernel."""
    return columns["r_bf16_gemm_s"] + columns.get("r_bf16_ovhd_s", 0.0)


def aggregate_speedup(columns: Mapping[str, np.ndarray], part: slice = slice(None)) -> float:
    """Summed bf16 time over summed low-precision time across the shapes in ``part``.

    The speedup of a set of GEMMs run together (the llama aggregate), not a mean of
    per-GEMM speedups.
    """
    baseline = np.asarray(baseline_time_s(columns))[part]
    return float(np.sum(baseline) / np.sum(columns["r_fp8_gemm_and_ovhd_s"][part]))


def best_of(speedups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The winner along axis 0 of stacked speedups (one row per candidate recipe).

    Returns (index, speedup) per remaining position: the index of the fastest candidate
    (ties go to the first), or -1 where none is faster than bf16 (speedup 1.0 there).
    """
    stack = np.asarray(speedups, dtype=float)
    best = np.argmax(stack, axis=0)
    best_speedup = np.max(stack, axis=0)
    faster = best_speedup > 1.0
    return np.where(faster, best, -1), np.where(faster, best_speedup, 1.0)


def rank_order(speedups: Sequence[float]) -> list[int]:
    """Indices of ``speedups`` fastest first; equal speedups keep their order."""
    return [int(i) for i in np.argsort(-np.asarray(speedups, dtype=float), kind="stable")]


# -- the calibrated model: which parameters, and how uncertain ---------------------------

#: The bf16 GEMM efficiency: measured (or fitted) on a GPU = the GPU has calibration data.
BF16_EFFICIENCY = "gemm_efficiency.bf16"


def calibration_for_gpu(
    gpu: GpuSpec, calibrated: bool, specs: SpecDatabase | None = None
) -> CalibratedParameters | None:
    """The parameters :func:`~roofline.evaluate.evaluate_columns` takes for the model asked
    for: None for torchao's, the GPU's calibrated ones (resolved against ``specs``) else."""
    return calibration_of(gpu, specs) if calibrated else None


def has_calibration_data(calibration: CalibratedParameters) -> bool:
    """True when the GPU's bf16 GEMM efficiency comes from a measurement (or a fit on
    measurements), not from a fallback: the site's test for "has calibration data"."""
    return calibration.values[BF16_EFFICIENCY].basis is not Basis.ASSUMED


#: Groups of assumed parameters whose ends move together in :func:`calibration_corners`.
CORNER_GROUPS: tuple[tuple[str, str], ...] = (
    ("GEMM efficiencies", "gemm_efficiency."),
    ("cast efficiencies", "cast_efficiency."),
)


def _group_of(key: str) -> str:
    return next((name for name, prefix in CORNER_GROUPS if key.startswith(prefix)), key)


def calibration_corners(calibration: CalibratedParameters) -> tuple[CalibratedParameters, ...]:
    """The assumed parameters at the ends of their ranges: every corner of the groups.

    An assumed parameter with a range (``low`` < ``high``) joins its group: the GEMM
    efficiencies move together, because the fallbacks derive the low-precision ones from
    the bf16 one (and their ranges from its range); the cast efficiencies move together;
    any other parameter is a group of its own. A corner puts every group at its ``low``
    or its ``high``; the extreme speedups over the corners (and the nominal value) are
    the plausible range. Empty when no assumed parameter has a range wider than a point.
    """
    groups: dict[str, list[str]] = {}
    for key in calibration.assumed():
        value = calibration.values[key]
        if value.low is None or value.high is None or value.low == value.high:
            continue
        groups.setdefault(_group_of(key), []).append(key)
    if not groups:
        return ()
    corners = []
    for ends in itertools.product(("low", "high"), repeat=len(groups)):
        overrides = {
            key: getattr(calibration.values[key], end)
            for end, keys in zip(ends, groups.values(), strict=True)
            for key in keys
        }
        corners.append(calibration.with_values(overrides))
    return tuple(corners)


def _speedups(
    gpu: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    m: Any,
    k: Any,
    n: Any,
    fusion: bool,
    calibration: CalibratedParameters | None = None,
) -> np.ndarray:
    cols = evaluate_columns(gpu, mode, recipe, m, k, n, fusion=fusion, calibration=calibration)
    return cols[SPEEDUP]


def break_even_m(
    gpu: GpuSpec,
    mode: Mode | str,
    recipe: Recipe | str,
    kn: int,
    fusion: bool = False,
    *,
    calibrated: bool = False,
    specs: SpecDatabase | None = None,
) -> float | None:
    """Break-even M of ``recipe`` on ``gpu`` for K = N = ``kn`` (see :func:`break_even_from_curve`).

    A recipe the GPU cannot compute (a missing peak) returns None: it never pays off.
    ``calibrated=True``: of the calibrated model.
    """
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    if classify(gpu, recipe, mode).support is Support.IMPOSSIBLE:
        return None
    grid = BREAK_EVEN_M_GRID
    calibration = calibration_for_gpu(gpu, calibrated, specs)
    speedup = _speedups(gpu, mode, recipe, grid, kn, kn, fusion, calibration)
    return break_even_from_curve(speedup, grid)


def native_recipes(gpu: GpuSpec, mode: Mode) -> list[Recipe]:
    """Recipes of ``mode`` that ``gpu`` runs natively, in registry order: the only ones that
    compete for "best" (not emulated ones, nor hypothetical ones)."""
    return [
        r
        for r in RECIPE_LIST
        if mode in r.plans and classify(gpu, r, mode).support is Support.NATIVE
    ]


def pick_best(speedups: dict[str, float]) -> tuple[str | None, float]:
    """The recipe with the highest speedup if it is > 1, else (None, 1.0) for bf16.

    Ties go to the first recipe in ``speedups``' order (registry order): :func:`best_of`.
    """
    if not speedups:
        return None, 1.0
    names = list(speedups)
    index, best = best_of(np.array(list(speedups.values())))
    return (None, 1.0) if int(index) < 0 else (names[int(index)], float(best))


def best_recipe(
    gpu: GpuSpec,
    mode: Mode | str,
    M: int,
    K: int,
    N: int,
    fusion: bool = False,
    *,
    calibrated: bool = False,
    specs: SpecDatabase | None = None,
) -> tuple[str | None, float]:
    """The fastest native recipe at (M, K, N) and its speedup; (None, 1.0) = stay in bf16.

    Only recipes the GPU runs natively compete (emulated and hypothetical ones never
    win). A recipe whose block divisibility the shape breaks is skipped.
    ``calibrated=True``: by the calibrated model.
    """
    mode = Mode.parse(mode)
    calibration = calibration_for_gpu(gpu, calibrated, specs)
    speedups = {}
    for recipe in native_recipes(gpu, mode):
        if any(dict(M=M, K=K, N=N)[dim] % mult for dim, mult in recipe.divisibility):
            continue
        speedup = _speedups(gpu, mode, recipe, M, K, N, fusion, calibration)
        speedups[recipe.name] = float(np.ravel(speedup)[0])
    return pick_best(speedups)


# -- everything the diff needs for one GPU, in one call per mode x recipe --------------


@dataclass(frozen=True)
class RecipeGuidance:
    """One GPU x mode x recipe: headline speedups and break-even M per K = N."""

    mode: Mode
    recipe: str
    support: Support  # NATIVE, EMULATED or HYPOTHETICAL (impossible ones are skipped)
    canonical_speedup: float
    llama_speedup: float
    break_even: dict[int, float | None]  # K = N -> M (None = never, -inf = always)
    calibrated: bool = False  # the model: torchao's (False) or the calibrated one

    @property
    def native(self) -> bool:
        """True when the hardware runs the recipe's format."""
        return self.support is Support.NATIVE


@dataclass(frozen=True)
class GpuGuidance:
    """Every computable recipe of one GPU in both modes, and the best one at canonical."""

    gpu: str
    recipes: dict[tuple[Mode, str], RecipeGuidance]
    best_canonical: dict[Mode, tuple[str | None, float]]
    calibrated: bool = False  # the model: torchao's (False) or the calibrated one


def _points() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Canonical, then the four llama shapes, then the grid once per break-even K = N."""
    shapes = [CANONICAL_SHAPE, *((s.M, s.K, s.N) for s in llama())]
    m = [np.array([s[0] for s in shapes], dtype=float)]
    k = [np.array([s[1] for s in shapes], dtype=float)]
    n = [np.array([s[2] for s in shapes], dtype=float)]
    for kn in BREAK_EVEN_KN:
        m.append(BREAK_EVEN_M_GRID)
        k.append(np.full_like(BREAK_EVEN_M_GRID, kn))
        n.append(np.full_like(BREAK_EVEN_M_GRID, kn))
    return np.concatenate(m), np.concatenate(k), np.concatenate(n)


def recipe_guidance(
    gpu: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    fusion: bool = False,
    *,
    calibrated: bool = False,
    specs: SpecDatabase | None = None,
    calibration: CalibratedParameters | None = None,
) -> RecipeGuidance | None:
    """Headline numbers of one combination; None when the GPU cannot compute it.

    ``calibrated=True``: of the calibrated model, with the GPU's parameters resolved
    against ``specs``, or with ``calibration`` when given (e.g. a corner of
    :func:`calibration_corners`; it implies the calibrated model).
    """
    support = classify(gpu, recipe, mode).support
    if support is Support.IMPOSSIBLE:
        return None
    if calibration is None:
        calibration = calibration_for_gpu(gpu, calibrated, specs)
    m, k, n = _points()
    cols = evaluate_columns(gpu, mode, recipe, m, k, n, fusion=fusion, calibration=calibration)
    speedup = cols[SPEEDUP]
    n_llama = len(llama())
    llama_part = slice(1, 1 + n_llama)
    size = len(BREAK_EVEN_M_GRID)
    break_even = {}
    for i, kn in enumerate(BREAK_EVEN_KN):
        start = 1 + n_llama + i * size
        break_even[kn] = break_even_from_curve(speedup[start : start + size])
    return RecipeGuidance(
        mode=mode,
        recipe=recipe.name,
        support=support,
        canonical_speedup=float(speedup[0]),
        llama_speedup=aggregate_speedup(cols, llama_part),
        break_even=break_even,
        calibrated=calibration is not None,
    )


def gpu_guidance(
    gpu: GpuSpec,
    fusion: bool = False,
    *,
    calibrated: bool = False,
    specs: SpecDatabase | None = None,
) -> GpuGuidance:
    """:class:`RecipeGuidance` for every computable mode x recipe of ``gpu``
    (``calibrated=True``: of the calibrated model)."""
    calibration = calibration_for_gpu(gpu, calibrated, specs)
    recipes: dict[tuple[Mode, str], RecipeGuidance] = {}
    best: dict[Mode, tuple[str | None, float]] = {}
    for mode in MODES:
        native: dict[str, float] = {}
        for recipe in RECIPE_LIST:
            if mode not in recipe.plans:
                continue
            result = recipe_guidance(gpu, mode, recipe, fusion, calibration=calibration)
            if result is None:
                continue
            recipes[(mode, recipe.name)] = result
            if result.native:
                native[recipe.name] = result.canonical_speedup
        best[mode] = pick_best(native)
    return GpuGuidance(gpu.name, recipes, best, calibrated=calibration is not None)
