"""Row builders of the Validation page and of the calibrated model's parameter tables.

Every number comes from :func:`roofline.analysis.validation.validate` (errors, predictions) or
from :func:`roofline.evaluate.calibration_of` (parameter values, bases, ranges); nothing
is typed here. Cells are plain text or :class:`site_gen.markup.safe.Md`, and every table carries
its export name (:class:`site_gen.context.Table`). The exports carry the cells as shown
(errors to a tenth of a percent); ``roofline validate --format json`` has every number at
full precision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from roofline import units
from roofline.analysis.validation import (
    ModelKind,
    PointResult,
    SetResult,
    ValidationReport,
    mean_abs_error,
    worst_error,
)
from roofline.calibration.params import Basis, CalibratedParameters
from roofline.measurements import (
    MeasuredQuantity,
    SetRole,
)
from roofline.recipes import FORMATS
from roofline.specs import GpuSpec
from roofline.symbols import (
    CALIBRATION_SYMBOLS,
    ETA_GEMM_FP4,
    OMEGA_STORE,
    PER_GPU_LATENCY_SYMBOLS,
    T_CAST,
    T_GEMM_FP4,
    HardwareSymbol,
)
from site_gen.charts.validation import numbered, point_name, shape_text
from site_gen.context import Table, gpu_page, rel
from site_gen.markup import safe

TORCHAO, CALIBRATED = ModelKind.TORCHAO, ModelKind.CALIBRATED
#: Roles in the order the page shows them: held-out sets first, they are the test.
ROLE_ORDER: tuple[SetRole, ...] = (SetRole.HOLDOUT, SetRole.FIT, SetRole.CONTEXT)
ROLE_TEXT: dict[SetRole, str] = {
    SetRole.HOLDOUT: "held out: never used to fit",
    SetRole.FIT: "fitted on",
    SetRole.CONTEXT: "context: shown, not scored",
}
QUANTITY_TEXT: dict[MeasuredQuantity, str] = {
    MeasuredQuantity.SPEEDUP: "speedup of the timed region over bf16",
    MeasuredQuantity.GEMM_SPEEDUP: "speedup of the GEMMs alone over bf16",
    MeasuredQuantity.TIME_US: "kernel time in µs, against the sum of the model terms",
}
#: The role column of the every-set table.
ROLE_SHORT: dict[SetRole, str] = {
    SetRole.HOLDOUT: "held out",
    SetRole.FIT: "fitted on",
    SetRole.CONTEXT: "context",
}
BASIS_MARK: dict[Basis, str] = {Basis.MEASURED: "m", Basis.FITTED: "f", Basis.ASSUMED: "a"}
#: Dimensions up to which a point counts as small (tokens per GEMM).
SMALL_M = 1024
_GEMM_FORMAT = {"bf16": "bf16", "fp8": "fp8", "fp8_block": "fp8", "fp4": "fp4"}
NUMBER_ALIGN = "---:"


def percent(value: float) -> str:
    """An absolute error as a percentage: ``7.5%``; NaN (nothing scored) -> ``—``."""
    return units.percent(value)


def signed_percent(value: float) -> str:
    """A signed error: ``+12.3%`` (prediction high), ``-4.0%`` (low); NaN -> ``—``."""
    return units.percent(value, signed=True)


def pct(value: float) -> str:
    """A table cell's absolute error in percent, no sign (the header says "%"): ``7.5``.

    Without the percent sign a cell is a number, which CSV readers take as one (a
    leading ``+`` with a ``%`` would be escaped as a possible spreadsheet formula).
    """
    return units.percent_number(value)


def signed_pct(value: float) -> str:
    """A table cell's signed error in percent: ``+12.3`` (prediction high), ``-4.0``."""
    return units.percent_number(value, signed=True)


