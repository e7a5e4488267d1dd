"""``roofline validate``'s output: the JSON document (its format is in
:mod:`roofline.cli.validate`) and the text tables, per set, per role and for the
cross-validation by source.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable
from typing import Any

from roofline import units
from roofline.analysis.crossval import CrossValidation, source_key
from roofline.analysis.cv_groups import by_library
from roofline.analysis.validation import (
    ModelKind,
    PointResult,
    SetResult,
    ValidationReport,
    mean_abs_error,
    worst_error,
)
from roofline.measurements import MeasurementSet, Point, SetRole

FORMAT_VERSION = 1
MODELS = (ModelKind.TORCHAO, ModelKind.CALIBRATED)
# The table fits a 100-column terminal: a shape column of at most SHAPE_WIDTH, and five
# numbers of NUMBER_WIDTH, two spaces apart, after a two-space indent.
LINE_WIDTH = 100
NUMBER_WIDTH = 10
SHAPE_WIDTH = LINE_WIDTH - 2 - 5 * (NUMBER_WIDTH + 2)


def pct(value: float | None, signed: bool = False) -> str:
    """A fraction as a percentage with one decimal (signed on request); "-" for none."""
    return units.percent(value, signed=signed, missing="-")


def _shape(shape: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in shape)


def point_name(point: Point) -> str:
    """A point as the table shows it: ``MxKxN`` (and its label), or a multi-shape point's
    label or ``"4 shapes"``."""
    if len(point.shapes) == 1:
        return f"{_shape(point.shapes[0])} {point.label}".rstrip()
    return point.label or f"{len(point.shapes)} shapes"


def _role_results(report: ValidationReport) -> dict[str, list[SetResult]]:
    """Sets per role in SetRole order, then "scored": every fit and holdout set."""
    groups: dict[str, list[SetResult]] = {role.value: [] for role in SetRole}
    for result in report.sets:
        groups[result.set.role.value].append(result)
    groups["scored"] = [r for r in report.sets if r.scored]
    return groups


def _points(results: Iterable[SetResult]) -> list[PointResult]:
    return [p for r in results for p in r.points]


# -- json --------------------------------------------------------------------------------


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _by_model(get: Callable[[ModelKind], float]) -> dict[str, float | None]:
    return {model.value: _num(get(model)) for model in MODELS}


def _point_json(result: PointResult) -> dict[str, Any]:
    return {
        "shapes": [list(shape) for shape in result.point.shapes],
        "label": result.point.label,
        "measured": _num(result.measured),
        "predicted": _by_model(lambda m: result.predicted[m]),
        "error": _by_model(result.error),
    }


def _set_json(result: SetResult) -> dict[str, Any]:
    mset: MeasurementSet = result.set
    return {
        "id": mset.id,
        "title": mset.title,
        "gpu": mset.gpu,
        "mode": mset.mode.value,
        "recipe": mset.recipe,
        "fusion": mset.fusion,
        "quantity": mset.quantity.value,
        "timed_region": mset.timed_region.value,
        "timer": mset.timer.value,
        "l2": mset.l2.value,
        "library": mset.library.value,
        "side_kernels": [
            {
                "what": k.what,
                "read_bytes": k.read_bytes,
                "write_bytes": k.write_bytes,
                "elements": list(k.elements),
            }
            for k in mset.side_kernels
        ],
        "role": mset.role.value,
        "scored": result.scored,
        "max_mean_error": _num(mset.max_mean_error),
        "passed": result.passed if result.scored else None,
        "goal": _num(result.goal),
        "meets_goal": result.meets_goal,
        "mean_error": _by_model(result.mean_error),
        "worst_error": _by_model(result.worst_error),
        "points": [_point_json(p) for p in result.points],
    }


def report_json(report: ValidationReport, measurements: str, calibration: str) -> dict[str, Any]:
    """The ``--format json`` document (see the module docstring)."""
    overall = {
        role: {
            "sets": len(results),
            "points": sum(len(r.points) for r in results),
            "mean_error": _by_model(lambda m, rs=results: mean_abs_error(_points(rs), m)),
            "worst_error": _by_model(lambda m, rs=results: worst_error(_points(rs), m)),
        }
        for role, results in _role_results(report).items()
    }
    large = report.large_training_holdout()
    return {
        "format": "roofline-validate",
        "version": FORMAT_VERSION,
        "measurements": measurements,
        "calibration": calibration,
        "passed": not report.failures(),
        "failures": [r.set.id for r in report.failures()],
        "overall": overall,
        "large_training_holdout": {
            "points": len(large),
            "mean_error": _by_model(lambda m: mean_abs_error(large, m)),
        },
        "sets": [_set_json(r) for r in report.sets],
    }


def add_cv_json(document: dict[str, Any], cv: CrossValidation) -> None:
    """Add the cross-validation fields: per scored set ``cv_mean_error``,
    ``fit_mean_error`` and ``torchao_mean_error`` (and ``source``); an ``overall`` object
    with the same three and ``worst_source`` ({``source``, ``cv_mean_error``}); and
    ``sources``, one row per left-out source; ``libraries``, one row per kernel library
    (``library``, ``points``, ``cv_mean_error``, ``torchao_mean_error``)."""
    for entry, result in zip(document["sets"], cv.report.sets, strict=True):
        entry["source"] = source_key(result.set)
        held = cv.cv_result(result.set.id)
        if held is not None:
            entry["cv_mean_error"] = _num(held.mean_error(ModelKind.CALIBRATED))
            entry["fit_mean_error"] = _num(result.mean_error(ModelKind.CALIBRATED))
            entry["torchao_mean_error"] = _num(result.mean_error(ModelKind.TORCHAO))
    worst = cv.worst_source()
    document["overall"].update(
        cv_mean_error=_num(cv.cv_mean_error()),
        fit_mean_error=_num(cv.fit_mean_error()),
        torchao_mean_error=_num(cv.torchao_mean_error()),
        worst_source=None
        if worst is None
        else {"source": worst.source, "cv_mean_error": _num(worst.cv_mean_error())},
    )
    document["sources"] = [
        {
            "source": fold.source,
            "sets": [r.set.id for r in fold.results],
            "points": len(fold.points),
            "cv_mean_error": _num(fold.cv_mean_error()),
            "torchao_mean_error": _num(fold.torchao_mean_error()),
            "dropped_parameters": list(fold.dropped),
        }
        for fold in cv.folds
    ]
    document["libraries"] = [
        {
            "library": row.library,
            "points": row.points,
            "cv_mean_error": _num(row.cv_mean_error),
            "torchao_mean_error": _num(row.torchao_mean_error),
        }
        for row in by_library(cv)
    ]


# -- table -------------------------------------------------------------------------------


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _row(name: str, cells: Iterable[str], width: int) -> str:
    numbers = "  ".join(c.rjust(NUMBER_WIDTH) for c in cells)
    return f"  {_cut(name, width).ljust(width)}  {numbers}".rstrip() + "\n"


def _set_heading(result: SetResult) -> str:
    mset = result.set
    if result.scored:
        verdict = "pass" if result.passed else "FAIL"
        goal = "within goal" if result.meets_goal else "ABOVE GOAL"
        status = (
            f"{mset.role} set, goal {pct(result.goal)}: {goal}; regression guard "
            f"{pct(mset.max_mean_error)}: {verdict}"
        )
    else:
        status = f"{mset.role} set: shown, not scored"
    fusion = ", fusion" if mset.fusion else ""
    model = (
        f"{mset.gpu}, {mset.mode}, {mset.recipe}{fusion}; {mset.quantity}, "
        f"timed region {mset.timed_region}; timer {mset.timer}, L2 {mset.l2}; "
        f"library {mset.library}"
    )
    lines = [textwrap.fill(f"{mset.id}  ({status})", LINE_WIDTH, subsequent_indent="  ")]
    for text in (mset.title, model):
        lines.append(textwrap.fill(text, LINE_WIDTH, initial_indent="  ", subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def _set_table(result: SetResult) -> str:
    names = [point_name(p.point) for p in result.points]
    width = min(SHAPE_WIDTH, max(len("mean |error|"), *map(len, names)))
    heads = ("measured", "torchao", "calibrated", "torchao", "calibrated")
    group = "predicted".center(2 * NUMBER_WIDTH + 2) + "  " + "error".center(2 * NUMBER_WIDTH + 2)
    lines = [" " * (width + 6 + NUMBER_WIDTH) + group.rstrip() + "\n", _row("shape", heads, width)]
    for name, p in zip(names, result.points, strict=True):
        predicted = [units.significant(p.predicted[m], 4) for m in MODELS]
        errors = [pct(p.error(m), signed=True) for m in MODELS]
        lines.append(_row(name, [units.significant(p.measured, 4), *predicted, *errors], width))
    blank = ["", "", ""]
    means = [pct(result.mean_error(m)) for m in MODELS]
    lines.append(_row("mean |error|", [*blank, *means], width))
    worst = [pct(result.worst_error(m), signed=True) for m in MODELS]
    lines.append(_row("worst error", [*blank, *worst], width))
    return "".join(lines)


def _overall_table(report: ValidationReport) -> str:
    lines = [
        "overall: mean |error| and worst error over the points of each role's sets\n",
        f"  {'role':8}  {'sets':>5}  {'points':>6}  {'mean torchao':>12}  {'calibrated':>10}"
        f"  {'worst torchao':>13}  {'calibrated':>10}\n",
    ]
    for role, results in _role_results(report).items():
        points = _points(results)
        means = [pct(mean_abs_error(points, m)) for m in MODELS]
        worst = [pct(worst_error(points, m), signed=True) for m in MODELS]
        lines.append(
            f"  {role:8}  {len(results):>5}  {len(points):>6}  {means[0]:>12}  {means[1]:>10}"
            f"  {worst[0]:>13}  {worst[1]:>10}\n"
        )
    large = report.large_training_holdout()
    means = [pct(mean_abs_error(large, m)) for m in MODELS]
    lines.append(
        f"\nheld-out training layers at large shapes (every GEMM M*K*N >= 2^36): "
        f"{len(large)} points,\n  mean |error| torchao {means[0]}, calibrated {means[1]}\n"
    )
    failures = report.failures()
    if failures:
        verdict = f"{len(failures)} scored set(s) above their threshold (listed on stderr)"
    else:
        verdict = "every scored set within its threshold"
    lines.append(f"\n{len(report.sets)} sets; {verdict}\n")
    return "".join(lines)


def cv_table(cv: CrossValidation) -> str:
    """The cross-validation section of the table: per set, per source, overall."""
    lines = [
        "\ncross-validation by source: each source left out in turn, the calibration refitted "
        "on the others\n",
        f"  {'set':50}  {'fit':>7}  {'CV':>7}  {'torchao':>7}\n",
    ]
    for result in cv.report.sets:
        held = cv.cv_result(result.set.id)
        if held is None:
            continue
        cells = (
            pct(result.mean_error(ModelKind.CALIBRATED)),
            pct(held.mean_error(ModelKind.CALIBRATED)),
            pct(result.mean_error(ModelKind.TORCHAO)),
        )
        lines.append(f"  {_cut(result.set.id, 50):50}  " + "  ".join(f"{c:>7}" for c in cells))
        lines.append("\n")
    lines.append(f"\n  {'source':70}  {'points':>6}  {'CV':>7}  {'torchao':>7}\n")
    for fold in cv.folds:
        cells = (pct(fold.cv_mean_error()), pct(fold.torchao_mean_error()))
        lines.append(f"  {_cut(fold.source, 70):70}  {len(fold.points):>6}  {cells[0]:>7}")
        lines.append(f"  {cells[1]:>7}\n")
    lines.append(f"\n  {'kernel library':70}  {'points':>6}  {'CV':>7}  {'torchao':>7}\n")
    for row in by_library(cv):
        cells = (pct(row.cv_mean_error), pct(row.torchao_mean_error))
        lines.append(f"  {row.library:70}  {row.points:>6}  {cells[0]:>7}  {cells[1]:>7}\n")
    worst = cv.worst_source()
    lines.append(
        f"\noverall (mean |error| over {len(cv.cv_points())} scored points): "
        f"fit {pct(cv.fit_mean_error())}, CV {pct(cv.cv_mean_error())}, "
        f"torchao {pct(cv.torchao_mean_error())}"
    )
    if worst is not None:
        lines.append(f"; worst source {worst.source} (CV {pct(worst.cv_mean_error())})")
    return "".join(lines) + "\n"


def report_table(report: ValidationReport) -> str:
    """The ``--format table`` text: every set, then the overall errors per role."""
    parts = [_set_heading(r) + _set_table(r) + "\n" for r in report.sets]
    return "".join(parts) + _overall_table(report)
