"""The generated calculator JavaScript computes what evaluate() computes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest
from model_cases import supported_cases

from roofline import HypotheticalWarning, evaluate_terms, load_specs
from roofline.publish.jscode import calculator_script, model_key
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
    combos = [(*case, fusion) for case in supported_cases(specs) for fusion in (False, True)]
    picks = rng.choice(len(combos), size=count, replace=False)
    cases = []
    for i in picks:
        gpu, recipe, mode, fusion = combos[i]
        m, k, n = (int(v) * 128 for v in rng.integers(1, 256, 3))
        cases.append(
            {
                "gpu": gpu,
                "recipe": recipe.name,
                "mode": mode.value,
                "fusion": fusion,
                "shape": (m, k, n),
            }
        )
    return cases


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_generated_javascript_matches_evaluate(script):
    cases = _cases()
    payload = [
        {
            "key": model_key(c["mode"], c["recipe"], c["fusion"]),
            "shape": c["shape"],
            "hw": c["gpu"].hardware_values(),
        }
        for c in cases
    ]
    program = (
        f"require({json.dumps(script)});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = cases.map(c => RooflineModels.models[c.key].times(...c.shape, c.hw));"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        [NODE, "-e", program], input=json.dumps(payload), text=True, capture_output=True, check=True
    )
    for case, js in zip(cases, json.loads(result.stdout), strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HypotheticalWarning)
            ours = evaluate_terms(
                case["gpu"], case["mode"], case["recipe"], *case["shape"], fusion=case["fusion"]
            )
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
    from site_gen.markup.calculator import calculator_data

    return calculator_data(load_specs())


def _fill(template: str, **values: str) -> str:
    """calculator.js's fill: ``{key}`` replaced, ``{{``/``}}`` literal braces."""
    return re.sub(
        r"\{\{|\}\}|\{(\w+)\}", lambda m: values.get(m[1], m[0]) if m[1] else m[0][0], template
    )


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
        assert h["range"] == {
            "low": want.low,
            "high": want.high,
            "low_inclusive": want.low_inclusive,
            "high_inclusive": want.high_inclusive,
        }, h["key"]


HOSTILE_NAMES = [
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "<img src=x onerror=alert(1)>",
    'it\'s "x"',
    "{name}",
]


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
    from site_gen.markup.calculator import calculator_data

    gpu = GpuSpec("Acme {name} }{ {{gpu}}", 1e15, 3e12, 0.8, 0.9, fp8_peak_tops=2e15)
    data = calculator_data(SpecDatabase({gpu.name: gpu}, "test"))
    filled = _fill(data["unknown"]["gpu"], name="'{gpu}'")
    assert filled == "unknown GPU '{gpu}'; valid: Acme {name} }{ {{gpu}}"


# -- the calibrated model beside torchao's ----------------------------------------------------


def _models(calibrated: bool, grouped: tuple[bool, ...] = (False,)):
    from roofline.model.build import build_model

    return [
        build_model(mode, recipe, fusion, calibrated=calibrated, grouped=g)
        for recipe in RECIPE_LIST
        for mode in recipe.modes
        for fusion in (False, True)
        for g in grouped
    ]


def test_calibrated_functions_read_the_calibration_parameters():
    from roofline.publish.jscode import model_function
    from roofline.symbols import CALIBRATION_SYMBOLS, MODEL_CALIBRATION_SYMBOLS

    seen: set[str] = set()
    for model in _models(calibrated=True, grouped=(False, True)):
        text = model_function(model)
        shape = "M, K, N, G" if model.grouped else "M, K, N"
        assert text.startswith(f"function ({shape}, hw, cal) {{"), model.recipe.name
        used = set().union(*(t.expr.free_symbols for t in model.terms))
        for param in CALIBRATION_SYMBOLS:
            line = f"const {param.symbol.name} = cal[{json.dumps(param.spec_key)}];"
            assert (line in text) == (param.symbol in used), (model.recipe.name, param.spec_key)
            if param.symbol in used:
                seen.add(param.spec_key)
        assert "#latency" in text
    # Every parameter is read by some dense or grouped model (the grouped efficiencies and
    # rearrangement kernels only by grouped ones), and torchao's functions read none.
    assert seen == {p.spec_key for p in MODEL_CALIBRATION_SYMBOLS}
    for model in _models(calibrated=False, grouped=(False, True)):
        text = model_function(model)
        shape = "M, K, N, G" if model.grouped else "M, K, N"
        assert text.startswith(f"function ({shape}, hw) {{") and "cal[" not in text


