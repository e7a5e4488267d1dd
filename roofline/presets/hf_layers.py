"""The layers of a Hugging Face ``config.json`` as GEMMs, per ``model_type``
(:func:`derive`): grouped-query and multi-head latent attention, SwiGLU MLPs, routed and
shared experts, and the output head (:func:`output_block`). :mod:`roofline.presets.hf`
reads the file, picks the text model and builds the preset."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from roofline.errors import RooflineError
from roofline.presets import rules as R
from roofline.presets.model import LayerBlock, LinearKind, PresetGemm
from roofline.shapes import MAX_DIM

DENSE_TYPES = ("llama", "mistral", "qwen2", "qwen3")
MOE_TYPES = ("mixtral", "qwen3_moe", "llama4", "gpt_oss")
MLA_TYPES = ("deepseek_v3",)
#: Every ``model_type`` :func:`roofline.presets.hf.preset_from_hf_config` derives GEMMs for.
SUPPORTED_TYPES = DENSE_TYPES + MOE_TYPES + MLA_TYPES
_MAX_LAYERS = R.MAX_LAYERS


class HfConfigError(RooflineError, ValueError):
    """A config.json the derivation cannot use: the message names the file and the key."""


@dataclass(frozen=True)
class Config:
    """A parsed config with the file's name, for messages."""

    values: Mapping[str, Any]
    file: str
    model_type: str = ""

    def _fail(self, key: str, expected: str, received: str) -> HfConfigError:
        which = f" (model_type {self.model_type})" if self.model_type else ""
        return HfConfigError(f"{self.file}: {key}: expected {expected}{which}, received {received}")

    def has(self, key: str) -> bool:
        return self.values.get(key) is not None

    def int(self, key: str, default: int | None = None, low: int = 1, high: int = MAX_DIM) -> int:
        """A required (or defaulted) integer key within [low, high]."""
        value = self.values.get(key)
        if value is None:
            if default is not None:
                return default
            raise self._fail(key, f"an integer from {low} to {high}", "nothing (missing key)")
        if type(value) is not int or not low <= value <= high:
            raise self._fail(key, f"an integer from {low} to {high}", describe_json(value))
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.values.get(key)
        if value is None:
            return default
        if type(value) is not bool:
            raise self._fail(key, "true or false", describe_json(value))
        return value

    def layer_list(self, key: str, layers: int) -> list[int]:
        """A list of layer indices (each from 0 to ``layers - 1``); [] when absent."""
        value = self.values.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            type(i) is int and 0 <= i < layers for i in value
        ):
            expected = f"a list of layer indices from 0 to {layers - 1}"
            raise self._fail(key, expected, describe_json(value))
        return value


