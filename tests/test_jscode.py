"""The generated calculator JavaScript computes what evaluate() computes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from roofline import HypotheticalWarning, Support, classify, evaluate_terms, load_specs
from roofline.jscode import calculator_script, model_key
from roofline.recipes import RECIPE_LIST

NODE = shutil.which("node")


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("js") / "models.js"
    path.write_text(calculator_script(), encoding="utf-8")
    return str(path)


def _cases(count: int = 60) -> list[dict]:
    rng = np.random.default_rng(3)
    specs = load_specs()
    combos = [
        (gpu, recipe, mode, fusion)
        for gpu in specs.values()
        for recipe in RECIPE_LIST
        for mode in recipe.modes
        for fusion in (False, True)
        if classify(gpu, recipe, mode).support is not Support.IMPOSSIBLE
    ]
    picks = rng.choice(len(combos), size=count, replace=False)
    cases = []
    for i in picks:
        gpu, recipe, mode, fusion = combos[i]
        m, k, n = (int(v) * 128 for v in rng.integers(1, 256, 3))
        cases.append({"gpu": gpu, "recipe": recipe.name, "mode": mode.value,
                      "fusion": fusion, "shape": (m, k, n)})  # fmt: skip
    return cases


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_generated_javascript_matches_evaluate(script):
    cases = _cases()
    payload = [
        {"key": model_key(c["mode"], c["recipe"], c["fusion"]), "shape": c["shape"],
         "hw": c["gpu"].hardware_values()}
        for c in cases
    ]  # fmt: skip
    program = (
        f"require({json.dumps(script)});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = cases.map(c => RooflineModels.models[c.key].times(...c.shape, c.hw));"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run([NODE, "-e", program], input=json.dumps(payload), text=True,
                            capture_output=True, check=True)  # fmt: skip
    for case, js in zip(cases, json.loads(result.stdout), strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HypotheticalWarning)
            ours = evaluate_terms(case["gpu"], case["mode"], case["recipe"], *case["shape"],
                                  fusion=case["fusion"])  # fmt: skip
        for key, value in ours.items():
            assert js[key] == pytest.approx(float(value), rel=1e-12), (case, key)


def test_script_defines_every_model():
    text = calculator_script()
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            assert json.dumps(model_key(mode.value, recipe.name, True)) in text
    assert "Math.max(" in text and "Math.floor(" in text


# -- the calculator's data.js: what the page checks a link against ---------------------------


@pytest.fixture(scope="module")
def calculator_data() -> dict:
    from site_gen.calculator import calculator_data

    return calculator_data(load_specs())


def _fill(template: str, **values: str) -> str:
    """calculator.js's fill: ``{key}`` replaced, ``{{``/``}}`` literal braces."""
    return re.sub(r"\{\{|\}\}|\{(\w+)\}",
                  lambda m: values.get(m[1], m[0]) if m[1] else m[0][0], template)  # fmt: skip


def _without_guess(message: str) -> str:
    """The CLI's message less its "Did you mean ...?" (the page lists the choices only)."""
    return re.sub(r"\. Did you mean .*\?$", "", message)


def test_calculator_data_carries_the_lint_ranges(calculator_data):
    from roofline.specs import GPU_KEYS, LAUNCH_OVERHEAD_RANGE

    keys = [h["key"] for h in calculator_data["hardware"]]
    assert "kernel_launch_overhead_s" in keys and "bf16_peak_tops" in keys
    for h in calculator_data["hardware"]:
        launch = h["key"] == "kernel_launch_overhead_s"
        want = LAUNCH_OVERHEAD_RANGE if launch else GPU_KEYS[h["key"]].range
        assert h["range"] == {"low": want.low, "high": want.high,
                              "low_inclusive": want.low_inclusive,
                              "high_inclusive": want.high_inclusive}, h["key"]  # fmt: skip


