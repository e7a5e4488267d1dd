"""Roofline Atlas: an analytic roofline model of low-precision GEMM training and inference.

The package is pure: it builds symbolic formulas (:mod:`roofline.model`) from the
recipe registry (:mod:`roofline.recipes`), loads and lints GPU specs
(:mod:`roofline.specs`) and evaluates compiled formulas over arrays of shapes
(:mod:`roofline.evaluate`). It never imports torch at module level.

``__all__`` is the public API (the site's Python API page documents it): evaluation
(:func:`evaluate`, :func:`plan_model`), the loaders of spec, model-preset, Hugging Face
config, measurement and calibration files, torchao's roofline functions
(:mod:`roofline.model.torchao_compat`, drop-in replacements), and the calibrated model's
:func:`validate` and :func:`calibrate`.
"""

from __future__ import annotations

from roofline.analysis.fit import FitResult, calibrate
from roofline.analysis.policy import ModelPlan, plan_model
from roofline.analysis.validation import ValidationReport, validate
from roofline.calibration import CalibrationData, load_calibration
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
from roofline.evaluate import Columns, columns_for, evaluate, evaluate_terms
from roofline.measurements import MeasurementDatabase, load_measurements
from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.compiled import compile_model
from roofline.model.terms import Quantity, RooflineModel
from roofline.model.torchao_compat import (
    get_blockwise_float8_mem_sympy,
    get_blockwise_gemm_time_sympy,
    get_float8_mem_sympy,
    get_gemm_time_sympy,
    get_individual_gemm_time_sympy,
    get_inference_bf16_activation_mem_sympy,
    get_inference_float8_mem_sympy,
    get_inference_gemm_time_sympy,
    get_inference_tensor_memory_traffic_ovhd_s,
    get_specs,
    get_tensor_memory_traffic_ovhd_s,
)
from roofline.presets import ModelDatabase, ModelPreset, load_models
from roofline.presets.hf import HfConfigError, load_hf_config, preset_from_hf_config
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

# In the order the API page shows them: evaluating, loading, torchao's functions, the
# calibrated model, then the types and errors.
__all__ = [  # noqa: RUF022  (grouped, in the order the API page shows)
    "evaluate",
    "evaluate_terms",
    "columns_for",
    "compile_model",
    "build_model",
    "plan_model",
    "classify",
    "load_specs",
    "load_models",
    "load_hf_config",
    "preset_from_hf_config",
    "load_measurements",
    "load_calibration",
    "json_schema",
    "get_recipe",
    "recipe_names",
    "get_specs",
    "get_gemm_time_sympy",
    "get_individual_gemm_time_sympy",
    "get_tensor_memory_traffic_ovhd_s",
    "get_float8_mem_sympy",
    "get_inference_gemm_time_sympy",
    "get_inference_tensor_memory_traffic_ovhd_s",
    "get_inference_float8_mem_sympy",
    "get_inference_bf16_activation_mem_sympy",
    "get_blockwise_gemm_time_sympy",
    "get_blockwise_float8_mem_sympy",
    "validate",
    "calibrate",
    "MODEL_VERSION",
    "RECIPES",
    "Columns",
    "Mode",
    "Quantity",
    "Recipe",
    "RooflineModel",
    "GpuSpec",
    "GpuMatch",
    "SpecDatabase",
    "ModelPreset",
    "ModelDatabase",
    "ModelPlan",
    "MeasurementDatabase",
    "CalibrationData",
    "ValidationReport",
    "FitResult",
    "Capability",
    "Support",
    "CapabilityWarning",
    "EmulatedWarning",
    "HypotheticalWarning",
    "VariantFallbackWarning",
    "RooflineError",
    "UnknownNameError",
    "ShapeError",
    "SpecError",
    "SpecProblem",
    "UnsupportedError",
    "HfConfigError",
    "__version__",
]
