"""The CLI's calibrated model: ``--calibrated``/``--calibration`` and ``roofline calibrate``.

``eval``, ``latex`` and ``specs show`` take ``--calibrated`` (the calibrated model beside
torchao's, which stays the default) and ``--calibration FILE`` (another calibration file
than the bundled ``roofline/data/calibration.toml``, e.g. to try a refit before storing it).
``calibrate`` refits the stored parameters on the fit sets and prints them beside the
stored values; ``--check`` makes it a gate for CI.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import sympy

from roofline import units
from roofline.analysis.crossval import own_fit_cv
from roofline.analysis.fit import (
    FitResult,
    ParameterId,
    fit,
    free_parameters,
    informing_sets,
    read_off,
    relative_change,
    with_gpu_parameters,
)
from roofline.calibration.cited import SetRef, bundled_set_refs, citable_sets
from roofline.calibration.data import (
    CalibrationData,
    GpuCv,
    load_calibration,
    parse_calibration,
)
from roofline.calibration.params import (
    Basis,
    CalibratedParameters,
    calibration_for,
    calibration_gpu_names,
)
from roofline.calibration.write import add_entry, rewrite_value, set_cv
from roofline.cli.output import output_path, write_atomically
from roofline.datafiles.core import bundled_text, read_text
from roofline.errors import RooflineError
from roofline.evaluate import resolve_specs
from roofline.measurements import MeasurementDatabase, SetRole, load_measurements
from roofline.model.terms import RooflineModel
from roofline.specs import GpuSpec, SpecDatabase
from roofline.specs.text import load_toml
from roofline.symbols import CALIBRATION_SYMBOLS

EXIT_CHANGED = 1
#: Long work (a fit, a validation) says what it is doing on stderr after this long.
PROGRESS_DELAY_S = 1.0
FIT_EXTRA_HINT = "pip install roofline-atlas[fit]"


def require_scipy(what: str) -> None:
    """A fit needs scipy, an optional extra: without it, one line naming ``what`` and
    how to install it."""
    try:
        import scipy.optimize  # noqa: F401
    except ImportError:
        raise RooflineError(f"{what} needs scipy: {FIT_EXTRA_HINT}") from None


def add_calibration_file_arg(parser: argparse.ArgumentParser) -> None:
    """``--calibration FILE``: a calibration file instead of the bundled one."""
    parser.add_argument(
        "--calibration",
        metavar="FILE",
        help="calibration file (default: the bundled roofline/data/calibration.toml)",
    )


def add_calibrated_args(parser: argparse.ArgumentParser) -> None:
    """``--calibrated`` and ``--calibration FILE``."""
    parser.add_argument(
        "--calibrated",
        action="store_true",
        help="the calibrated model (fitted on published measurements) instead of torchao's",
    )
    add_calibration_file_arg(parser)


def check_calibrated_args(args: argparse.Namespace) -> None:
    """``--calibration`` only means something with ``--calibrated``."""
    if getattr(args, "calibration", None) is not None and not getattr(args, "calibrated", False):
        raise RooflineError(
            "--calibration FILE needs --calibrated (the default is torchao's model)"
        )


def calibration_data(
    args: argparse.Namespace,
    specs: SpecDatabase,
    set_ids: dict[str, SetRef] | None = None,
) -> CalibrationData:
    """The calibration file ``--calibration`` names, or the bundled one. Its GPUs must be
    in ``specs`` (or the bundled database) and its ``sets`` fit sets of ``set_ids`` (on the
    value's GPU); None, for
    commands that read no measurement file: the bundled sets' ids and the sets its own
    ``[gpu.cv]`` tables declare (a file ``roofline calibrate --gpu`` wrote cites its
    owner's measurement sets, which those commands do not read)."""
    path = getattr(args, "calibration", None)
    if path is None:
        return load_calibration()
    names = calibration_gpu_names(specs)
    if set_ids is None:
        return load_calibration(path, names, bundled_set_refs(), declared_sets=True)
    return load_calibration(path, gpu_names=names, set_ids=set_ids)


def gpu_calibration(
    args: argparse.Namespace, gpu: GpuSpec, specs: SpecDatabase
) -> CalibratedParameters | None:
    """``gpu``'s calibrated parameters with ``--calibrated``, else None (torchao's model)."""
    check_calibrated_args(args)
    if not getattr(args, "calibrated", False):
        return None
    return calibration_for(gpu, specs, calibration_data(args, specs))


def note_assumed(params: CalibratedParameters, model: RooflineModel) -> None:
    """One stderr line naming the assumed (fallback) parameters ``model`` uses, if any."""
    used: set[sympy.Basic] = set()
    for term in model.terms:
        used |= term.expr.free_symbols
    keys = [hw.spec_key for hw in CALIBRATION_SYMBOLS if hw.symbol in used]
    assumed = [key for key in keys if params.values[key].basis is Basis.ASSUMED]
    if assumed:
        print(
            f"note: {params.gpu}: calibrated {', '.join(assumed)} assumed, not measured "
            f'(roofline specs show "{params.gpu}" --calibrated lists the fallbacks)',
            file=sys.stderr,
        )


@contextlib.contextmanager
def progress(message: str, delay_s: float = PROGRESS_DELAY_S) -> Iterator[None]:
    """Print ``message`` on stderr if the work inside takes longer than ``delay_s``."""
    stream = sys.stderr  # the stream main() installed, not whatever is current later
    timer = threading.Timer(delay_s, lambda: print(message, file=stream, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()


def _sig4(value: float) -> str:
    """A parameter value as the CLI prints it: four significant digits."""
    return units.significant(value, 4)


def print_calibration(params: CalibratedParameters) -> None:
    """``specs show --calibrated``: every calibrated parameter with its basis and source."""
    print("  calibrated model parameters (value, basis, source):")
    for hw in CALIBRATION_SYMBOLS:
        value = params.values[hw.spec_key]
        unit = "" if hw.unit == "1" else f" {hw.unit}"
        spread = ""
        if value.low is not None and value.high is not None and value.low != value.high:
            low, high = _sig4(value.low), _sig4(value.high)
            spread = f" (GPUs with data span {low} to {high})"
        shown = _sig4(value.value)
        print(f"  {hw.spec_key:26} {shown}{unit}  {value.basis}{spread}")
        print(f"  {'':26} {value.source}")


# -- roofline calibrate ----------------------------------------------------------------


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"expected a relative tolerance >= 0 such as 0.02, got {text!r}"
        )
    return value


def add_calibrate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``calibrate`` subcommand."""
    cal = sub.add_parser(
        "calibrate",
        help="refit the calibrated model's stored parameters on the fit sets",
        description="Refit every stored calibration parameter on the measurement sets whose "
        "role is fit and print it beside the stored value. Exit 0; with --check, 1 when a "
        "fitted value differs from the stored one by more than --tolerance; 2 on bad input "
        f"or without scipy ({FIT_EXTRA_HINT}).",
    )
    cal.add_argument(
        "--check", action="store_true", help="exit 1 when a refit moves a stored value"
    )
    cal.add_argument(
        "--tolerance",
        type=_tolerance,
        default=0.02,
        metavar="FRACTION",
        help="largest relative change --check accepts (default 0.02: 2%%)",
    )
    cal.add_argument("--specs", metavar="FILE", help="spec file (default: bundled database)")
    cal.add_argument(
        "--measurements", metavar="FILE", help="measurement file (default: the bundled one)"
    )
    cal.add_argument(
        "--gpu", metavar="NAME", help="refit only this GPU's parameters, on its fit sets"
    )
    cal.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the calibration file with the determined refit values (comments kept)",
    )
    add_calibration_file_arg(cal)
    cal.set_defaults(func=cmd_calibrate)


def _print_fit(
    result: FitResult, tolerance: float, new: frozenset[tuple[str | None, str]] = frozenset()
) -> list[tuple[str, str, float, float, float]]:
    """The table of stored and refit values, each row "fitted" or "undetermined"; a
    parameter in ``new`` (not in the file: its "stored" value is its fallback) says so.
    Returns the determined stored parameters that moved by more than ``tolerance``."""
    rows = result.rows()
    determined = result.determined or (True,) * len(rows)
    width = max([len("GPU"), *(len(gpu) for gpu, *_ in rows)])
    key_width = max([len("parameter"), *(len(key) for _, key, *_ in rows)])
    print(f"{'GPU':{width}}  {'parameter':{key_width}}  {'stored':>10}  {'fitted':>10}  change")
    moved = []
    for (gpu, key, stored, fitted), ok, parameter in zip(
        rows, determined, result.parameters, strict=True
    ):
        if parameter in new:
            shown = f"{fitted:>10.4g}" if ok else f"{'-':>10}"
            what = "new: the file had none, the stored column is its fallback"
            print(
                f"{gpu:{width}}  {key:{key_width}}  {stored:>10.4g}  {shown}  "
                f"{what if ok else 'new, undetermined: left to its fallback'}"
            )
            continue
        if not ok:  # a refit value the data do not determine is no fit: never shown as one
            print(f"{gpu:{width}}  {key:{key_width}}  {_sig4(stored):>10}  {'-':>10}  undetermined")
            continue
        change = relative_change(stored, fitted)
        shown = f"{_sig4(stored):>10}  {_sig4(fitted):>10}  {units.percent(change, 2, signed=True)}"
        print(f"{gpu:{width}}  {key:{key_width}}  {shown}")
        if abs(change) > tolerance:
            moved.append((gpu, key, stored, fitted, change))
    return moved


def load_inputs(
    args: argparse.Namespace,
) -> tuple[SpecDatabase, MeasurementDatabase, CalibrationData]:
    """The spec database, measurement file and calibration file the arguments name."""
    specs = resolve_specs(args.specs)
    measurements = load_measurements(args.measurements, specs=specs)
    return specs, measurements, calibration_data(args, specs, citable_sets(measurements.sets))


def _write_calibration(
    args: argparse.Namespace,
    out: Path,
    result: FitResult,
    fitted: CalibrationData,
    new: frozenset[tuple[str | None, str]],
    informing: Mapping[ParameterId, tuple[str, ...]],
    specs: SpecDatabase,
    measurements: MeasurementDatabase,
    gpu_cv: tuple[str, GpuCv] | None = None,
) -> None:
    """The input calibration file with each determined refit value (and, for a refit on
    another measurement file, its ``sets``: ``informing``'s, the fit sets its fit read)
    rewritten, the determined parameters in
    ``new`` (the file did not store them for the GPU) added with the sets and note
    ``fitted`` gives them, and the GPU's own-fit CV error (``gpu_cv``: GPU, error) set;
    linted, then written atomically."""
    source = getattr(args, "calibration", None)
    if source is None:
        text = bundled_text("calibration.toml")
    else:
        text = read_text(source, "calibration file")
    determined = result.determined or (True,) * len(result.parameters)
    refit_on_other = bool(getattr(args, "measurements", None))
    written = added = 0
    for (gpu, key), value, ok in zip(result.parameters, result.fitted, determined, strict=True):
        if not ok:
            continue
        sets = list(informing.get((gpu, key), ())) if refit_on_other else None
        if (gpu, key) in new:
            entry = fitted.gpus[gpu][key]
            text = add_entry(text, gpu, key, value, list(entry.sets), entry.note)
            added += 1
        else:
            text = rewrite_value(text, gpu, key, value, sets)
            written += 1
    cv = gpu_cv[1] if gpu_cv is not None else None
    if gpu_cv is not None:
        text = set_cv(
            text, gpu_cv[0], cv.mean_error, cv.points, cv.shapes, cv.method, list(cv.sets)
        )
    ids = citable_sets(measurements.sets)
    parse_calibration(load_toml(text), str(out), calibration_gpu_names(specs), ids)  # loads
    write_atomically(out, text)
    kept = len(result.parameters) - written - added
    print(
        f"wrote {written} refit values and {added} new parameters to {out} "
        f"({kept} undetermined, kept as stored or left to their fallbacks)"
        + (f"; own-fit CV {units.percent(cv.mean_error)} over {cv.points} points" if cv else "")
    )


def _cv_line(gpu: str, cv: GpuCv | None) -> str:
    if cv is None:
        return (
            f"no cross-validated error for {gpu}: its fit sets hold one distinct shape; "
            "its pages keep the bundled band"
        )
    return (
        f"cross-validated error of {gpu}'s own fit ({cv.method}, {cv.shapes} shapes): "
        f"{units.percent(cv.mean_error)} mean over {cv.points} points (its pages' band with -o)"
    )


def cmd_calibrate(args: argparse.Namespace) -> int:
    """``roofline calibrate``: the refit beside the stored values; ``--check`` gates on it."""
    require_scipy("calibrate")
    specs, measurements, data = load_inputs(args)
    gpu = specs.match(args.gpu).gpu.name if getattr(args, "gpu", None) else None
    fit_sets = [s for s in measurements.by_role(SetRole.FIT) if gpu is None or s.gpu == gpu]
    if not fit_sets:
        on = f" measured on {gpu}" if gpu else ""
        raise RooflineError(f"{measurements.origin}: no set has role 'fit'{on}; nothing to fit on")
    # With --gpu, the parameters its sets use that the file lacks join the fit (added once,
    # here: the fit and the cross-validation then find them in place).
    fitted = with_gpu_parameters(data, gpu, fit_sets, specs) if gpu is not None else data
    count = len([p for p in free_parameters(fitted) if gpu is None or p[0] == gpu])
    inputs = [p for p in (args.calibration, args.measurements, args.specs) if p]
    out = output_path(args.output, inputs) if getattr(args, "output", None) else None
    with progress(f"fitting {count} parameters on {len(fit_sets)} sets ..."):
        result = fit(fitted, measurements, specs, gpu)
    cv = None
    if gpu is not None:
        with progress(f"cross-validating the fit of {gpu}, leaving out one shape at a time ..."):
            cv = own_fit_cv(fitted, gpu, fit_sets, specs)
    new = frozenset((g, e.key) for g, e in fitted.entries() if g and not data.gpu_entry(g, e.key))
    moved = _print_fit(result, args.tolerance, new)
    determined = count - len(result.undetermined())
    print(
        f"\n{determined} of {count} parameters determined by the {len(fit_sets)} fit sets of "
        f"{measurements.origin} (rank {result.rank} of the fit's Jacobian)"
    )
    if result.undetermined():
        names = ", ".join(f"{gpu or 'all GPUs'}: {key}" for gpu, key in result.undetermined())
        print(f"undetermined (the data cannot fix them; stored values kept): {names}")
    print(f"mean |log(predicted / measured)| on them: {result.mean_log_error:.4f}")
    if gpu is not None:
        print(_cv_line(gpu, cv))
    if out is not None:
        gpu_cv = (gpu, cv) if gpu is not None and cv is not None else None
        _write_calibration(
            args,
            out,
            result,
            fitted,
            new,
            # The sets each value's fit read (fit() reads a GPU's measured entries off
            # the owner's sets).
            informing_sets(read_off(fitted, gpu, fit_sets) if gpu else fitted, fit_sets, specs),
            specs,
            measurements,
            gpu_cv,
        )
    if not args.check:
        return 0
    for gpu, key, stored, fitted, change in moved:
        print(
            f"changed: {gpu}: {key}: stored {units.significant(stored, None)}, "
            f"refit {units.significant(fitted, None)} ({units.percent(change, 2, signed=True)}, "
            f"tolerance {units.percent(args.tolerance, 2)})",
            file=sys.stderr,
        )
    return EXIT_CHANGED if moved else 0
