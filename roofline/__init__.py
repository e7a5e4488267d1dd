"""Roofline Atlas: an analytic roofline model of low-precision GEMM training and inference.

The package is pure: it builds symbolic formulas (:mod:`roofline.formulas`) from the
recipe registry (:mod:`roofline.recipes`), loads and lints GPU specs
(:mod:`roofline.specs`) and evaluates compiled formulas over arrays of shapes
(:mod:`roofline.evaluate`). It never imports torch at module level.
"""

from __future__ import annotations

from roofline.capability import (
    Capability,
    CapabilityWarning,
    EmulatedWarning,
    HypotheticalWarning,
    Support,
    classify,
)
from roofline.errors import (
    RooflineError,
    ShapeError,
    SpecError,
    SpecProblem,
    UnknownNameError,
    UnsupportedError,
)
from roofline.evaluate import columns_for, compile_model, evaluate, evaluate_terms
from roofline.formulas import MODEL_VERSION, Quantity, RooflineModel, build_model
from roofline.recipes import RECIPES, Mode, Recipe, get_recipe, recipe_names
from roofline.specs import (
    GpuMatch,
    GpuSpec,
    SpecDatabase,
    VariantFallbackWarning,
    json_schema,
    load_specs,
)

__version__ = "0.1.0"

__all__ = [
    "MODEL_VERSION",
    "RECIPES",
    "Capability",
    "CapabilityWarning",
    "EmulatedWarning",
    "GpuMatch",
    "GpuSpec",
    "HypotheticalWarning",
    "Mode",
    "Quantity",
    "Recipe",
    "RooflineError",
    "RooflineModel",
    "ShapeError",
    "SpecDatabase",
    "SpecError",
    "SpecProblem",
    "Support",
    "UnknownNameError",
    "UnsupportedError",
    "VariantFallbackWarning",
    "__version__",
    "build_model",
    "classify",
    "columns_for",
    "compile_model",
    "evaluate",
    "evaluate_terms",
    "get_recipe",
    "json_schema",
    "load_specs",
    "recipe_names",
]
