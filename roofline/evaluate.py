"""Evaluate models over arrays of shapes: check the shapes, resolve the GPU, and run the
model compiled once per process (:mod:`roofline.model.compiled`) at numpy speed.
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from roofline.calibration.params import CalibratedParameters, calibration_for
from roofline.calibration.stack import ParameterStack
from roofline.capability import EmulatedWarning, HypotheticalWarning, Support, require
from roofline.errors import RooflineError, ShapeError
from roofline.model.compiled import CompiledModel, compile_model
from roofline.model.terms import Quantity
from roofline.recipes import Mode, Recipe, get_recipe
from roofline.shapes import dim_error, dim_in_range
from roofline.specs import GpuMatch, GpuSpec, SpecDatabase, VariantFallbackWarning, load_specs

if TYPE_CHECKING:
    import pandas


TRAINING_COLUMNS: tuple[str, ...] = (
    "fwd_M",
    "fwd_K",
    "fwd_N",
    "r_bf16_gemm_s",
    "r_fp8_gemm_s",
    "r_fp8_ovhd_s",
    "r_fp8_gemm_and_ovhd_s",
    "r_fp8_gemm_and_ovhd_spdp",
)
# torchao's inference script puts the bf16 overhead between the GEMM and fp8 overhead.
INFERENCE_COLUMNS: tuple[str, ...] = (
    *TRAINING_COLUMNS[:5],
    "r_bf16_ovhd_s",
    *TRAINING_COLUMNS[5:],
)

#: Column -> the quantity it reports (shape columns excluded).
COLUMN_QUANTITIES: dict[str, Quantity] = {
    "r_bf16_gemm_s": Quantity.BF16_GEMM,
    "r_fp8_gemm_s": Quantity.LOWP_GEMM,
    "r_bf16_ovhd_s": Quantity.BF16_OVERHEAD,
    "r_fp8_ovhd_s": Quantity.OVERHEAD,
    "r_fp8_gemm_and_ovhd_spdp": Quantity.SPEEDUP,
}
#: Column -> the quantities it adds up (the low-precision total).
COLUMN_SUMS: dict[str, tuple[Quantity, ...]] = {
    "r_fp8_gemm_and_ovhd_s": (Quantity.LOWP_GEMM, Quantity.OVERHEAD),
}


def columns_for(mode: Mode | str) -> tuple[str, ...]:
    """The output columns of ``mode``, in torchao's order."""
    return INFERENCE_COLUMNS if Mode.parse(mode) is Mode.INFERENCE else TRAINING_COLUMNS


FRAME_EXTRA_HINT = "pip install roofline-atlas[frame]"


class Columns(dict[str, np.ndarray]):
    """:func:`evaluate`'s result: column name -> array, in torchao's column order and
    under the names torchao's roofline script gives them (``fwd_M``, ``r_bf16_gemm_s``,
    ``r_fp8_gemm_and_ovhd_spdp`` ...); a plain dict otherwise."""

    def as_frame(self) -> pandas.DataFrame:
        """The columns as a pandas DataFrame, one row per shape (broadcast inputs are
        flattened in C order). pandas is optional: without it, RooflineError naming the
        ``frame`` extra."""
        try:
            import pandas as pd
        except ImportError:
            raise RooflineError(f"as_frame() needs pandas: {FRAME_EXTRA_HINT}") from None
        return pd.DataFrame({name: np.ravel(values) for name, values in self.items()})


def as_shape_array(name: str, values: Any) -> np.ndarray:
    """``values`` as a float64 array of dimensions, each an integer from 1 to
    :data:`~roofline.shapes.MAX_DIM` (int32, as cuBLAS takes); ShapeError names the
    dimension and the first bad value."""
    subject = f"shape dimension {name}"
    try:
        array = np.asarray(values)
    except (ValueError, TypeError):  # ragged nested lists
        raise dim_error(subject, values) from None
    if array.dtype == object:  # Python ints beyond int64 (10**30), None, mixed types
        array = _object_dims(subject, array)
    # Real numbers only: signed, unsigned or floating (not bool, complex, text, dates).
    kind = array.dtype.kind
    if kind not in "iuf":
        raise dim_error(subject, array.flat[0].item() if array.size else values)
    if array.size:
        if kind == "f":
            with np.errstate(invalid="ignore"):
                bad = ~dim_in_range(array) | ~np.isfinite(array) | (array != np.round(array))
        else:
            bad = ~dim_in_range(array)
        if np.any(bad):
            first = array[bad].flat[0].item()  # a Python number: repr -7, not np.int64(-7)
            raise dim_error(subject, first)
    return array.astype(np.float64)


