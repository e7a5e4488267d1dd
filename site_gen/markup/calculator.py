"""The in-page calculator: its generated scripts and the widget each page embeds.

Two generated files serve every calculator on the site, loaded by relative URL (they
work offline, even from ``file://``):

* ``generated/calculator/models.js``: :func:`roofline.publish.jscode.calculator_script`, the
  arithmetic printed by sympy from the model's expressions (torchao's and the calibrated
  model's);
* ``generated/calculator/data.js``: the GPUs' figures and calibration parameter values
  (:func:`roofline.evaluate.calibration_of`, resolved against the site's own spec
  database, as ``roofline eval --calibrated --specs`` resolves them), which recipes each
  mode has, and
  every message the CLI would print, produced here by calling the CLI's own code
  (:func:`roofline.capability.classify`, :func:`roofline.evaluate.as_shape_array`,
  :func:`roofline.evaluate.check_divisibility`) with placeholders, so the page says
  exactly what ``roofline eval`` says. It also carries what the page checks its query
  string against (the names the CLI accepts, with the CLI's "unknown ..." messages, the
  largest dimension, and the spec lint's range of every hardware figure), so a hostile
  or mistyped link is reported, never obeyed. For a grouped (mixture-of-experts) layer,
  the ``G`` input, it carries each GPU's grouped verdict (``classify(..., grouped=True)``)
  and the evaluator's messages for G; for the model-preset picker, every model preset's
  GEMMs (:mod:`site_gen.markup.calculator_models`).

``docs/assets/javascripts/calculator.js`` is the UI; it assembles the eval columns from
the generated totals as :func:`roofline.evaluate.evaluate_columns` does.
"""

from __future__ import annotations

import dataclasses
import json
import math
import posixpath
from collections.abc import Mapping
from typing import Any

import numpy as np
from markupsafe import Markup

from roofline.analysis.error_bands import SIZE_BUCKETS, RowBasis, bands_per_size
from roofline.calibration.params import CalibratedParameters
from roofline.capability import classify
from roofline.errors import RooflineError, ShapeError, unknown
from roofline.evaluate import as_shape_array, calibration_of, check_divisibility
from roofline.model.build import MODEL_VERSION
from roofline.presets import ModelDatabase, load_models
from roofline.publish.jscode import calculator_script
from roofline.recipes import RECIPE_LIST, Mode, Recipe, get_recipe
from roofline.shapes import MAX_DIM, llama, pow2
from roofline.specs import (
    FALLBACK_KEYS,
    GPU_KEYS,
    LAUNCH_OVERHEAD_RANGE,
    GpuSpec,
    NumberRange,
    SpecDatabase,
)
from roofline.specs.model import CLOCKED_PEAK_KEYS
from roofline.symbols import CALIBRATION_SYMBOLS, HARDWARE_SYMBOLS
from site_gen import config
from site_gen.markup import safe
from site_gen.markup.calculator_models import groups_messages, preset_data
from site_gen.markup.calculator_models import template as _template

GEN = config.GENERATED_DIRNAME
MODELS_JS = f"{GEN}/calculator/models.js"
DATA_JS = f"{GEN}/calculator/data.js"

#: How the override inputs show each unit (label, factor to SI).
DISPLAY_UNITS: dict[str, tuple[str, float]] = {
    "FLOP/s": ("TFLOP/s", 1e12),
    "bytes/s": ("TB/s", 1e12),
    "1": ("fraction", 1.0),
    "s": ("µs", 1e-6),
    "SMs": ("SMs", 1.0),
}

_GPU = "\x00GPU\x00"  # placeholders substituted in the browser
_DIM = "\x00DIM\x00"
_VALUE = -987654321
# A name with no character in common with any choice, so the CLI's "did you mean" (which
# the page does not reproduce) never joins the message; its repr becomes ``{name}``.
_NAME = "\x00" * 12

#: The values ``?fusion=`` accepts (the page writes 0 or 1).
FUSION_VALUES: dict[str, bool] = {"0": False, "1": True, "false": False, "true": True}
#: The values ``?calibrated=`` accepts (the page writes 1, or leaves it out for torchao's).
CALIBRATED_VALUES: dict[str, bool] = dict(FUSION_VALUES)


def _needs(recipe: Recipe, mode: Mode) -> dict[str, str]:
    """Spec key -> format name of each peak the mode's formulas need (classify's order)."""
    return {fmt.peak.spec_key: fmt.name for fmt in recipe.formats(mode)}