def describe_json(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _gemm(
    name: str, K: int, N: int, note: str = "", kind: LinearKind = LinearKind.DENSE
) -> PresetGemm:
    return PresetGemm(name, K, N, 1, kind, note)


def _attention(c: Config) -> list[PresetGemm]:
    """q, k, v, o of grouped-query attention."""
    hidden = c.int("hidden_size")
    heads = c.int("num_attention_heads", high=65536)
    kv_heads = c.int("num_key_value_heads", default=heads, high=heads)
    if heads % kv_heads:
        raise c._fail(
            "num_key_value_heads", f"a divisor of num_attention_heads ({heads})", str(kv_heads)
        )
    head_dim = c.int("head_dim", default=hidden // heads if hidden >= heads else None)
    q, kv = heads * head_dim, kv_heads * head_dim
    return [
        _gemm("q_proj", hidden, q, f"{heads} heads x head_dim {head_dim}"),
        _gemm("k_proj", hidden, kv, f"{kv_heads} KV heads x head_dim {head_dim}"),
        _gemm("v_proj", hidden, kv, f"{kv_heads} KV heads x head_dim {head_dim}"),
        _gemm("o_proj", q, hidden),
    ]


def _mla(c: Config) -> list[PresetGemm]:
    """DeepSeek's multi-head latent attention as the projections training runs."""
    hidden = c.int("hidden_size")
    heads = c.int("num_attention_heads", high=65536)
    kv_rank = c.int("kv_lora_rank")
    nope, rope = c.int("qk_nope_head_dim"), c.int("qk_rope_head_dim")
    v_dim = c.int("v_head_dim")
    q_width = heads * (nope + rope)
    gemms = []
    if c.has("q_lora_rank"):
        q_rank = c.int("q_lora_rank")
        gemms += [
            _gemm("q_a_proj", hidden, q_rank, "hidden to q_lora_rank"),
            _gemm(
                "q_b_proj", q_rank, q_width, f"{heads} heads x (qk_nope {nope} + qk_rope {rope})"
            ),
        ]
    else:  # DeepSeek-V2-Lite style: one query projection
        gemms.append(
            _gemm("q_proj", hidden, q_width, f"{heads} heads x (qk_nope {nope} + qk_rope {rope})")
        )
    return [
        *gemms,
        _gemm(
            "kv_a_proj_with_mqa",
            hidden,
            kv_rank + rope,
            f"kv_lora_rank {kv_rank} + qk_rope_head_dim {rope}",
        ),
        _gemm(
            "kv_b_proj",
            kv_rank,
            heads * (nope + v_dim),
            f"{heads} heads x (qk_nope {nope} + v_head {v_dim})",
        ),
        _gemm("o_proj", heads * v_dim, hidden, f"{heads} heads x v_head {v_dim} to hidden"),
    ]


def _mlp(
    hidden: int, inner: int, prefix: str = "", kind: LinearKind = LinearKind.DENSE, note: str = ""
) -> list[PresetGemm]:
    """A SwiGLU MLP: gate and up (hidden to inner), down (inner to hidden)."""
    return [
        _gemm(f"{prefix}gate_proj", hidden, inner, note, kind),
        _gemm(f"{prefix}up_proj", hidden, inner, note, kind),
        _gemm(f"{prefix}down_proj", inner, hidden, "", kind),
    ]


@dataclass(frozen=True)
class _Moe:
    """What a MoE layer of the config runs beside its attention."""

    experts: int
    top_k: int
    expert_inner: int
    shared_inner: int  # 0: no shared expert
    shared_note: str = ""


def _moe_gemms(hidden: int, moe: _Moe) -> list[PresetGemm]:
    gemms = [_gemm("router", hidden, moe.experts, "one score per routed expert, on every token")]
    gemms += _mlp(hidden, moe.expert_inner, "expert_", LinearKind.EXPERT)
    if moe.shared_inner:
        gemms += _mlp(hidden, moe.shared_inner, "shared_", LinearKind.SHARED, moe.shared_note)
    return gemms


def _blocks(
    c: Config,
    attention: list[PresetGemm],
    dense_inner: int | None,
    moe: _Moe | None,
    is_moe: Callable[[int], bool],
) -> tuple[tuple[LayerBlock, ...], str]:
    """The decoder blocks (one per kind of layer) and a note on which layers are MoE."""
    hidden = c.int("hidden_size")
    layers = c.int("num_hidden_layers", high=_MAX_LAYERS)
    moe_layers = [i for i in range(layers) if moe is not None and is_moe(i)]
    dense_count = layers - len(moe_layers)
    blocks = []
    if dense_count:
        if dense_inner is None:
            raise c._fail(
                "intermediate_size",
                "the dense MLP width of the non-MoE layers",
                "nothing (missing key)",
            )
        name = "layers" if not moe_layers else "dense_layers"
        blocks.append(LayerBlock(name, dense_count, tuple(attention + _mlp(hidden, dense_inner))))
    if moe_layers and moe is not None:
        name = "layers" if not dense_count else "moe_layers"
        gemms = tuple(attention + _moe_gemms(hidden, moe))
        blocks.append(LayerBlock(name, len(moe_layers), gemms, moe.experts, moe.top_k))
    note = ""
    if moe_layers and dense_count:
        shown = ", ".join(str(i) for i in moe_layers[:12]) + (
            " ..." if len(moe_layers) > 12 else ""
        )
        note = f" MoE layers (0-based): {shown}; the other {dense_count} are dense."
    return tuple(blocks), note


def output_block(c: Config) -> LayerBlock:
    hidden, vocab = c.int("hidden_size"), c.int("vocab_size")
    tied = c.flag("tie_word_embeddings", False)
    note = (
        "output head, tied to the input embeddings (the GEMM still runs)"
        if tied
        else "output head, not tied to the embeddings"
    )
    return LayerBlock("output", 1, (_gemm("lm_head", hidden, vocab, note),))


def _experts(c: Config, experts_key: str, inner_key: str) -> _Moe:
    experts = c.int(experts_key, low=2, high=R.MAX_EXPERTS)
    return _Moe(experts, c.int("num_experts_per_tok", high=experts), c.int(inner_key), 0)


def derive(c: Config, model_type: str) -> tuple[tuple[LayerBlock, ...], str]:
    layers = c.int("num_hidden_layers", high=_MAX_LAYERS)
    if model_type in DENSE_TYPES:
        return _blocks(c, _attention(c), c.int("intermediate_size"), None, lambda i: False)
    if model_type == "mixtral":
        moe = _experts(c, "num_local_experts", "intermediate_size")
        return _blocks(c, _attention(c), None, moe, lambda i: True)
    if model_type == "gpt_oss":
        moe = _experts(c, "num_local_experts", "intermediate_size")
        return _blocks(c, _attention(c), None, moe, lambda i: True)
    if model_type == "qwen3_moe":
        moe = _experts(c, "num_experts", "moe_intermediate_size")
        step = c.int("decoder_sparse_step", default=1, high=layers)
        dense_only = set(c.layer_list("mlp_only_layers", layers))
        inner = c.int("intermediate_size") if dense_only or step > 1 else None
        return _blocks(
            c, _attention(c), inner, moe, lambda i: i not in dense_only and (i + 1) % step == 0
        )
    if model_type == "llama4":
        moe = _experts(c, "num_local_experts", "intermediate_size")
        moe = _Moe(moe.experts, moe.top_k, moe.expert_inner, moe.expert_inner, "the shared expert")
        listed = c.layer_list("moe_layers", layers) if c.has("moe_layers") else None
        step = c.int("interleave_moe_layer_step", default=1, high=layers)
        chosen = set(listed) if listed is not None else set(range(step - 1, layers, step))
        inner = c.int("intermediate_size_mlp") if len(chosen) < layers else None
        return _blocks(c, _attention(c), inner, moe, lambda i: i in chosen)
    # deepseek_v3
    moe = _experts(c, "n_routed_experts", "moe_intermediate_size")
    shared = c.int("n_shared_experts", default=0, low=0, high=R.MAX_EXPERTS)
    moe = _Moe(
        moe.experts,
        moe.top_k,
        moe.expert_inner,
        shared * moe.expert_inner,
        f"n_shared_experts {shared} x moe_intermediate {moe.expert_inner}",
    )
    first_dense = c.int("first_k_dense_replace", default=0, low=0, high=layers)
    freq = c.int("moe_layer_freq", default=1, high=layers)
    inner = c.int("intermediate_size") if first_dense or freq > 1 else None
    return _blocks(c, _mla(c), inner, moe, lambda i: i >= first_dense and i % freq == 0)
