"""Derived views of the gathered atlas: the decision layer (:mod:`roofline.analysis.guidance`)
applied to it: the native candidates of a GPU, the best recipe per heatmap cell and at the
canonical shape."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.analysis import guidance
from roofline.recipes import Mode
from site_gen import config
from site_gen.gather.dense import Atlas, RecipeResult


@dataclass(frozen=True)
class DecisionMap:
    """The fastest native recipe per heatmap cell; index -1 means stay in bf16."""

    mode: Mode
    recipes: tuple[str, ...]  # the native candidates
    best: np.ndarray  # int, shape of the heat grid
    best_speedup: np.ndarray


def native_results(
    atlas: Atlas, gpu: str, mode: Mode, calibrated: bool = False
) -> list[RecipeResult]:
    """The recipes of ``mode`` that ``gpu`` runs natively: the ones that may be recommended."""
    return [r for r in atlas.for_gpu(gpu, mode, calibrated) if r.native]


def decision_map(atlas: Atlas, gpu: str, mode: Mode, calibrated: bool = False) -> DecisionMap:
    """Best native recipe per (K=N, M) cell of ``gpu`` in ``mode`` (:func:`guidance.best_of`),
    by torchao's model or (``calibrated``) the calibrated one."""
    native = native_results(atlas, gpu, mode, calibrated)
    shape = (len(config.HEAT_KN), len(config.HEAT_M))
    if not native:
        return DecisionMap(mode, (), np.full(shape, -1), np.ones(shape))
    best, best_speedup = guidance.best_of(np.stack([r.heat for r in native]))
    return DecisionMap(mode, tuple(r.recipe.name for r in native), best, best_speedup)


def best_at_canonical(
    atlas: Atlas, gpu: str, mode: Mode, calibrated: bool = False
) -> RecipeResult | None:
    """The native recipe :func:`roofline.analysis.guidance.pick_best` picks at the canonical
    shape."""
    native = {r.recipe.name: r for r in native_results(atlas, gpu, mode, calibrated)}
    name, _ = guidance.pick_best({n: r.canonical_speedup for n, r in native.items()})
    return None if name is None else native[name]