def _object_dims(subject: str, array: np.ndarray) -> np.ndarray:
    """An object array of Python numbers as float64, or ShapeError naming the first value
    that is not a number within the dimension rule (10**30 cannot reach int64)."""
    for value in array.flat:
        number = isinstance(value, int | float | np.integer | np.floating)
        if isinstance(value, bool | np.bool_) or not number or not dim_in_range(value):
            raise dim_error(subject, value)
    return array.astype(np.float64)


def check_shapes(recipe: Recipe, M: Any, K: Any, N: Any) -> None:
    """Raise ShapeError when a shape breaks the dimension rule or the recipe's divisibility
    (what :func:`evaluate` checks; callers that evaluate in chunks check everything first)."""
    _checked_shapes(recipe, M, K, N)


def check_divisibility(recipe: Recipe, dims: dict[str, np.ndarray]) -> None:
    """Raise ShapeError when a shape breaks the recipe's block divisibility."""
    for dim, multiple in recipe.divisibility:
        values = dims[dim]
        bad = np.mod(values, multiple) != 0
        if np.any(bad):
            first = int(values[bad].flat[0])
            raise ShapeError(
                f"recipe {recipe.name} needs {dim} to be a multiple of {multiple}; "
                f"got {dim}={first}"
            )


def check_groups(M: Any, groups: Any) -> None:
    """ShapeError when a grouped layer has more experts than tokens (G > M): each expert
    would get less than one row. ``roofline eval --groups`` and the calculator refuse it;
    the evaluator itself accepts it (a model's per-device plans may route few tokens)."""
    m, g = np.broadcast_arrays(np.asarray(M, dtype=float), np.asarray(groups, dtype=float))
    bad = g > m
    if np.any(bad):
        first_g, first_m = int(g[bad].flat[0]), int(m[bad].flat[0])
        raise ShapeError(
            f"shape dimension G (groups) must be at most M (the tokens split over the "
            f"experts), got G={first_g} for M={first_m}"
        )


def _checked_shapes(recipe: Recipe, M: Any, K: Any, N: Any, groups: Any = None) -> list[np.ndarray]:
    """M, K, N (and G when ``groups`` is given) as broadcast float arrays, validated
    (dimension rule, divisibility)."""
    dims = [as_shape_array("M", M), as_shape_array("K", K), as_shape_array("N", N)]
    names = "M, K, N"
    if groups is not None:
        dims.append(as_shape_array("G (groups)", groups))
        names += ", G"
    try:
        arrays = np.broadcast_arrays(*dims)
    except ValueError:
        shapes = " x ".join(str(d.shape) for d in dims)
        raise ShapeError(f"shape dimensions {names} do not broadcast together: {shapes}") from None
    check_divisibility(recipe, {"M": arrays[0], "K": arrays[1], "N": arrays[2]})
    return list(arrays)


@functools.cache
def _load_cached(path: str | None, stamp: tuple[int, int] | None) -> SpecDatabase:
    return load_specs(path)


def resolve_specs(specs: str | os.PathLike[str] | SpecDatabase | None) -> SpecDatabase:
    """A loaded database from a path, an already-loaded database, or None (bundled)."""
    if isinstance(specs, SpecDatabase):
        return specs
    if specs is None:
        return _load_cached(None, None)
    path = Path(specs)
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = None  # load_specs reports the unreadable file
    return _load_cached(str(path), stamp)


def resolve_gpu(gpu: str | GpuSpec, specs: str | os.PathLike[str] | SpecDatabase | None) -> GpuSpec:
    """The GpuSpec for a name (exact or device-name prefix) or a GpuSpec itself; silent
    about a variant fallback (:func:`resolve_match` tells)."""
    return resolve_match(gpu, specs).gpu


def resolve_match(
    gpu: str | GpuSpec, specs: str | os.PathLike[str] | SpecDatabase | None
) -> GpuMatch:
    """How a name resolves in ``specs`` (:meth:`SpecDatabase.match`); a GpuSpec is its own
    exact match. Callers show :attr:`GpuMatch.warning` when it is a fallback."""
    if isinstance(gpu, GpuSpec):
        return GpuMatch(gpu, "name", gpu.name, gpu.name)
    return resolve_specs(specs).match(gpu)


