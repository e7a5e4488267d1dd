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
import textwrap
from collections.abc import Sequence

from roofline.analysis.policy import BF16_NAME, RUNNABLE, ModelPlan, plan_model
from roofline.calibration.params import Basis, CalibratedParameters
from roofline.capability import Support, classify
from roofline.cli.calibrated import add_calibrated_args, gpu_calibration, progress
from roofline.cli.model_export import model_csv, model_json, models_json, models_text
from roofline.cli.output import named_inputs, output, output_path
from roofline.cli.rows import gpu_match, warn_fallback
from roofline.errors import RooflineError, printable
from roofline.evaluate import resolve_specs
from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.terms import LOWP_SIDE, Quantity
from roofline.presets import ModelPreset, ParameterError, load_models
from roofline.presets.hf import SUPPORTED_TYPES, load_hf_config
from roofline.recipes import Mode, get_recipe
from roofline.symbols import CALIBRATION_SYMBOLS

#: The table fits a 100-column terminal; a GEMM name too long for it is cut with "...".
LINE_WIDTH = 100
# Every recipe's model has the same bf16 GEMM terms; the assumed-parameter note reads them
# from this one (the policy's baseline too).
_BASELINE_RECIPE = "tensorwise"
_MIN_NAME_WIDTH = 12


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
        print(f"note: {_assumed_sentence(plan, assumed)}", file=sys.stderr)
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
            preset, match.gpu, tokens, ep=ep, calibrated=args.calibrated, fusion=args.fusion,
            recipes=recipes, include=include, specs=specs, calibration=calibration,
        )  # fmt: skip
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


def _assumed_sentence(plan: ModelPlan, assumed: Sequence[str]) -> str:
    gpu = printable(plan.gpu.name)
    return (
        f"{gpu}: calibrated {', '.join(assumed)} assumed, not measured "
        f'(roofline specs show "{gpu}" --calibrated lists the fallbacks)'
    )


# -- table -----------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    """Milliseconds, 4 significant digits without an exponent from 0.001 ms up."""
    ms = seconds * 1e3
    return f"{ms:.0f}" if ms >= 1000 else f"{ms:#.4g}".rstrip(".")


def _x(speedup: float) -> str:
    return f"{speedup:.2f}x"


def _wrap(text: str, indent: str = "", first: str | None = None) -> list[str]:
    start = indent if first is None else first
    return textwrap.wrap(
        text, LINE_WIDTH, initial_indent=start, subsequent_indent=indent, break_on_hyphens=False
    ) or [start.rstrip()]


def _candidates_text(plan: ModelPlan) -> str:
    """The candidates, each marked where it is not native."""
    if not plan.recipes:
        return "none (see --include-hypothetical, --recipes)"
    grouped = any(g.instance.groups > 1 for g in plan.gemms)
    names = []
    for name in plan.recipes:
        recipe = get_recipe(name, Mode.TRAINING)
        dense = classify(plan.gpu, recipe, Mode.TRAINING).support
        moe = classify(plan.gpu, recipe, Mode.TRAINING, True).support if grouped else dense
        mark = "" if dense is Support.NATIVE else f" ({dense})"
        if not mark and moe is not Support.NATIVE:
            mark = f" (grouped GEMMs {moe})"
        names.append(name + mark)
    return ", ".join(names)


def candidates_how(recipes: Sequence[str] | None, include_hypothetical: bool) -> str:
    """How the candidate recipes were chosen, in words."""
    if recipes is not None:
        return "given by --recipes"
    if include_hypothetical:
        return "the recipes native or hypothetical on this GPU"
    return "the recipes whose dense GEMMs run natively on this GPU"


def _header(plan: ModelPlan, assumed: Sequence[str], how: str) -> list[str]:
    preset = plan.model
    lines = _wrap(
        f"{printable(preset.display_name)} ({printable(preset.name)}) on "
        f"{printable(plan.gpu.name)}, "
        f"training: {plan.tokens} tokens per step per device, ep {plan.ep}"
    )
    for block in preset.blocks:
        if block.experts is not None and block.top_k is not None:
            lines += _wrap(
                f"{printable(block.name)}: {block.experts // plan.ep} of {block.experts} "
                f"experts per device, top-{block.top_k}: expert GEMMs of "
                f"{plan.tokens * block.top_k} routed rows in {block.experts // plan.ep} groups",
                "  ",
            )
    if plan.calibrated:
        which = "the calibrated model (fitted on published measurements)"
    else:
        which = f"torchao's model ({MODEL_VERSION})"
    fusion = "on" if plan.fusion else "off"
    lines += _wrap(f"model: {which}; fusion: {fusion}")
    if assumed:
        lines += _wrap(f"assumed: {_assumed_sentence(plan, assumed)}", "  ", "")
    lines += _wrap(f"candidates ({how}): {_candidates_text(plan)}", "  ", "")
    return lines


_GEMM_HEADS = ("GEMM", "kind", "M", "K", "N", "G", "count", "bf16 ms", "best", "ms", "speedup")
# Gap before each column: one space between the dimension columns, two elsewhere.
_GEMM_GAPS = (0, 2, 2, 1, 1, 1, 1, 2, 2, 1, 2)
_LEFT = {0, 1, 8}  # text columns, left-aligned
_BEST = 8
_MIN_RECIPE_WIDTH = len("mxfp8_cublas_rceil")


