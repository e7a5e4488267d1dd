"""The ``roofline`` command: eval, latex, specs, recipes and build.

Exit status: 0 on success, 2 on bad input (with a message, never a traceback).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from roofline import capability as cap
from roofline import cite, latex
from roofline.errors import RooflineError
from roofline.evaluate import columns_for, evaluate, resolve_gpu, resolve_specs
from roofline.formulas import MODEL_VERSION, Quantity, build_model
from roofline.recipes import RECIPE_LIST, Mode, get_recipe
from roofline.shapes import GENERATORS, Shape, generate, parse_shape, parse_shapes_csv
from roofline.specs import json_schema, load_specs
from roofline.symbols import HARDWARE_SYMBOLS

EXIT_BAD_INPUT = 2
EXIT_WARNINGS = 1


def _add_model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gpu",
        help="GPU name or torch device name (default: the current "
        "CUDA device, needs the torch extra)",
    )
    parser.add_argument("--mode", default="training", help="training (default) or inference")
    parser.add_argument("--recipe", required=True, help="recipe name (see `roofline recipes`)")
    parser.add_argument(
        "--fusion",
        action="store_true",
        help="model fusing the cast's bf16 read with the previous op",
    )
    parser.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="roofline",
        description="Roofline model of low-precision GEMM training and inference "
        f"(model {MODEL_VERSION}).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser("eval", help="evaluate a recipe on a GPU over shapes")
    _add_model_args(ev)
    shapes = ev.add_mutually_exclusive_group(required=True)
    shapes.add_argument("--shape", action="append", metavar="M,K,N", help="a shape (repeatable)")
    shapes.add_argument("--shape-gen", choices=sorted(GENERATORS), help="torchao shape generator")
    shapes.add_argument("--shapes-file", metavar="CSV", help="CSV with header M,K,N[,name]")
    ev.add_argument("--format", choices=("table", "csv", "json"), default="table")
    ev.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    ev.set_defaults(func=cmd_eval)

    lx = sub.add_parser("latex", help="print a formula's LaTeX")
    _add_model_args(lx)
    lx.add_argument(
        "--quantity",
        default="speedup",
        choices=[q.value for q in Quantity],
        help="which total (default speedup)",
    )
    lx.add_argument(
        "--symbolic",
        action="store_true",
        help="named hardware symbols instead of the GPU's numbers",
    )
    lx.add_argument(
        "--cite",
        action="store_true",
        help="print the site's cite snippet (Markdown permalink + $$ block) instead; "
        f"permalinks start at ${{{cite.SITE_URL_ENV}}} or {cite.DEFAULT_SITE_URL}",
    )
    lx.set_defaults(func=cmd_latex)

    sp = sub.add_parser("specs", help="list or lint spec files")
    sp_sub = sp.add_subparsers(dest="specs_command", required=True, metavar="ACTION")
    for action, func, text in (
        ("list", cmd_specs_list, "GPUs and the capability matrix"),
        ("check", cmd_specs_check, "lint a spec file"),
    ):
        p = sp_sub.add_parser(action, help=text)
        p.add_argument("file", nargs="?", help="spec file (default: bundled database)")
        p.set_defaults(func=func)

    show = sp_sub.add_parser("show", help="one GPU's figures with sources and efficiency basis")
    show.add_argument("gpu", help="GPU name or device name")
    show.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    show.set_defaults(func=cmd_specs_show)

    schema = sp_sub.add_parser("schema", help="print the spec file's JSON Schema")
    schema.set_defaults(func=cmd_specs_schema)

    df = sub.add_parser(
        "diff",
        help="compare two spec files: fields, speedups, recommendations, break-even",
        description="Compare spec files BASE and HEAD (or HEAD with the same file at git "
        "revision --base-rev). Exit 0 whether or not they differ; 2 on invalid input.",
    )
    df.add_argument("files", nargs="*", metavar="FILE", help="BASE HEAD, or HEAD with --base-rev")
    df.add_argument(
        "--base-rev", metavar="REV", help="take BASE from git: HEAD's file at revision REV"
    )
    df.add_argument("--format", choices=("markdown", "json"), default="markdown")
    df.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    df.set_defaults(func=cmd_diff)

    rc = sub.add_parser("recipes", help="list the recipes")
    rc.set_defaults(func=cmd_recipes)

    bd = sub.add_parser("build", help="build the reference site")
    bd.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    bd.add_argument("--site-dir", default="site", help="output folder (default: site/)")
    bd.add_argument("--serve", action="store_true", help="serve the built site afterwards")
    bd.add_argument("--no-cache", action="store_true",
                    help="ignore the build cache (a cold build); default: reuse what is unchanged")
    bd.set_defaults(func=cmd_build)
    return parser


# -- eval ----------------------------------------------------------------------


def _collect_shapes(args: argparse.Namespace) -> list[Shape]:
    if args.shape:
        return [parse_shape(s) for s in args.shape]
    if args.shape_gen:
        return generate(args.shape_gen)
    path = Path(args.shapes_file)
    try:
        text = path.read_text("utf-8")
    except OSError as exc:
        raise RooflineError(f"cannot read shapes file {str(path)!r}: {exc.strerror}") from None
    return parse_shapes_csv(text, str(path))


def _gpu_name(args: argparse.Namespace) -> str:
    if args.gpu:
        return args.gpu
    from roofline.device import current_device_name

    return current_device_name()


def _rows(
    shapes: list[Shape], result: dict[str, np.ndarray], columns: Sequence[str]
) -> list[dict[str, object]]:
    named = any(s.name for s in shapes)
    rows = []
    for i, shape in enumerate(shapes):
        row: dict[str, object] = {"name": shape.name} if named else {}
        for column in columns:
            value = result[column][i]
            row[column] = int(value) if column.startswith("fwd_") else float(value)
        rows.append(row)
    return rows


def _format_table(rows: list[dict[str, object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    headers = list(rows[0])
    cells = [[cell(row[h]) for h in headers] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines) + "\n"


def _format_csv(rows: list[dict[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    return out.getvalue()


def _format_json(rows: list[dict[str, object]]) -> str:
    # json writes floats with repr: full precision, round-trips exactly.
    return json.dumps(rows, indent=2, allow_nan=False) + "\n"


FORMATTERS: dict[str, Callable[[list[dict[str, object]]], str]] = {
    "table": _format_table,
    "csv": _format_csv,
    "json": _format_json,
}


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _evaluate_with_warnings(args: argparse.Namespace, shapes: list[Shape]) -> dict[str, np.ndarray]:
    m, k, n = (np.array([getattr(s, d) for s in shapes], dtype=np.int64) for d in "MKN")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cap.HypotheticalWarning)
        result = evaluate(
            _gpu_name(args), args.mode, args.recipe, m, k, n, fusion=args.fusion, specs=args.specs
        )
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    return result


def cmd_eval(args: argparse.Namespace) -> int:
    """``roofline eval``: the roofline columns for each shape."""
    get_recipe(args.recipe, args.mode)  # name errors before shape errors
    shapes = _collect_shapes(args)
    for warning in resolve_specs(args.specs).warnings:
        print(f"warning: {warning}", file=sys.stderr)
    result = _evaluate_with_warnings(args, shapes)
    rows = _rows(shapes, result, columns_for(args.mode))
    text = FORMATTERS[args.format](rows)
    if args.output:
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0


# -- latex, specs, recipes, build ------------------------------------------------


def cmd_latex(args: argparse.Namespace) -> int:
    """``roofline latex``: the formula as sympy prints it."""
    mode = Mode.parse(args.mode)
    recipe = get_recipe(args.recipe, mode)
    model = build_model(mode, recipe, args.fusion)
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
    gpu = resolve_gpu(_gpu_name(args), args.specs)
    verdict = cap.require(gpu, recipe, mode)
    if verdict.support is cap.Support.HYPOTHETICAL:
        print(f"warning: {verdict.reason}", file=sys.stderr)
    if args.cite:  # the GPU x recipe page's snippet, byte for byte
        sys.stdout.write(cite.instantiated_total(gpu, mode, recipe.name, quantity).snippet)
        return 0
    print(latex.instantiated(expr, gpu))
    return 0


def _fmt_peak(value: float | None) -> str:
    return "-" if value is None else f"{value / 1e12:,.0f}"


def cmd_specs_list(args: argparse.Namespace) -> int:
    """``roofline specs list``: each GPU's figures, then the capability matrix."""
    specs = load_specs(args.file)
    print(f"{len(specs)} GPUs in {specs.origin}\n")
    header = (
        f"{'GPU':28} {'bf16':>7} {'fp8':>7} {'fp4':>7} {'TB/s':>6} {'eta_gemm':>8} {'eta_mem':>7}"
    )
    print(header + "  efficiencies")
    for gpu in specs.values():
        print(
            f"{gpu.name:28} {_fmt_peak(gpu.bf16_peak_tops):>7} {_fmt_peak(gpu.fp8_peak_tops):>7} "
            f"{_fmt_peak(gpu.fp4_peak_tops):>7} {gpu.peak_mem_bw_bytes_sec / 1e12:>6.3g} "
            f"{gpu.pct_achievable_gemm_tops:>8} {gpu.pct_achievable_mem_bw:>7}  "
            f"{'assumed' if gpu.efficiency_assumed else gpu.efficiency_basis}"
        )
    print("\n(peaks in dense TFLOP/s)\n\nCapability: N = native, h = hypothetical, - = impossible")
    marks = {cap.Support.NATIVE: "N", cap.Support.HYPOTHETICAL: "h", cap.Support.IMPOSSIBLE: "-"}
    table = cap.matrix(specs)
    width = max(len(r.name) for r in RECIPE_LIST)
    names = list(specs)
    for i, name in enumerate(names):
        print(" " * (width + 2) + "| " * i + name)
    for recipe in RECIPE_LIST:
        row = " ".join(marks[table[g][recipe.name].support] for g in names)
        print(f"{recipe.name:>{width}}  {row}")
    for warning in specs.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_specs_check(args: argparse.Namespace) -> int:
    """``roofline specs check``: lint; errors exit 2, warnings alone exit 1.

    Loading for ``eval`` only prints warnings; ``check`` is the gate a spec change must
    pass, so a likely mix-up (sparse fp8, fp4 below fp8) fails it too.
    """
    specs = load_specs(args.file)
    for warning in specs.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if specs.warnings:
        print(
            f"{specs.origin}: {len(specs.warnings)} warning(s); fix them or note why in the "
            "entry's notes and correct the figure",
            file=sys.stderr,
        )
        return EXIT_WARNINGS
    print(f"ok: {specs.origin}: {len(specs)} GPUs, no problems")
    return 0


