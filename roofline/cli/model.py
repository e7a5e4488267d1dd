"""``roofline model`` and ``roofline models``: a whole model's linear layers on one GPU.

``roofline model NAME --gpu G --tokens M [--ep E]`` evaluates every linear GEMM of a model
preset (:mod:`roofline.presets`) for one training step on one device, in bf16 and in each
candidate recipe (:func:`roofline.analysis.policy.plan_model`), and prints: a header (model, GPU,
tokens, expert parallelism, which model, fusion), the per-GEMM table with each GEMM's best
recipe, the totals of each single recipe and of the best per-GEMM mix with the forward /
backward split, and the GEMMs each recipe cannot run and why. ``--format csv`` and
``json`` carry the same plan (see :mod:`roofline.cli.model_export`). ``roofline models``
(or ``roofline model --list``) lists the presets.
"""

from __future__ import annotations

import argparse
import sys

from roofline.analysis.policy import BF16_NAME, RUNNABLE, ModelPlan, plan_model
from roofline.calibration.params import Basis, CalibratedParameters
from roofline.capability import Support
from roofline.cli.calibrated import add_calibrated_args, gpu_calibration, progress
from roofline.cli.model_export import model_csv, model_json, models_json, models_text
from roofline.cli.model_table import assumed_sentence, candidates_how, model_table
from roofline.cli.output import named_inputs, output, output_path
from roofline.cli.rows import gpu_match, warn_fallback
from roofline.errors import RooflineError
from roofline.evaluate import resolve_specs
from roofline.model.build import build_model
from roofline.model.terms import LOWP_SIDE, Quantity
from roofline.presets import ModelPreset, ParameterError, load_models
from roofline.presets.hf import SUPPORTED_TYPES, load_hf_config
from roofline.recipes import Mode, get_recipe
from roofline.symbols import CALIBRATION_SYMBOLS

# Every recipe's model has the same bf16 GEMM terms; the assumed-parameter note reads them
# from this one (the policy's baseline too).
_BASELINE_RECIPE = "tensorwise"


