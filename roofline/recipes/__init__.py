"""The recipe registry: every low-precision recipe as a value, not a branch.

A recipe says which format each GEMM runs in, how the GEMMs read block scales, and,
per tensor role, which cast kernels run and how many bytes each moves. Kernel bytes are
sympy expressions in the cast tensor's two dimensions ``d_0 x d_1`` (see
:mod:`roofline.symbols`), so the model, the CLI and the site read the same numbers and
adding a recipe is adding one value to :data:`RECIPES`.

The package: :mod:`.model` (the types), :mod:`.kernels` and :mod:`.float8_kernels`
(cast-kernel plans, built from a recipe's scaling), :mod:`.stacks` (the GEMM libraries
that run each recipe) and :mod:`.registry` (the recipes themselves, and the lookups).
"""

from __future__ import annotations

from roofline.recipes.model import (
    BF16,
    FORMATS,
    FP4,
    FP8,
    FP8_BLOCK,
    FP32_BYTES,
    SCALE_E8M0_BYTES,
    CastKernel,
    CastKind,
    Family,
    Format,
    Gemm,
    Mode,
    ModePlan,
    NativeFormat,
    Phase,
    Platform,
    Recipe,
    Role,
    Scaling,
)
from roofline.recipes.registry import NATIVE_FORMATS, RECIPE_LIST, RECIPES, get_recipe, recipe_names

__all__ = [
    "BF16",
    "FORMATS",
    "FP4",
    "FP8",
    "FP8_BLOCK",
    "FP32_BYTES",
    "NATIVE_FORMATS",
    "RECIPES",
    "RECIPE_LIST",
    "SCALE_E8M0_BYTES",
    "CastKernel",
    "CastKind",
    "Family",
    "Format",
    "Gemm",
    "Mode",
    "ModePlan",
    "NativeFormat",
    "Phase",
    "Platform",
    "Recipe",
    "Role",
    "Scaling",
    "get_recipe",
    "recipe_names",
]
