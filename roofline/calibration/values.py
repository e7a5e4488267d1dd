"""A calibration parameter's value for one GPU: its number, basis, source and level
(:mod:`roofline.calibration.params` resolves them)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Basis(enum.StrEnum):
    """Where a parameter value comes from."""

    MEASURED = "measured"
    FITTED = "fitted"
    ASSUMED = "assumed"


class Level(enum.StrEnum):
    """Whose data a value rests on: this GPU's, its architecture family's, or any GPU's."""

    GPU = "gpu"
    FAMILY = "family"
    GLOBAL = "global"


@dataclass(frozen=True)
class ParameterValue:
    """One parameter's value for one GPU, with where it comes from; ``low``/``high``
    bound an assumed value: the range the GPUs that have it span."""

    value: float
    basis: Basis
    source: str
    sets: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    level: Level = Level.GPU


_LEVEL_ORDER = (Level.GPU, Level.FAMILY, Level.GLOBAL)


def worst_level(levels: Iterable[Level]) -> Level:
    """The level resting on least of the GPU's own data (``gpu`` for none)."""
    return max(levels, key=_LEVEL_ORDER.index, default=Level.GPU)