def measured_text(value: float, quantity: MeasuredQuantity) -> str:
    """A measured or predicted value in its unit: ``1.22×`` or ``142.3 µs``."""
    if quantity is MeasuredQuantity.TIME_US:
        return units.microseconds_measured(value)
    return units.speedup(value)


def fraction_text(value: float) -> str:
    """An efficiency to 3 significant digits: ``0.776``."""
    return units.significant(value, 3)


def parameter_text(value: float, unit: str) -> str:
    """A parameter value in its unit: efficiencies as fractions, latencies in µs."""
    if unit == "s":
        return units.microseconds(value, 3)
    return fraction_text(value)


# -- error summaries ------------------------------------------------------------------


def points_of(sets: Iterable[SetResult]) -> list[PointResult]:
    """Every point of ``sets``."""
    return [p for s in sets for p in s.points]


def of_role(report: ValidationReport, role: SetRole) -> list[SetResult]:
    """The sets of ``role``, in file order."""
    return [s for s in report.sets if s.set.role is role]


def small(point: PointResult) -> bool:
    """Every GEMM of the point has at most :data:`SMALL_M` tokens."""
    return all(shape[0] <= SMALL_M for shape in point.point.shapes)


def _error_cells(points: Sequence[PointResult]) -> tuple[str, ...]:
    """Mean and worst error of torchao's model, then of the calibrated model."""
    return (
        pct(mean_abs_error(points, TORCHAO)),
        signed_pct(worst_error(points, TORCHAO)),
        pct(mean_abs_error(points, CALIBRATED)),
        signed_pct(worst_error(points, CALIBRATED)),
    )


def overall_table(report: ValidationReport) -> Table:
    """Both models' mean and worst error per role, then over every scored set."""
    header = (
        "sets",
        "count",
        "points",
        "torchao: mean error (%)",
        "torchao: worst (%)",
        "calibrated: mean error (%)",
        "calibrated: worst (%)",
    )
    table = Table(header, align=("---", *(NUMBER_ALIGN,) * 6), name="overall")
    groups = [(ROLE_TEXT[role], of_role(report, role)) for role in ROLE_ORDER]
    groups.insert(2, ("every scored set", [s for s in report.sets if s.scored]))
    for label, sets in groups:
        points = points_of(sets)
        table.rows.append((label, str(len(sets)), str(len(points)), *_error_cells(points)))
    return table


def verdict(result: SetResult) -> str:
    """``pass``, ``fail`` or ``not scored`` (context sets)."""
    if not result.scored:
        return "not scored"
    return "pass" if result.passed else "fail"


def threshold_number(result: SetResult) -> str:
    """The set's threshold on the calibrated mean error in percent (``15``), or ``—``."""
    bound = result.set.max_mean_error
    return units.percent_number(bound, None)


def threshold_text(result: SetResult) -> str:
    """The threshold as prose shows it: ``15%``, or ``—``."""
    number = threshold_number(result)
    return number if number == units.MISSING else f"{number}%"


def goal_text(result: SetResult) -> str:
    """``within goal`` or ``above goal`` against the role's fixed goal (``—`` unscored)."""
    if result.meets_goal is None:
        return units.MISSING
    return "within goal" if result.meets_goal else "above goal"


def sets_table(results: Sequence[SetResult]) -> Table:
    """One row per set: where it is, its role, both models' mean errors, the role's goal
    and the regression guard with its verdict."""
    header = (
        "set",
        "GPU",
        "role",
        "points",
        "torchao (%)",
        "calibrated (%)",
        "goal (%)",
        "against goal",
        "guard (%)",
        "result",
    )
    align = ("---", "---", "---", *(NUMBER_ALIGN,) * 4, "---", NUMBER_ALIGN, "---")
    table = Table(header, align=align, name="sets")
    for r in results:
        t, c = r.mean_error(TORCHAO), r.mean_error(CALIBRATED)
        goal = units.percent_number(r.goal, None)
        table.rows.append(
            (
                safe.link(r.set.id, f"#{r.set.id}"),
                r.set.gpu,
                ROLE_SHORT[r.set.role],
                str(len(r.points)),
                pct(t),
                pct(c),
                goal,
                goal_text(r),
                threshold_number(r),
                verdict(r),
            )
        )
    return table


