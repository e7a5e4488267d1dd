"""The per-GEMM policy over a whole model (roofline.analysis.policy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from roofline.analysis.policy import BF16_NAME, ModelPlan, candidate_recipes, plan_model
from roofline.capability import CapabilityWarning, Support, classify
from roofline.errors import UnknownNameError
from roofline.evaluate import evaluate
from roofline.presets import load_models
from roofline.recipes import Mode, get_recipe
from roofline.specs import load_specs

B200 = "NVIDIA B200"
H100 = "NVIDIA H100 SXM"


@pytest.fixture(scope="module", params=[False, True], ids=["torchao", "calibrated"])
def llama_plan(request: pytest.FixtureRequest) -> ModelPlan:
    return plan_model("llama3.1-70b", B200, 16384, calibrated=request.param)


@pytest.fixture(scope="module")
def deepseek_plan() -> ModelPlan:
    return plan_model("deepseek-v3", B200, 8192, ep=8, calibrated=True)


def _evaluate_quietly(*args: object, **kwargs: object) -> dict[str, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CapabilityWarning)
        return evaluate(*args, **kwargs)  # type: ignore[arg-type]


def test_each_gemm_time_is_the_evaluated_layer_times_its_count(llama_plan: ModelPlan) -> None:
    for result in llama_plan.gemms:
        inst = result.instance
        for recipe, time in result.times.items():
            if recipe == BF16_NAME:
                continue
            cols = _evaluate_quietly(
                B200,
                "training",
                recipe,
                inst.M,
                inst.K,
                inst.N,
                calibrated=llama_plan.calibrated,
            )
            lowp = float(cols["r_fp8_gemm_and_ovhd_s"]) * inst.count
            bf16 = float(cols["r_bf16_gemm_s"]) * inst.count
            assert time.total_s == pytest.approx(lowp, rel=1e-12)
            assert result.times[BF16_NAME].total_s == pytest.approx(bf16, rel=1e-12)


def test_grouped_gemms_are_evaluated_with_their_groups(deepseek_plan: ModelPlan) -> None:
    experts = [g for g in deepseek_plan.gemms if g.instance.groups > 1]
    assert experts, "DeepSeek-V3's routed experts are grouped GEMMs"
    for result in experts:
        inst = result.instance
        assert inst.groups == 256 // 8 and inst.M == 8192 * 8
        for recipe, time in result.times.items():
            if recipe == BF16_NAME:
                continue
            cols = _evaluate_quietly(
                B200,
                "training",
                recipe,
                inst.M,
                inst.K,
                inst.N,
                calibrated=True,
                groups=inst.groups,
            )
            expected = float(cols["r_fp8_gemm_and_ovhd_s"]) * inst.count
            assert time.total_s == pytest.approx(expected, rel=1e-12)


def test_totals_add_up_and_the_mix_is_never_slower(llama_plan: ModelPlan) -> None:
    baseline = llama_plan.baseline
    assert baseline.speedup == pytest.approx(1.0)
    expected = sum(g.times[BF16_NAME].total_s for g in llama_plan.gemms)
    assert baseline.time.total_s == pytest.approx(expected, rel=1e-12)
    mix = llama_plan.mix()
    for single in llama_plan.singles():
        parts = single.time.forward_s + single.time.backward_s
        assert single.time.total_s == pytest.approx(parts)
        assert mix.time.total_s <= single.time.total_s * (1 + 1e-12)
    assert mix.time.total_s <= baseline.time.total_s
    best = llama_plan.best_single()
    assert best is not None and mix.speedup >= best.speedup * (1 - 1e-12)


def test_forward_is_the_output_gemm_and_its_casts(llama_plan: ModelPlan) -> None:
    result = llama_plan.gemms[0]
    inst = result.instance
    base = result.times[BF16_NAME]
    # bf16: the forward pass runs one of the three equal-FLOP GEMMs.
    assert 0 < base.forward_s < base.backward_s
    cols = _evaluate_quietly(
        B200, "training", "tensorwise", inst.M, inst.K, inst.N, calibrated=llama_plan.calibrated
    )
    assert base.total_s == pytest.approx(float(cols["r_bf16_gemm_s"]) * inst.count)


def test_best_recipe_is_the_fastest_candidate(llama_plan: ModelPlan) -> None:
    for result in llama_plan.gemms:
        best = result.times[result.best].total_s
        assert all(best <= t.total_s for t in result.times.values())
        assert result.speedup(result.best) >= 1.0


def test_a_recipe_that_cannot_run_a_gemm_falls_back_to_bf16(deepseek_plan: ModelPlan) -> None:
    # kv_a_proj_with_mqa has N = 576, not a multiple of blockwise's 128.
    total = deepseek_plan.total("blockwise")
    assert any(key.endswith("kv_a_proj_with_mqa") for key in total.fallbacks)
    result = next(g for g in deepseek_plan.gemms if g.instance.name == "kv_a_proj_with_mqa")
    assert "multiple of 128" in result.excluded["blockwise"]
    assert result.time_in("blockwise") == result.times[BF16_NAME]
    assert result.speedup("blockwise") == 1.0


def test_grouped_kernels_decide_which_recipes_run_the_experts(deepseek_plan: ModelPlan) -> None:
    spec = load_specs()[B200]
    rowwise = get_recipe("rowwise", Mode.TRAINING)
    assert classify(spec, rowwise, Mode.TRAINING).support is Support.NATIVE
    assert classify(spec, rowwise, Mode.TRAINING, grouped=True).support is Support.HYPOTHETICAL
    expert = next(g for g in deepseek_plan.gemms if g.instance.groups > 1)
    dense = next(g for g in deepseek_plan.gemms if g.instance.groups == 1)
    assert "rowwise" in expert.excluded and "hypothetical" in expert.excluded["rowwise"]
    assert "rowwise" in dense.times
    assert "mxfp8_cublas" in expert.times


def test_calibrated_and_torchao_plans_differ() -> None:
    torchao = plan_model("llama3.1-8b", H100, 8192)
    calibrated = plan_model("llama3.1-8b", H100, 8192, calibrated=True)
    assert torchao.recipes == calibrated.recipes
    assert torchao.baseline.time.total_s != calibrated.baseline.time.total_s


def test_candidates_are_the_native_recipes_unless_named() -> None:
    spec = load_specs()[H100]
    native = candidate_recipes(spec)
    assert "rowwise" in native and "mxfp8_cublas" not in native and "nvfp4" not in native
    assert candidate_recipes(spec, ["ROWWISE", "tensorwise"]) == ("rowwise", "tensorwise")
    wider = candidate_recipes(spec, include=(Support.NATIVE, Support.HYPOTHETICAL))
    assert "mxfp8_cublas" in wider
    with pytest.raises(UnknownNameError, match="recipe"):
        candidate_recipes(spec, ["rowwize"])


def test_named_hypothetical_recipes_run_only_when_included() -> None:
    plan = plan_model("llama3.1-8b", H100, 4096, recipes=["mxfp8_cublas"])
    assert all("mxfp8_cublas" not in g.times for g in plan.gemms)
    assert plan.total("mxfp8_cublas").speedup == pytest.approx(1.0)
    wider = plan_model(
        "llama3.1-8b",
        H100,
        4096,
        recipes=["mxfp8_cublas"],
        include=(Support.NATIVE, Support.HYPOTHETICAL),
    )
    assert all("mxfp8_cublas" in g.times for g in wider.gemms)


def test_expert_parallelism_changes_the_groups_not_the_tokens() -> None:
    one = plan_model("qwen3-30b-a3b", B200, 4096, ep=1)
    eight = plan_model("qwen3-30b-a3b", B200, 4096, ep=8)
    experts_one = {g.instance.key: g.instance for g in one.gemms if g.instance.groups > 1}
    experts_eight = {g.instance.key: g.instance for g in eight.gemms if g.instance.groups > 1}
    assert experts_one.keys() == experts_eight.keys() and experts_one
    for key, inst in experts_one.items():
        assert inst.M == experts_eight[key].M
        assert inst.groups == 8 * experts_eight[key].groups


def test_every_preset_plans_on_every_gpu_kind() -> None:
    models = load_models()
    for name in models.names():
        for gpu in (B200, H100, "AMD Instinct MI300X", "NVIDIA A100 SXM"):
            ep = 8 if models.get(name).is_moe else 1
            plan = plan_model(name, gpu, 4096, ep=ep)
            assert plan.baseline.time.total_s > 0
            assert all(np.isfinite(t.time.total_s) for t in plan.singles())


def test_bad_names_are_errors() -> None:
    with pytest.raises(UnknownNameError, match=r"llama3\.1-70b"):
        plan_model("llama3.1-70", B200, 1024)
    with pytest.raises(UnknownNameError):
        plan_model("llama3.1-70b", "NVIDIA Z9000", 1024)