def cmd_specs_show(args: argparse.Namespace) -> int:
    """``roofline specs show``: one GPU's figures, provenance and capabilities."""
    gpu = resolve_specs(args.specs).find(args.gpu)
    print(f"{gpu.name}  ({gpu.vendor} {gpu.architecture}, {gpu.sku})".replace(" ,", ""))
    for hw in HARDWARE_SYMBOLS:
        value = gpu.value(hw.spec_key)
        unit = "" if hw.unit == "1" else f" {hw.unit}"
        shown = "absent" if value is None else f"{value:.6g}{unit}"
        print(f"  {hw.spec_key:26} {shown}")
    print(f"  efficiency basis           {gpu.efficiency_basis}")
    if gpu.efficiency_reference:
        print(f"  efficiency reference       {gpu.efficiency_reference}")
    print(f"  peaks                      {gpu.peak_basis}, {gpu.accumulate_dtype} accumulate")
    print(f"  native formats             {', '.join(gpu.native_formats) or 'none'}")
    if gpu.derivation:
        print(f"  derivation                 {gpu.derivation}")
    print("  sources:")
    for source in gpu.source_records:
        read = f" (read {source.read_on})" if source.read_on else ""
        print(f"    {source.url}{read}: {', '.join(source.figures)}")
    if gpu.notes:
        print(f"  notes: {gpu.notes}")
    return 0


