"""JavaScript for the in-page calculator, printed by sympy from the evaluated expressions.

The calculator must compute exactly what :func:`roofline.evaluate` computes, offline and
without a server, so its arithmetic is generated here from the same sympy terms (sympy's
JavaScript printer), never written by hand. The output is one plain script that defines
``window.RooflineModels`` (or ``globalThis``): per (mode, recipe, fusion) a function of
``(M, K, N, hw)`` returning every term's seconds plus each GEMM's compute and memory
times, a function of the totals returning the speedup (the structured speedup), and the
metadata to label them; plus ``columns``, which eval column reports which total
(from :data:`roofline.evaluate.COLUMN_QUANTITIES` and ``COLUMN_SUMS``).

Each model also carries ``calibrated``: the calibrated model of the same (mode, recipe,
fusion) (:mod:`roofline.model.calibrated`), whose function takes one more argument,
``cal``: the GPU's calibration parameters keyed like
:data:`roofline.symbols.CALIBRATION_SYMBOLS` (the arguments that follow the hardware
ones in :func:`roofline.model.compiled.compile_model`). Its terms have the same keys, labels
and quantities as torchao's, so they share ``meta``; it also reports each term's fixed
latency (``key#latency``), and names the hardware figures torchao's model uses that it
does not (``ignores``: the efficiencies and launch floor it replaces).

Each model also carries ``grouped``: the grouped (mixture-of-experts) layer of the same
(mode, recipe, fusion) (:mod:`roofline.model.grouped`, ``build_model(..., grouped=True)``),
with its own ``meta`` (it adds the scale-rearrangement kernels), ``times`` of
``(M, K, N, G, hw)``, ``speedup`` and ``calibrated`` (``times`` of
``(M, K, N, G, hw, cal)``), as :func:`roofline.evaluate.evaluate` computes with
``groups=G``. Its grouped-only terms and factors are sympy ``Piecewise`` on ``G > 1``,
printed as JavaScript conditionals, so at ``G = 1`` it is the dense model.
"""

from __future__ import annotations

import functools
import json

import sympy
from sympy.printing.jscode import JavascriptCodePrinter

from roofline.analysis.error_bands import per_gpu_keys
from roofline.evaluate import COLUMN_QUANTITIES, COLUMN_SUMS, columns_for
from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.terms import QUANTITY_SYMBOLS, RooflineModel
from roofline.recipes import RECIPE_LIST, Mode, Recipe
from roofline.symbols import (
    CALIBRATION_SYMBOLS,
    GROUPED_SHAPE_SYMBOLS,
    HARDWARE_SYMBOLS,
    SHAPE_SYMBOLS,
    HardwareSymbol,
)

# What a generated function calls its arguments; no model symbol may be named like them.
_ARGUMENTS = ("M", "K", "N", "G", "hw", "cal")