HOSTILE_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty",
                 "<img src=x onerror=alert(1)>", "it's \"x\"", "{name}"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_calculator_unknown_name_messages_are_the_clis(calculator_data, name):
    from roofline.errors import UnknownNameError
    from roofline.recipes import Mode, get_recipe

    messages = calculator_data["unknown"]
    with pytest.raises(UnknownNameError) as err:
        Mode.parse(name)
    assert _fill(messages["mode"], name=repr(name)) == _without_guess(str(err.value))
    for mode in ("training", "inference"):
        with pytest.raises(UnknownNameError) as err:
            get_recipe(name, mode)
        assert _fill(messages["recipe"][mode], name=repr(name)) == _without_guess(str(err.value))
    gpus = ", ".join(sorted(g["name"] for g in calculator_data["gpus"]))
    assert _fill(messages["gpu"], name=repr(name)) == f"unknown GPU {name!r}; valid: {gpus}"


def test_calculator_names_recipes_modelled_elsewhere(calculator_data):
    from roofline.errors import UnknownNameError
    from roofline.recipes import get_recipe

    elsewhere = calculator_data["unknown"]["recipe_mode"]
    for mode, names in calculator_data["modes"].items():
        others = {r.name for r in RECIPE_LIST} - set(names)
        assert set(elsewhere[mode]) == others
        for recipe in others:
            with pytest.raises(UnknownNameError) as err:
                get_recipe(recipe, mode)
            assert _fill(elsewhere[mode][recipe]) == str(err.value)


def test_calculator_dimension_limit_is_the_clis(calculator_data):
    from roofline.errors import ShapeError
    from roofline.evaluate import as_shape_array

    shape = calculator_data["shape"]
    as_shape_array("M", shape["max"])  # the largest accepted
    with pytest.raises(ShapeError) as err:
        as_shape_array("M", shape["max"] + 1)
    assert _fill(shape["too_large"], dim="M", value=repr(shape["max"] + 1)) == str(err.value)


def test_calculator_templates_keep_braces_of_gpu_names():
    from roofline.specs import GpuSpec, SpecDatabase
    from site_gen.calculator import calculator_data

    gpu = GpuSpec("Acme {name} }{ {{gpu}}", 1e15, 3e12, 0.8, 0.9, fp8_peak_tops=2e15)
    data = calculator_data(SpecDatabase({gpu.name: gpu}, "test"))
    filled = _fill(data["unknown"]["gpu"], name="'{gpu}'")
    assert filled == "unknown GPU '{gpu}'; valid: Acme {name} }{ {{gpu}}"


# -- the calibrated model beside torchao's ----------------------------------------------------


def _models(calibrated: bool):
    from roofline.formulas import build_model

    return [build_model(mode, recipe, fusion, calibrated=calibrated)
            for recipe in RECIPE_LIST for mode in recipe.modes for fusion in (False, True)]  # fmt: skip


def test_calibrated_functions_read_the_calibration_parameters():
    from roofline.jscode import model_function
    from roofline.symbols import CALIBRATION_SYMBOLS

    seen: set[str] = set()
    for model in _models(calibrated=True):
        text = model_function(model)
        assert text.startswith("function (M, K, N, hw, cal) {"), model.recipe.name
        used = set().union(*(t.expr.free_symbols for t in model.terms))
        for param in CALIBRATION_SYMBOLS:
            line = f"const {param.symbol.name} = cal[{json.dumps(param.spec_key)}];"
            assert (line in text) == (param.symbol in used), (model.recipe.name, param.spec_key)
            if param.symbol in used:
                seen.add(param.spec_key)
        assert "#latency" in text
    # Every parameter is read by some model, and torchao's functions read none of them.
    assert seen == {p.spec_key for p in CALIBRATION_SYMBOLS}
    for model in _models(calibrated=False):
        text = model_function(model)
        assert text.startswith("function (M, K, N, hw) {") and "cal[" not in text


def test_script_carries_both_models_and_what_calibration_ignores():
    text = calculator_script()
    count = sum(2 for r in RECIPE_LIST for _ in r.modes)
    assert text.count("calibrated: {ignores: ") == count
    assert text.count("function (M, K, N, hw, cal)") == count
    assert '"pct_achievable_gemm_tops"' in text.split("calibrated: {ignores: ")[1].split("]")[0]