def point_cell(result: PointResult) -> str:
    """The point's label with its shape, or its shape alone."""
    point = result.point
    name = point_name(point)
    if len(point.shapes) > 1:
        return f"{name} ({len(point.shapes)} GEMM shapes summed)"
    shape = shape_text(point.shapes[0])
    return name if name == shape else f"{name} ({shape})"


def set_table(result: SetResult) -> Table:
    """A set's points: measured, torchao's model and the calibrated model, with errors."""
    # Headers unique: CSV readers (pandas) rename a repeated one.
    header = (
        "point",
        "measured",
        "torchao model",
        "torchao error (%)",
        "calibrated model",
        "calibrated error (%)",
    )
    table = Table(header, align=("---", *(NUMBER_ALIGN,) * 5), name=f"set-{result.set.id}")
    quantity = result.set.quantity
    # Numbered like the chart's ticks when the chart numbers them (exports show the
    # same cell text as the page, as every table's do).
    number = numbered([p.point for p in result.points])
    for i, p in enumerate(result.points, 1):
        t, c = p.predicted[TORCHAO], p.predicted[CALIBRATED]
        table.rows.append(
            (
                f"{i}. {point_cell(p)}" if number else point_cell(p),
                measured_text(p.measured, quantity),
                measured_text(t, quantity),
                signed_pct(p.error(TORCHAO)),
                measured_text(c, quantity),
                signed_pct(p.error(CALIBRATED)),
            )
        )
    return table


# -- calibration parameters -------------------------------------------------------------


def family(prefix: str) -> tuple[HardwareSymbol, ...]:
    """The calibration symbols whose key starts with ``prefix``."""
    return tuple(hw for hw in CALIBRATION_SYMBOLS if hw.spec_key.startswith(prefix))


GEMM_SYMBOLS = family("gemm_efficiency.")
# A GEMM's other per-GPU values, in a table of their own: its latencies stored per GPU
# (PER_GPU_LATENCY_SYMBOLS but the cast's: t_gemm, t_gemm,fp4 and the K step's) and the
# hidden share of its output store, not among the model-wide values.
GEMM_TIME_SYMBOLS = (*(hw for hw in PER_GPU_LATENCY_SYMBOLS if hw is not T_CAST), OMEGA_STORE)
# Cast kinds every dense recipe uses; the kinds only grouped layers and NVFP4 training
# run go in their own table with the grouped-GEMM factors.
_DENSE_KINDS = tuple(f"cast_efficiency.{kind}" for kind in ("row", "column", "tile", "reduce"))
# The cast kernel's launch latency is stored per GPU too.
CAST_SYMBOLS = (
    *(hw for hw in family("cast_efficiency.") if hw.spec_key in _DENSE_KINDS),
    T_CAST,
)
GROUPED_SYMBOLS = family("grouped_efficiency.") + tuple(
    hw for hw in family("cast_efficiency.") if hw.spec_key not in _DENSE_KINDS
)
PER_GPU_SYMBOLS = GEMM_SYMBOLS + GEMM_TIME_SYMBOLS + CAST_SYMBOLS + GROUPED_SYMBOLS
MODEL_WIDE_SYMBOLS = tuple(hw for hw in CALIBRATION_SYMBOLS if hw not in PER_GPU_SYMBOLS)