class _Printer(JavascriptCodePrinter):
    """sympy's JavaScript printer with Max/Min as Math calls of any arity, and Piecewise
    as one line of conditional expressions."""

    def _print_Max(self, expr: sympy.Max) -> str:
        return "Math.max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Min(self, expr: sympy.Min) -> str:
        return "Math.min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        """``((c1) ? (e1) : ((c2) ? (e2) : (e3)))``: sympy's own printer spreads each
        branch over three lines; the parentheses keep every branch one operand."""
        *pairs, (otherwise, last) = expr.args
        if last != sympy.true:  # no default: some inputs would have no value
            raise ValueError(f"Piecewise without an (expr, True) default: {expr}")
        text = f"({self._print(otherwise)})"
        for value, condition in reversed(pairs):
            text = f"(({self._print(condition)}) ? ({self._print(value)}) : {text})"
        return text


def model_key(mode: str, recipe: str, fusion: bool) -> str:
    """The key of a model in ``RooflineModels``: ``training/rowwise/0``."""
    return f"{mode}/{recipe}/{int(fusion)}"


def fixed_latency(expr: sympy.Expr) -> sympy.Expr:
    """The part of a term's time that does not grow with the shape: its summands free of
    M, K and N (a calibrated term's fixed latency; 0 for torchao's max-with-floor terms).
    A grouped term's Piecewise (a kernel only grouped layers run) keeps its conditions:
    its fixed part per branch."""
    if isinstance(expr, sympy.Piecewise):
        return sympy.Piecewise(*((fixed_latency(e), c) for e, c in expr.args))
    shape = set(SHAPE_SYMBOLS)
    parts = []
    for a in sympy.Add.make_args(expr):
        if isinstance(a, sympy.Piecewise):
            parts.append(fixed_latency(a))
        elif not a.free_symbols & shape:
            parts.append(a)
    return sympy.Add(*parts)


def _outputs(model: RooflineModel) -> list[tuple[str, sympy.Expr]]:
    outputs = [(term.key, term.expr) for term in model.terms]
    for term in model.terms:
        if term.gemm is not None:
            outputs += [
                (f"{term.key}#compute", term.gemm.compute),
                (f"{term.key}#memory", term.gemm.memory),
            ]
    if model.calibrated:  # the breakdown's "latency-bound" needs the fixed part
        outputs += [(f"{term.key}#latency", fixed_latency(term.expr)) for term in model.terms]
    return outputs


def _parameters(model: RooflineModel, exprs: list[sympy.Expr]) -> list[tuple[str, HardwareSymbol]]:
    """(argument object, symbol) for the parameters the function reads, in argument order:
    the hardware figures from ``hw``, then a calibrated model's parameters from ``cal``.
    torchao's functions read every hardware figure (as they always have); calibrated ones
    only those ``exprs`` use, which keeps the script small."""
    params = [("hw", hw) for hw in HARDWARE_SYMBOLS]
    if model.calibrated:
        used = set().union(*(expr.free_symbols for expr in exprs))
        params = [(source, p) for source, p in params if p.symbol in used]
        params += [("cal", p) for p in CALIBRATION_SYMBOLS if p.symbol in used]
    for _, p in params:
        assert p.symbol.name.isidentifier() and p.symbol.name not in _ARGUMENTS, p.symbol
    return params


def arguments(model: RooflineModel) -> tuple[str, ...]:
    """The arguments of ``model``'s generated function: the shape (with ``G`` for a
    grouped layer), ``hw``, and ``cal`` for a calibrated model."""
    shape = GROUPED_SHAPE_SYMBOLS if model.grouped else SHAPE_SYMBOLS
    return (*(s.name for s in shape), "hw", *(("cal",) if model.calibrated else ()))


def model_function(model: RooflineModel) -> str:
    """One JavaScript function ``(M, K, N, hw) => {key: seconds}`` for ``model``; for a
    calibrated model ``(M, K, N, hw, cal)``, ``cal`` mapping parameter key -> value; a
    grouped model takes ``G`` after ``N`` (:func:`arguments`)."""
    printer = _Printer({"full_prec": True})
    outputs = _outputs(model)
    free = set().union(*(expr.free_symbols for _, expr in outputs))
    shape = set(GROUPED_SHAPE_SYMBOLS if model.grouped else SHAPE_SYMBOLS)
    # Every shape symbol a term uses is an argument (a dense model never reads G).
    assert not (free & set(GROUPED_SHAPE_SYMBOLS)) - shape, (model.recipe.name, model.grouped)
    replacements, reduced = sympy.cse([expr for _, expr in outputs])
    lines = [f"function ({', '.join(arguments(model))}) {{"]
    for source, param in _parameters(model, [expr for _, expr in outputs]):
        lines.append(f"  const {param.symbol.name} = {source}[{json.dumps(param.spec_key)}];")
    for symbol, expr in replacements:
        lines.append(f"  const {symbol} = {printer.doprint(expr)};")
    lines.append("  return {")
    for (key, _), expr in zip(outputs, reduced, strict=True):
        lines.append(f"    {json.dumps(key)}: {printer.doprint(expr)},")
    lines.append("  };")
    lines.append("}")
    return "\n".join(lines)


def speedup_function(model: RooflineModel) -> str:
    """``(T) => speedup`` from the model's structured speedup; ``T`` maps quantity -> s."""
    printer = _Printer({"full_prec": True})
    expr = model.structured_speedup
    names = {symbol: f"T[{json.dumps(q.value)}]" for q, symbol in QUANTITY_SYMBOLS.items()}
    body = printer.doprint(expr.xreplace({s: sympy.Symbol(f"__{s.name}") for s in names}))
    for symbol, text in names.items():
        body = body.replace(f"__{symbol.name}", text)
    return f"function (T) {{ return {body}; }}"