def _capabilities(gpu: GpuSpec, grouped: bool = False) -> dict[str, Any]:
    """Per mode/recipe: classify's verdict with every needed peak present (overrides can
    add a missing peak), and the message when one of them is missing; ``grouped``: the
    verdict for a grouped layer's GEMMs."""
    out: dict[str, Any] = {}
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            needs = _needs(recipe, mode)
            filled = {k: gpu.value(k) or 1.0 for k in needs}
            ok = classify(dataclasses.replace(gpu, **filled), recipe, mode, grouped=grouped)
            out[f"{mode.value}/{recipe.name}"] = [ok.support.value, ok.reason]
    return out


def _without(key: str) -> dict[str, None]:
    """Fields to clear so a GPU lacks ``key``: the key and every key it falls back to."""
    cleared = {}
    while key:
        cleared[key] = None
        key = FALLBACK_KEYS.get(key, "")
    return cleared


def _missing_templates() -> dict[str, dict[str, str]]:
    """mode/recipe -> spec key -> the impossible message, with ``{gpu}`` for the name."""
    probe = GpuSpec(_GPU, 1.0, 1.0, 1.0, 1.0, fp8_peak_tops=1.0, fp4_peak_tops=1.0)
    out: dict[str, dict[str, str]] = {}
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            messages = {}
            for key in _needs(recipe, mode):
                verdict = classify(dataclasses.replace(probe, **_without(key)), recipe, mode)
                messages[key] = _template(verdict.reason, **{_GPU: "gpu"})
            out[f"{mode.value}/{recipe.name}"] = messages
    return out


def _shape_messages() -> dict[str, Any]:
    """The shape errors of :func:`roofline.evaluate.evaluate`, as templates."""
    try:
        as_shape_array(_DIM, _VALUE)
    except ShapeError as exc:
        positive = _template(str(exc), **{_DIM: "dim", repr(_VALUE): "value"})
    divisible = {}
    for recipe in RECIPE_LIST:
        for dim, multiple in recipe.divisibility:
            dims = {d: np.array([float(multiple)]) for d in "MKN"}
            value = multiple * 7777 + 1
            dims[dim] = np.array([float(value)])
            try:
                check_divisibility(recipe, dims)
            except ShapeError as exc:
                divisible.setdefault(recipe.name, []).append(
                    [dim, multiple, _template(str(exc), **{str(value): "value"})]
                )
    return {
        "positive": positive,
        "divisible": divisible,
        **_limit_message(),
        "groups": groups_messages(),
    }


def _limit_message() -> dict[str, Any]:
    """The largest dimension evaluate accepts (:data:`roofline.shapes.MAX_DIM`) and its
    message for one past it."""
    try:
        as_shape_array(_DIM, MAX_DIM + 1)
    except ShapeError as exc:
        too_large = _template(str(exc), **{_DIM: "dim", repr(MAX_DIM + 1): "value"})
    else:
        raise AssertionError(f"evaluate accepts a dimension of MAX_DIM + 1 = {MAX_DIM + 1}")
    return {"max": MAX_DIM, "too_large": too_large}


def _unknown_template(kind: str, choices: list[str]) -> str:
    """:func:`roofline.errors.unknown`'s message with ``{name}`` for the repr of the name."""
    return _template(str(unknown(kind, _NAME, choices)), **{repr(_NAME): "name"})


def _raised(call: Any, *args: Any) -> str:
    """The message of the RooflineError that ``call(*args)`` raises."""
    try:
        call(*args)
    except RooflineError as exc:
        return _template(str(exc), **{repr(_NAME): "name"})
    raise AssertionError(f"{call.__name__}{args!r} did not raise")


def _name_messages(specs: SpecDatabase) -> dict[str, Any]:
    """The CLI's messages for an unknown GPU, mode, recipe or fusion value, as templates."""
    recipes: dict[str, str] = {}
    elsewhere: dict[str, dict[str, str]] = {}
    for mode in config.MODES:
        recipes[mode.value] = _raised(get_recipe, _NAME, mode)
        elsewhere[mode.value] = {
            r.name: _raised(get_recipe, r.name, mode) for r in RECIPE_LIST if mode not in r.modes
        }
    return {
        "gpu": _unknown_template("GPU", [gpu.name for gpu in specs.values()]),
        "mode": _raised(Mode.parse, _NAME),
        "recipe": recipes,
        "recipe_mode": elsewhere,
        "fusion": _unknown_template("fusion", list(FUSION_VALUES)),
        "calibrated": _unknown_template("calibrated", list(CALIBRATED_VALUES)),
    }


