"""Model presets: the bundled GEMM lists against each model's published dimensions, the
GEMMs of a step (tokens, expert parallelism), and the lint of hostile or malformed files.

The published values below are held here, apart from the data file, and every expected
GEMM is derived from them by the architecture's rules, so a typo in either place fails.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.errors import DataFileError, RooflineError, UnknownNameError
from roofline.presets import (
    BUNDLED_MODELS_PATH,
    GemmInstance,
    LinearKind,
    ModelDatabase,
    ModelPreset,
    ParameterError,
    load_models,
    parse_models,
)
from roofline.presets import rules as R
from roofline.shapes import MAX_DIM

READ_ON = dt.date(2026, 11, 30)
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]")
DENSE, EXPERT, SHARED = LinearKind.DENSE, LinearKind.EXPERT, LinearKind.SHARED

# -- published configuration values ----------------------------------------------------
# A table of published values reads best one model per line:
# Llama 3.1: Meta's llama-models, models/llama3_1/api/sku_list.py (model_args), commit
# 1768925a9d343b19459b5bc2acc893c842874179; the FFN width rule is FeedForward in
# models/llama3/model.py, commit 43e87a37feaabe503b90511b93e23266279920da.
LLAMA31 = {
    "llama3.1-8b": dict(dim=4096, layers=32, heads=32, kv=8, vocab=128256, mult=1.3, of=1024),
    "llama3.1-70b": dict(dim=8192, layers=80, heads=64, kv=8, vocab=128256, mult=1.3, of=4096),
    "llama3.1-405b": dict(dim=16384, layers=126, heads=128, kv=8, vocab=128256, mult=1.2, of=4096),
}
# Llama 4 Scout: transformers Llama4TextConfig defaults (documented as
# meta-llama/Llama-4-Scout-17B-16E), configuration_llama4.py at commit b17cfe48c5a9;
# interleave_moe_layer_step 1 -> every layer is MoE; one shared expert per MoE layer
# (modeling_llama4.py, Llama4TextMoe.shared_expert).
SCOUT = dict(
    hidden=5120,
    layers=48,
    heads=40,
    kv=8,
    head_dim=128,
    intermediate=8192,
    experts=16,
    top_k=1,
    shared=1,
    vocab=202048,
    interleave_moe_layer_step=1,
)
# DeepSeek-V3: transformers DeepseekV3Config defaults (configuration_deepseek_v3.py at
# commit 0fc683d1cd94) = deepseek-ai config_671B.json (n_layers 61, n_dense_layers 3).
DSV3 = dict(
    hidden=7168,
    intermediate=18432,
    moe_intermediate=2048,
    layers=61,
    heads=128,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_nope=128,
    qk_rope=64,
    v_head=128,
    shared=1,
    experts=256,
    top_k=8,
    first_k_dense_replace=3,
    vocab=129280,
)
# Qwen3 MoE: torchtitan torchtitan/models/qwen3/__init__.py at commit 0310b491596b
# (_30b_a3b, _235b_a22b); decoder_sparse_step 1, no shared expert.
QWEN3 = {
    "qwen3-30b-a3b": dict(
        hidden=2048,
        layers=48,
        heads=32,
        kv=4,
        head_dim=128,
        moe_intermediate=768,
        experts=128,
        top_k=8,
        vocab=151936,
    ),
    "qwen3-235b-a22b": dict(
        hidden=4096,
        layers=94,
        heads=64,
        kv=4,
        head_dim=128,
        moe_intermediate=1536,
        experts=128,
        top_k=8,
        vocab=151936,
    ),
}
# gpt-oss-120b: openai/gpt-oss gpt_oss/torch/model.py ModelConfig defaults at commit
# 0568dfc94f09 (= openai/gpt-oss-120b original/config.json).
GPT_OSS = dict(
    hidden=2880,
    layers=36,
    heads=64,
    kv=8,
    head_dim=64,
    intermediate=2880,
    experts=128,
    top_k=4,
    vocab=201088,
)
PUBLISHED_TOTAL_B = {
    "llama3.1-8b": 8.0,  # the size Meta names the model by (llama-models sku_list: "8b")
    "llama3.1-70b": 70.0,  # likewise "70b"
    "llama3.1-405b": 405.0,  # likewise "405b"
    "llama4-scout": 109.0,  # HF blog llama4-release: ~109B total (vision encoder included)
    "deepseek-v3": 671.0,  # deepseek-ai README_WEIGHTS.md: main model 671B
    "qwen3-30b-a3b": 30.5,  # Qwen model card, quoted by stored copies: 30.5B total
    "qwen3-235b-a22b": 235.0,  # Qwen model card, quoted by stored copies: 235B total
    "gpt-oss-120b": 116.8,  # OpenAI gpt-oss model card, quoted by stored copies: 116.8B
}
PUBLISHED_ACTIVE_B = {
    "llama4-scout": 17.0,  # "17B active" (HF blog llama4-release)
    "deepseek-v3": 36.7,  # README_WEIGHTS.md: 36.7B activated incl. embedding and head
    "qwen3-30b-a3b": 3.3,  # Qwen model card: 3.3B activated
    "qwen3-235b-a22b": 22.0,  # Qwen model card: 22B activated
}


# -- the architecture's rules -----------------------------------------------------------

Gemms = dict[str, tuple[int, int, int, LinearKind]]  # name -> (K, N, count, kind)


def llama_ffn_width(dim: int, mult: float, of: int) -> int:
    """Meta's FeedForward: int(2 x 4 dim / 3), x ffn_dim_multiplier, rounded up to of."""
    hidden = int(mult * int(2 * (4 * dim) / 3))
    return of * ((hidden + of - 1) // of)


def gqa(hidden: int, heads: int, kv: int, head_dim: int) -> Gemms:
    return {
        "q_proj": (hidden, heads * head_dim, 1, DENSE),
        "k_proj": (hidden, kv * head_dim, 1, DENSE),
        "v_proj": (hidden, kv * head_dim, 1, DENSE),
        "o_proj": (heads * head_dim, hidden, 1, DENSE),
    }


def swiglu(prefix: str, hidden: int, width: int, kind: LinearKind) -> Gemms:
    return {
        f"{prefix}gate_proj": (hidden, width, 1, kind),
        f"{prefix}up_proj": (hidden, width, 1, kind),
        f"{prefix}down_proj": (width, hidden, 1, kind),
    }


def mla(c: dict[str, Any]) -> Gemms:
    h, n = c["hidden"], c["heads"]
    return {
        "q_a_proj": (h, c["q_lora_rank"], 1, DENSE),
        "q_b_proj": (c["q_lora_rank"], n * (c["qk_nope"] + c["qk_rope"]), 1, DENSE),
        "kv_a_proj_with_mqa": (h, c["kv_lora_rank"] + c["qk_rope"], 1, DENSE),
        "kv_b_proj": (c["kv_lora_rank"], n * (c["qk_nope"] + c["v_head"]), 1, DENSE),
        "o_proj": (n * c["v_head"], h, 1, DENSE),
    }


def moe(hidden: int, experts: int, width: int, shared_width: int = 0) -> Gemms:
    gemms = {"router": (hidden, experts, 1, DENSE)} | swiglu("expert_", hidden, width, EXPERT)
    return gemms | (swiglu("shared_", hidden, shared_width, SHARED) if shared_width else {})


def head(hidden: int, vocab: int) -> tuple[int, None, None, Gemms]:
    return (1, None, None, {"lm_head": (hidden, vocab, 1, DENSE)})


Expected = dict[str, tuple[int, int | None, int | None, Gemms]]  # block -> layers, E, k, gemms


def expected_models() -> dict[str, Expected]:
    models: dict[str, Expected] = {}
    for name, c in LLAMA31.items():
        width = llama_ffn_width(c["dim"], c["mult"], c["of"])
        layer = gqa(c["dim"], c["heads"], c["kv"], c["dim"] // c["heads"])
        layer |= swiglu("", c["dim"], width, DENSE)
        models[name] = {
            "layers": (c["layers"], None, None, layer),
            "output": head(c["dim"], c["vocab"]),
        }
    s = SCOUT
    assert s["interleave_moe_layer_step"] == 1  # every layer MoE: one block
    layer = gqa(s["hidden"], s["heads"], s["kv"], s["head_dim"])
    layer |= moe(s["hidden"], s["experts"], s["intermediate"], s["shared"] * s["intermediate"])
    models["llama4-scout"] = {
        "layers": (s["layers"], s["experts"], s["top_k"], layer),
        "output": head(s["hidden"], s["vocab"]),
    }
    d = DSV3
    dense = mla(d) | swiglu("", d["hidden"], d["intermediate"], DENSE)
    routed = mla(d) | moe(
        d["hidden"], d["experts"], d["moe_intermediate"], d["shared"] * d["moe_intermediate"]
    )
    models["deepseek-v3"] = {
        "dense_layers": (d["first_k_dense_replace"], None, None, dense),
        "moe_layers": (d["layers"] - d["first_k_dense_replace"], d["experts"], d["top_k"], routed),
        "output": head(d["hidden"], d["vocab"]),
    }
    for name, q in QWEN3.items():
        layer = gqa(q["hidden"], q["heads"], q["kv"], q["head_dim"])
        layer |= moe(q["hidden"], q["experts"], q["moe_intermediate"])
        models[name] = {
            "layers": (q["layers"], q["experts"], q["top_k"], layer),
            "output": head(q["hidden"], q["vocab"]),
        }
    g = GPT_OSS
    layer = gqa(g["hidden"], g["heads"], g["kv"], g["head_dim"])
    layer |= moe(g["hidden"], g["experts"], g["intermediate"])
    models["gpt-oss-120b"] = {
        "layers": (g["layers"], g["experts"], g["top_k"], layer),
        "output": head(g["hidden"], g["vocab"]),
    }
    return models


EXPECTED = expected_models()
HIDDEN = {  # the embedding width, for the parameter counts
    **{n: c["dim"] for n, c in LLAMA31.items()},
    "llama4-scout": SCOUT["hidden"],
    "deepseek-v3": DSV3["hidden"],
    **{n: c["hidden"] for n, c in QWEN3.items()},
    "gpt-oss-120b": GPT_OSS["hidden"],
}


@pytest.fixture(scope="module")
def db() -> ModelDatabase:
    return load_models()


# -- the bundled file against the published dimensions ----------------------------------


def test_bundled_file_has_every_required_preset(db: ModelDatabase) -> None:
    assert db.names() == list(EXPECTED)
    assert len(db) == len(EXPECTED) and [m.name for m in db] == db.names()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_preset_gemms_match_the_published_dimensions(db: ModelDatabase, name: str) -> None:
    preset = db.get(name)
    found = {
        block.name: (
            block.layers,
            block.experts,
            block.top_k,
            {g.name: (g.K, g.N, g.count, g.kind) for g in block.gemms},
        )
        for block in preset.blocks
    }
    assert found == EXPECTED[name]
    assert [b.name for b in preset.blocks][-1] == "output"  # the head runs last


@pytest.mark.parametrize("name", list(EXPECTED))
def test_preset_sources_are_dated_https_urls(db: ModelDatabase, name: str) -> None:
    preset = db.get(name)
    assert preset.sources and preset.display_name and preset.notes
    for source in preset.sources:
        assert source.url.startswith("https://"), source.url
        assert source.read_on == READ_ON
        assert source.note
        if source.commit:
            assert source.commit in source.url  # a pinned URL names its commit


def linear_params(preset: ModelPreset, active: bool) -> int:
    total = 0
    for block in preset.blocks:
        for g in block.gemms:
            copies = 1
            if g.kind is EXPERT:
                copies = block.top_k if active else block.experts
            total += g.K * g.N * g.count * copies * block.layers
    return total


@pytest.mark.parametrize("name", list(PUBLISHED_TOTAL_B))
def test_total_parameters_match_the_published_count(db: ModelDatabase, name: str) -> None:
    preset = db.get(name)
    embedding = preset.blocks[-1].gemms[0].N * HIDDEN[name]  # untied input embeddings
    total_b = (linear_params(preset, active=False) + embedding) / 1e9
    assert total_b == pytest.approx(PUBLISHED_TOTAL_B[name], rel=0.03)


@pytest.mark.parametrize("name", list(PUBLISHED_ACTIVE_B))
def test_active_parameters_match_the_published_count(db: ModelDatabase, name: str) -> None:
    preset = db.get(name)
    embedding = preset.blocks[-1].gemms[0].N * HIDDEN[name]
    active_b = (linear_params(preset, active=True) + embedding) / 1e9
    assert active_b == pytest.approx(PUBLISHED_ACTIVE_B[name], rel=0.03)


def test_llama_ffn_rule_gives_the_published_widths() -> None:
    """The rule the table derives from reproduces the widths every Llama 3.1 config prints."""
    widths = [llama_ffn_width(c["dim"], c["mult"], c["of"]) for c in LLAMA31.values()]
    assert widths == [14336, 28672, 53248]


def test_bundled_path_and_text_load_the_same_presets(db: ModelDatabase) -> None:
    assert BUNDLED_MODELS_PATH.is_file()
    from_path = load_models(BUNDLED_MODELS_PATH)
    from_text = parse_models(BUNDLED_MODELS_PATH.read_text("utf-8"), "x.toml")
    assert from_path.models == db.models == from_text.models
    assert from_path.origin == str(BUNDLED_MODELS_PATH) and from_text.origin == "x.toml"


# -- the database ------------------------------------------------------------------------


def test_get_is_case_insensitive_and_unknown_names_suggest(db: ModelDatabase) -> None:
    assert db.get("LLAMA3.1-70B") is db.get("llama3.1-70b")
    assert "Llama3.1-8B" in db and "nope" not in db and 3 not in db
    with pytest.raises(UnknownNameError) as info:
        db.get("llama3.1-7b")
    message = str(info.value)
    assert "unknown model 'llama3.1-7b'" in message and "Did you mean" in message
    assert isinstance(info.value, RooflineError)


def test_moe_properties(db: ModelDatabase) -> None:
    assert not db.get("llama3.1-8b").is_moe and db.get("llama3.1-8b").experts is None
    assert {m.name: m.experts for m in db if m.is_moe} == {
        "llama4-scout": 16,
        "deepseek-v3": 256,
        "qwen3-30b-a3b": 128,
        "qwen3-235b-a22b": 128,
        "gpt-oss-120b": 128,
    }


# -- the GEMMs of a step -----------------------------------------------------------------


def test_dense_model_runs_every_gemm_on_all_tokens(db: ModelDatabase) -> None:
    preset = db.get("llama3.1-70b")
    gemms = preset.gemm_instances(16384)
    assert all(isinstance(g, GemmInstance) for g in gemms)
    assert [g.key for g in gemms][:2] == ["layers.q_proj", "layers.k_proj"]
    assert all(g.M == 16384 and g.groups == 1 for g in gemms)
    assert {g.key: g.count for g in gemms}["layers.down_proj"] == 80
    assert gemms[-1] == GemmInstance("output", "lm_head", DENSE, 16384, 8192, 128256, 1, 1)
    assert preset.gemm_instances(16384, ep=1) == gemms


@pytest.mark.parametrize(("ep", "groups"), [(1, 256), (8, 32), (64, 4), (256, 1)])
def test_routed_gemms_take_tokens_times_top_k_over_local_experts(
    db: ModelDatabase, ep: int, groups: int
) -> None:
    gemms = {g.key: g for g in db.get("deepseek-v3").gemm_instances(4096, ep=ep)}
    assert len(gemms) == 8 + 12 + 1  # keys unique across blocks
    up = gemms["moe_layers.expert_up_proj"]
    assert (up.kind, up.M, up.K, up.N, up.groups, up.count) == (
        EXPERT,
        4096 * 8,
        7168,
        2048,
        groups,
        58,
    )
    shared = gemms["moe_layers.shared_down_proj"]
    assert (shared.kind, shared.M, shared.groups, shared.count) == (SHARED, 4096, 1, 58)
    router = gemms["moe_layers.router"]
    assert (router.M, router.N, router.groups) == (4096, 256, 1)
    assert gemms["dense_layers.gate_proj"].count == 3
    assert gemms["output.lm_head"].count == 1


def test_step_flops_of_the_routed_gemms_grow_with_top_k_not_with_experts(
    db: ModelDatabase,
) -> None:
    """Each token meets top_k experts: the routed FLOPs are the active, not total, ones."""
    for preset in (m for m in db if m.is_moe):
        routed = [g for g in preset.gemm_instances(1024) if g.kind is EXPERT]
        flops = sum(2 * g.M * g.K * g.N * g.count for g in routed)
        block = next(b for b in preset.blocks if b.is_moe)
        per_token = sum(2 * g.K * g.N for g in block.gemms if g.kind is EXPERT)
        assert flops == 1024 * block.top_k * per_token * block.layers


@pytest.mark.parametrize("tokens", [0, -1, True, 1.5, "4096", None, MAX_DIM + 1, 2**64])
def test_tokens_must_be_a_positive_int_up_to_max_dim(db: ModelDatabase, tokens: Any) -> None:
    with pytest.raises(ParameterError, match=r"^tokens: expected a positive integer") as info:
        db.get("llama3.1-8b").gemm_instances(tokens)
    assert repr(tokens)[:20] in str(info.value)
    assert isinstance(info.value, RooflineError) and isinstance(info.value, ValueError)


def test_routed_rows_above_max_dim_are_refused(db: ModelDatabase) -> None:
    tokens = MAX_DIM // 8 + 1
    db.get("llama3.1-8b").gemm_instances(tokens)  # fine for a dense model
    with pytest.raises(ParameterError, match=r"tokens x top_k .* top_k=8"):
        db.get("deepseek-v3").gemm_instances(tokens)


@pytest.mark.parametrize(
    ("name", "ep", "pattern"),
    [
        ("deepseek-v3", 0, r"^ep: expected a positive integer"),
        ("deepseek-v3", -8, r"^ep: expected a positive integer"),
        ("deepseek-v3", True, r"^ep: expected a positive integer"),
        ("deepseek-v3", 8.0, r"^ep: expected a positive integer"),
        ("deepseek-v3", 3, r"^ep: expected a divisor of the 256 experts of deepseek-v3"),
        ("deepseek-v3", 512, r"^ep: expected a divisor of the 256 experts"),
        ("llama4-scout", 32, r"^ep: expected a divisor of the 16 experts"),
        ("llama3.1-70b", 2, r"^ep: expert parallelism applies to MoE models"),
        ("llama3.1-70b", 0, r"^ep: expected a positive integer"),
    ],
)
def test_expert_parallelism_errors_name_the_parameter(
    db: ModelDatabase, name: str, ep: Any, pattern: str
) -> None:
    with pytest.raises(ParameterError, match=pattern) as info:
        db.get(name).gemm_instances(4096, ep=ep)
    assert f"received {ep!r}" in str(info.value) or f"received {ep}" in str(info.value)


# -- writing files ----------------------------------------------------------------------


def toml_value(value: Any) -> str:
    """``value`` as TOML (inline tables and arrays); strings escaped as JSON does."""
    if isinstance(value, str):  # JSON leaves DEL and C1 raw, which TOML refuses: escape them
        text = json.dumps(value, ensure_ascii=False)
        return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "nan" if math.isnan(value) else "inf"
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{toml_value(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + ", ".join(pairs) + " }"
    return repr(value)


def document(*models: dict[str, Any], top: dict[str, Any] | None = None) -> str:
    header = {"schema_version": 1, "model": list(models)} if top is None else top
    return "\n".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in header.items()) + "\n"


SOURCE = {"url": "https://example.org/config.json", "read_on": READ_ON, "note": "config"}
DENSE_MODEL = {
    "name": "tiny-dense",
    "display_name": "Tiny Dense",
    "notes": "a test model",
    "sources": [SOURCE],
    "block": [
        {
            "name": "layers",
            "layers": 2,
            "gemm": [
                {"name": "qkv_proj", "K": 256, "N": 768, "note": "fused"},
                {"name": "o_proj", "K": 256, "N": 256},
            ],
        },
        {"name": "output", "layers": 1, "gemm": [{"name": "lm_head", "K": 256, "N": 1000}]},
    ],
}
MOE_MODEL = {
    "name": "tiny-moe",
    "display_name": "Tiny MoE",
    "sources": [{**SOURCE, "commit": "36027d82d1ad"}],
    "block": [
        {
            "name": "layers",
            "layers": 4,
            "experts": 8,
            "top_k": 2,
            "gemm": [
                {"name": "router", "K": 256, "N": 8},
                {"name": "expert_up", "K": 256, "N": 512, "count": 2, "kind": "expert"},
                {"name": "expert_down", "K": 512, "N": 256, "kind": "expert"},
                {"name": "shared_up", "K": 256, "N": 512, "kind": "shared"},
            ],
        }
    ],
}


def edit(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with ``path`` (``block.0.gemm.1.K``) set; ``...`` deletes."""
    entry = copy.deepcopy(base)
    *parents, last = path.split(".")
    target: Any = entry
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(last) if last.isdigit() else last
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return entry


@pytest.fixture()
def write(tmp_path: Path):
    def _write(text: str | bytes, name: str = "models.toml") -> Path:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return _write


def refusal(path: Path) -> DataFileError:
    with pytest.raises(DataFileError) as info:
        load_models(path)
    message = str(info.value)
    assert not RAW_CONTROL.search(message), message
    count = len(info.value.problems) + info.value.unlisted
    assert message.startswith(f"{count} problem(s) in model presets:")
    assert "Traceback" not in message
    return info.value


def assert_refused(path: Path, entry: str | None, field: str | None) -> str:
    """The file is refused with a problem naming the file, ``entry`` and ``field``."""
    error = refusal(path)
    named = [p for p in error.problems if p.field == field and p.entry == entry]
    assert named, f"no problem on {entry!r}/{field!r}:\n{error}"
    line = str(named[0])
    assert line.startswith(str(path))
    if field is not None:
        assert f"key {field!r}" in line
    if entry is not None:
        assert entry in line
    return line


def test_user_models_load(write) -> None:
    db = load_models(write(document(DENSE_MODEL, MOE_MODEL)))
    assert db.names() == ["tiny-dense", "tiny-moe"]
    moe = db.get("tiny-moe")
    assert moe.sources[0].commit == "36027d82d1ad" and moe.experts == 8
    gemms = {g.key: g for g in moe.gemm_instances(100, ep=4)}
    assert (gemms["layers.expert_up"].M, gemms["layers.expert_up"].groups) == (200, 2)
    assert gemms["layers.expert_up"].count == 8  # count 2 x 4 layers
    assert gemms["layers.shared_up"].M == 100
    dense = db.get("tiny-dense")
    assert dense.blocks[0].gemms[1].kind is DENSE and dense.blocks[0].gemms[1].note == ""


D = "model 'tiny-dense' (#1)"
M = "model 'tiny-moe' (#1)"
BAD_MODEL_FIELDS = [
    # (base, path to edit, value, entry, field)
    (DENSE_MODEL, "nmae", "x", D, "nmae"),
    (DENSE_MODEL, "name", ..., "model #1", "name"),
    (DENSE_MODEL, "name", "Llama 3", "model #1", "name"),
    (DENSE_MODEL, "name", "../../etc", "model #1", "name"),
    (DENSE_MODEL, "name", "a/b", "model #1", "name"),
    (DENSE_MODEL, "name", "llama..8b", "model #1", "name"),
    (DENSE_MODEL, "name", "-x", "model #1", "name"),
    (DENSE_MODEL, "name", "x" * 65, "model #1", "name"),
    (DENSE_MODEL, "name", 7, "model #1", "name"),
    (DENSE_MODEL, "name", "", "model #1", "name"),
    (DENSE_MODEL, "display_name", ..., D, "display_name"),
    (DENSE_MODEL, "display_name", "<script>alert(1)</script>", D, "display_name"),
    (DENSE_MODEL, "display_name", "Tiny\x1b[31m red", D, "display_name"),
    (DENSE_MODEL, "display_name", "Tiny \u202eesreveR", D, "display_name"),
    (DENSE_MODEL, "display_name", "Tiny\u200bZero", D, "display_name"),
    (DENSE_MODEL, "display_name", " Tiny", D, "display_name"),
    (DENSE_MODEL, "display_name", "   ", D, "display_name"),
    (DENSE_MODEL, "display_name", "T" * 65, D, "display_name"),
    (DENSE_MODEL, "display_name", ["Tiny"], D, "display_name"),
    (DENSE_MODEL, "notes", "see `code`", D, "notes"),
    (DENSE_MODEL, "notes", "line one\nline two", D, "notes"),
    (DENSE_MODEL, "notes", "n" * 4001, D, "notes"),
    (DENSE_MODEL, "sources", ..., D, "sources"),
    (DENSE_MODEL, "sources", [], D, "sources"),
    (DENSE_MODEL, "sources", "https://example.org", D, "sources"),
    (DENSE_MODEL, "sources.0.url", "javascript:alert(1)", D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.url", "ftp://example.org/x", D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.url", "https://exa mple.org", D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.url", 'https://e.org/"onmouseover=x', D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.url", "https://", D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.url", ..., D, "sources[0].url"),
    (DENSE_MODEL, "sources.0.read_on", "2026-11-30", D, "sources[0].read_on"),
    (DENSE_MODEL, "sources.0.read_on", dt.datetime(2026, 11, 30, 1, 2), D, "sources[0].read_on"),
    (DENSE_MODEL, "sources.0.read_on", ..., D, "sources[0].read_on"),
    (DENSE_MODEL, "sources.0.commit", "XYZ", D, "sources[0].commit"),
    (DENSE_MODEL, "sources.0.note", "\x07bell", D, "sources[0].note"),
    (DENSE_MODEL, "sources.0.author", "me", D, "sources[0].author"),
    (DENSE_MODEL, "block", ..., D, "block"),
    (DENSE_MODEL, "block", [], D, "block"),
    (DENSE_MODEL, "block", {"name": "x"}, D, "block"),
    (DENSE_MODEL, "block.0.name", "Layers", D, "block[0].name"),
    (DENSE_MODEL, "block.0.name", "layers.q", D, "block[0].name"),
    (DENSE_MODEL, "block.0.name", "9layers", D, "block[0].name"),
    (DENSE_MODEL, "block.1.name", "layers", D, "block[1].name"),
    (DENSE_MODEL, "block.0.layers", 0, D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layers", -2, D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layers", 2.0, D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layers", True, D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layers", 10**6, D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layers", ..., D, "block[0].layers"),
    (DENSE_MODEL, "block.0.layer", 2, D, "block[0].layer"),
    (DENSE_MODEL, "block.0.gemm", [], D, "block[0].gemm"),
    (
        DENSE_MODEL,
        "block.0.gemm",
        [{"name": f"g{i}", "K": 1, "N": 1} for i in range(65)],
        D,
        "block[0].gemm",
    ),
    (DENSE_MODEL, "block.0.experts", 8, D, "block[0].experts"),
    (DENSE_MODEL, "block.0.top_k", 2, D, "block[0].top_k"),
    (DENSE_MODEL, "block.0.gemm.0.name", "q proj", D, "block[0].gemm[0].name"),
    (DENSE_MODEL, "block.0.gemm.1.name", "qkv_proj", D, "block[0].gemm[1].name"),
    (DENSE_MODEL, "block.0.gemm.0.K", 0, D, "block[0].gemm[0].K"),
    (DENSE_MODEL, "block.0.gemm.0.K", MAX_DIM + 1, D, "block[0].gemm[0].K"),
    (DENSE_MODEL, "block.0.gemm.0.K", "256", D, "block[0].gemm[0].K"),
    (DENSE_MODEL, "block.0.gemm.0.K", 256.0, D, "block[0].gemm[0].K"),
    (DENSE_MODEL, "block.0.gemm.0.K", ..., D, "block[0].gemm[0].K"),
    (DENSE_MODEL, "block.0.gemm.0.N", -768, D, "block[0].gemm[0].N"),
    (DENSE_MODEL, "block.0.gemm.0.N", float("nan"), D, "block[0].gemm[0].N"),
    (DENSE_MODEL, "block.0.gemm.0.k", 256, D, "block[0].gemm[0].k"),
    (DENSE_MODEL, "block.0.gemm.0.count", 0, D, "block[0].gemm[0].count"),
    (DENSE_MODEL, "block.0.gemm.0.count", 65, D, "block[0].gemm[0].count"),
    (DENSE_MODEL, "block.0.gemm.0.kind", "expertt", D, "block[0].gemm[0].kind"),
    (DENSE_MODEL, "block.0.gemm.0.kind", 3, D, "block[0].gemm[0].kind"),
    (DENSE_MODEL, "block.0.gemm.0.kind", "shared", D, "block[0].gemm[0].kind"),
    (DENSE_MODEL, "block.0.gemm.0.note", "<b>bold</b>", D, "block[0].gemm[0].note"),
    (MOE_MODEL, "block.0.experts", ..., M, "block[0].experts"),
    (MOE_MODEL, "block.0.top_k", ..., M, "block[0].top_k"),
    (MOE_MODEL, "block.0.experts", 1, M, "block[0].experts"),
    (MOE_MODEL, "block.0.experts", 10**6, M, "block[0].experts"),
    (MOE_MODEL, "block.0.top_k", 0, M, "block[0].top_k"),
    (MOE_MODEL, "block.0.top_k", 9, M, "block[0].top_k"),
    (MOE_MODEL, "block.0.top_k", "2", M, "block[0].top_k"),
]


@pytest.mark.parametrize(
    ("base", "path", "value", "entry", "field"),
    BAD_MODEL_FIELDS,
    ids=[f"{b['name']}:{p}={str(v)[:20]!r}" for b, p, v, _, _ in BAD_MODEL_FIELDS],
)
def test_each_lint_rule_names_file_entry_and_field(
    write, base: dict[str, Any], path: str, value: Any, entry: str, field: str
) -> None:
    assert_refused(write(document(edit(base, path, value))), entry, field)


def test_unknown_keys_suggest_the_nearest(write) -> None:
    line = assert_refused(write(document(edit(DENSE_MODEL, "nmae", "x"))), D, "nmae")
    assert "did you mean 'name'?" in line
    kind = edit(DENSE_MODEL, "block.0.gemm.0.kind", "expertt")
    line = assert_refused(write(document(kind)), D, "block[0].gemm[0].kind")
    assert "did you mean 'expert'?" in line and "one of dense, expert, shared" in line


def test_moe_blocks_must_agree_on_experts(write) -> None:
    second = copy.deepcopy(MOE_MODEL["block"][0]) | {"name": "more", "experts": 16}
    model = edit(MOE_MODEL, "block", [MOE_MODEL["block"][0], second])
    line = assert_refused(write(document(model)), M, "block")
    assert "experts [8, 16]" in line


def test_too_many_blocks_or_models(write) -> None:
    blocks = [edit(DENSE_MODEL["block"][1], "name", f"b{i}") for i in range(17)]
    assert_refused(write(document(edit(DENSE_MODEL, "block", blocks))), D, "block")
    models = [edit(DENSE_MODEL, "name", f"m{i}") for i in range(R.MAX_MODELS + 1)]
    models = [edit(m, "display_name", m["name"]) for m in models]
    assert_refused(write(document(*models)), None, "model")


@pytest.mark.parametrize(
    ("second", "field", "what"),
    [
        ({"name": "tiny-dense", "display_name": "Other"}, "name", "name"),
        ({"name": "tiny.dense", "display_name": "Other"}, "name", "page slug"),
        ({"name": "tiny-other", "display_name": "TINY DENSE"}, "display_name", "display_name"),
    ],
)
def test_duplicate_models_are_refused(write, second: dict[str, str], field: str, what: str) -> None:
    other = DENSE_MODEL | second
    entry = f"model {second['name']!r} (#2)"
    line = assert_refused(write(document(DENSE_MODEL, other)), entry, field)
    assert f"the same {what} as model 'tiny-dense' (#1)" in line


@pytest.mark.parametrize(
    ("top", "field"),
    [
        ({"schema_version": 2, "model": [DENSE_MODEL]}, "schema_version"),
        ({"schema_version": "1", "model": [DENSE_MODEL]}, "schema_version"),
        ({"model": [DENSE_MODEL]}, "schema_version"),
        ({"schema_version": 1}, "model"),
        ({"schema_version": 1, "model": []}, "model"),
        ({"schema_version": 1, "model": [DENSE_MODEL], "models": []}, "models"),
        ({"schema_version": 1, "model": "tiny"}, "model"),
        ({"schema_version": 1, "model": [DENSE_MODEL, 3]}, "model"),
    ],
)
def test_top_level_problems(write, top: dict[str, Any], field: str) -> None:
    assert_refused(write(document(top=top)), None, field)


def test_every_problem_of_a_file_is_reported_together(write) -> None:
    one = edit(DENSE_MODEL, "block.0.gemm.0.K", 0)
    two = edit(edit(MOE_MODEL, "display_name", "<i>"), "block.0.top_k", 99)
    error = refusal(write(document(one, two)))
    fields = {(p.entry, p.field) for p in error.problems}
    assert (D, "block[0].gemm[0].K") in fields
    assert ("model 'tiny-moe' (#2)", "display_name") in fields
    assert ("model 'tiny-moe' (#2)", "block[0].top_k") in fields


def test_a_flood_of_problems_is_cut_short(write) -> None:
    gemms = [{"name": f"g{i}", "K": 0, "N": 0} for i in range(64)]
    models = [
        edit(
            edit(edit(DENSE_MODEL, "name", f"m{i}"), "display_name", f"M{i}"), "block.0.gemm", gemms
        )
        for i in range(4)
    ]
    error = refusal(write(document(*models)))
    assert len(error.problems) == R.MAX_PROBLEMS
    assert error.unlisted == 4 * 128 - R.MAX_PROBLEMS
    assert error.report_lines()[-1].endswith(
        f"{4 * 128 - R.MAX_PROBLEMS} more problem(s), not shown"
    )


def test_a_hostile_name_is_quoted_escaped_not_used_as_the_entry(write) -> None:
    model = edit(DENSE_MODEL, "name", "evil\x1b]0;pwned\x07")
    line = assert_refused(write(document(model)), "model #1", "name")
    assert "\\x1b" in line and "\x1b" not in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("schema_version = 1\n[[model]\n", "valid TOML"),
        ("schema_version = 1\nmodel = " + "[" * 2000 + "]" * 2000 + "\n", "valid TOML"),
        (b"schema_version = 1\n# \xff\xfe not utf-8\n", "UTF-8 text"),
        (b"\x00\x01\x02binary", "valid TOML"),
        ("x = " + "9" * 5000 + "\n", "valid TOML"),
    ],
)
def test_unreadable_text_is_one_problem_naming_the_file(
    write, content: str | bytes, expected: str
) -> None:
    path = write(content)
    error = refusal(path)
    assert len(error.problems) == 1
    problem = error.problems[0]
    assert problem.file == str(path) and problem.expected == expected
    assert str(problem).startswith(str(path))


def test_missing_directory_and_huge_files_are_refused(write, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # opening it to read would block until a writer came
    for path, expected in (
        (tmp_path / "absent.toml", "a readable model-preset file"),
        (tmp_path, "a model-preset file that is a regular file"),
        (fifo, "a model-preset file that is a regular file"),
        (Path("/dev/zero"), "a model-preset file that is a regular file"),
        (write("# " + "x" * R.MAX_FILE_BYTES + "\n", "huge.toml"), "a file of at most"),
    ):
        error = refusal(path)
        assert len(error.problems) == 1 and error.problems[0].file == str(path)
        assert error.problems[0].expected.startswith(expected)


def test_parse_models_names_the_given_file() -> None:
    with pytest.raises(DataFileError) as info:
        parse_models("schema_version = 1\n", "my-models.toml")
    assert str(info.value.problems[0]).startswith("my-models.toml: key 'model'")


# -- any value anywhere: a problem list, never a traceback --------------------------------

VALUES = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=40)
    | st.dates(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
PATHS = [
    "name",
    "display_name",
    "notes",
    "sources",
    "sources.0",
    "sources.0.url",
    "sources.0.read_on",
    "sources.0.commit",
    "block",
    "block.0",
    "block.0.name",
    "block.0.layers",
    "block.0.experts",
    "block.0.top_k",
    "block.0.gemm",
    "block.0.gemm.0",
    "block.0.gemm.1.K",
    "block.0.gemm.1.N",
    "block.0.gemm.1.count",
    "block.0.gemm.1.kind",
    "block.0.gemm.1.note",
]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([DENSE_MODEL, MOE_MODEL]), st.sampled_from(PATHS), VALUES)
def test_any_value_at_any_field_is_linted_or_loaded(
    base: dict[str, Any], path: str, value: Any
) -> None:
    text = document(edit(base, path, value))
    try:
        db = parse_models(text, "h.toml")
    except DataFileError as error:
        assert not RAW_CONTROL.search(str(error))
        assert all(p.file == "h.toml" for p in error.problems)
        return
    (preset,) = db.models
    assert re.fullmatch(r"[a-z0-9]+([.-][a-z0-9]+)*", preset.name)
    assert not re.search(r"[<>`\x00-\x1f\x7f-\x9f\u202a-\u202e]", preset.display_name)
    for instance in preset.gemm_instances(64):
        assert 1 <= instance.K <= MAX_DIM and 1 <= instance.N <= MAX_DIM and instance.count >= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_linted_never_a_traceback(text: str) -> None:
    try:
        parse_models(text, "t.toml")
    except DataFileError as error:
        assert not RAW_CONTROL.search(str(error))