def column_spec() -> dict[str, object]:
    """The eval columns per mode and what each reports, from :mod:`roofline.evaluate`."""
    return {
        "columns": {mode: list(columns_for(mode)) for mode in ("training", "inference")},
        "quantities": {c: q.value for c, q in COLUMN_QUANTITIES.items()},
        "sums": {c: [q.value for q in qs] for c, qs in COLUMN_SUMS.items()},
    }


def model_metadata(model: RooflineModel) -> dict[str, object]:
    """Labels and grouping of a model's terms, for the calculator's breakdown."""
    return {
        "mode": model.mode.value,
        "recipe": model.recipe.name,
        "fusion": model.fusion,
        "terms": [
            {"key": t.key, "label": t.label, "quantity": t.quantity.value, "gemm": t.is_gemm}
            for t in model.terms
        ],
    }


def _hardware_keys(model: RooflineModel) -> set[str]:
    """The spec keys of the hardware figures ``model``'s terms use."""
    used = set().union(*(term.expr.free_symbols for term in model.terms))
    return {hw.spec_key for hw in HARDWARE_SYMBOLS if hw.symbol in used}


def calibrated_entry(torchao: RooflineModel, calibrated: RooflineModel) -> str:
    """``{ignores, times, speedup}`` of the calibrated model beside ``torchao``'s; it shares
    torchao's ``meta`` (the API keeps term keys, labels and quantities the same)."""
    assert calibrated.calibrated and [t.key for t in calibrated.terms] == [
        t.key for t in torchao.terms
    ], (torchao.mode, torchao.recipe.name, torchao.fusion)
    assert model_metadata(calibrated) == model_metadata(torchao)
    ignores = sorted(_hardware_keys(torchao) - _hardware_keys(calibrated))
    # The per-GPU parameters whose levels set the error band (roofline.analysis.error_bands).
    band_keys = sorted(per_gpu_keys(t.expr for t in calibrated.terms))
    body = model_function(calibrated).replace("\n", "\n    ")
    return (
        f"{{ignores: {json.dumps(ignores)},\n    band_keys: {json.dumps(band_keys)},\n"
        f"    times: {body},\n    speedup: {speedup_function(calibrated)}}}"
    )


def model_entry(mode: Mode, recipe: Recipe, fusion: bool, grouped: bool = False) -> str:
    """``{meta, times, speedup, calibrated}`` of one model, torchao's with the calibrated
    one beside it; of a grouped layer with ``grouped=True``."""
    model = build_model(mode, recipe, fusion, grouped=grouped)
    calibrated = build_model(mode, recipe, fusion, calibrated=True, grouped=grouped)
    assert model.grouped == calibrated.grouped == grouped
    meta = json.dumps(model_metadata(model))
    body = model_function(model).replace("\n", "\n  ")
    return (
        f"{{meta: {meta}, times: {body},\n    speedup: {speedup_function(model)},"
        f"\n    calibrated: {calibrated_entry(model, calibrated)}}}"
    )


@functools.cache
def calculator_script() -> str:
    """The whole generated script: every recipe x mode x fusion model, torchao's and the
    calibrated one, each also as a grouped layer (built once)."""
    assert [s.name for s in SHAPE_SYMBOLS] == ["M", "K", "N"]  # the function's parameters
    parts = [
        "// Generated by roofline.publish.jscode from the model's sympy expressions. Do not edit.",
        "(function (root) {",
        "  const models = {};",
    ]
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            for fusion in (False, True):
                key = json.dumps(model_key(mode.value, recipe.name, fusion))
                parts.append(f"  models[{key}] = {model_entry(mode, recipe, fusion)};")
                grouped = model_entry(mode, recipe, fusion, grouped=True)
                parts.append(f"  models[{key}].grouped = {grouped};")
    parts += [
        f"  const columns = {json.dumps(column_spec())};",
        f"  root.RooflineModels = {{version: {json.dumps(MODEL_VERSION)}, models: models, "
        "columns: columns};",
        "})(typeof window !== 'undefined' ? window : globalThis);",
        "",
    ]
    return "\n".join(parts)
