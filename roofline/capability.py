"""Which recipes a GPU can run: natively, only hypothetically, or not at all."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from roofline.errors import UnsupportedError
from roofline.recipes import RECIPE_LIST, Mode, Recipe
from roofline.specs import GpuSpec, SpecDatabase


class Support(enum.StrEnum):
    """How a GPU relates to a recipe."""

    NATIVE = "native"  # the hardware runs the recipe's format
    HYPOTHETICAL = "hypothetical"  # computable, but the hardware lacks the format
    IMPOSSIBLE = "impossible"  # a peak the formulas need is missing


@dataclass(frozen=True)
class Capability:
    """A GPU x recipe verdict with the sentence that explains it."""

    support: Support
    reason: str


class HypotheticalWarning(UserWarning):
    """Emitted by :func:`roofline.evaluate` for a recipe the GPU lacks natively."""


def classify(gpu: GpuSpec, recipe: Recipe, mode: Mode | None = None) -> Capability:
    """Classify ``recipe`` on ``gpu`` (in ``mode``, or in any mode it is modelled in)."""
    modes = [mode] if mode is not None else list(recipe.modes)
    needed = {fmt.peak.spec_key: fmt.name for m in modes for fmt in recipe.formats(m)}
    for key, fmt_name in needed.items():
        if gpu.value(key) is None:
            return Capability(
                Support.IMPOSSIBLE,
                f"recipe {recipe.name} needs {fmt_name}, which {gpu.name} does not have "
                f"(no {key} in its spec)",
            )
    if recipe.native_format not in gpu.native_formats:
        return Capability(
            Support.HYPOTHETICAL,
            f"{gpu.name} has no native {recipe.native_format} support; the estimate for "
            f"recipe {recipe.name} is hypothetical (what it would do if the hardware ran it)",
        )
    return Capability(Support.NATIVE, f"{gpu.name} runs {recipe.native_format} natively")


def require(gpu: GpuSpec, recipe: Recipe, mode: Mode) -> Capability:
    """The capability, raising :class:`UnsupportedError` when it is impossible."""
    verdict = classify(gpu, recipe, mode)
    if verdict.support is Support.IMPOSSIBLE:
        raise UnsupportedError(verdict.reason)
    return verdict


def matrix(specs: SpecDatabase) -> dict[str, dict[str, Capability]]:
    """GPU name -> recipe name -> capability, for every GPU and recipe."""
    return {
        gpu.name: {recipe.name: classify(gpu, recipe) for recipe in RECIPE_LIST}
        for gpu in specs.values()
    }