def add_model_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``model`` and ``models`` subcommands."""
    mp = sub.add_parser(
        "model",
        help="a model preset's linear layers on a GPU: per GEMM, per recipe, the best mix",
        description="Evaluate every linear GEMM of a model preset for one training step on "
        "one device, in bf16 and each candidate recipe; print the best recipe per GEMM, each "
        "single recipe's and the best per-GEMM mix's time and speedup (forward / backward), "
        "and the GEMMs a recipe cannot run. Exit 0; 2 on bad input.",
    )
    mp.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help="preset name (roofline models); with --hf-config, the name to show",
    )
    mp.add_argument(
        "--hf-config",
        metavar="FILE",
        help="derive every linear GEMM from a Hugging Face config.json instead of a preset "
        f"(model types: {', '.join(SUPPORTED_TYPES)})",
    )
    mp.add_argument("--list", action="store_true", help="list the presets (as roofline models)")
    mp.add_argument(
        "--gpu",
        help="GPU name or torch device name (default: the current CUDA device, needs torch)",
    )
    mp.add_argument(
        "--tokens", metavar="M", help="tokens per step per device (micro-batch x sequence)"
    )
    mp.add_argument(
        "--ep",
        default="1",
        metavar="E",
        help="expert parallelism: devices sharing the experts (default 1)",
    )
    mp.add_argument(
        "--fusion", action="store_true", help="model the casts' bf16 reads fused (as eval)"
    )
    mp.add_argument(
        "--recipes", metavar="A,B", help="only these candidate recipes (default: every native one)"
    )
    mp.add_argument(
        "--include-hypothetical",
        action="store_true",
        help="let hypothetical estimates compete (e.g. grouped GEMMs without a kernel)",
    )
    mp.add_argument("--format", choices=("table", "csv", "json"), default="table")
    mp.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    mp.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    _add_models_arg(mp)
    add_calibrated_args(mp)
    mp.set_defaults(func=cmd_model)

    ls = sub.add_parser("models", help="list the model presets")
    _add_models_arg(ls)
    ls.add_argument("--format", choices=("text", "json"), default="text")
    ls.set_defaults(func=cmd_models)


def _add_models_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models",
        metavar="FILE",
        help="model preset file (default: the bundled roofline/data/models.toml)",
    )


def cmd_models(args: argparse.Namespace) -> int:
    """``roofline models``: every preset with its blocks, experts and sources."""
    database = load_models(args.models)
    if getattr(args, "format", "text") == "json":
        print(models_json(database))
    else:
        sys.stdout.write(models_text(database))
    return 0


def _count(option: str, text: str | None) -> int:
    """An integer option; the presets check its range (:class:`ParameterError`)."""
    try:
        return int(str(text))
    except ValueError:
        raise ParameterError(f"{option}: expected a positive integer, received {text!r}") from None


def _recipe_names(text: str | None) -> tuple[str, ...] | None:
    """``--recipes a,b``: canonical training recipe names, each once, in the order given."""
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise RooflineError(f"--recipes: expected recipe names separated by commas, got {text!r}")
    return tuple(dict.fromkeys(get_recipe(n, Mode.TRAINING).name for n in names))


def cmd_model(args: argparse.Namespace) -> int:
    """``roofline model``: one preset on one GPU as a table, CSV or JSON."""
    if args.list:
        return cmd_models(args)
    if args.name is None and args.hf_config is None:
        raise RooflineError(
            "give a model preset name, e.g. roofline model llama3.1-70b --gpu 'NVIDIA B200' "
            "--tokens 16384 (roofline models lists them), or --hf-config config.json"
        )
    path = output_path(args.output, named_inputs(args))
    plan, calibration = _plan(args)
    assumed = assumed_parameters(plan, calibration) if calibration is not None else []
    if assumed and args.format != "table":  # the table's header says it
        print(f"note: {assumed_sentence(plan, assumed)}", file=sys.stderr)
    how = candidates_how(_recipe_names(args.recipes), args.include_hypothetical)
    if args.format == "csv":
        text = model_csv(plan)
    elif args.format == "json":
        text = model_json(plan, assumed, how)
    else:
        text = model_table(plan, assumed, how)
    with output(path) as out:
        out.write(text)
    return 0


def _plan(args: argparse.Namespace) -> tuple[ModelPlan, CalibratedParameters | None]:
    """The plan the arguments ask for, every input checked first: the preset and its step
    parameters, the recipes, the GPU, the calibration. Warnings go to stderr."""
    preset = _preset(args)
    if args.tokens is None:
        raise RooflineError("--tokens M is required: tokens per step per device (e.g. 16384)")
    tokens, ep = _count("tokens", args.tokens), _count("ep", args.ep)
    count = len(preset.gemm_instances(tokens, ep))  # parameter errors before the GPU's
    recipes = _recipe_names(args.recipes)
    specs = resolve_specs(args.specs)
    for warning in specs.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    match = gpu_match(args)
    calibration = gpu_calibration(args, match.gpu, specs)
    include = (Support.NATIVE, Support.HYPOTHETICAL) if args.include_hypothetical else RUNNABLE
    with progress(f"evaluating {count} GEMMs of {preset.name} in bf16 and each recipe ..."):
        plan = plan_model(
            preset,
            match.gpu,
            tokens,
            ep=ep,
            calibrated=args.calibrated,
            fusion=args.fusion,
            recipes=recipes,
            include=include,
            specs=specs,
            calibration=calibration,
        )
    warn_fallback(match)
    return plan, calibration


def _preset(args: argparse.Namespace) -> ModelPreset:
    """The preset NAME of --models (or the bundled file), or the one --hf-config derives."""
    if args.hf_config is None:
        return load_models(args.models).get(args.name)
    if args.models is not None:
        raise RooflineError("--hf-config and --models: give one source of the model, not both")
    return load_hf_config(args.hf_config, name=args.name)


def assumed_parameters(plan: ModelPlan, params: CalibratedParameters) -> list[str]:
    """The calibrated parameters the plan's terms use whose value is an assumed fallback on
    its GPU (not measured or fitted there), in :data:`CALIBRATION_SYMBOLS` order."""
    used: set[object] = set()
    seen: set[tuple[str, bool]] = set()
    for gemm in plan.gemms:
        grouped = gemm.instance.groups > 1
        for name in gemm.times:
            if (name, grouped) in seen:
                continue
            seen.add((name, grouped))
            bf16 = name == BF16_NAME
            recipe = _BASELINE_RECIPE if bf16 else name
            model = build_model(Mode.TRAINING, recipe, plan.fusion, True, grouped)
            wanted = (Quantity.BF16_GEMM,) if bf16 else LOWP_SIDE
            for term in model.terms:
                if term.quantity in wanted:
                    used |= term.expr.free_symbols
    return [
        hw.spec_key
        for hw in CALIBRATION_SYMBOLS
        if hw.symbol in used and params.values[hw.spec_key].basis is Basis.ASSUMED
    ]
