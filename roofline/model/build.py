"""Builds a model: torchao's (:mod:`roofline.model.torchao`) or the calibrated one
(:mod:`roofline.model.calibrated`), each the shared term list (:mod:`roofline.model.terms`)
under its own timing."""

from __future__ import annotations

from roofline.model.calibrated import build_calibrated
from roofline.model.terms import RooflineModel
from roofline.model.torchao import build_torchao
from roofline.recipes import Mode, Recipe, get_recipe

#: Bumped whenever any formula changes, so pages and reports can say which model
#: produced a number. Format: <torchao release matched>.<project revision>.
MODEL_VERSION = "torchao-0.18/r5"


def build_model(
    mode: Mode | str,
    recipe: Recipe | str,
    fusion: bool = False,
    calibrated: bool = False,
    grouped: bool = False,
) -> RooflineModel:
    """The symbolic model for ``recipe`` in ``mode``; cached, so built once per process.

    ``calibrated=True`` builds the calibrated model (:mod:`roofline.model.calibrated`):
    the same terms under the same keys, timed with measured and fitted efficiencies.
    ``grouped=True`` builds a grouped (mixture-of-experts) layer in the symbol G, the
    number of experts (:mod:`roofline.model.grouped`); at G = 1 it equals the dense model.
    """
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    if calibrated:
        return build_calibrated(mode, recipe, bool(fusion), bool(grouped))
    return build_torchao(mode, recipe, bool(fusion), bool(grouped))