def evaluate(
    gpu: str | GpuSpec,
    mode: Mode | str,
    recipe: Recipe | str,
    M: Any,
    K: Any,
    N: Any,
    *,
    fusion: bool = False,
    specs: str | os.PathLike[str] | SpecDatabase | None = None,
    calibrated: bool = False,
    groups: Any = None,
) -> Columns:
    """Roofline columns for every shape, keyed by the CLI's (torchao's) column names
    (:class:`Columns`: a dict; ``.as_frame()`` makes it a pandas DataFrame).

    ``M``, ``K`` and ``N`` are scalars or arrays of integers from 1 to 2**31 - 1 (the
    int32 dimensions GEMM libraries take), broadcast together. ``specs`` is a spec-file
    path, or None for the bundled database. A recipe the GPU lacks natively (no hardware
    format, or no kernel in its platform's stack) warns with :class:`HypotheticalWarning`;
    one that runs emulated (bf16 GEMMs on dequantized data) with :class:`EmulatedWarning`
    (torchao's model times those GEMMs at the fp8 peak, the calibrated one at the bf16
    rate); one whose formats the GPU cannot compute raises
    :class:`~roofline.errors.UnsupportedError`. A device name that matches an entry only
    by the entry's name (an unlisted variant, e.g. a laptop part) warns with
    :class:`~roofline.specs.VariantFallbackWarning`.

    ``calibrated=True`` returns the same columns from the calibrated model
    (:mod:`roofline.calibration`): efficiencies measured per format and kernel kind and
    fixed latencies fitted on public measurements. The default is torchao's model.

    ``groups=G`` (integers, broadcast with the shape) evaluates a grouped layer, a
    mixture-of-experts layer's GEMMs (:mod:`roofline.model.grouped`): ``M`` tokens in all,
    split evenly over ``G`` experts, weights ``G x K x N``. ``groups=1`` equals the dense
    model; ``None`` (the default) evaluates the dense model.
    """
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    match = resolve_match(gpu, specs)
    if match.warning is not None:  # an unlisted variant: its figures may differ
        warnings.warn(match.warning, VariantFallbackWarning, stacklevel=2)
    spec = match.gpu
    verdict = require(spec, recipe, mode, grouped=groups is not None)
    if verdict.support is Support.HYPOTHETICAL:
        warnings.warn(verdict.reason, HypotheticalWarning, stacklevel=2)
    elif verdict.support is Support.EMULATED:
        warnings.warn(verdict.reason, EmulatedWarning, stacklevel=2)
    calibration = calibration_of(spec, specs) if calibrated else None
    return evaluate_columns(
        spec, mode, recipe, M, K, N, fusion=fusion, calibration=calibration, groups=groups
    )


def calibration_of(
    spec: GpuSpec, specs: str | os.PathLike[str] | SpecDatabase | None = None
) -> CalibratedParameters:
    """The calibrated parameters of ``spec``; fallbacks are averaged over ``specs``'s GPUs
    (the bundled database when None)."""
    return calibration_for(spec, resolve_specs(specs))


def _timed_terms(
    spec: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    M: Any,
    K: Any,
    N: Any,
    fusion: bool,
    calibration: CalibratedParameters | ParameterStack | None,
    groups: Any,
) -> tuple[CompiledModel, tuple[np.ndarray, ...], dict[str, np.ndarray]]:
    """The checked shape arrays (M, K, N) and the seconds of every term of the (dense or
    grouped, torchao or calibrated) compiled model."""
    m, k, n, *g = _checked_shapes(recipe, M, K, N, groups)
    grouped = groups is not None
    compiled = compile_model(mode, recipe, fusion, calibration is not None, grouped)
    times = compiled.term_times(spec, m, k, n, calibration, g[0] if grouped else None)
    return compiled, (m, k, n), times


def evaluate_columns(
    spec: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    M: Any,
    K: Any,
    N: Any,
    *,
    fusion: bool = False,
    calibration: CalibratedParameters | ParameterStack | None = None,
    groups: Any = None,
) -> Columns:
    """:func:`evaluate` without lookups, capability checks or warnings (callers did them).

    With ``calibration`` (the GPU's calibrated parameters), the calibrated model's columns
    (with a :class:`~roofline.calibration.stack.ParameterStack`, a row per calibration in
    every column but the shape's); with ``groups``, a grouped layer's.
    """
    compiled, (m, k, n), times = _timed_terms(
        spec, mode, recipe, M, K, N, fusion, calibration, groups
    )
    totals = compiled.totals(times)
    out = Columns(
        {
            "fwd_M": m.astype(np.int64),
            "fwd_K": k.astype(np.int64),
            "fwd_N": n.astype(np.int64),
        }
    )
    for column in columns_for(mode)[3:]:
        if column in COLUMN_SUMS:
            first, *rest = COLUMN_SUMS[column]
            out[column] = sum((totals[q] for q in rest), totals[first])
        else:
            out[column] = totals[COLUMN_QUANTITIES[column]]
    return out


def evaluate_terms(
    spec: GpuSpec,
    mode: Mode | str,
    recipe: Recipe | str,
    M: Any,
    K: Any,
    N: Any,
    *,
    fusion: bool = False,
    calibration: CalibratedParameters | None = None,
    groups: Any = None,
) -> dict[str, np.ndarray]:
    """Seconds per GEMM and cast kernel (the breakdown behind the columns); with
    ``calibration``, the calibrated model's; with ``groups``, a grouped layer's."""
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    return _timed_terms(spec, mode, recipe, M, K, N, fusion, calibration, groups)[2]
