"""Machine-readable exports: every table as CSV and JSON, and the ``data/`` folder.

* **Tables.** Each :class:`~site_gen.context.Table` a page shows is also written beside
  the page (the folder its ``index.html`` is served from) as ``<name>.csv`` and
  ``<name>.json``; the name is given where the table is built, from its role on the
  page (``llama``, ``training-ranked``), so download URLs do not move with the code.
  Cells are the page's text with Markdown links reduced to their text; tables of model
  columns carry the numbers to :data:`EXPORT_DIGITS` significant digits (the page shows
  three or four).
* **data/** (``generated/data/``): one evaluation per GPU x mode x recipe x fusion
  (torchao's column names, over the canonical, llama and pow2 shapes) of torchao's
  model (``<mode>-<recipe>-fusion<0|1>``) and of the calibrated model (the same name
  ending ``-calibrated``), ``specs.json`` (the spec database with provenance),
  ``spec.schema.json`` and ``index.json`` (a manifest of every file). Documented on the
  Data page (``docs/data.md``).

JSON is written with stable key order; the evaluations in ``data/`` keep every float at
full precision (Python's ``repr``, which round-trips exactly), the table exports round
them to :data:`EXPORT_DIGITS` significant digits; both without indentation. Everything here
is pure: it returns ``path -> text``.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import json
import posixpath
from collections.abc import Iterable
from typing import Any

from roofline.evaluate import columns_for
from roofline.model.build import MODEL_VERSION
from roofline.specs import GpuSpec, json_schema
from site_gen import config
from site_gen.context import Table, rel
from site_gen.gather.dense import Atlas, RecipeResult, table_sets
from site_gen.markup import safe

GEN = config.GENERATED_DIRNAME
DATA_DIR = f"{GEN}/data"
#: Significant digits of a float in a table export: a relative step of 1e-6 against a
#: model whose cross-validated error is several percent, and about 40% fewer bytes than
#: repr's 17 digits (the table exports were a third of the site). ``data/`` keeps repr.
EXPORT_DIGITS = 6


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def dumps(value: Any, compact: bool = False) -> str:
    """JSON with stable key order (insertion order, which callers fix) and repr floats;
    ``compact``: without indentation or spaces (the table exports and evaluations, a few
    thousand files of numbers that no one reads by eye: a quarter of their bytes were
    indentation)."""
    layout: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 1}
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=_json_default, **layout)
    return text + "\n"


def export_float(value: float) -> float:
    """``value`` to :data:`EXPORT_DIGITS` significant digits (the float nearest that
    decimal, so ``repr`` writes it short)."""
    return float(f"{value:.{EXPORT_DIGITS}g}")


def _cell(value: object) -> object:
    return export_float(value) if isinstance(value, float) else safe.plain(value)


def table_rows(table: Table) -> list[list[object]]:
    """The exported rows: the model's numbers (to :data:`EXPORT_DIGITS` significant
    digits) when the table has them, else plain text."""
    rows = table.raw if table.raw is not None else table.rows
    return [[_cell(c) for c in row] for row in rows]


def table_csv(table: Table, rows: list[list[object]] | None = None) -> str:
    """CSV with a header row; floats as repr (``rows``: :func:`table_rows`, if made)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([safe.csv_cell(safe.plain(h)) for h in table.header])
    for row in rows if rows is not None else table_rows(table):
        writer.writerow([repr(c) if isinstance(c, float) else safe.csv_cell(c) for c in row])
    return out.getvalue()


def table_json(table: Table, rows: list[list[object]] | None = None) -> str:
    """``{"columns": [...], "data": [[...], ...]}``: ``pandas.read_json(orient="split")``
    (``rows``: :func:`table_rows`, if made)."""
    data = rows if rows is not None else table_rows(table)
    record = {"columns": [safe.plain(h) for h in table.header], "data": data}
    return dumps(record, compact=True)


def export_dir(page: str) -> str:
    """The docs folder served beside ``page``: ``a/b.md`` -> ``a/b``, ``a/index.md`` -> ``a``."""
    if posixpath.basename(page) == "index.md":
        return posixpath.dirname(page)
    return page.removesuffix(".md")


def attach_exports(page: str, tables: Iterable[Table], folder: str | None = None) -> dict[str, str]:
    """Give every table its export links; returns the export files (path -> text).

    Each table is written as ``<folder>/<table.name>.csv`` and ``.json``, ``folder``
    being the one served beside ``page`` unless given (for snippets included by a
    hand-written page). The names are part of the download URLs, so they are explicit
    (set where the table is built) and must be slugs, unique on the page.
    """
    folder = folder or export_dir(page)
    files: dict[str, str] = {}
    for table in tables:
        name = table.name
        if not name or config.slug(name) != name:
            raise ValueError(f"table {table.header!r} on {page} needs a slug as export name")
        csv_path, json_path = f"{folder}/{name}.csv", f"{folder}/{name}.json"
        if csv_path in files:
            raise ValueError(f"two tables named {name!r} on {page}")
        rows = table_rows(table)  # once for both files
        files[csv_path] = table_csv(table, rows)
        files[json_path] = table_json(table, rows)
        table.exports = (rel(csv_path, page), rel(json_path, page))
    return files