def _range(key: str) -> NumberRange:
    """The spec lint's range for a hardware figure (the launch floor is file-wide)."""
    if key == "kernel_launch_overhead_s":
        return LAUNCH_OVERHEAD_RANGE
    spec_range = GPU_KEYS[key].range
    assert spec_range is not None, f"GPU_KEYS[{key!r}] has no range"
    return spec_range


def _range_data(key: str) -> dict[str, Any]:
    """A range as data.js carries it: open ends (None or infinite) become null."""
    r = _range(key)
    return {
        "low": _finite(r.low),
        "high": _finite(r.high),
        "low_inclusive": r.low_inclusive,
        "high_inclusive": r.high_inclusive,
    }


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _bands(gpu: GpuSpec, calibration: CalibratedParameters) -> dict[str, list[list[Any]]]:
    """Basis -> per size bucket ``[upper M x K x N limit or null, fraction, whose CV error,
    its size bucket or null]`` (:func:`roofline.analysis.error_bands.bands_per_size`): the
    page gives a calibrated number at its shape the band Python gives it."""
    limits = [_finite(limit) for _, limit in SIZE_BUCKETS]
    return {
        basis.value: [
            [limit, band.fraction, band.of, band.size]
            for limit, band in zip(limits, bands_per_size(gpu, basis, calibration.cv), strict=True)
        ]
        for basis in RowBasis
    }


def _gpu_data(gpu: GpuSpec, calibration: CalibratedParameters) -> dict[str, Any]:
    """One GPU's figures: spec values as given (``hw``; an absent per-path peak is null,
    and the page fills it from its fallback key after applying overrides, as
    :meth:`GpuSpec.value` does), calibration parameters (``cal``, keyed like
    :data:`CALIBRATION_SYMBOLS`) and which of those are assumed, and its capabilities
    (``capability_grouped``: a grouped layer's, only those that differ)."""
    numbers = calibration.numbers()
    dense, grouped = _capabilities(gpu), _capabilities(gpu, grouped=True)
    return {
        "name": gpu.name,
        "slug": config.slug(gpu.name),
        "hw": {hw.spec_key: gpu.given(hw.spec_key) for hw in HARDWARE_SYMBOLS},
        "cal": {p.spec_key: numbers[p.spec_key] for p in CALIBRATION_SYMBOLS},
        "cal_assumed": list(calibration.assumed()),
        # roofline.analysis.error_bands: each parameter's level and the CV bands that apply
        "cal_levels": {key: v.level.value for key, v in calibration.values.items()},
        "bands": _bands(gpu, calibration),
        "clock_scale": gpu.clock_scale,
        "capability": dense,
        # A grouped layer's verdict where it differs from the dense one (kept small).
        "capability_grouped": {k: v for k, v in grouped.items() if v != dense[k]},
    }


def calculator_data(
    specs: SpecDatabase,
    models: ModelDatabase | None = None,
    calibrations: Mapping[str, CalibratedParameters] | None = None,
) -> dict[str, Any]:
    """Everything the calculator needs besides the arithmetic (kept small: no formulas);
    ``models``: the model presets of the picker (None: the bundled ones);
    ``calibrations``: each GPU's calibrated parameters (None: from the bundled
    calibration file, resolved against ``specs``)."""
    if calibrations is None:
        calibrations = {gpu.name: calibration_of(gpu, specs) for gpu in specs.values()}
    canonical = (config.CANONICAL_M, config.CANONICAL_KN, config.CANONICAL_KN)
    presets = [["canonical", f"canonical (M={canonical[0]}, K=N={canonical[1]})", *canonical]]
    presets += [[f"llama:{s.name}", f"llama {s.name}", s.M, s.K, s.N] for s in llama()]
    presets += [[f"pow2:{s.M}", f"pow2 {s.M}", s.M, s.K, s.N] for s in pow2()]
    first = next(iter(specs.values()))
    return {
        "version": MODEL_VERSION,
        "hardware": [
            {
                "key": hw.spec_key,
                "description": hw.description,
                "unit": DISPLAY_UNITS[hw.unit][0],
                "scale": DISPLAY_UNITS[hw.unit][1],
                "si_unit": "" if hw.unit == "1" else hw.unit,
                "range": _range_data(hw.spec_key),
                "fallback": hw.fallback or None,
                "default": hw.default,  # GpuSpec.value's number for an absent figure
                # GpuSpec.value scales it by the GPU's sustained / peak clock
                "clocked": hw.spec_key in CLOCKED_PEAK_KEYS,
            }
            for hw in HARDWARE_SYMBOLS
        ],
        "calibration": [
            {"key": p.spec_key, "description": p.description, "unit": p.unit}
            for p in CALIBRATION_SYMBOLS
        ],
        "gpus": [_gpu_data(gpu, calibrations[gpu.name]) for gpu in specs.values()],
        "modes": {
            mode.value: [r.name for r in RECIPE_LIST if mode in r.modes] for mode in config.MODES
        },
        "aliases": {a: r.name for r in RECIPE_LIST for a in r.aliases},
        "needs": {
            f"{mode.value}/{r.name}": list(_needs(r, mode)) for r in RECIPE_LIST for mode in r.modes
        },
        "missing": _missing_templates(),
        "unknown": _name_messages(specs),
        "fusion": FUSION_VALUES,
        "calibrated": CALIBRATED_VALUES,
        "shape": _shape_messages(),
        "presets": presets,
        "model_presets": preset_data(load_models() if models is None else models),
        "defaults": {
            "gpu": first.name,
            "mode": "training",
            "recipe": "rowwise",
            "M": canonical[0],
            "K": canonical[1],
            "N": canonical[2],
            "G": 1,
            "calibrated": "0",
            "tokens": canonical[0],
        },
    }


