"""``roofline model`` and ``roofline models`` (issue #13): a whole model's linear layers.

Every case drives ``roofline.cli.main`` in-process: the table, CSV and JSON against
:func:`roofline.analysis.policy.plan_model`, the calibrated model and its notes, expert parallelism,
every error path (one ``error:`` message, exit 2, no traceback) and a hostile preset file.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from roofline.analysis.policy import BF16_NAME, plan_model
from roofline.calibration.params import Basis
from roofline.cli import main
from roofline.cli.model_table import LINE_WIDTH
from roofline.evaluate import calibration_of, resolve_specs
from roofline.presets import load_models

ROOT = Path(__file__).resolve().parent.parent
ACCEPTANCE = ["model", "llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16384"]
LLAMA_GEMMS = [
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
    "lm_head",
]
# C0 controls but tab and newline, DEL, C1: what may never reach a terminal.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert CONTROL.search(out + err) is None, repr(out + err)
    return code, out, err


def refused(capsys, *argv: str) -> str:
    """Run; assert exit 2, nothing on stdout, an ``error:`` message; return stderr."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", (code, out, err)
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, err
    return err


def model_json(capsys, *argv: str) -> dict:
    code, out, _ = run(capsys, *argv, "--format", "json")
    assert code == 0
    return json.loads(out)


def model_csv(capsys, *argv: str) -> list[dict[str, str]]:
    code, out, _ = run(capsys, *argv, "--format", "csv")
    assert code == 0
    return list(csv.DictReader(io.StringIO(out)))


# -- the acceptance command ------------------------------------------------------------


def test_acceptance_command_prints_the_per_gemm_table_and_totals(capsys):
    code, out, err = run(capsys, *ACCEPTANCE)
    assert code == 0 and "warning" not in err and "error" not in err
    lines = out.splitlines()
    assert lines[0].startswith("Llama 3.1 70B (llama3.1-70b) on NVIDIA B200, training: 16384")
    assert "ep 1" in lines[0] and "torchao's model" in out and "fusion: off" in out
    assert all(len(line) <= LINE_WIDTH for line in lines), max(lines, key=len)
    plan = plan_model("llama3.1-70b", "NVIDIA B200", 16384)
    head = next(i for i, line in enumerate(lines) if line.startswith("GEMM "))
    assert lines[head].split() == [
        "GEMM",
        "kind",
        "M",
        "K",
        "N",
        "G",
        "count",
        "bf16",
        "ms",
        "best",
        "ms",
        "speedup",
    ]
    rows = [line.split() for line in lines[head + 1 :] if line.startswith("  ")][: len(LLAMA_GEMMS)]
    assert [row[0] for row in rows] == LLAMA_GEMMS
    for row, gemm in zip(rows, plan.gemms, strict=True):
        inst = gemm.instance
        assert row[1:7] == ["dense", str(inst.M), str(inst.K), str(inst.N), "1", str(inst.count)]
        assert row[8] == gemm.best and row[10] == f"{gemm.speedup(gemm.best):.2f}x"
    assert rows[0][1:5] == ["dense", "16384", "8192", "8192"]  # q_proj, 80 layers
    assert rows[0][6] == "80" and rows[-1][6] == "1"  # lm_head once
    totals = {line.split()[0]: line.split() for line in lines if line.startswith("  ")}
    for total in (plan.baseline, *plan.singles()):
        assert totals[total.recipe][4] == f"{total.speedup:.2f}x", total.recipe
    mix = next(line for line in lines if line.startswith("  best per-GEMM mix"))
    assert mix.split()[6] == f"{plan.mix().speedup:.2f}x"
    assert totals[plan.best_single().recipe][-2:] == ["<-", "best"]
    assert "GEMMs a recipe cannot run" in out


# -- csv and json agree with the policy ------------------------------------------------


