"""``roofline recipes``: the recipe registry, one recipe a line."""

from __future__ import annotations

import argparse

from roofline.recipes import RECIPE_LIST


def cmd_recipes(args: argparse.Namespace) -> int:
    """``roofline recipes``: the registry, one recipe a line."""
    for recipe in RECIPE_LIST:
        modes = ",".join(m.value for m in recipe.modes)
        alias = f" (alias: {', '.join(recipe.aliases)})" if recipe.aliases else ""
        print(f"{recipe.name:34} {recipe.family.value:9} {modes:19} {recipe.summary}{alias}")
    return 0
