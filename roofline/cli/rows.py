"""``roofline eval``: shapes evaluated and written a chunk at a time.

Output is streamed (memory stays flat), every check runs before the first row, and big
outputs are formatted by worker processes.
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
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from roofline import capability as cap
from roofline import device
from roofline.analysis.error_bands import SIZE_BUCKETS, model_bands_per_size
from roofline.calibration.params import CalibratedParameters
from roofline.cli.calibrated import check_calibrated_args, gpu_calibration, note_assumed
from roofline.cli.output import named_inputs, output, output_path
from roofline.errors import ShapeError, spreadsheet_safe
from roofline.evaluate import (
    as_shape_array,
    check_groups,
    check_shapes,
    columns_for,
    evaluate_columns,
    resolve_match,
    resolve_specs,
)
from roofline.model.compiled import compile_model
from roofline.model.terms import RooflineModel
from roofline.processes import can_fork, ignore_sigint, usable_cpus
from roofline.recipes import Mode, get_recipe
from roofline.shapes import ShapeTable, generate, parse_shape, read_shapes_file
from roofline.specs import GpuMatch, GpuSpec

#: Rows evaluated and written at a time: output is streamed, memory stays flat.
CHUNK_ROWS = 1 << 15


def _collect_shapes(args: argparse.Namespace) -> ShapeTable:
    if args.shape:
        return ShapeTable.from_shapes([parse_shape(s) for s in args.shape])
    if args.shape_gen:
        return ShapeTable.from_shapes(generate(args.shape_gen))
    return read_shapes_file(args.shapes_file)


def gpu_name(args: argparse.Namespace) -> str:
    """``--gpu``, else the current CUDA device's name (needs torch)."""
    if args.gpu is not None:  # `--gpu ""` is a (bad) name, not a request to detect
        return args.gpu
    return device.current_device_name()


def gpu_match(args: argparse.Namespace) -> GpuMatch:
    """The entry of ``--specs`` that ``--gpu`` (else the detected device) resolves to."""
    return resolve_match(gpu_name(args), args.specs)


def warn_fallback(match: GpuMatch) -> None:
    """The variant-fallback warning on stderr, when the name matched only by an entry's name."""
    if match.warning is not None:
        print(f"warning: {match.warning}", file=sys.stderr)


def note_capability(verdict: cap.Capability) -> None:
    """One stderr line for a verdict worth knowing: a warning when the estimate is
    hypothetical, a note when the recipe runs emulated (bf16 GEMMs); nothing otherwise."""
    if verdict.support is cap.Support.HYPOTHETICAL:
        print(f"warning: {verdict.reason}", file=sys.stderr)
    elif verdict.support is cap.Support.EMULATED:
        print(f"note: {verdict.reason}", file=sys.stderr)


def _row_slices(count: int) -> Iterator[slice]:
    return (slice(start, start + CHUNK_ROWS) for start in range(0, count, CHUNK_ROWS))


@dataclass(frozen=True)
class _Chunk:
    """Rows [start, stop) of the output: names (or None) and each column's values."""

    names: Sequence[str] | None
    columns: dict[str, np.ndarray]
    # Fields of each row beyond the columns (the calibrated model's basis and error band,
    # JSON only): field -> one value per row.
    extra: dict[str, Sequence[object]] = field(default_factory=dict)


def _chunks(args: argparse.Namespace, table: ShapeTable) -> Iterator[_Chunk]:
    """Evaluate the table CHUNK_ROWS rows at a time, after checking all of it.

    Every check runs before the first row is produced, so a bad shape in the last row
    never leaves half a table on stdout. Warnings go to stderr only once all passed."""
    mode = Mode.parse(args.mode)
    recipe = get_recipe(args.recipe, mode)
    match = gpu_match(args)
    gpu = match.gpu
    groups = getattr(args, "groups", None)
    grouped = groups is not None
    verdict = cap.require(gpu, recipe, mode, grouped=grouped)
    calibration = gpu_calibration(args, gpu, resolve_specs(args.specs))
    for rows in _row_slices(len(table)):  # in chunks: no full-size temporaries
        check_shapes(recipe, table.M[rows], table.K[rows], table.N[rows])
        if grouped:
            check_groups(table.M[rows], groups)
    warn_fallback(match)
    note_capability(verdict)
    bands: _RowBands | None = None
    if calibration is not None:
        model = compile_model(mode, recipe, args.fusion, calibrated=True, grouped=grouped).model
        note_assumed(calibration, model)
        bands = _RowBands.of(gpu, calibration, model)
    for rows in _row_slices(len(table)):
        mkn = table.M[rows].astype(float) * table.K[rows] * table.N[rows]
        extra = bands.extra(mkn) if bands is not None else {}
        columns = evaluate_columns(
            gpu,
            mode,
            recipe,
            table.M[rows],
            table.K[rows],
            table.N[rows],
            fusion=args.fusion,
            calibration=calibration,
            groups=groups,
        )
        yield _Chunk(None if table.names is None else table.names[rows], columns, extra)


@dataclass(frozen=True)
class _RowBands:
    """The calibrated model's basis and its error band per size bucket
    (:func:`roofline.analysis.error_bands.model_band`), looked up once per bucket."""

    basis: str
    fractions: np.ndarray  # per SIZE_BUCKETS entry, 4 digits

    @classmethod
    def of(cls, gpu: GpuSpec, calibration: CalibratedParameters, model: RooflineModel) -> _RowBands:
        bands = model_bands_per_size(gpu, calibration, model)
        return cls(bands[0].basis.value, np.array([round(b.fraction, 4) for b in bands]))

    def extra(self, mkn: np.ndarray) -> dict[str, Sequence[object]]:
        """``basis`` and ``error_band`` of rows whose M x K x N are ``mkn``."""
        limits = np.array([limit for _, limit in SIZE_BUCKETS])
        bands = self.fractions[np.searchsorted(limits, mkn, side="right")].tolist()
        return {"basis": [self.basis] * len(bands), "error_band": bands}


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
    extra = [
        dict(zip(chunk.extra, row, strict=True)) for row in zip(*chunk.extra.values(), strict=True)
    ]
    rows = [
        {**dict(zip(header, row, strict=True)), **(extra[i] if extra else {})}
        for i, row in enumerate(zip(*values, strict=True))
    ]
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
    if rows < PARALLEL_MIN_ROWS or not can_fork():
        return 0
    cpus = usable_cpus()
    return min(cpus, MAX_WORKERS) if cpus > 1 else 0


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
    with context.Pool(workers, initializer=ignore_sigint) as pool:
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


def groups_arg(text: str) -> int:
    """``--groups``: the expert count of a grouped layer, checked by the evaluator's rule."""
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None:
        raise argparse.ArgumentTypeError(f"expected an integer expert count, received {text!r}")
    try:
        as_shape_array("G (groups)", value)
    except ShapeError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def cmd_eval(args: argparse.Namespace) -> int:
    """``roofline eval``: the roofline columns for each shape (``--calibrated``: from the
    calibrated model; the columns are the same)."""
    get_recipe(args.recipe, args.mode)  # name errors before shape errors
    check_calibrated_args(args)
    path = output_path(args.output, named_inputs(args))
    table = _collect_shapes(args)
    for warning in resolve_specs(args.specs).warnings:
        print(f"warning: {warning}", file=sys.stderr)
    chunks = _chunks(args, table)
    first = next(chunks)  # every check done before any output is opened
    layout = LAYOUTS[args.format](table, list(columns_for(args.mode)))
    with output(path) as out:
        _write_rows(out, layout, itertools.chain([first], chunks), len(table))
    return 0