def test_json_is_the_whole_plan(capsys):
    doc = model_json(capsys, *ACCEPTANCE)
    plan = plan_model("llama3.1-70b", "NVIDIA B200", 16384)
    assert (doc["format"], doc["version"], doc["gpu"], doc["tokens"], doc["ep"]) == (
        "roofline-model",
        1,
        "NVIDIA B200",
        16384,
        1,
    )
    assert doc["model_kind"] == "torchao" and doc["assumed_parameters"] == []
    assert doc["candidates"]["recipes"] == list(plan.recipes)
    assert doc["model"]["sources"][0]["url"].startswith("https://")
    for entry, gemm in zip(doc["gemms"], plan.gemms, strict=True):
        assert entry["key"] == gemm.instance.key and entry["best"] == gemm.best
        assert entry["excluded"] == gemm.excluded
        for name, time in gemm.times.items():
            assert entry["times"][name]["forward_s"] == time.forward_s
            assert entry["times"][name]["backward_s"] == time.backward_s
            assert entry["times"][name]["speedup"] == pytest.approx(gemm.speedup(name))
    for total in (plan.baseline, *plan.singles()):
        assert doc["totals"][total.recipe]["total_s"] == pytest.approx(total.time.total_s)
        assert doc["totals"][total.recipe]["fallbacks"] == list(total.fallbacks)
    assert doc["mix"]["total_s"] == pytest.approx(plan.mix().time.total_s, rel=1e-12)
    assert doc["mix"]["recipes"] == {g.instance.key: g.best for g in plan.gemms}
    assert doc["best_single"] == plan.best_single().recipe


def test_csv_has_a_row_per_gemm_and_recipe_and_the_totals(capsys):
    rows = model_csv(
        capsys, "model", "deepseek-v3", "--gpu", "NVIDIA B200", "--tokens", "16384", "--ep", "8"
    )
    plan = plan_model("deepseek-v3", "NVIDIA B200", 16384, ep=8)
    names = [BF16_NAME, *plan.recipes]
    gemm_rows = [r for r in rows if r["row"] == "gemm"]
    assert len(gemm_rows) == len(plan.gemms) * len(names)
    for i, gemm in enumerate(plan.gemms):
        for row, name in zip(gemm_rows[i * len(names) :], names, strict=False):
            assert (row["gemm"], row["recipe"]) == (gemm.instance.key, name)
            assert int(row["groups"]) == gemm.instance.groups
            assert float(row["total_s"]) == gemm.time_in(name).total_s
            assert float(row["speedup"]) == pytest.approx(gemm.speedup(name))
            assert row["runs_in"] == (name if name in gemm.times else BF16_NAME)
            assert row["reason"] == gemm.excluded.get(name, "")
            assert row["best"] == str(gemm.best == name).lower()
    totals = {r["recipe"]: r for r in rows if r["row"] == "total"}
    assert list(totals) == [*names, "mix"]
    for total in plan.singles():
        assert float(totals[total.recipe]["forward_s"]) == pytest.approx(total.time.forward_s)
        assert int(totals[total.recipe]["fallbacks"]) == len(total.fallbacks)
    assert float(totals["mix"]["speedup"]) == pytest.approx(plan.mix().speedup)
    # blockwise cannot run DeepSeek's kv_a_proj_with_mqa (N = 576): the row says so
    kv = [r for r in gemm_rows if r["gemm"].endswith("kv_a_proj_with_mqa")]
    blockwise = [r for r in kv if r["recipe"] == "blockwise"]
    assert blockwise and all(r["runs_in"] == "bf16" and "576" in r["reason"] for r in blockwise)