def test_printer_writes_ceiling_and_floor_as_math_calls():
    import sympy

    from roofline.jscode import _Printer
    from roofline.symbols import K, M

    text = _Printer({"full_prec": True}).doprint(sympy.ceiling(M / 128) + sympy.floor(K / 32))
    assert "Math.ceil(" in text and "Math.floor(" in text
    m, k = 1000, 100
    assert eval(text.replace("Math.ceil", "math.ceil").replace("Math.floor", "math.floor"),
                {"math": __import__("math"), "M": m, "K": k}) == -(-m // 128) + k // 32  # fmt: skip


def test_fixed_latency_is_each_calibrated_terms_constant_part():
    import sympy

    from roofline.jscode import fixed_latency
    from roofline.symbols import SHAPE_SYMBOLS

    empty = dict.fromkeys(SHAPE_SYMBOLS, 0)
    for model in _models(calibrated=True):
        for term in model.terms:
            fixed = fixed_latency(term.expr)
            assert not fixed.free_symbols & set(SHAPE_SYMBOLS)
            # The fixed part is what the term takes for an empty shape (M = K = N = 0).
            assert sympy.simplify(term.expr.subs(empty) - fixed) == 0, term.key
            if term.gemm is not None:
                assert sympy.simplify(fixed - term.gemm.latency) == 0, term.key


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_generated_calibrated_javascript_matches_evaluate(script):
    from roofline.evaluate import calibration_of

    specs = load_specs()
    cases = _cases(30)
    cals = [calibration_of(c["gpu"], specs) for c in cases]
    payload = [
        {"key": model_key(c["mode"], c["recipe"], c["fusion"]), "shape": c["shape"],
         "hw": c["gpu"].hardware_values(), "cal": cal.numbers()}
        for c, cal in zip(cases, cals, strict=True)
    ]  # fmt: skip
    program = (
        f"require({json.dumps(script)});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = cases.map(c => RooflineModels.models[c.key].calibrated"
        ".times(...c.shape, c.hw, c.cal));"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run([NODE, "-e", program], input=json.dumps(payload), text=True,
                            capture_output=True, check=True)  # fmt: skip
    for case, cal, js in zip(cases, cals, json.loads(result.stdout), strict=True):
        ours = evaluate_terms(case["gpu"], case["mode"], case["recipe"], *case["shape"],
                              fusion=case["fusion"], calibration=cal)  # fmt: skip
        torchao = evaluate_terms(case["gpu"], case["mode"], case["recipe"], *case["shape"],
                                 fusion=case["fusion"])  # fmt: skip
        assert any(js[k] != pytest.approx(float(v), rel=1e-6) for k, v in torchao.items())
        for key, value in ours.items():
            assert js[key] == pytest.approx(float(value), rel=1e-12), (case, key)


def test_calculator_data_carries_each_gpus_calibration(calculator_data):
    from roofline.evaluate import calibration_of
    from roofline.symbols import CALIBRATION_SYMBOLS

    specs = load_specs()
    keys = [p.spec_key for p in CALIBRATION_SYMBOLS]
    assert [p["key"] for p in calculator_data["calibration"]] == keys
    for gpu in calculator_data["gpus"]:
        want = calibration_of(specs[gpu["name"]], specs)
        assert list(gpu["cal"]) == keys
        assert gpu["cal"] == want.numbers(), gpu["name"]
        assert gpu["cal_assumed"] == list(want.assumed())


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "2", "yes", "tru"])
def test_calculator_unknown_calibrated_message_is_the_clis(calculator_data, name):
    from roofline.errors import unknown

    template = calculator_data["unknown"]["calibrated"]
    want = _without_guess(str(unknown("calibrated", name, list(calculator_data["calibrated"]))))
    assert _fill(template, name=repr(name)) == want
    assert calculator_data["calibrated"] == {"0": False, "1": True, "false": False, "true": True}
