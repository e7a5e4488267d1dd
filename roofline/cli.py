"""The ``roofline`` command: eval, latex, specs, recipes and build.

Exit status: 0 on success, 2 on bad input (with a message, never a traceback).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import itertools
import json
import multiprocessing
import multiprocessing.pool
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TextIO

import numpy as np

from roofline import capability as cap
from roofline import cite, latex
from roofline.errors import RooflineError, printable, spreadsheet_safe
from roofline.evaluate import (
    check_shapes,
    columns_for,
    evaluate_columns,
    resolve_gpu,
    resolve_specs,
)
from roofline.formulas import MODEL_VERSION, Quantity, build_model
from roofline.recipes import RECIPE_LIST, Mode, get_recipe
from roofline.shapes import GENERATORS, ShapeTable, generate, parse_shape, read_shapes_file
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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (usage stays in ``--help``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``error: MESSAGE`` and where the options are listed; exit 2."""
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(
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

#: Rows evaluated and written at a time: output is streamed, memory stays flat.
CHUNK_ROWS = 1 << 15


def _collect_shapes(args: argparse.Namespace) -> ShapeTable:
    if args.shape:
        return ShapeTable.from_shapes([parse_shape(s) for s in args.shape])
    if args.shape_gen:
        return ShapeTable.from_shapes(generate(args.shape_gen))
    return read_shapes_file(args.shapes_file)


def _gpu_name(args: argparse.Namespace) -> str:
    if args.gpu:
        return args.gpu
    from roofline.device import current_device_name

    return current_device_name()


def _row_slices(count: int) -> Iterator[slice]:
    return (slice(start, start + CHUNK_ROWS) for start in range(0, count, CHUNK_ROWS))


@dataclass(frozen=True)
class _Chunk:
    """Rows [start, stop) of the output: names (or None) and each column's values."""

    names: Sequence[str] | None
    columns: dict[str, np.ndarray]


def _chunks(args: argparse.Namespace, table: ShapeTable) -> Iterator[_Chunk]:
    """Evaluate the table CHUNK_ROWS rows at a time, after checking all of it.

    Every check runs before the first row is produced, so a bad shape in the last row
    never leaves half a table on stdout. Warnings go to stderr only once all passed."""
    mode = Mode.parse(args.mode)
    recipe = get_recipe(args.recipe, mode)
    gpu = resolve_gpu(_gpu_name(args), args.specs)
    verdict = cap.require(gpu, recipe, mode)
    for rows in _row_slices(len(table)):  # in chunks: no full-size temporaries
        check_shapes(recipe, table.M[rows], table.K[rows], table.N[rows])
    if verdict.support is cap.Support.HYPOTHETICAL:
        print(f"warning: {verdict.reason}", file=sys.stderr)
    for rows in _row_slices(len(table)):
        columns = evaluate_columns(
            gpu, mode, recipe, table.M[rows], table.K[rows], table.N[rows], fusion=args.fusion
        )
        yield _Chunk(None if table.names is None else table.names[rows], columns)


def _is_int_column(column: str) -> bool:
    return column.startswith("fwd_")


@dataclass(frozen=True)
class _Layout:
    """An output format: ``head``, then each chunk rendered (``between`` chunks), ``tail``.

    ``render`` is a module-level function or partial, so worker processes can run it."""

    head: str
    render: Callable[[_Chunk], str]
    tail: str = ""
    between: str = ""


# Widest "%.4g" of a float64 ("-1.235e-100"): with it the table's widths are known before
# its first row, and the table streams like the other formats.
_TABLE_FLOAT_WIDTH = 11


def _table_layout(table: ShapeTable, header: list[str]) -> _Layout:
    widths = {h: len(h) for h in header}
    for dim, column in zip("MKN", header[:3], strict=True):
        widths[column] = max(len(column), len(str(int(getattr(table, dim).max()))))
    for column in header[3:]:
        widths[column] = max(widths[column], _TABLE_FLOAT_WIDTH)
    heads = list(header)
    if table.names is not None:
        widths["name"] = max(len("name"), max(map(len, table.names)))
        heads.insert(0, "name")
    lines = "  ".join(h.rjust(widths[h]) for h in heads), "  ".join("-" * widths[h] for h in heads)
    specs = {c: f">{widths[c]}" + ("" if _is_int_column(c) else ".4g") for c in header}
    render = functools.partial(_table_text, name_width=widths.get("name", 0), specs=specs)
    return _Layout("\n".join(lines) + "\n", render)


def _table_text(chunk: _Chunk, name_width: int, specs: dict[str, str]) -> str:
    cells = [] if chunk.names is None else [[n.rjust(name_width) for n in chunk.names]]
    for column, spec in specs.items():
        cells.append([format(v, spec) for v in chunk.columns[column].tolist()])
    return "".join("  ".join(row) + "\n" for row in zip(*cells, strict=True))


# A name that a spreadsheet would run, or that needs CSV quoting.
_CSV_NAME_CARE = re.compile('[,"\r\n]|(?:^|\0)[=+@\t-]')


def _csv_name(name: str) -> str:
    """A name cell: formula-safe, quoted when it holds a comma, quote or line end."""
    name = spreadsheet_safe(name)
    if any(c in name for c in ',"\r\n'):
        return '"' + name.replace('"', '""') + '"'
    return name


def _csv_text(chunk: _Chunk, header: list[str]) -> str:
    # One %-format a row: ints with %d, floats with %r (repr: full precision, round-trips
    # exactly). Float repr is most of the time of a big output.
    columns: list[Iterable[object]] = [chunk.columns[c].tolist() for c in header]
    spec = ",".join("%d" if _is_int_column(c) else "%r" for c in header) + "\n"
    if chunk.names is not None:  # one search a chunk: most names need no care
        names = list(chunk.names)
        plain = _CSV_NAME_CARE.search("\0".join(names)) is None
        columns.insert(0, names if plain else map(_csv_name, names))
        spec = "%s," + spec
    return "".join(map(spec.__mod__, zip(*columns, strict=True)))


def _csv_layout(table: ShapeTable, header: list[str]) -> _Layout:
    head = ",".join(["name", *header] if table.names is not None else header) + "\n"
    return _Layout(head, functools.partial(_csv_text, header=header))


def _json_text(chunk: _Chunk, header: list[str]) -> str:
    values = [chunk.columns[c].tolist() for c in header]
    rows = [dict(zip(header, row, strict=True)) for row in zip(*values, strict=True)]
    if chunk.names is not None:
        rows = [{"name": name, **row} for name, row in zip(chunk.names, rows, strict=True)]
    return json.dumps(rows, indent=2, allow_nan=False)[2:-2]  # without "[\n" and "\n]"


def _json_layout(table: ShapeTable, header: list[str]) -> _Layout:
    # The same bytes as json.dumps(all_rows, indent=2), one chunk at a time.
    return _Layout("[\n", functools.partial(_json_text, header=header), "\n]\n", ",\n")


LAYOUTS: dict[str, Callable[[ShapeTable, list[str]], _Layout]] = {
    "table": _table_layout,
    "csv": _csv_layout,
    "json": _json_layout,
}

#: Outputs of this many rows or more are formatted by worker processes: turning floats
#: into text (repr, ~0.3-1 us a number) is most of a big eval's time, and it parallelises.
PARALLEL_MIN_ROWS = 4 * CHUNK_ROWS
MAX_WORKERS = 8


def _worker_count(rows: int) -> int:
    """Worker processes for formatting ``rows`` rows: 0 (format here) when few rows, one
    CPU, or no fork (a forked worker starts at once; a spawned one imports everything)."""
    if rows < PARALLEL_MIN_ROWS or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        cpus = os.cpu_count() or 1
    return min(cpus, MAX_WORKERS) if cpus > 1 else 0


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group; the parent reports it and stops the pool,
    # a worker must not print a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _rendered(
    render: Callable[[_Chunk], str], chunks: Iterator[_Chunk], rows: int
) -> Iterator[str]:
    """``render(chunk)`` of each chunk, in order; in worker processes for big outputs, with
    at most two chunks a worker in flight so memory stays flat."""
    workers = _worker_count(rows)
    if not workers:
        yield from map(render, chunks)
        return
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, initializer=_ignore_sigint) as pool:
        pending: collections.deque[multiprocessing.pool.AsyncResult[str]] = collections.deque()
        for chunk in chunks:
            pending.append(pool.apply_async(render, (chunk,)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _write_rows(out: TextIO, layout: _Layout, chunks: Iterator[_Chunk], rows: int) -> None:
    out.write(layout.head)
    # closing: a failed write stops the worker processes at once, not at garbage collection
    with contextlib.closing(_rendered(layout.render, chunks, rows)) as texts:
        for i, text in enumerate(texts):
            out.write(layout.between + text if i else text)
    out.write(layout.tail)


def cmd_eval(args: argparse.Namespace) -> int:
    """``roofline eval``: the roofline columns for each shape."""
    get_recipe(args.recipe, args.mode)  # name errors before shape errors
    output = _output_path(args.output)
    table = _collect_shapes(args)
    for warning in resolve_specs(args.specs).warnings:
        print(f"warning: {warning}", file=sys.stderr)
    chunks = _chunks(args, table)
    first = next(chunks)  # every check done before any output is opened
    layout = LAYOUTS[args.format](table, list(columns_for(args.mode)))
    with _output(output) as out:
        _write_rows(out, layout, itertools.chain([first], chunks), len(table))
    return 0


# -- output files ------------------------------------------------------------------


def _output_path(value: str | None) -> Path | None:
    """The ``-o`` path, refused early when it names a folder (one line, exit 2)."""
    if value is None:
        return None
    if not value.strip():
        raise RooflineError("output '' is empty; give a file name, e.g. -o out.csv")
    path = Path(value)
    if value.endswith(("/", os.sep)) or path.is_dir():
        example = os.path.join(value, "out.csv")
        raise RooflineError(
            f"output {value!r} names a folder; give a file name in it, e.g. {example}"
        )
    return path


def _write_error(path: Path, exc: OSError) -> RooflineError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileExistsError | NotADirectoryError):
        reason = "a part of the path is a file, not a folder"
    return RooflineError(f"cannot write output file {str(path)!r}: {reason}")


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text file written via a temporary file and renamed: never half-written.

    Missing parent folders are created; a symlink's target is replaced, not the link;
    a device or FIFO (``-o /dev/null``, ``/dev/stdout``) is written in place, as a rename
    would replace the device node itself. OSError (a read-only folder, a path through a
    file, a full disk) becomes a RooflineError naming the path; on any failure the
    temporary file is removed and ``path`` is untouched."""
    if path.exists() and not path.is_file():  # stat follows links: /dev/stdout -> a pipe
        with _write_errors(path), path.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        return
    real = Path(os.path.realpath(path))
    with _write_errors(path):
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        with _write_errors(path):
            os.chmod(tmp, _file_mode(real))  # mkstemp's 0600 would stick to the result
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                yield handle
            os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _write_errors(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise _write_error(path, exc) from None


def _file_mode(path: Path) -> int:
    """The mode for ``path``: the file's own when it exists, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    with atomic_writer(path) as handle:
        handle.write(text)


@contextlib.contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    """``-o FILE`` (atomic) or stdout."""
    if path is None:
        yield sys.stdout
    else:
        with atomic_writer(path) as handle:
            yield handle


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

    output = _output_path(args.output)
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
    with _output(output) as out:
        out.write(text)
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


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class _PrintableStream:
    """A text stream whose writes pass through :func:`roofline.errors.printable`.

    main() puts it in place of sys.stdout and sys.stderr while a command runs, so no
    name, note or path from a spec or shapes file can send terminal control sequences."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterator[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:  # flush, fileno, isatty, encoding ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def _printable_output() -> Iterator[None]:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PrintableStream(saved[0]), _PrintableStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _os_error_message(exc: OSError) -> str:
    """One line for an OSError: the path it names and the reason."""
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    return f"{os.fsdecode(exc.filename)!r}: {reason}"


def _named_files(args: argparse.Namespace) -> list[str]:
    """The files named on the command line (spec files, shapes file)."""
    named = [getattr(args, key, None) for key in ("specs", "file", "shapes_file")]
    named += getattr(args, "files", None) or []
    return [str(f) for f in named if f]


def _silence_stdout() -> None:
    # The reader went away (`roofline eval ... | head`): point stdout at /dev/null so
    # Python's flush at exit does not complain about the broken pipe.
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``roofline`` console script.

    Exit 0 on success, 2 with a one-line message on any input a user can get wrong (a
    RooflineError, or an OSError or UnicodeDecodeError from a file they named), 130 on
    Ctrl-C. Everything printed passes through :func:`roofline.errors.printable`."""
    args = argparse.Namespace()
    with _printable_output():
        try:
            args = build_parser().parse_args(argv)
            return args.func(args)
        except SystemExit as exc:  # --help, or a usage error argparse printed
            if exc.code is None or isinstance(exc.code, int):
                return exc.code or 0
            print(f"error: {exc.code}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except RooflineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except BrokenPipeError:  # e.g. `roofline eval ... | head`
            _silence_stdout()
            return 0
        except OSError as exc:  # a file the user named: unreadable, a folder, read-only
            print(f"error: {_os_error_message(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except UnicodeDecodeError as exc:  # the readers name their file; this is a backstop
            files = ", ".join(map(repr, _named_files(args))) or "a file given"
            print(f"error: {files}: not UTF-8 text (byte {exc.start}: {exc.reason})",
                  file=sys.stderr)  # fmt: skip
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
