"""How a measurement set was taken, as the Validation page says it: its timed region, its
timer and L2 state (with the errors of both models per kind), and how the calibrated model
predicts a set timed with L2 evicted (:data:`roofline.analysis.harness.COLD_START`)."""

from __future__ import annotations

from typing import Any

from roofline.analysis.harness import (
    CAST_COLD_START,
    COLD_START,
    SIDE_KERNEL_TIME,
    WARM_BANDWIDTH,
    starts_cold,
)
from roofline.analysis.validation import ValidationReport, mean_abs_error
from roofline.calibration.data import CalibrationData
from roofline.measurements import L2State, MeasurementSet, TimedRegion, Timer
from roofline.publish.latex import symbolic
from roofline.symbols import L2_CAPACITY, PHI_L2, T_COLD, T_COLD_CAST
from site_gen.context import Table
from site_gen.markup import safe
from site_gen.markup.formulas import Formula
from site_gen.pages.rows.validation import (
    CALIBRATED,
    NUMBER_ALIGN,
    TORCHAO,
    parameter_text,
    pct,
    points_of,
)

#: What the published timer wrapped, per timed region, as the page says it.
REGION_TEXT: dict[TimedRegion, str] = {
    TimedRegion.GEMM: "GEMM kernels only, operands already quantized",
    TimedRegion.GEMM_QUANTIZE: "the GEMMs plus the quantization of their operands",
    TimedRegion.RELU_LINEAR: "a compiled ReLU → Linear (inference): quantization and GEMM",
    TimedRegion.LN_LINEAR_ACT: "LayerNorm → Linear → activation, forward and backward",
    TimedRegion.LINEAR_FWD_BWD: "one linear layer, forward and backward",
    TimedRegion.CAST_KERNEL: "one quantization (cast) kernel",
    TimedRegion.END_TO_END: "a whole training step (attention, norms and communication too)",
}


#: How a set was timed, as the page says it.
TIMER_TEXT: dict[Timer, str] = {
    Timer.CUDA_GRAPH: "CUDA-graph replays (device time, no host launch gaps)",
    Timer.CUDA_EVENTS: "CUDA events around eager calls (host gaps can show)",
    Timer.PROFILER: "a profiler's kernel durations (no gaps)",
    Timer.WALL_CLOCK: "a host clock around calls and a synchronize",
    Timer.UNKNOWN: "not stated",
}
L2_TEXT: dict[L2State, str] = {
    L2State.COLD: "L2 evicted before every call",
    L2State.ROTATING: "operands rotated through copies larger than L2 (no flush)",
    L2State.WARM: "L2 warm (calls back to back)",
    L2State.UNKNOWN: "L2 state not stated",
}


def harness_text(mset: MeasurementSet) -> str:
    """``timer; L2 state`` of a set, in words."""
    return f"{TIMER_TEXT[mset.timer]}; {L2_TEXT[mset.l2]}"


def timer_table(report: ValidationReport) -> Table:
    """Mean errors of both models per timer and L2 state, over the scored sets."""
    header = (
        "timer",
        "L2",
        "sets",
        "points",
        "torchao: mean error (%)",
        "calibrated: mean error (%)",
    )
    table = Table(header, align=("---", "---", *(NUMBER_ALIGN,) * 4), name="by-timer")
    for timer in Timer:
        for l2 in L2State:
            sets = [s for s in report.sets if s.scored and s.set.timer is timer and s.set.l2 is l2]
            if not sets:
                continue
            points = points_of(sets)
            t, c = mean_abs_error(points, TORCHAO), mean_abs_error(points, CALIBRATED)
            row = (timer.value, l2.value, str(len(sets)), str(len(points)), pct(t), pct(c))
            table.rows.append(row)
    return table


def region_table(report: ValidationReport) -> Table:
    """Mean errors of both models per timed region, over the scored sets."""
    header = (
        "timed region",
        "sets",
        "points",
        "torchao: mean error (%)",
        "calibrated: mean error (%)",
    )
    table = Table(header, align=("---", *(NUMBER_ALIGN,) * 4), name="by-region")
    for region in TimedRegion:
        sets = [s for s in report.sets if s.scored and s.set.timed_region is region]
        if not sets:
            continue
        points = points_of(sets)
        t, c = mean_abs_error(points, TORCHAO), mean_abs_error(points, CALIBRATED)
        table.rows.append((REGION_TEXT[region], str(len(sets)), str(len(points)), pct(t), pct(c)))
    return table


#: Where the Validation page shows how a cold-L2 set is predicted (an anchor of its own).
COLD_ANCHOR = "cold-start"


