"""The generated calculator JavaScript computes what evaluate() computes."""

from __future__ import annotations

import json
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
