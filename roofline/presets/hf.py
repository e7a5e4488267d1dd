"""A model preset from a Hugging Face ``config.json``: every linear GEMM derived from it.

:func:`preset_from_hf_config` reads the keys transformers' configuration classes define and
builds the same :class:`~roofline.presets.ModelPreset` a hand-written preset would hold,
block names and GEMM names included, so a derived model and a bundled preset of the same
model give the same GEMMs. Supported ``model_type`` values (:data:`SUPPORTED_TYPES`):

- dense decoders ``llama``, ``mistral``, ``qwen2``, ``qwen3``: q, k, v, o projections with
  grouped-query attention (``num_key_value_heads`` KV heads of ``head_dim``, by default
  ``hidden_size / num_attention_heads``) and a SwiGLU MLP of ``intermediate_size``;
- mixture-of-experts decoders ``mixtral``, ``qwen3_moe``, ``llama4`` (text model of
  ``text_config``), ``gpt_oss``: a router and routed SwiGLU experts (top-k), Llama 4's
  shared expert, dense layers where the config interleaves them (``decoder_sparse_step``,
  ``mlp_only_layers``, ``moe_layers`` / ``interleave_moe_layer_step``);
- ``deepseek_v3``: multi-head latent attention (``q_lora_rank``, ``kv_lora_rank``,
  ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``), ``first_k_dense_replace``
  dense layers, ``n_shared_experts`` shared experts beside the routed ones.

Layers of one kind are one block (``layers`` when every layer is alike, else
``dense_layers`` and ``moe_layers``), then the output head (``lm_head``, listed also when
``tie_word_embeddings`` ties its weight to the input embeddings: the GEMM still runs).
Every problem is a :class:`HfConfigError`: one line naming the file and the key. The
layer rules per model type are :mod:`roofline.presets.hf_layers`'s; this module reads the
file, picks the text model and names the preset.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from roofline.datafiles.core import FileRefused, read_text
from roofline.datafiles.sources import Source
from roofline.presets import rules as R
from roofline.presets.hf_layers import (
    DENSE_TYPES,
    MLA_TYPES,
    MOE_TYPES,
    SUPPORTED_TYPES,
    Config,
    HfConfigError,
    derive,
    describe_json,
    output_block,
)
from roofline.presets.model import ModelPreset

__all__ = [
    "DENSE_TYPES",
    "MAX_CONFIG_BYTES",
    "MLA_TYPES",
    "MOE_TYPES",
    "SUPPORTED_TYPES",
    "HfConfigError",
    "default_name",
    "load_hf_config",
    "preset_from_hf_config",
    "read_hf_config",
]

#: A config.json is small; anything far larger is not one.
MAX_CONFIG_BYTES = 1 << 20


def _text_config(values: Mapping[str, Any], file: str) -> tuple[Config, str]:
    """The config to read and its model type (Llama 4 keeps its text model in text_config)."""
    model_type = values.get("model_type")
    supported = ", ".join(SUPPORTED_TYPES)
    if model_type is None:
        raise HfConfigError(f"{file}: model_type: missing; supported model types: {supported}")
    if model_type == "llama4_text":
        return Config(values, file, "llama4_text"), "llama4"
    if model_type == "llama4":
        text = values.get("text_config")
        if not isinstance(text, Mapping):
            raise HfConfigError(
                f"{file}: text_config: expected the text model's settings (an object),"
                f" received {describe_json(text) if text is not None else 'nothing (missing key)'}"
            )
        return Config(text, f"{file} (text_config)", "llama4"), "llama4"
    if not isinstance(model_type, str) or model_type not in SUPPORTED_TYPES:
        raise HfConfigError(
            f"{file}: model_type: unsupported {describe_json(model_type)}; supported model types:"
            f" {supported}"
        )
    return Config(values, file, model_type), model_type


_NAME_PART = re.compile(r"[^a-z0-9.]+")


def default_name(values: Mapping[str, Any], path: str | None) -> str:
    """A preset name for a config: its ``_name_or_path`` (``org/Model-7B`` -> ``model-7b``),
    else the folder holding a ``config.json`` or the file's stem, as a valid preset name."""
    raw = values.get("_name_or_path")
    if isinstance(raw, str) and raw.strip():
        base = raw.rstrip("/").rsplit("/", 1)[-1]
    elif path is not None:
        p = Path(path)
        base = p.parent.name if p.stem == "config" and p.parent.name else p.stem
    else:
        base = str(values.get("model_type", "model"))
    name = re.sub(r"[.-]{2,}", "-", _NAME_PART.sub("-", base.lower())).strip(".-")
    name = name[: R.MAX_MODEL_NAME_LENGTH].strip(".-")
    return name if R.MODEL_NAME.fullmatch(name) else "hf-model"


def _not_object(file: str, values: Any) -> HfConfigError:
    return HfConfigError(
        f"{file}: expected a JSON object (a transformers config.json), received "
        f"{describe_json(values)}"
    )


def preset_from_hf_config(
    values: Mapping[str, Any],
    *,
    file: str = "config.json",
    name: str | None = None,
    display_name: str | None = None,
    sources: tuple[Source, ...] = (),
) -> ModelPreset:
    """The preset of a parsed transformers ``config.json`` (see the module docstring).

    ``file`` names the config in messages; ``name`` and ``display_name`` default to
    :func:`default_name`. Raises :class:`HfConfigError` (one line naming the file and the
    key) for an unsupported ``model_type`` or a missing or invalid key.
    """
    if not isinstance(values, Mapping):
        raise _not_object(file, values)
    config, model_type = _text_config(values, file)
    blocks, layer_note = derive(config, model_type)
    preset_name = name or default_name(values, file)
    if not R.MODEL_NAME.fullmatch(preset_name) or len(preset_name) > R.MAX_MODEL_NAME_LENGTH:
        expected = R.MODEL_NAME_EXPECTED.format(limit=R.MAX_MODEL_NAME_LENGTH)
        raise HfConfigError(f"name: expected {expected}, received {preset_name!r}")
    notes = (
        f"Derived from a Hugging Face config.json (model_type {model_type}): every linear"
        f" layer's K and N from its keys.{layer_note}"
    )
    return ModelPreset(
        name=preset_name,
        display_name=display_name or preset_name,
        blocks=(*blocks, output_block(config)),
        sources=sources,
        notes=notes,
    )


def read_hf_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed JSON object of a config.json; :class:`HfConfigError` names the file and
    the problem (unreadable, not a regular file, over 1 MiB, not UTF-8, not JSON)."""
    file = str(path)
    try:
        text = read_text(path, "config.json file", MAX_CONFIG_BYTES)
    except FileRefused as exc:
        raise HfConfigError(f"{file}: expected {exc.expected}, received {exc.received}") from None
    try:
        values = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise HfConfigError(
            f"{file}: expected JSON, received invalid JSON at {where}: {exc.msg}"
        ) from None
    if not isinstance(values, dict):
        raise _not_object(file, values)
    return values


def load_hf_config(
    path: str | os.PathLike[str], name: str | None = None, display_name: str | None = None
) -> ModelPreset:
    """The preset of the config.json at ``path`` (:func:`read_hf_config`, then
    :func:`preset_from_hf_config`)."""
    values = read_hf_config(path)
    return preset_from_hf_config(values, file=str(path), name=name, display_name=display_name)