#: Where it shows the cold start of the other kernels (casts, rearrangements, side kernels).
CAST_COLD_ANCHOR = "cold-start-cast"


def cold_start_formula() -> Formula:
    """:data:`roofline.analysis.harness.COLD_START`, printed by sympy."""
    caption = "a GEMM replayed in a CUDA graph right after an L2 flush"
    return Formula(COLD_ANCHOR, caption, r"T_{k}^{\mathrm{cold}}", symbolic(COLD_START), "")


def cast_cold_start_formula() -> Formula:
    """:data:`roofline.analysis.harness.CAST_COLD_START`, printed by sympy."""
    caption = (
        "any other kernel timed so (a cast, a rearrangement, a side kernel), and a GEMM "
        "whose own span a profiler or CUDA events time after the flush"
    )
    latex = symbolic(CAST_COLD_START)
    return Formula(CAST_COLD_ANCHOR, caption, r"T_{k}^{\mathrm{cold}}", latex, "")


#: Where the Validation page shows how a warm-cache set is predicted.
WARM_ANCHOR = "warm-cache"


def warm_bandwidth_formula() -> Formula:
    """:data:`roofline.analysis.harness.WARM_BANDWIDTH`, printed by sympy."""
    caption = "a kernel moving b_k bytes, timed back to back on the same operands (warm L2)"
    latex = symbolic(WARM_BANDWIDTH)
    return Formula(WARM_ANCHOR, caption, r"B_{\mathrm{warm}}", latex, "")


def warm_cache(calibration: CalibrationData, report: ValidationReport) -> dict[str, Any]:
    """The warm-cache bandwidth's formula, its stored fraction and how many scored sets
    were timed warm."""
    entry = calibration.globals.get(PHI_L2.spec_key)
    warm = [r for r in report.sets if r.scored and r.set.l2 is L2State.WARM]
    return {
        "formula": warm_bandwidth_formula(),
        "symbol": safe.math(PHI_L2.latex),
        "capacity": safe.math(L2_CAPACITY.latex),
        "capacity_key": L2_CAPACITY.spec_key,
        "value": parameter_text(entry.value, "1") if entry else None,
        "sets": len(warm),
    }


#: Where the Validation page shows how a side kernel is predicted.
SIDE_ANCHOR = "side-kernels"


def side_kernel_formula() -> Formula:
    """:data:`roofline.analysis.harness.SIDE_KERNEL_TIME`, printed by sympy."""
    caption = "a side kernel of a set's timed call (a fill, a cast of a result), moving b bytes"
    return Formula(SIDE_ANCHOR, caption, r"T_{\mathrm{side}}", symbolic(SIDE_KERNEL_TIME), "")


def side_kernel_text(mset: MeasurementSet) -> list[str]:
    """Each side kernel of ``mset`` in words: what it is and the bytes it moves."""
    out = []
    for kernel in mset.side_kernels:
        sides = ((kernel.read_bytes, "read"), (kernel.write_bytes, "written"))
        moved = " and ".join(f"{size:g} B {verb}" for size, verb in sides if size)
        if kernel.elements:
            moved += f" per element of {' × '.join(kernel.elements)}"
        out.append(f"{kernel.what} ({moved})")
    return out


def cold_start(calibration: CalibrationData, report: ValidationReport) -> dict[str, Any]:
    """The cold starts' formulas, their stored values and how many scored sets they apply
    to (a cast's is its own where the file stores it, else the GEMMs'); ``host_clock``: the
    cold-L2 sets whose timer spans more than their kernels (a host clock), which take none."""
    entry = calibration.globals.get(T_COLD.spec_key)
    cast_entry = calibration.globals.get(T_COLD_CAST.spec_key)
    cold = [r for r in report.sets if r.scored and starts_cold(r.set)]
    host_clock = [
        r for r in report.sets if r.scored and r.set.l2 is L2State.COLD and not starts_cold(r.set)
    ]
    rotating = [r for r in report.sets if r.scored and r.set.l2 is L2State.ROTATING]
    return {
        "rotating": len(rotating),
        "formula": cold_start_formula(),
        "cast_formula": cast_cold_start_formula(),
        "side_formula": side_kernel_formula(),
        "host_clock": len(host_clock),
        "symbol": safe.math(T_COLD.latex),
        "cast_symbol": safe.math(T_COLD_CAST.latex),
        "value": parameter_text(entry.value, "s") if entry else None,
        "cast_value": parameter_text(cast_entry.value, "s") if cast_entry else None,
        "sets": len(cold),
    }