def unused_reason(gpu: GpuSpec, key: str) -> str:
    """Why a GEMM efficiency or the fp4 GEMM latency never enters the GPU's numbers (it
    lacks that peak), or ""."""
    if key == T_GEMM_FP4.spec_key:
        key = ETA_GEMM_FP4.spec_key
    if not key.startswith("gemm_efficiency."):
        return ""
    fmt = FORMATS[_GEMM_FORMAT[key.removeprefix("gemm_efficiency.")]]
    if gpu.value(fmt.peak.spec_key) is None:
        return f"not used on this GPU: it has no {fmt.name} peak"
    return ""


def compact_table(
    gpus: Sequence[tuple[GpuSpec, CalibratedParameters]],
    symbols: Sequence[HardwareSymbol],
    name: str,
    page: str,
) -> Table:
    """GPU x parameter: each value with a basis mark (m, f, a); — where it is unused."""
    header = ("GPU", *(safe.math(hw.latex) for hw in symbols))
    table = Table(header, align=("---", *(NUMBER_ALIGN,) * len(symbols)), name=name)
    for gpu, params in gpus:
        cells = []
        for hw in symbols:
            value = params.values[hw.spec_key]
            unused = unused_reason(gpu, hw.spec_key)
            marked = f"{parameter_text(value.value, hw.unit)} {BASIS_MARK[value.basis]}"
            cells.append(units.MISSING if unused else marked)
        table.rows.append((safe.link(gpu.name, rel(gpu_page(gpu), page)), *cells))
    return table


def range_text(value: float | None, low: float | None, high: float | None, unit: str) -> str:
    """``0.319 – 0.569`` for an assumed value with a range, else ``—``."""
    if low is None or high is None or value is None:
        return units.MISSING
    return f"{parameter_text(low, unit)} – {parameter_text(high, unit)}"


def source_text(source: str, sets: Sequence[str], unused: str) -> str:
    """The value's source sentence, the fit sets it came from, and why it is unused."""
    # One line, no stray spaces: the page shows it collapsed, the exports as it is.
    text = " ".join(source.split()) + (f" (sets: {', '.join(sets)})" if sets else "")
    return f"{unused}; {text}" if unused else text


def details_table(gpus: Sequence[tuple[GpuSpec, CalibratedParameters]], page: str) -> Table:
    """Every per-GPU parameter: value, basis, plausible range (assumed ones) and source."""
    header = ("GPU", "parameter", "value", "basis", "plausible range", "source")
    table = Table(
        header, align=("---", "---", NUMBER_ALIGN, "---", "---", "---"), name="parameters"
    )
    for gpu, params in gpus:
        link = safe.link(gpu.name, rel(gpu_page(gpu), page))
        for hw in PER_GPU_SYMBOLS:
            v = params.values[hw.spec_key]
            source = source_text(v.source, v.sets, unused_reason(gpu, hw.spec_key))
            table.rows.append(
                (
                    link,
                    safe.math(hw.latex),
                    parameter_text(v.value, hw.unit),
                    v.basis.value,
                    range_text(v.value, v.low, v.high, hw.unit),
                    source,
                )
            )
    return table


def model_wide_table(params: CalibratedParameters) -> Table:
    """The parameters every GPU shares (the fixed latencies but the per-GPU cast launch)."""
    header = ("parameter", "meaning", "value", "basis", "source")
    table = Table(header, align=("---", "---", NUMBER_ALIGN, "---", "---"), name="model-wide")
    for hw in MODEL_WIDE_SYMBOLS:
        v = params.values[hw.spec_key]
        source = source_text(v.source, v.sets, "")
        table.rows.append(
            (
                safe.math(hw.latex),
                hw.description,
                parameter_text(v.value, hw.unit),
                v.basis.value,
                source,
            )
        )
    return table


def calibration_symbols_table(name: str) -> Table:
    """The calibrated model's parameters: symbol, parameter key, meaning, unit."""
    table = Table(("symbol", "parameter", "meaning", "unit"), name=name)
    for hw in CALIBRATION_SYMBOLS:
        table.rows.append((safe.math(hw.latex), safe.code(hw.spec_key), hw.description, hw.unit))
    return table
