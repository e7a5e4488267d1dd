"""Shared by the model's property tests: the GPU x recipe x mode combinations the model
can evaluate, shapes rounded to what a recipe accepts, and the wave rule by hand."""

from __future__ import annotations

import math

from roofline import Support, classify
from roofline.recipes import RECIPE_LIST, Mode, Recipe, get_recipe
from roofline.specs import GpuSpec, SpecDatabase

#: The output tile of terms.wave_efficiency, restated so the tests check the rule itself.
TILE_ROWS, TILE_COLS = 256, 128


def supported_cases(specs: SpecDatabase) -> list[tuple[GpuSpec, Recipe, Mode]]:
    """Every (GPU, recipe, mode) of ``specs`` that is not impossible on that GPU."""
    return [
        (gpu, recipe, mode)
        for gpu in specs.values()
        for recipe in RECIPE_LIST
        for mode in recipe.modes
        if classify(gpu, recipe, mode).support is not Support.IMPOSSIBLE
    ]


def align(recipe: str | Recipe, k: int, n: int) -> tuple[int, int]:
    """Round K, N up to the recipe's required multiples."""
    rules = recipe.divisibility if isinstance(recipe, Recipe) else get_recipe(recipe).divisibility
    for dim, multiple in rules:
        if dim == "K":
            k = -(-k // multiple) * multiple
        if dim == "N":
            n = -(-n // multiple) * multiple
    return k, n


def waves_by_hand(rows: int, cols: int, sms: float) -> float:
    """The wave rule in words: whole waves of whole 256 x 128 tiles (no taller than the
    output: a skinny GEMM's tiles have its rows), ``sms`` at a time, unless the tiles fit
    in one wave (then 1: the libraries split K)."""
    tile_rows = min(rows, TILE_ROWS)
    tiles = math.ceil(rows / tile_rows) * math.ceil(cols / TILE_COLS)
    if tiles < sms:
        return 1.0
    return rows * cols / (tile_rows * TILE_COLS * sms * math.ceil(tiles / sms))