def test_grouped_only_parameters_are_read_by_grouped_functions_only():
    from roofline.publish.jscode import model_function

    grouped_only = ('cal["grouped_efficiency.', 'cal["cast_efficiency.rearrange', 'cal["rearrange_')
    dense = "\n".join(model_function(m) for m in _models(calibrated=True))
    grouped = "\n".join(model_function(m) for m in _models(calibrated=True, grouped=(True,)))
    for prefix in grouped_only:
        assert prefix not in dense and prefix in grouped, prefix


def test_script_carries_both_models_and_what_calibration_ignores():
    text = calculator_script()
    count = sum(2 for r in RECIPE_LIST for _ in r.modes)
    assert text.count("calibrated: {ignores: ") == 2 * count  # dense and grouped
    assert text.count("function (M, K, N, hw, cal)") == count
    assert text.count("function (M, K, N, G, hw, cal)") == count
    assert text.count("].grouped = {meta: ") == count
    assert '"pct_achievable_gemm_tops"' in text.split("calibrated: {ignores: ")[1].split("]")[0]


def test_printer_writes_ceiling_and_floor_as_math_calls():
    import sympy

    from roofline.publish.jscode import _Printer
    from roofline.symbols import K, M

    text = _Printer({"full_prec": True}).doprint(sympy.ceiling(M / 128) + sympy.floor(K / 32))
    assert "Math.ceil(" in text and "Math.floor(" in text
    m, k = 1000, 100
    assert (
        eval(
            text.replace("Math.ceil", "math.ceil").replace("Math.floor", "math.floor"),
            {"math": __import__("math"), "M": m, "K": k},
        )
        == -(-m // 128) + k // 32
    )


def test_fixed_latency_is_each_calibrated_terms_constant_part():
    import sympy

    from roofline.publish.jscode import fixed_latency
    from roofline.symbols import SHAPE_SYMBOLS

    empty = dict.fromkeys(SHAPE_SYMBOLS, 0)
    for model in _models(calibrated=True, grouped=(False, True)):
        for term in model.terms:
            fixed = fixed_latency(term.expr)
            assert not fixed.free_symbols & set(SHAPE_SYMBOLS)
            # The fixed part is what the term takes for an empty shape (M = K = N = 0),
            # at any group count (a grouped-only kernel has none at G = 1).
            assert sympy.simplify(term.expr.subs(empty) - fixed) == 0, term.key
            if term.gemm is not None:
                # the GEMM's latency, plus its epilogue kernel's launch where it has one
                epilogue = term.gemm.epilogue
                latency = term.gemm.latency + (0 if epilogue is None else fixed_latency(epilogue))
                assert sympy.simplify(fixed - latency) == 0, term.key


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_generated_calibrated_javascript_matches_evaluate(script):
    from roofline.evaluate import calibration_of

    specs = load_specs()
    cases = _cases(30)
    cals = [calibration_of(c["gpu"], specs) for c in cases]
    payload = [
        {
            "key": model_key(c["mode"], c["recipe"], c["fusion"]),
            "shape": c["shape"],
            "hw": c["gpu"].hardware_values(),
            "cal": cal.numbers(),
        }
        for c, cal in zip(cases, cals, strict=True)
    ]
    program = (
        f"require({json.dumps(script)});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = cases.map(c => RooflineModels.models[c.key].calibrated"
        ".times(...c.shape, c.hw, c.cal));"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        [NODE, "-e", program], input=json.dumps(payload), text=True, capture_output=True, check=True
    )
    for case, cal, js in zip(cases, cals, json.loads(result.stdout), strict=True):
        ours = evaluate_terms(
            case["gpu"],
            case["mode"],
            case["recipe"],
            *case["shape"],
            fusion=case["fusion"],
            calibration=cal,
        )
        torchao = evaluate_terms(
            case["gpu"], case["mode"], case["recipe"], *case["shape"], fusion=case["fusion"]
        )
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


# -- grouped (MoE) layers: functions of (M, K, N, G, hw[, cal]) -------------------------------


def test_piecewise_prints_as_one_line_of_conditionals():
    import sympy

    from roofline.publish.jscode import _Printer
    from roofline.symbols import G, M

    printer = _Printer({"full_prec": True})
    text = printer.doprint(sympy.Piecewise((2 * M, sympy.StrictGreaterThan(G, 1)), (0, True)))
    assert text == "((G > 1) ? (2*M) : (0))"
    with pytest.raises(ValueError, match="default"):
        printer.doprint(sympy.Piecewise((M, G > 1)))


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_nested_piecewise_evaluates_branch_by_branch():
    import sympy

    from roofline.publish.jscode import _Printer
    from roofline.symbols import G, M

    nested = sympy.Piecewise((M + 1, G > 8), (2 * M, G > 1), (3 * M - 1, True)) * 5 + M
    text = _Printer({"full_prec": True}).doprint(nested)
    assert "\n" not in text and text.count("?") == 2
    program = (
        f"const f = (M, G) => {text};"
        "process.stdout.write(JSON.stringify([1, 2, 8, 9, 100].map(g => f(7, g))));"
    )
    out = subprocess.run([NODE, "-e", program], text=True, capture_output=True, check=True)
    assert json.loads(out.stdout) == [float(nested.subs({M: 7, G: g})) for g in (1, 2, 8, 9, 100)]


def _grouped_cases(count: int) -> list[dict]:
    """Random cases, each at G = 1 and G = 8 (and one larger G)."""
    cases = []
    for i, case in enumerate(_cases(count)):
        for groups in (1, 8, 64 if i % 3 == 0 else 8):
            cases.append({**case, "groups": groups})
    return cases


def _run_node(script: str, payload: list[dict], call: str) -> list[dict]:
    program = (
        f"require({json.dumps(script)});"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        f"const out = cases.map(c => {call});"
        "process.stdout.write(JSON.stringify(out));"
    )
    result = subprocess.run(
        [NODE, "-e", program], input=json.dumps(payload), text=True, capture_output=True, check=True
    )
    return json.loads(result.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("calibrated", [False, True], ids=["torchao", "calibrated"])
def test_generated_grouped_javascript_matches_evaluate(script, calibrated):
    from roofline.evaluate import calibration_of

    specs = load_specs()
    cases = _grouped_cases(20)
    cals = [calibration_of(c["gpu"], specs) if calibrated else None for c in cases]
    payload = [
        {
            "key": model_key(c["mode"], c["recipe"], c["fusion"]),
            "shape": c["shape"],
            "G": c["groups"],
            "hw": c["gpu"].hardware_values(),
            "cal": cal and cal.numbers(),
        }
        for c, cal in zip(cases, cals, strict=True)
    ]
    which = ".calibrated" if calibrated else ""
    args = "c.hw, c.cal" if calibrated else "c.hw"
    call = f"times(...c.shape, c.G, {args})"
    grouped = _run_node(script, payload, f"RooflineModels.models[c.key].grouped{which}.{call}")
    call = f"times(...c.shape, {args})"
    dense = _run_node(script, payload, f"RooflineModels.models[c.key]{which}.{call}")
    rearranged = 0
    for case, cal, js, js_dense in zip(cases, cals, grouped, dense, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HypotheticalWarning)
            ours = evaluate_terms(
                case["gpu"],
                case["mode"],
                case["recipe"],
                *case["shape"],
                fusion=case["fusion"],
                calibration=cal,
                groups=case["groups"],
            )
        assert set(js) >= set(ours)
        for key, value in ours.items():
            assert js[key] == pytest.approx(float(value), rel=1e-12, abs=0), (case, key)
        if case["groups"] == 1:  # the grouped layer at G = 1 is the dense one
            for key, value in js_dense.items():
                assert js[key] == pytest.approx(value, rel=1e-12, abs=0), (case, key)
            assert all(js[k] == 0 for k in js if k.startswith("rearrange."))
        else:
            rearranged += any(js[k] > 0 for k in js if k.startswith("rearrange."))
    assert rearranged > 0  # some block-scaled recipe ran its rearrangement kernels


def test_grouped_entry_has_its_own_meta_with_the_rearrangement_kernels():
    text = calculator_script()
    entry = text.split('models["training/mxfp8_cublas/0"].grouped = ')[1].split("\n  models[")[0]
    assert entry.startswith("{meta: ") and '"key": "rearrange.output.lhs"' in entry
    assert "times: function (M, K, N, G, hw) {" in entry
    assert "function (M, K, N, G, hw, cal) {" in entry
    assert "G > 1" in entry and "\n)" not in entry  # one-line conditionals


# -- data.js: the group count and the model-preset picker --------------------------------------


@pytest.mark.parametrize("value", [0, -3, 1.5, 1e30, 2**31, "x", "0x10", "{value}", "__proto__"])
def test_calculator_groups_messages_are_the_evaluators(calculator_data, value):
    from roofline.errors import ShapeError
    from roofline.evaluate import as_shape_array

    with pytest.raises(ShapeError) as err:
        as_shape_array("G (groups)", value)  # what evaluate(groups=) and --groups say
    shape = calculator_data["shape"]
    key = "too_large" if isinstance(value, int) and value > shape["max"] else "positive"
    assert _fill(shape["groups"][key], value=repr(value)) == str(err.value)
    assert calculator_data["defaults"]["G"] == 1


def test_calculator_model_presets_reproduce_gemm_instances(calculator_data):
    from roofline.presets import ParameterError, load_models

    models = load_models()
    data = calculator_data["model_presets"]
    assert [m["name"] for m in data["models"]] == models.names()
    for entry in data["models"]:
        preset = models.get(entry["name"])
        assert entry["label"] == preset.display_name
        for ep in range(1, (preset.experts or 1) + 2):
            try:
                preset.gemm_instances(1, ep)
            except ParameterError:
                assert ep not in entry["eps"], (preset.name, ep)
            else:
                assert ep in entry["eps"], (preset.name, ep)
        for ep in entry["eps"]:
            for tokens in (1, 4096, 12345):
                want = preset.gemm_instances(tokens, ep)
                got = [
                    (g["key"], g["kind"], tokens * g["rows"], g["K"], g["N"], groups, g["count"])
                    for g, groups in zip(entry["gemms"], entry["groups"][str(ep)], strict=True)
                ]
                assert got == [
                    (w.key, w.kind.value, w.M, w.K, w.N, w.groups, w.count) for w in want
                ], (preset.name, ep, tokens)
    assert any(max(g) > 1 for m in data["models"] for g in m["groups"].values())


@pytest.mark.parametrize("tokens", [0, -5, 1.5, 2**31, "abc", "{value}"])
def test_calculator_tokens_message_is_gemm_instances(calculator_data, tokens):
    from roofline.presets import ParameterError, load_models

    with pytest.raises(ParameterError) as err:
        load_models().get("llama3.1-8b").gemm_instances(tokens)
    assert _fill(calculator_data["model_presets"]["tokens"], value=repr(tokens)) == str(err.value)


def test_calculator_routed_rows_messages_are_gemm_instances(calculator_data):
    """The page reports the first GEMM whose routed rows pass the limit, as Python does."""
    from roofline.presets import ParameterError, load_models

    models = load_models()
    limit = calculator_data["model_presets"]["max"]
    routed = 0
    for entry in calculator_data["model_presets"]["models"]:
        for tokens in (limit // 8 + 1, limit // 4 + 1, limit // 2, limit):
            first = next(
                (g for g in entry["gemms"] if g["routed"] and tokens * g["rows"] > limit), None
            )
            try:
                models.get(entry["name"]).gemm_instances(tokens)
            except ParameterError as err:
                assert first is not None, (entry["name"], tokens)
                page = _fill(first["routed"], tokens=str(tokens), rows=str(tokens * first["rows"]))
                assert page == str(err)
                routed += 1
            else:
                assert first is None, (entry["name"], tokens)
    assert routed > 0


def test_calculator_data_carries_hostile_preset_names_as_json_only():
    from roofline.presets import LayerBlock, LinearKind, ModelDatabase, ModelPreset, PresetGemm
    from roofline.specs import GpuSpec, SpecDatabase
    from site_gen.markup.calculator import data_script

    hostile = '</script><img src=x onerror=alert(1)>"\u2028{name}'
    gemm = PresetGemm("w1", 64, 64, 1, LinearKind.EXPERT)
    preset = ModelPreset("x", hostile, (LayerBlock("layers", 2, (gemm,), 4, 2),), ())
    gpu = GpuSpec("Acme", 1e15, 3e12, 0.8, 0.9, fp8_peak_tops=2e15)
    text = data_script(SpecDatabase({gpu.name: gpu}, "test"), ModelDatabase((preset,), "t"))
    prefix = "window.RooflineCalculatorData = "
    body = text.split(prefix, 1)[1].rstrip().removesuffix(";")
    data = json.loads(body)
    entry = data["model_presets"]["models"][0]
    assert entry["label"] == hostile and entry["eps"] == [1, 2, 4]
    assert entry["groups"] == {"1": [4], "2": [2], "4": [1]}
    # "<" only occurs inside JSON strings: written \u003c, the file holds no tag even if
    # someone inlined it in a page; the quote is escaped by JSON.
    assert "<" not in text and "\\u003c/script>" in text and '\\"' in text
    if NODE is not None:  # and a JavaScript engine reads back exactly the same value
        program = (
            "const window = {};"
            + text
            + "process.stdout.write(JSON.stringify(window.RooflineCalculatorData"
            ".model_presets.models[0].label));"
        )
        out = subprocess.run([NODE, "-e", program], text=True, capture_output=True, check=True)
        assert json.loads(out.stdout) == hostile


def test_widget_starts_grouped_only_for_a_valid_group_count():
    from site_gen.markup.calculator import widget

    assert 'data-groups="8"' in widget("generated/x.md", "GPU", groups=8)
    assert "data-groups" not in widget("generated/x.md", "GPU")
    for bad in (0, -1, 2**31, 1.5, "8", True):
        with pytest.raises(ValueError, match="groups"):
            widget("generated/x.md", "GPU", groups=bad)
