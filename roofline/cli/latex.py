"""``roofline latex``: a formula's LaTeX, symbolic or with a GPU's values in place."""

from __future__ import annotations

import argparse
import sys

from roofline import capability as cap
from roofline.cli.calibrated import check_calibrated_args, gpu_calibration, note_assumed
from roofline.cli.rows import gpu_match, note_capability, warn_fallback
from roofline.errors import RooflineError
from roofline.evaluate import resolve_specs
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.publish import cite, latex
from roofline.recipes import Mode, get_recipe


def cmd_latex(args: argparse.Namespace) -> int:
    """``roofline latex``: the formula as sympy prints it (``--calibrated``: the calibrated
    model's, with the GPU's calibration values in place of its symbols)."""
    mode = Mode.parse(args.mode)
    recipe = get_recipe(args.recipe, mode)
    check_calibrated_args(args)
    if args.cite and args.calibrated:
        raise RooflineError(
            "--cite is not available with --calibrated: the cite snippets are of torchao's "
            "model's formulas"
        )
    grouped = bool(getattr(args, "grouped", False))
    if args.cite and grouped:
        raise RooflineError(
            "--cite is not available with --grouped: the cite snippets are of the dense "
            "layer's formulas"
        )
    model = build_model(mode, recipe, args.fusion, calibrated=args.calibrated, grouped=grouped)
    quantity = Quantity(args.quantity)
    if quantity not in model.quantities():
        raise RooflineError(
            f"quantity {quantity.value} is not part of this model "
            f"(it has: {', '.join(q.value for q in model.quantities())})"
        )
    expr = model.total(quantity)
    if args.symbolic:
        if args.cite:  # the equation index page's snippet, byte for byte
            sys.stdout.write(cite.symbolic_total(mode, recipe.name, quantity, args.fusion).snippet)
            return 0
        print(latex.symbolic(expr))
        return 0
    if args.cite and args.fusion:
        raise RooflineError(
            "--cite with --fusion needs --symbolic: the site shows a GPU's instantiated "
            "formulas without fusion modelling only"
        )
    match = gpu_match(args)
    gpu = match.gpu
    verdict = cap.require(gpu, recipe, mode, grouped=grouped)
    warn_fallback(match)
    note_capability(verdict)
    if args.cite:  # the GPU x recipe page's snippet, byte for byte
        sys.stdout.write(cite.instantiated_total(gpu, mode, recipe.name, quantity).snippet)
        return 0
    calibration = gpu_calibration(args, gpu, resolve_specs(args.specs))
    if calibration is not None:
        note_assumed(calibration, model)
    print(latex.instantiated(expr, gpu, calibration))
    return 0