def _gemm_cells(plan: ModelPlan) -> list[list[str] | str]:
    """Table rows (cells) with a block heading (a str) before each block's GEMMs."""
    blocks = {block.name: block for block in plan.model.blocks}
    rows: list[list[str] | str] = []
    current = None
    for gemm in plan.gemms:
        inst = gemm.instance
        if inst.block != current:
            current = inst.block
            block = blocks[inst.block]
            many = "layer" if block.layers == 1 else "layers"
            rows.append(f"{printable(block.name)} ({block.layers} {many})")
        best = gemm.best
        rows.append([
            "  " + printable(inst.name), str(inst.kind), str(inst.M), str(inst.K), str(inst.N),
            str(inst.groups), str(inst.count), _ms(gemm.times[BF16_NAME].total_s), best,
            _ms(gemm.times[best].total_s), _x(gemm.speedup(best)),
        ])  # fmt: skip
    return rows


def _gemm_table(plan: ModelPlan) -> list[str]:
    rows = _gemm_cells(plan)
    cells = [r for r in rows if isinstance(r, list)]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(_GEMM_HEADS)]
    # Over LINE_WIDTH (long names from a --models file, the longest recipe names), the best
    # recipe's column gives way down to _MIN_RECIPE_WIDTH, then the GEMM names; both are cut
    # with "..." (the totals, CSV and JSON keep them whole).
    budget = LINE_WIDTH - (sum(widths) - widths[0] - widths[_BEST]) - sum(_GEMM_GAPS)
    widths[_BEST] = min(widths[_BEST], max(_MIN_RECIPE_WIDTH, budget - widths[0]))
    widths[0] = min(widths[0], max(_MIN_NAME_WIDTH, budget - widths[_BEST]))

    def line(values: Sequence[str]) -> str:
        parts = []
        for i, value in enumerate(values):
            value = _cut(value, widths[i])
            aligned = value.ljust(widths[i]) if i in _LEFT else value.rjust(widths[i])
            parts.append(" " * _GEMM_GAPS[i] + aligned)
        return "".join(parts).rstrip()

    out = [line(_GEMM_HEADS)]
    out += [line(row) if isinstance(row, list) else _cut(row, LINE_WIDTH) for row in rows]
    return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _totals_table(plan: ModelPlan) -> list[str]:
    totals = [plan.baseline, *plan.singles(), plan.mix()]
    width = max(len("recipe"), *(len(t.recipe) for t in totals))
    heads = ("forward ms", "backward ms", "total ms", "speedup", "fallbacks")
    out = [f"  {'recipe':{width}}  " + "  ".join(heads)]
    best = plan.best_single()
    for total in totals:
        time = total.time
        numbers = [_ms(time.forward_s), _ms(time.backward_s), _ms(time.total_s)]
        cells = [n.rjust(len(h)) for n, h in zip(numbers, heads, strict=False)]
        cells.append(_x(total.speedup).rjust(len(heads[3])))
        if total.recipe not in (BF16_NAME, plan.mix().recipe):
            cells.append(str(len(total.fallbacks)).rjust(len(heads[4])))
        is_best = best is not None and total.recipe == best.recipe
        mark = "  <- best" if is_best else ""
        out.append(f"  {total.recipe:{width}}  " + "  ".join(cells) + mark)
    return out


def _mix_lines(plan: ModelPlan) -> list[str]:
    chosen: dict[str, list[str]] = {}
    for gemm in plan.gemms:
        chosen.setdefault(gemm.best, []).append(printable(gemm.instance.key))
    ranked = sorted(chosen.items(), key=lambda item: -len(item[1]))  # stable: ties in order
    parts = [f"{name} for {len(keys)}" for name, keys in ranked]
    lines = _wrap(f"the mix runs {', '.join(parts)} of the {len(plan.gemms)} GEMMs", "    ", "  ")
    if BF16_NAME in chosen and len(chosen) > 1:
        lines += _wrap(f"kept in bf16: {', '.join(chosen[BF16_NAME])}", "    ", "  ")
    return lines


def _excluded_lines(plan: ModelPlan) -> list[str]:
    """Per recipe, the GEMMs it cannot run, grouped by reason."""
    lines = ["GEMMs a recipe cannot run (in that recipe's total they run in bf16):"]
    for name in plan.recipes:
        reasons: dict[str, list[str]] = {}
        for gemm in plan.gemms:
            if name in gemm.excluded:
                reasons.setdefault(gemm.excluded[name], []).append(printable(gemm.instance.key))
        for reason, keys in reasons.items():
            lines += _wrap(f"{name}: {', '.join(keys)}", "    ", "  ")
            lines += _wrap(printable(reason), "      ", "    ")
    if len(lines) == 1:
        lines.append("  none: every candidate recipe runs every GEMM")
    return lines


def model_table(plan: ModelPlan, assumed: Sequence[str], how: str) -> str:
    """The ``--format table`` text, at most :data:`LINE_WIDTH` columns for the presets;
    ``how``: how the candidates were chosen (:func:`candidates_how`)."""
    parts = [
        _header(plan, assumed, how),
        _wrap("per GEMM: ms per training step (forward + backward, all count runs); G: experts "
              "per device (1: a dense GEMM); best: the least time, bf16 included"),
        _gemm_table(plan),
        _wrap("totals: every linear layer, ms per training step; fallbacks: GEMMs the recipe "
              "cannot run, which run in bf16 in its total"),
        _totals_table(plan) + _mix_lines(plan),
        _excluded_lines(plan),
    ]  # fmt: skip
    return "\n\n".join("\n".join(part) for part in parts) + "\n"