def data_script(
    specs: SpecDatabase,
    models: ModelDatabase | None = None,
    calibrations: Mapping[str, CalibratedParameters] | None = None,
) -> str:
    """``generated/calculator/data.js``: :func:`calculator_data` as a script. The data are
    JSON (strings escaped by ``json.dumps``) in a script file, never markup; "<" (only
    ever inside a JSON string) is written ``\\u003c``, so no name from a data file can
    close or open a tag even where the script is inlined."""
    data = calculator_data(specs, models, calibrations)
    text = json.dumps(data, indent=None, ensure_ascii=False)
    text = text.replace("<", "\\u003c")
    return (
        "// Generated by site_gen.markup.calculator from the spec database and the CLI's "
        "messages.\n"
        f"window.RooflineCalculatorData = {text};\n"
    )


def scripts(
    specs: SpecDatabase,
    models: ModelDatabase | None = None,
    calibrations: Mapping[str, CalibratedParameters] | None = None,
    models_js: str | None = None,
) -> dict[str, str]:
    """The two generated files, docs-relative path -> text (``models``: the model presets,
    None for the bundled ones; ``calibrations``: as :func:`calculator_data` takes them;
    ``models_js``: :func:`calculator_script`'s text when the caller has it already)."""
    models_js = models_js if models_js is not None else calculator_script()
    return {MODELS_JS: models_js, DATA_JS: data_script(specs, models, calibrations)}


def site_root_from(page: str) -> str:
    """Relative URL from a page's *served* folder to the site root (directory URLs)."""
    stem = page.removesuffix(".md")
    folder = posixpath.dirname(page) if posixpath.basename(stem) == "index" else stem
    depth = len([p for p in folder.split("/") if p])
    return "../" * depth or "./"


def widget(
    page: str,
    gpu: str = "",
    mode: str = "",
    recipe: str = "",
    calibrated: bool = False,
    groups: int = 1,
) -> Markup:
    """The calculator's placeholder element; calculator.js fills it in.

    ``calibrated`` starts it on the calibrated model (a link's ``calibrated=`` still wins);
    ``groups`` > 1 starts it on a grouped layer of that many experts (a link's ``G=`` wins).
    The GPU name comes from a spec file: every attribute value is escaped (quotes too).
    """
    if type(groups) is not int or not 1 <= groups <= MAX_DIM:
        raise ValueError(f"groups: expected an integer from 1 to {MAX_DIM}, received {groups!r}")
    attrs = {
        "data-root": site_root_from(page),
        "data-gpu": gpu,
        "data-mode": mode,
        "data-recipe": recipe,
        "data-calibrated": "1" if calibrated else "",
        "data-groups": str(groups) if groups != 1 else "",
    }
    text = " ".join(f'{k}="{safe.attribute(v)}"' for k, v in attrs.items() if v)
    return Markup(
        f'<div class="ra-calc" {text} markdown="0"><noscript>The calculator needs '
        "JavaScript; <code>roofline eval</code> computes the same numbers.</noscript></div>"
    )