def test_output_file(capsys, tmp_path):
    target = tmp_path / "out" / "plan.json"
    code, out, _ = run(capsys, *ACCEPTANCE, "--format", "json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text("utf-8"))["format"] == "roofline-model"


# -- the calibrated model --------------------------------------------------------------


def test_calibrated_differs_and_notes_assumed_parameters(capsys):
    default = model_json(capsys, *ACCEPTANCE)
    code, out, err = run(capsys, *ACCEPTANCE, "--calibrated", "--format", "json")
    assert code == 0
    calibrated = json.loads(out)
    assert calibrated["model_kind"] == "calibrated"
    assert calibrated["totals"]["bf16"]["total_s"] != default["totals"]["bf16"]["total_s"]
    plan = plan_model("llama3.1-70b", "NVIDIA B200", 16384, calibrated=True)
    assert calibrated["totals"]["nvfp4"]["total_s"] == pytest.approx(
        plan.total("nvfp4").time.total_s
    )
    params = calibration_of(resolve_specs(None)["NVIDIA B200"])
    assumed = calibrated["assumed_parameters"]
    assert assumed, "B200's calibration assumes some cast efficiencies"
    assert all(params.values[key].basis is Basis.ASSUMED for key in assumed)
    assert f"note: NVIDIA B200: calibrated {', '.join(assumed)} assumed" in err
    _, table, table_err = run(capsys, *ACCEPTANCE, "--calibrated")
    assert "the calibrated model" in table and "assumed, not measured" in table
    assert "note:" not in table_err  # the table's header says it once


def test_another_calibration_file_changes_the_numbers(capsys, tmp_path):
    text = (ROOT / "roofline" / "data" / "calibration.toml").read_text("utf-8")
    scaled = re.sub(r"^value = (\S+)", lambda m: f"value = {float(m[1]) * 0.6!r}", text, flags=re.M)
    path = tmp_path / "calibration.toml"
    path.write_text(scaled, "utf-8")
    bundled = model_json(capsys, *ACCEPTANCE, "--calibrated")
    other = model_json(capsys, *ACCEPTANCE, "--calibrated", "--calibration", str(path))
    assert other["totals"]["mxfp8_cublas"] != bundled["totals"]["mxfp8_cublas"]
    err = refused(capsys, *ACCEPTANCE, "--calibration", str(path))
    assert "--calibration FILE needs --calibrated" in err


# -- expert parallelism, recipes, hypothetical estimates -------------------------------


def test_ep_for_a_moe_model_changes_the_groups(capsys):
    args = ("model", "qwen3-30b-a3b", "--gpu", "NVIDIA B200", "--tokens", "8192")
    one, eight = model_json(capsys, *args), model_json(capsys, *args, "--ep", "8")
    experts_one = [g for g in one["gemms"] if g["kind"] == "expert"]
    experts_eight = [g for g in eight["gemms"] if g["kind"] == "expert"]
    assert experts_one and [g["groups"] for g in experts_one] == [128] * len(experts_one)
    assert [g["groups"] for g in experts_eight] == [16] * len(experts_eight)
    assert [g["M"] for g in experts_eight] == [8192 * 8] * len(experts_eight)  # top-8
    # 128 experts' weights to cast per device against 16: the mxfp8 expert GEMMs get faster
    one_s, eight_s = (
        g[0]["times"]["mxfp8_cublas"]["total_s"] for g in (experts_one, experts_eight)
    )
    assert eight_s < one_s
    dense = [g for g in eight["gemms"] if g["kind"] == "dense"]
    assert all(g["groups"] == 1 and g["M"] == 8192 for g in dense)
    _, out, _ = run(capsys, *args, "--ep", "8")
    assert "16 of 128 experts per device, top-8" in out and "ep 8" in out.splitlines()[0]


def test_recipes_restrict_the_candidates(capsys):
    doc = model_json(capsys, *ACCEPTANCE, "--recipes", "mxfp4, tensorwise,mxfp4_cutlass")
    assert doc["candidates"]["recipes"] == ["mxfp4_cutlass", "tensorwise"]  # alias, once
    assert set(doc["totals"]) == {"bf16", "mxfp4_cutlass", "tensorwise"}
    assert doc["candidates"]["chosen"] == "given by --recipes"


def test_a_recipe_the_gpu_cannot_run_falls_back_everywhere(capsys):
    args = ("model", "llama3.1-8b", "--gpu", "NVIDIA H100", "--tokens", "8192")
    doc = model_json(capsys, *args, "--recipes", "nvfp4")
    assert len(doc["totals"]["nvfp4"]["fallbacks"]) == len(doc["gemms"])
    assert doc["totals"]["nvfp4"]["speedup"] == 1.0
    _, out, _ = run(capsys, *args, "--recipes", "nvfp4")
    assert "nvfp4: layers.q_proj" in out


def test_include_hypothetical_lets_grouped_estimates_compete(capsys):
    args = ("model", "deepseek-v3", "--gpu", "NVIDIA B200", "--tokens", "16384", "--ep", "8")
    native, with_h = model_json(capsys, *args), model_json(capsys, *args, "--include-hypothetical")
    expert = "moe_layers.expert_up_proj"
    native_gemm = next(g for g in native["gemms"] if g["key"] == expert)
    h_gemm = next(g for g in with_h["gemms"] if g["key"] == expert)
    assert "mxfp4_cutlass" in native_gemm["excluded"]
    assert "mxfp4_cutlass" in h_gemm["times"] and "mxfp4_cutlass" not in h_gemm["excluded"]
    assert set(native["candidates"]["recipes"]) < set(with_h["candidates"]["recipes"])
    _, out, _ = run(capsys, *args, "--include-hypothetical")
    assert all(len(line) <= LINE_WIDTH for line in out.splitlines())
    assert "(grouped GEMMs hypothetical)" in out


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_every_preset_in_every_format(capsys, fmt):
    for preset in load_models():
        code, out, _ = run(
            capsys,
            "model",
            preset.name,
            "--gpu",
            "NVIDIA B200",
            "--tokens",
            "4096",
            "--format",
            fmt,
        )
        assert code == 0 and (preset.name in out or fmt == "csv")
        if fmt == "table":
            assert all(len(line) <= LINE_WIDTH for line in out.splitlines()), preset.name


def test_a_variant_gpu_name_warns_once(capsys):
    code, out, err = run(
        capsys, "model", "llama3.1-8b", "--gpu", "NVIDIA B200 Foo", "--tokens", "1024"
    )
    assert code == 0 and "on NVIDIA B200," in out
    assert len([line for line in err.splitlines() if line.startswith("warning: ")]) == 1


# -- the presets list ------------------------------------------------------------------


def test_models_lists_every_preset_with_its_sources(capsys):
    code, out, _ = run(capsys, "models")
    assert code == 0
    for preset in load_models():
        row = next(line for line in out.splitlines() if line.startswith(preset.name + " "))
        assert preset.display_name in row
        for source in preset.sources:
            assert f"  {source.url}" in out
    deepseek = next(line for line in out.splitlines() if line.startswith("deepseek-v3 "))
    assert deepseek.split()[2:6] == ["3+58+1", "256,", "top-8", "8+12+1"]
    assert run(capsys, "model", "--list") == (0, out, "")
    doc = json.loads(run(capsys, "models", "--format", "json")[1])
    assert [m["name"] for m in doc["models"]] == load_models().names()


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["llama3.1-70", "--gpu", "NVIDIA B200", "--tokens", "16"], "Did you mean 'llama3.1-70b'"),
        (["llama3.1-70b", "--gpu", "NVIDIA Z9", "--tokens", "16"], "NVIDIA Z9"),
        (["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "0"], "tokens: expected a positive"),
        (["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "1e4"], "received '1e4'"),
        (["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "3000000000"], "tokens"),
        (["llama3.1-70b", "--gpu", "NVIDIA B200"], "--tokens M is required"),
        (
            ["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16", "--ep", "2"],
            "expert parallelism applies to MoE models",
        ),
        (
            ["deepseek-v3", "--gpu", "NVIDIA B200", "--tokens", "16", "--ep", "3"],
            "expected a divisor of the 256 experts",
        ),
        (["deepseek-v3", "--gpu", "NVIDIA B200", "--tokens", "16", "--ep", "x"], "ep: expected"),
        (["--gpu", "NVIDIA B200", "--tokens", "16"], "give a model preset name"),
        (
            ["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16", "--recipes", "rowwse"],
            "Did you mean 'rowwise'",
        ),
        (
            ["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16", "--recipes", " , "],
            "--recipes: expected recipe names",
        ),
        (
            ["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16", "--recipes", "nvfp4_static"],
            "modelled for inference only",
        ),
        (
            ["llama3.1-70b", "--gpu", "NVIDIA B200", "--tokens", "16", "--format", "xml"],
            "invalid choice",
        ),
    ],
)
def test_bad_input_exits_2_with_one_message(capsys, argv, message):
    assert message in refused(capsys, "model", *argv)


def test_a_missing_or_malformed_models_file(capsys, tmp_path):
    absent = tmp_path / "absent.toml"
    err = refused(capsys, "model", "x", "--models", str(absent), "--tokens", "1")
    assert str(absent) in err and "model-preset file" in err
    broken = tmp_path / "broken.toml"
    broken.write_text("schema_version = 1\n[[model]\n", "utf-8")
    err = refused(capsys, "models", "--models", str(broken))
    assert str(broken) in err and "valid TOML" in err
    assert str(tmp_path) in refused(capsys, "models", "--models", str(tmp_path))


# -- a hostile preset file -------------------------------------------------------------

TINY_MOE = """schema_version = 1

[[model]]
name = "tiny-moe"
display_name = {display}
notes = "@SUM(1+1)"

[[model.sources]]
url = "https://example.org/config.json"
read_on = 2026-11-30
note = "-2+3"

[[model.block]]
name = {block}
layers = 4
experts = 8
top_k = 2

[[model.block.gemm]]
name = "q_proj"
K = 1024
N = 1024

[[model.block.gemm]]
name = {long_name}
K = 1024
N = 576

[[model.block.gemm]]
name = "expert_up"
K = 1024
N = 2048
kind = "expert"
"""


def tiny_moe(tmp_path: Path, display: str = '"Tiny MoE"', block: str = '"layers"') -> Path:
    path = tmp_path / "models.toml"
    long_name = '"' + "a" * 48 + '"'  # the longest name the lint takes
    path.write_text(TINY_MOE.format(display=display, block=block, long_name=long_name), "utf-8")
    return path


def test_a_users_own_model(capsys, tmp_path):
    path = str(tiny_moe(tmp_path))
    args = ("model", "tiny-moe", "--models", path, "--gpu", "NVIDIA B200", "--tokens", "4096")
    doc = model_json(capsys, *args, "--ep", "2")
    assert [g["groups"] for g in doc["gemms"]] == [1, 1, 4]
    assert doc["gemms"][1]["excluded"]["blockwise"].endswith("got N=576")
    code, out, _ = run(capsys, *args)
    assert code == 0 and "Tiny MoE (tiny-moe)" in out
    assert all(len(line) <= LINE_WIDTH for line in out.splitlines())
    assert "  " + "a" * 20 in out  # cut to fit, with "..."
    assert "blockwise: layers." + "a" * 48 in out  # whole where it is not in a column
    assert "tiny-moe" in run(capsys, "models", "--models", path)[1]


def test_formula_like_text_stays_text(capsys, tmp_path):
    path = str(tiny_moe(tmp_path, display='"=HYPERLINK(\\"http://x\\";\\"y\\")"'))
    args = ("model", "tiny-moe", "--models", path, "--gpu", "NVIDIA B200", "--tokens", "4096")
    rows = model_csv(capsys, *args)
    for row in rows:
        assert not any(cell.startswith(FORMULA_START) for cell in row.values() if cell), row
    code, out, _ = run(capsys, *args)
    assert code == 0 and out.startswith('=HYPERLINK("http://x";"y") (tiny-moe)')


@pytest.mark.parametrize(
    ("display", "block"),
    [
        ('"Tiny\\u001b]0;pwned\\u0007"', '"layers"'),
        ('"Tiny \\u202eesreveR"', '"layers"'),
        ('"Tiny"', '"lay\\u001b[2Jers"'),
        ('"Tiny\\u009b31m"', '"layers"'),
    ],
)
def test_control_characters_in_a_models_file_are_refused_and_escaped(
    capsys, tmp_path, display, block
):
    path = str(tiny_moe(tmp_path, display=display, block=block))
    for argv in (
        ("models", "--models", path),
        ("model", "tiny-moe", "--models", path, "--gpu", "NVIDIA B200", "--tokens", "64"),
    ):
        err = refused(capsys, *argv)  # run() checks no control character got out
        assert path in err and err.startswith(f"error: {path}: ")
        assert "\\x1b" in err or "\\u202e" in err or "\\x9b" in err
