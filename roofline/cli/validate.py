"""``roofline validate``: every measurement set beside torchao's and the calibrated model.

Per point: the shape(s), the measured value, both models' predictions and their signed
errors (predicted / measured - 1); per set: mean and worst error of both models, the
set's role, its goal (:data:`roofline.analysis.validation.GOALS`, fixed per role: shown, never
failed on) and its regression guard (``max_mean_error``); then the mean and worst error
per role. Exit 0 when every scored set's calibrated mean error is within its regression
guard, 1 when one is above it (each failing set named on stderr), 2 on bad input.

``--cv source`` adds cross-validation by source (:mod:`roofline.analysis.crossval`): per scored
set the fit, CV and torchao mean errors, per source its CV error, and the overall line;
in JSON the fields ``cv_mean_error``, ``fit_mean_error``, ``torchao_mean_error`` and
``source`` per scored set, the same three errors and ``worst_source`` (``{"source",
"cv_mean_error"}``) in ``overall``, a ``sources`` list and a ``libraries`` list (per
kernel library: ``library``, ``points``, ``cv_mean_error``, ``torchao_mean_error``).

The ``json`` format (``FORMAT_VERSION`` 1), every number a float (``null`` where none is
defined, e.g. the mean of a role without points), errors as fractions (0.1 = 10% high)::

    {"format": "roofline-validate", "version": 1, "measurements": ORIGIN,
     "calibration": ORIGIN, "passed": BOOL, "failures": [SET_ID, ...],
     "overall": {ROLE or "scored": {"sets": INT, "points": INT,
                 "mean_error": {"torchao": F, "calibrated": F}, "worst_error": {...}}},
     "sets": [{"id", "title", "gpu", "mode", "recipe", "fusion", "quantity",
               "timed_region", "timer", "l2", "library", "side_kernels", "role", "scored",
               "max_mean_error", "passed", "goal", "meets_goal",
               "mean_error": {...}, "worst_error": {...},
               "points": [{"shapes": [[M, K, N], ...], "label", "measured",
                           "predicted": {"torchao": F, "calibrated": F},
                           "error": {"torchao": F, "calibrated": F}}]}]}

``passed`` of a context set is null (shown, not scored).
"""

from __future__ import annotations

import argparse
import json
import sys

from roofline.analysis.crossval import CrossValidation, cross_validate, sources
from roofline.analysis.validation import ModelKind, ValidationReport, validate
from roofline.calibration.data import CalibrationData
from roofline.cli.calibrated import add_calibration_file_arg, load_inputs, progress, require_scipy
from roofline.cli.validate_report import add_cv_json, cv_table, pct, report_json, report_table
from roofline.measurements import MeasurementDatabase
from roofline.processes import usable_cpus
from roofline.specs import SpecDatabase

EXIT_FAILED = 1


def add_validate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``validate`` subcommand."""
    val = sub.add_parser(
        "validate",
        help="both models against published measurements, per point, set and role",
        description="Print every measurement set: measured values, torchao's and the "
        "calibrated model's predictions and errors. Exit 0 when every scored set's "
        "calibrated mean error is within its threshold, 1 when one is above it, 2 on bad "
        "input.",
    )
    val.add_argument("--format", choices=("table", "json"), default="table")
    val.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    val.add_argument(
        "--measurements", metavar="FILE", help="measurement file (default: the bundled one)"
    )
    val.add_argument(
        "--set",
        dest="sets",
        action="extend",
        nargs="+",
        metavar="ID",
        help="only these sets (repeatable; default: every set)",
    )
    val.add_argument(
        "--cv",
        choices=("source",),
        help="also cross-validate: refit without each source in turn and score it (needs "
        "scipy); the table and JSON then lead with the CV error",
    )
    add_calibration_file_arg(val)
    val.set_defaults(func=cmd_validate)


def _selected(measurements: MeasurementDatabase, ids: list[str] | None) -> MeasurementDatabase:
    if not ids:
        return measurements
    # In the order asked for, each once; an unknown id is an error naming the known ones.
    return MeasurementDatabase(
        tuple(measurements.get(i) for i in dict.fromkeys(ids)), measurements.origin
    )


def cmd_validate(args: argparse.Namespace) -> int:
    """``roofline validate``: the table or JSON; exit 1 when a scored set fails."""
    specs, measurements, data = load_inputs(args)
    measurements = _selected(measurements, args.sets)
    with progress(f"evaluating both models on {len(measurements)} sets ..."):
        report = validate(measurements, specs, data)
    cv = _cross_validation(args, measurements, specs, data, report)
    if args.format == "json":
        document = report_json(report, measurements.origin, data.origin)
        if cv is not None:
            add_cv_json(document, cv)
        print(json.dumps(document, indent=2, allow_nan=False))
    else:
        sys.stdout.write(report_table(report))
        if cv is not None:
            sys.stdout.write(cv_table(cv))
    for result in report.failures():
        print(
            f"failed: set {result.set.id!r} ({result.set.role}): calibrated mean error "
            f"{pct(result.mean_error(ModelKind.CALIBRATED))} is above its threshold "
            f"{pct(result.set.max_mean_error)}",
            file=sys.stderr,
        )
    return EXIT_FAILED if report.failures() else 0


def _cross_validation(
    args: argparse.Namespace,
    measurements: MeasurementDatabase,
    specs: SpecDatabase,
    data: CalibrationData,
    report: ValidationReport,
) -> CrossValidation | None:
    if args.cv is None:
        return None
    require_scipy("--cv")  # each fold refits
    count = len(sources(measurements.sets))
    with progress(f"cross-validating: refitting without each of {count} sources ..."):
        return cross_validate(measurements, specs, data, report, usable_cpus())
