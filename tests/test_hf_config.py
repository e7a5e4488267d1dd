"""Hugging Face configs (issue #22): every linear GEMM derived from a transformers config.json.

The configs in ``tests/data/hf/`` are written from public sources (each file's ``_source``
key names the URL, commit and date read). Every bundled preset with a public config gives
the same GEMMs when derived from it; three models that are not presets (Mistral 7B,
Mixtral 8x7B, Qwen3 8B) are checked layer by layer against their config's numbers; the
interleaving rules (Llama 4, Qwen3-MoE, DeepSeek-V3) and every error path are covered, and
``roofline model --hf-config`` and a preset file's ``hf_config`` key use the same derivation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from roofline.analysis.policy import plan_model
from roofline.cli import main
from roofline.presets import LinearKind, load_models
from roofline.presets.hf import (
    SUPPORTED_TYPES,
    HfConfigError,
    load_hf_config,
    preset_from_hf_config,
    read_hf_config,
)

DATA = Path(__file__).resolve().parent / "data" / "hf"
PRESETS_WITH_CONFIG = [
    "llama3.1-8b",
    "llama3.1-70b",
    "llama3.1-405b",
    "llama4-scout",
    "deepseek-v3",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "gpt-oss-120b",
]
NOT_PRESETS = ["mistral-7b", "mixtral-8x7b", "qwen3-8b"]


def _config(name: str) -> dict:
    return read_hf_config(DATA / f"{name}.json")


def _shapes(preset) -> dict[str, tuple[int, int, str, int]]:
    """``block.gemm`` -> (K, N, kind, layers) of every GEMM."""
    return {
        f"{b.name}.{g.name}": (g.K, g.N, g.kind.value, b.layers * g.count)
        for b in preset.blocks
        for g in b.gemms
    }


def test_every_config_names_its_public_source():
    for path in sorted(DATA.glob("*.json")):
        source = json.loads(path.read_text())["_source"]
        assert source["url"].startswith("https://github.com/"), path
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), path
        assert source["commit"] in source["url"], path


def test_every_bundled_preset_family_has_a_config():
    bundled = load_models()
    assert set(PRESETS_WITH_CONFIG) == set(bundled.names())


@pytest.mark.parametrize("name", PRESETS_WITH_CONFIG)
def test_derived_gemms_equal_the_bundled_preset(name):
    preset = load_models().get(name)
    derived = load_hf_config(DATA / f"{name}.json", name=name)
    for tokens in (1, 16384):
        assert derived.gemm_instances(tokens) == preset.gemm_instances(tokens)
    if preset.is_moe:
        assert derived.gemm_instances(8192, ep=8) == preset.gemm_instances(8192, ep=8)
    assert [(b.name, b.layers, b.experts, b.top_k) for b in derived.blocks] == [
        (b.name, b.layers, b.experts, b.top_k) for b in preset.blocks
    ]


def test_mistral_7b_dense_gqa():
    shapes = _shapes(load_hf_config(DATA / "mistral-7b.json"))
    # hidden 4096, 32 heads of 4096 / 32 = 128, 8 KV heads, intermediate 14336, vocab 32000
    assert shapes == {
        "layers.q_proj": (4096, 4096, "dense", 32),
        "layers.k_proj": (4096, 1024, "dense", 32),
        "layers.v_proj": (4096, 1024, "dense", 32),
        "layers.o_proj": (4096, 4096, "dense", 32),
        "layers.gate_proj": (4096, 14336, "dense", 32),
        "layers.up_proj": (4096, 14336, "dense", 32),
        "layers.down_proj": (14336, 4096, "dense", 32),
        "output.lm_head": (4096, 32000, "dense", 1),
    }


def test_mixtral_8x7b_experts_top2():
    preset = load_hf_config(DATA / "mixtral-8x7b.json")
    (layers, _output) = preset.blocks
    assert (layers.name, layers.layers, layers.experts, layers.top_k) == ("layers", 32, 8, 2)
    shapes = _shapes(preset)
    assert shapes["layers.router"] == (4096, 8, "dense", 32)
    assert shapes["layers.expert_gate_proj"] == (4096, 14336, "expert", 32)
    assert shapes["layers.expert_down_proj"] == (14336, 4096, "expert", 32)
    assert not any(kind == "shared" for _, _, kind, _ in shapes.values())
    instance = {i.key: i for i in preset.gemm_instances(4096, ep=2)}["layers.expert_up_proj"]
    assert (instance.M, instance.groups) == (4096 * 2, 4)


def test_qwen3_8b_head_dim_from_the_config():
    shapes = _shapes(load_hf_config(DATA / "qwen3-8b.json"))
    # 32 heads x head_dim 128 (given), 8 KV heads; 36 layers; intermediate 12288
    assert shapes["layers.q_proj"] == (4096, 4096, "dense", 36)
    assert shapes["layers.k_proj"] == (4096, 1024, "dense", 36)
    assert shapes["layers.down_proj"] == (12288, 4096, "dense", 36)
    assert shapes["output.lm_head"] == (4096, 151936, "dense", 1)


def test_head_dim_differs_from_hidden_over_heads():
    config = _config("qwen3-30b-a3b")  # 32 heads x 128 = 4096 > hidden 2048
    shapes = _shapes(preset_from_hf_config(config))
    assert shapes["layers.q_proj"][:2] == (2048, 4096)
    assert shapes["layers.o_proj"][:2] == (4096, 2048)


def test_tied_embeddings_keep_the_output_gemm():
    config = dict(_config("qwen3-8b"), tie_word_embeddings=True)
    (lm_head,) = preset_from_hf_config(config).blocks[-1].gemms
    assert (lm_head.K, lm_head.N) == (4096, 151936)
    assert "tied to the input embeddings" in lm_head.note


def test_llama4_interleaved_moe_layers():
    config = _config("llama4-scout")
    config["text_config"] = dict(config["text_config"], interleave_moe_layer_step=2)
    preset = preset_from_hf_config(config, name="llama4-interleaved")
    dense, moe, _ = preset.blocks
    assert (dense.name, dense.layers, moe.name, moe.layers) == (
        "dense_layers",
        24,
        "moe_layers",
        24,
    )
    assert {g.name: g.N for g in dense.gemms}["gate_proj"] == 16384  # intermediate_size_mlp
    kinds = {g.name: g.kind for g in moe.gemms}
    assert kinds["shared_up_proj"] is LinearKind.SHARED
    assert kinds["expert_up_proj"] is LinearKind.EXPERT
    assert "MoE layers (0-based): 1, 3, 5" in preset.notes
    listed = dict(config["text_config"], moe_layers=[0, 47])
    preset = preset_from_hf_config(dict(config, text_config=listed))
    assert [b.layers for b in preset.blocks] == [46, 2, 1]


def test_qwen3_moe_dense_layers():
    config = dict(_config("qwen3-30b-a3b"), mlp_only_layers=[0, 1], decoder_sparse_step=1)
    dense, moe, _ = preset_from_hf_config(config).blocks
    assert (dense.layers, moe.layers) == (2, 46)
    assert {g.name: g.N for g in dense.gemms}["up_proj"] == 6144  # intermediate_size
    config = dict(_config("qwen3-30b-a3b"), decoder_sparse_step=2)
    dense, moe, _ = preset_from_hf_config(config).blocks
    assert (dense.layers, moe.layers) == (24, 24)


def test_deepseek_mla_without_query_lora_and_more_shared_experts():
    config = dict(_config("deepseek-v3"), q_lora_rank=None, n_shared_experts=2)
    dense, moe, _ = preset_from_hf_config(config).blocks
    names = [g.name for g in moe.gemms]
    assert "q_proj" in names and "q_a_proj" not in names
    q = {g.name: g for g in moe.gemms}["q_proj"]
    assert (q.K, q.N) == (7168, 128 * (128 + 64))
    assert {g.name: g.N for g in moe.gemms}["shared_up_proj"] == 2 * 2048
    assert dense.layers == 3


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"model_type": "phi3"}, "model_type"),
        ({"model_type": None}, "model_type"),
        ({"hidden_size": None}, "hidden_size"),
        ({"num_hidden_layers": "32"}, "num_hidden_layers"),
        ({"num_key_value_heads": 5}, "num_key_value_heads"),
        ({"intermediate_size": 0}, "intermediate_size"),
        ({"tie_word_embeddings": "no"}, "tie_word_embeddings"),
        ({"vocab_size": 2**31}, "vocab_size"),
    ],
)
def test_a_broken_config_is_one_line_naming_the_key(change, key):
    config = {k: v for k, v in {**_config("qwen3-8b"), **change}.items() if v is not None}
    with pytest.raises(HfConfigError) as info:
        preset_from_hf_config(config, file="my/config.json")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"my/config.json: {key}:")
    if key == "model_type":
        assert ", ".join(SUPPORTED_TYPES) in message


@pytest.mark.parametrize("name", ["deepseek-v3", "llama4-scout", "mixtral-8x7b"])
def test_moe_configs_name_their_missing_keys(name):
    config = _config(name)
    keys = {
        "deepseek-v3": "n_routed_experts",
        "llama4-scout": "text_config",
        "mixtral-8x7b": "num_local_experts",
    }
    config.pop(keys[name])
    with pytest.raises(HfConfigError, match=f": {keys[name]}: "):
        preset_from_hf_config(config, file="c.json")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_cli_model_hf_config_json_equals_the_plan(capsys):
    path = DATA / "mixtral-8x7b.json"
    argv = ["model", "--hf-config", str(path), "--gpu", "NVIDIA H100", "--tokens", "8192"]
    code, out, _ = _run(capsys, *argv, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    plan = plan_model(load_hf_config(path), "NVIDIA H100", 8192)
    assert doc["model"]["name"] == "mixtral-8x7b"
    assert [g["key"] for g in doc["gemms"]] == [g.instance.key for g in plan.gemms]
    assert doc["mix"]["total_s"] == pytest.approx(plan.mix().time.total_s, rel=1e-12)


def test_cli_model_hf_config_table_and_name(capsys):
    argv = [
        "model",
        "mine",
        "--hf-config",
        str(DATA / "qwen3-8b.json"),
        "--gpu",
        "NVIDIA B200",
        "--tokens",
        "4096",
    ]
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    assert out.startswith("mine (mine) on NVIDIA B200")
    assert "lm_head" in out


@pytest.mark.parametrize(
    "text",
    ['{"model_type": "phi3"}', '{"model_type": "llama"}', "{", "[1, 2]", "\xff"],
)
def test_cli_broken_config_is_one_error_line_exit_2(capsys, tmp_path, text):
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("latin-1"))
    argv = ["model", "--hf-config", str(path), "--gpu", "NVIDIA H100", "--tokens", "8"]
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"error: {path}")


def test_cli_hf_config_and_models_together_are_refused(capsys):
    argv = [
        "model",
        "--hf-config",
        str(DATA / "qwen3-8b.json"),
        "--models",
        str(DATA / "qwen3-8b.json"),
        "--gpu",
        "NVIDIA H100",
        "--tokens",
        "8",
    ]
    code, _, err = _run(capsys, *argv)
    assert code == 2 and "--hf-config and --models" in err


PRESET_FILE = """schema_version = 1
[[model]]
name = "qwen3-8b"
display_name = "Qwen3 8B"
hf_config = {path}
{extra}
[[model.sources]]
url = "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json"
read_on = 2026-12-02
"""


def _preset_file(tmp_path: Path, path: str, extra: str = "") -> Path:
    (tmp_path / "configs").mkdir(exist_ok=True)
    (tmp_path / "configs" / "qwen3-8b.json").write_text((DATA / "qwen3-8b.json").read_text())
    file = tmp_path / "models.toml"
    file.write_text(PRESET_FILE.format(path=json.dumps(path), extra=extra))
    return file


def test_preset_file_hf_config_key(tmp_path):
    database = load_models(_preset_file(tmp_path, "configs/qwen3-8b.json"))
    preset = database.get("qwen3-8b")
    assert preset.display_name == "Qwen3 8B"
    assert _shapes(preset) == _shapes(load_hf_config(DATA / "qwen3-8b.json"))


@pytest.mark.parametrize("path", ["../qwen3-8b.json", "/etc/passwd", "", "configs"])
def test_preset_file_hf_config_stays_in_its_folder(tmp_path, path):
    with pytest.raises(Exception) as info:
        load_models(_preset_file(tmp_path, path))
    assert "hf_config" in str(info.value)


def test_preset_file_hf_config_problems_are_named(tmp_path):
    file = _preset_file(tmp_path, "configs/missing.json")
    with pytest.raises(Exception, match=r"hf_config.*missing\.json"):
        load_models(file)
    both = "[[model.block]]\nname = 'layers'\nlayers = 1\n"
    file = _preset_file(tmp_path, "configs/qwen3-8b.json", both)
    with pytest.raises(Exception, match="either hf_config or"):
        load_models(file)


def test_the_public_api_is_all_and_documented():
    import inspect

    import roofline

    assert len(set(roofline.__all__)) == len(roofline.__all__)
    for name in roofline.__all__:
        value = getattr(roofline, name)
        if inspect.isfunction(value) or inspect.isclass(value):
            assert inspect.getdoc(value), name
    for name in (
        "evaluate",
        "load_specs",
        "load_models",
        "load_hf_config",
        "validate",
        "calibrate",
        "get_specs",
        "get_gemm_time_sympy",
        "plan_model",
    ):
        assert name in roofline.__all__