# -- data/ -------------------------------------------------------------------------------


def spec_record(gpu: GpuSpec) -> dict[str, Any]:
    """A GPU's entry as JSON: every field, sources included, in the dataclass's order."""
    record = dataclasses.asdict(gpu)
    record["measured_matmul_tflops"] = dict(gpu.measured_matmul_tflops)
    return record


def evaluation_path(
    gpu: GpuSpec, mode: str, recipe: str, fusion: bool, calibrated: bool = False
) -> str:
    """``generated/data/<gpu-slug>/<mode>-<recipe>-fusion<0|1>`` (and ``.csv``); the
    calibrated model's evaluation ends ``-calibrated``."""
    stem = f"{DATA_DIR}/{config.slug(gpu.name)}/{mode}-{recipe}-fusion{int(fusion)}"
    return f"{stem}-calibrated" if calibrated else stem


def _evaluation_rows(result: RecipeResult, fusion: bool) -> list[dict[str, Any]]:
    """One row per shape of every table set: its set, name and the model's columns."""
    columns = columns_for(result.mode)
    rows = []
    for shape_set in table_sets():
        table = result.table(shape_set.name, fusion=fusion)
        for i, shape in enumerate(shape_set.shapes):
            row: dict[str, Any] = {"shape_set": shape_set.name, "name": shape.name}
            for c in columns:
                value = table[c][i]
                row[c] = int(value) if c.startswith("fwd_") else float(value)
            rows.append(row)
    return rows


def _evaluation_files(result: RecipeResult, fusion: bool, stem: str) -> dict[str, str]:
    """``<stem>.json`` and ``<stem>.csv`` of one evaluation."""
    columns = ["shape_set", "name", *columns_for(result.mode)]
    rows = _evaluation_rows(result, fusion)
    record = {
        "model_version": MODEL_VERSION,
        "gpu": result.gpu.name,
        "mode": result.mode.value,
        "recipe": result.recipe.name,
        "fusion": fusion,
        "support": result.capability.support.value,
        "reason": result.capability.reason,
        "columns": columns,
        "rows": rows,
    }
    if result.calibrated:  # torchao's files keep exactly the keys they always had
        record["model"] = "calibrated"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: repr(v) if isinstance(v, float) else safe.csv_cell(v) for k, v in row.items()}
        )
    return {f"{stem}.json": dumps(record, compact=True), f"{stem}.csv": out.getvalue()}


def data_files(atlas: Atlas) -> dict[str, str]:
    """Every file of ``generated/data/``."""
    files: dict[str, str] = {}
    sets = table_sets()
    manifest: list[dict[str, Any]] = []
    for gpu in atlas.gpus:
        for mode in config.MODES:
            for result in atlas.for_gpu(gpu.name, mode):
                calibrated = atlas.get(gpu.name, mode, result.recipe.name, calibrated=True)
                for fusion in (False, True):
                    entry: dict[str, Any] = {
                        "gpu": gpu.name,
                        "mode": mode.value,
                        "recipe": result.recipe.name,
                        "fusion": fusion,
                        "support": result.capability.support.value,
                        "json": None,
                        "csv": None,
                        "calibrated_json": None,
                        "calibrated_csv": None,
                    }
                    manifest.append(entry)
                    if not result.computable:
                        continue
                    for r, prefix in ((result, ""), (calibrated, "calibrated_")):
                        stem = evaluation_path(gpu, mode.value, r.recipe.name, fusion, r.calibrated)
                        files.update(_evaluation_files(r, fusion, stem))
                        name = stem.removeprefix(DATA_DIR + "/")
                        entry[f"{prefix}json"] = f"{name}.json"
                        entry[f"{prefix}csv"] = f"{name}.csv"
    files[f"{DATA_DIR}/specs.json"] = dumps(
        {
            "origin": atlas.specs.origin,
            "model_version": MODEL_VERSION,
            "gpus": [spec_record(g) for g in atlas.gpus],
        }
    )
    files[f"{DATA_DIR}/spec.schema.json"] = dumps(json_schema())
    files[f"{DATA_DIR}/index.json"] = dumps(
        {
            "model_version": MODEL_VERSION,
            "shape_sets": {s.name: [[sh.name, sh.M, sh.K, sh.N] for sh in s.shapes] for s in sets},
            "evaluations": manifest,
        }
    )
    return files
