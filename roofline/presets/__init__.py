"""Model presets as sourced data: every linear layer of a model as a GEMM.

The bundled file ``roofline/data/models.toml`` describes published models (Llama 3.1,
Llama 4 Scout, DeepSeek-V3, Qwen3 MoE, gpt-oss) layer block by layer block: each linear
layer's input and output features, how many per layer, and whether it is dense, a routed
expert or a shared expert, with the experts and top-k of MoE blocks, every number with its
source. A user's own model uses the same format (docs/models-format.md).

The package: :mod:`.model` (the types and :meth:`ModelPreset.gemm_instances`),
:mod:`.rules` (the schema as data), :mod:`.fields` (single-field checks on the shared
collector, :mod:`roofline.datafiles.problems`), :mod:`.lint` (the rules and loading), and
:mod:`.hf` with :mod:`.hf_layers` (a preset derived from a Hugging Face config.json).
"""

from __future__ import annotations

from roofline.datafiles.sources import Source
from roofline.presets.lint import BUNDLED_MODELS_PATH, BUNDLED_NAME, load_models, parse_models
from roofline.presets.model import (
    GemmInstance,
    LayerBlock,
    LinearKind,
    ModelDatabase,
    ModelPreset,
    ParameterError,
    PresetGemm,
)
from roofline.presets.rules import SCHEMA_VERSION

__all__ = [
    "BUNDLED_MODELS_PATH",
    "BUNDLED_NAME",
    "SCHEMA_VERSION",
    "GemmInstance",
    "LayerBlock",
    "LinearKind",
    "ModelDatabase",
    "ModelPreset",
    "ParameterError",
    "PresetGemm",
    "Source",
    "load_models",
    "parse_models",
]