def cmd_specs_schema(args: argparse.Namespace) -> int:
    """``roofline specs schema``: the JSON Schema of spec files."""
    print(json.dumps(json_schema(), indent=2))
    return 0


BUNDLED_SPEC_PATH = Path(__file__).resolve().parent / "data" / "gpus.toml"


def cmd_diff(args: argparse.Namespace) -> int:
    """``roofline diff``: what changed between two spec files, as Markdown or JSON."""
    from roofline import diff as spec_diff
    from roofline.history import load_specs_at_rev

    if args.base_rev is not None:
        if len(args.files) > 1:
            raise RooflineError("with --base-rev give at most one file (HEAD)")
        head_path = Path(args.files[0]) if args.files else BUNDLED_SPEC_PATH
        head = load_specs(head_path)
        base = load_specs_at_rev(args.base_rev, head_path)
    elif len(args.files) == 2:
        base, head = load_specs(args.files[0]), load_specs(args.files[1])
    else:
        raise RooflineError("give two spec files (BASE HEAD), or --base-rev REV [HEAD]")
    for warning in (*base.warnings, *head.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    result = spec_diff.diff_specs(base, head)
    render = spec_diff.to_json if args.format == "json" else spec_diff.to_markdown
    text = render(result)
    if args.output:
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_recipes(args: argparse.Namespace) -> int:
    """``roofline recipes``: the registry, one recipe a line."""
    for recipe in RECIPE_LIST:
        modes = ",".join(m.value for m in recipe.modes)
        alias = f" (alias: {', '.join(recipe.aliases)})" if recipe.aliases else ""
        print(f"{recipe.name:34} {recipe.family.value:9} {modes:19} {recipe.summary}{alias}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    """``roofline build``: the site (see :mod:`site_gen`)."""
    from site_gen.build import build_site

    build_site(specs_path=args.specs, site_dir=Path(args.site_dir), serve=args.serve,
               use_cache=not args.no_cache)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``roofline`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except RooflineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `roofline eval ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
