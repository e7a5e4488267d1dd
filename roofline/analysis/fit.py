"""Refitting the calibrated model's stored parameters on the ``fit`` measurement sets.

Every entry of the calibration file whose basis is ``fitted`` or ``measured`` is a free
parameter; the fit minimises the squared log-ratio of predicted to measured values (a log
ratio weighs 10% high and 10% low alike, and speedups and microseconds alike), with
scipy's bounded least squares. Holdout sets are never used. ``roofline calibrate`` prints
the result beside the stored values, and a test keeps the two in step, so no stored number
is tuned by hand.

The fit is staged so that each term is pinned by the data that isolates it: a ``measured``
parameter (a kernel's bandwidth fraction or fixed latency read off kernel-level sets) is
fitted on the sets its entry lists alone, and the ``fitted`` ones (read off layer-level
sets, where several kernels are timed at once) on every fit set with the measured ones
held. A joint fit let a layer-level set's misfit move a measured kernel's parameter (B200's
row-cast fraction went to 0.67 where its own casts say 0.79). The two stages alternate
until no value moves, as a measured kernel's prediction can rest on a fitted value too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from roofline.analysis.validation import predict_set, set_parameter_keys
from roofline.calibration.bounds import fit_bounds, is_latency
from roofline.calibration.data import (
    GPU_VALUE_KEYS,
    CalibrationData,
    Entry,
    load_calibration,
)
from roofline.calibration.families import PLATFORM_PARAMS
from roofline.calibration.params import CalibratedParameters, calibration_for
from roofline.errors import RooflineError
from roofline.measurements import MeasurementDatabase, MeasurementSet, SetRole, load_measurements
from roofline.specs import SpecDatabase, load_specs

# (GPU name, or None for a model-wide parameter; parameter key)
ParameterId = tuple[str | None, str]
#: A singular value of the scaled Jacobian below this fraction of the largest is a
#: direction the data does not constrain (numerically zero).
RANK_TOLERANCE = 1e-6
#: A parameter is undetermined when its share of those null directions exceeds this.
NULL_SHARE = 0.1
#: The staged fit stops when no value moves by more than this fraction in a round ...
STAGE_TOLERANCE = 1e-5
#: ... or after this many rounds (three suffice for the bundled files).
MAX_STAGE_ROUNDS = 8


@dataclass(frozen=True)
class FitResult:
    """Fitted values beside the stored ones, and the fit's error on the fit sets."""

    parameters: tuple[ParameterId, ...]
    stored: tuple[float, ...]
    fitted: tuple[float, ...]
    mean_log_error: float
    # Per parameter: whether the fit sets determine it (see :func:`identifiability`);
    # empty when unknown. ``rank``: the rank of the fit's Jacobian at the solution.
    determined: tuple[bool, ...] = ()
    rank: int | None = None

    def undetermined(self) -> list[ParameterId]:
        """The parameters the data cannot determine (their refit values mean nothing)."""
        return [p for p, ok in zip(self.parameters, self.determined, strict=True) if not ok]

    def rows(self) -> list[tuple[str, str, float, float]]:
        """(GPU or "all GPUs", key, stored, fitted) per parameter."""
        return [
            (gpu or "all GPUs", key, old, new)
            for (gpu, key), old, new in zip(self.parameters, self.stored, self.fitted, strict=True)
        ]

    def largest_change(self) -> float:
        """The largest absolute relative change from a stored to a fitted value."""
        return max(
            (
                abs(relative_change(old, new))
                for old, new in zip(self.stored, self.fitted, strict=True)
            ),
            default=0.0,
        )


def relative_change(stored: float, fitted: float) -> float:
    """fitted / stored - 1; a value moving away from 0 is an infinite change."""
    if stored == 0:
        return 0.0 if fitted == 0 else math.inf
    return fitted / stored - 1


def free_parameters(data: CalibrationData) -> list[ParameterId]:
    """Every stored parameter, model-wide ones first, in file order."""
    return [(gpu, entry.key) for gpu, entry in data.entries()]


def with_values(
    data: CalibrationData, parameters: Sequence[ParameterId], values: Sequence[float]
) -> CalibrationData:
    """``data`` with the given parameters set to ``values``."""
    globals_ = dict(data.globals)
    gpus = {name: dict(entries) for name, entries in data.gpus.items()}
    for (gpu, key), value in zip(parameters, values, strict=True):
        table = globals_ if gpu is None else gpus[gpu]
        table[key] = replace(table[key], value=float(value))
    return replace(data, globals=globals_, gpus=gpus)


def _at_bound(key: str, value: float) -> float:
    """``value``, or the bound of ``key`` it converged to (within 1e-9 of the bounds'
    width): the solver stops just inside a bound (a share at 5e-21 of its floor 0)."""
    low, high = fit_bounds(key)
    width = high - low
    if value - low <= 1e-9 * width:
        return low
    return high if high - value <= 1e-9 * width else value


def _bounds(parameters: Sequence[ParameterId]) -> tuple[list[float], list[float]]:
    # The physical bounds (roofline.calibration.bounds): a fit can never leave them.
    pairs = [fit_bounds(key) for _, key in parameters]
    return [low for low, _ in pairs], [high for _, high in pairs]


_Memo = dict[tuple[int, tuple[tuple[str, float], ...]], np.ndarray]


def _residuals(
    sets: Sequence[MeasurementSet],
    specs: SpecDatabase,
    data: CalibrationData,
    memo: _Memo | None = None,
) -> np.ndarray:
    # Each GPU's parameters resolved once per evaluation (the fit calls this ~100 times).
    params = {name: calibration_for(specs[name], specs, data) for name in {s.gpu for s in sets}}
    parts = []
    for index, mset in enumerate(sets):
        predicted = _predicted(index, mset, specs, data, params[mset.gpu], memo)
        measured = np.array([p.value for p in mset.points])
        parts.append(np.log(predicted / measured))
    return np.concatenate(parts)


def _predicted(
    index: int,
    mset: MeasurementSet,
    specs: SpecDatabase,
    data: CalibrationData,
    params: CalibratedParameters,
    memo: _Memo | None,
) -> np.ndarray:
    """``predict_set`` of the ``index``-th set, from ``memo`` (keyed by the index and its
    GPU's resolved numbers, of which the prediction is a function) where that GPU resolved
    to the same numbers before: a finite-difference step moves one parameter, which most
    sets (other GPUs') do not read."""
    if memo is None:
        return predict_set(mset, specs, data, params)
    key = (index, tuple(params.numbers().items()))
    if key not in memo:
        memo[key] = predict_set(mset, specs, data, params)
    return memo[key]


def calibrate(
    measurements: MeasurementDatabase | None = None,
    specs: SpecDatabase | None = None,
    calibration: CalibrationData | None = None,
) -> FitResult:
    """Refit the calibrated model's stored parameters on the ``fit`` sets of
    ``measurements`` (what ``roofline calibrate`` prints), by bounded least squares.

    Each argument defaults to the bundled file: the measurement sets
    (:func:`roofline.measurements.load_measurements`), the spec database
    (:func:`roofline.specs.load_specs`) and the stored calibration
    (:func:`roofline.calibration.load_calibration`). Holdout and context sets are never
    fitted on. Needs scipy (``pip install roofline-atlas[fit]``): without it, ImportError.
    """
    specs = specs if specs is not None else load_specs()
    measurements = measurements if measurements is not None else load_measurements(specs=specs)
    calibration = calibration if calibration is not None else load_calibration()
    return fit(calibration, measurements, specs)


def fit(
    data: CalibrationData,
    measurements: MeasurementDatabase,
    specs: SpecDatabase,
    gpu: str | None = None,
) -> FitResult:
    """Refit every stored parameter of ``data`` on the fit sets of ``measurements``; with
    ``gpu``, only that GPU's stored parameters (on the fit sets measured on it)."""
    sets = measurements.by_role(SetRole.FIT)
    if gpu is None:
        return fit_on(data, sets, specs)
    own = [s for s in sets if s.gpu == gpu]
    if not own:
        raise RooflineError(f"--gpu: no fit set of {measurements.origin} was measured on {gpu}")
    data = gpu_fit_start(data, gpu, own, specs)
    parameters = [p for p in free_parameters(data) if p[0] == gpu]
    return fit_on(data, own, specs, parameters)


def gpu_fit_start(
    data: CalibrationData, gpu: str, sets: Sequence[MeasurementSet], specs: SpecDatabase
) -> CalibrationData:
    """What a refit of ``gpu`` on its owner's ``sets`` starts from (``roofline calibrate
    --gpu`` and its own-fit cross-validation): the parameters its sets use added
    (:func:`with_gpu_parameters`) and its measured entries read off those sets
    (:func:`read_off`)."""
    return read_off(with_gpu_parameters(data, gpu, sets, specs), gpu, sets)


def read_off(data: CalibrationData, gpu: str, sets: Sequence[MeasurementSet]) -> CalibrationData:
    """``data`` with ``gpu``'s measured entries listing ``sets`` (an owner's measurement
    file) instead of the sets they were read off: a refit on the owner's data fits them
    on it, where the staged fit would hold a measured entry none of whose sets is there."""
    ids = tuple(s.id for s in sets)
    entries = {
        key: replace(entry, sets=ids) if entry.basis == "measured" else entry
        for key, entry in data.gpus.get(gpu, {}).items()
    }
    return replace(data, gpus={**data.gpus, gpu: entries})


#: The note of a parameter that ``roofline calibrate --gpu`` adds for a GPU.
ADDED_NOTE = "fitted by roofline calibrate --gpu on this GPU's own measurement sets"


def with_gpu_parameters(
    data: CalibrationData, gpu: str, sets: Sequence[MeasurementSet], specs: SpecDatabase
) -> CalibrationData:
    """``data`` with an entry for every per-GPU parameter that predictions of ``sets``
    (measured on ``gpu``) depend on and ``data`` does not store for ``gpu``: a GPU its
    owner measured gets parameters of its own, each starting at the value it resolves to
    without them (its family's or every GPU's, :mod:`roofline.calibration.params`), with
    basis ``fitted`` and the set ids. Stored entries are kept as they are."""
    stored = dict(data.gpus.get(gpu, {}))
    # Not a platform's parameters (PLATFORM_PARAMS): the GPU keeps its platform's.
    keys = {s.id: set_parameter_keys(s, specs[gpu]) - PLATFORM_PARAMS.keys() for s in sets}
    used = set().union(*keys.values()) - stored.keys()
    if not used:
        return data
    start = calibration_for(specs[gpu], specs, data).values
    for key in sorted(used, key=GPU_VALUE_KEYS.index):
        low, high = fit_bounds(key)
        value = min(max(start[key].value, low), high)
        ids = tuple(s.id for s in sets if key in keys[s.id])  # the sets that inform it
        stored[key] = Entry(key, value, "fitted", ids, ADDED_NOTE)
    return replace(data, gpus={**data.gpus, gpu: stored})


def fit_on(
    data: CalibrationData,
    sets: Sequence[MeasurementSet],
    specs: SpecDatabase,
    parameters: Sequence[ParameterId] | None = None,
) -> FitResult:
    """Refit every stored parameter of ``data`` (or only ``parameters``) on ``sets``
    (cross-validation passes the fit sets of every source but one), in stages: each
    ``measured`` parameter on the sets its entry lists (those of ``sets``), the ``fitted``
    ones on all of ``sets``, alternating until the values settle (module docstring)."""
    parameters = list(parameters) if parameters is not None else free_parameters(data)
    stored = [_entry(data, p).value for p in parameters]
    own = {
        p: [s for s in sets if s.id in _entry(data, p).sets]
        for p in parameters
        if _entry(data, p).basis == "measured"
    }
    # A measured parameter none of whose sets is here is held: other data must not move it.
    held = [p for p, listed in own.items() if not listed]
    own = {p: listed for p, listed in own.items() if listed}
    shared = [p for p in parameters if p not in own and p not in held]
    current = with_values(data, parameters, np.clip(stored, *_bounds(parameters)))
    jac_own: dict[tuple[ParameterId, ...], np.ndarray] = {}
    jac_shared = np.zeros((0, len(shared)))
    for _ in range(MAX_STAGE_ROUNDS):
        before = [_entry(current, p).value for p in parameters]
        for group, group_sets in _groups(own):
            current, jac_own[tuple(group)] = _least_squares(current, group_sets, specs, group)
        if shared:
            current, jac_shared = _least_squares(current, sets, specs, shared)
        after = [_entry(current, p).value for p in parameters]
        moved = (abs(relative_change(b, a)) for b, a in zip(before, after, strict=True))
        if max(moved, default=0.0) <= STAGE_TOLERANCE:
            break
    fitted = [_at_bound(key, _entry(current, (gpu, key)).value) for gpu, key in parameters]
    current = with_values(current, parameters, fitted)
    error = float(np.mean(np.abs(_residuals(sets, specs, current))))
    determined, rank = _determined(parameters, jac_own, shared, jac_shared)
    return FitResult(tuple(parameters), tuple(stored), tuple(fitted), error, determined, rank)


def _groups(
    own: dict[ParameterId, list[MeasurementSet]],
) -> list[tuple[list[ParameterId], list[MeasurementSet]]]:
    """The measured parameters in groups fitted together, each on its sets: parameters
    whose sets overlap (a kernel's latency and bandwidth fraction, read off the same
    sizes) are one group, so the fit takes their intercept and slope at once."""
    groups: list[tuple[list[ParameterId], dict[str, MeasurementSet]]] = []
    for parameter, listed in own.items():
        ids = {s.id for s in listed}
        joined = [g for g in groups if ids & g[1].keys()]
        merged = ([parameter], {s.id: s for s in listed})
        for group in joined:
            groups.remove(group)
            merged = (group[0] + merged[0], {**group[1], **merged[1]})
        groups.append(merged)
    return [(params, list(by_id.values())) for params, by_id in groups]


def informing_sets(
    data: CalibrationData, sets: Sequence[MeasurementSet], specs: SpecDatabase
) -> dict[ParameterId, tuple[str, ...]]:
    """Per stored parameter, the ids of the sets of ``sets`` its fit reads (in order): a
    ``measured`` one's own listed sets, a ``fitted`` one's every set whose prediction
    depends on it (a per-GPU value: the sets measured on that GPU)."""
    keys = {s.id: set_parameter_keys(s, specs[s.gpu], model_wide=True) for s in sets}
    informing: dict[ParameterId, tuple[str, ...]] = {}
    for gpu, entry in data.entries():
        if entry.basis == "measured":
            informing[(gpu, entry.key)] = tuple(s.id for s in sets if s.id in entry.sets)
            continue
        informing[(gpu, entry.key)] = tuple(
            s.id for s in sets if entry.key in keys[s.id] and (gpu is None or s.gpu == gpu)
        )
    return informing


def _scale(parameters: Sequence[ParameterId]) -> list[float]:
    # Typical sizes: seconds and fractions differ by 1e5.
    return [1e-6 if is_latency(key) else 0.1 for _, key in parameters]


def _least_squares(
    data: CalibrationData,
    sets: Sequence[MeasurementSet],
    specs: SpecDatabase,
    parameters: Sequence[ParameterId],
) -> tuple[CalibrationData, np.ndarray]:
    """``data`` with ``parameters`` fitted on ``sets`` (the others held), and the
    Jacobian at the solution."""
    from scipy.optimize import least_squares  # optional: the `fit` extra

    low, high = _bounds(parameters)
    start = np.clip([_entry(data, p).value for p in parameters], low, high)

    memo: _Memo = {}  # this fit's sets only

    def residuals(x: np.ndarray) -> np.ndarray:
        return _residuals(sets, specs, with_values(data, parameters, x), memo)

    solution = least_squares(residuals, start, bounds=(low, high), x_scale=_scale(parameters))
    return with_values(data, parameters, solution.x), solution.jac


def _determined(
    parameters: Sequence[ParameterId],
    jac_own: dict[tuple[ParameterId, ...], np.ndarray],
    shared: Sequence[ParameterId],
    jac_shared: np.ndarray,
) -> tuple[tuple[bool, ...], int]:
    """Per parameter, whether its stage's data determine it (:func:`identifiability` of
    its group's or the shared stage's Jacobian; a held one never), and the sum of the
    stages' ranks."""
    ok = dict.fromkeys(parameters, False)
    rank = 0
    stages = [*jac_own.items(), *([(tuple(shared), jac_shared)] if shared else [])]
    for group, jac in stages:
        group_rank, flags = identifiability(jac, _scale(group))
        ok.update(zip(group, flags, strict=True))
        rank += group_rank
    return tuple(ok[p] for p in parameters), rank


def identifiability(jac: np.ndarray, scale: Sequence[float]) -> tuple[int, tuple[bool, ...]]:
    """The rank of the fit's Jacobian and, per parameter, whether the data determine it.

    Columns are scaled by each parameter's typical size (``scale``: seconds and fractions
    differ by 1e5) before the SVD. A parameter is undetermined when the right singular
    vectors of the (numerically) zero singular values, the directions along which the
    residuals do not change, carry more than :data:`NULL_SHARE` of its unit vector: one
    data point determines one combination of parameters, not 27 of them.
    """
    scaled = np.asarray(jac, dtype=float) * np.asarray(scale, dtype=float)
    n = scaled.shape[1]
    _, singular, vt = np.linalg.svd(scaled, full_matrices=True)
    top = float(singular[0]) if singular.size else 0.0
    rank = int(np.sum(singular > RANK_TOLERANCE * top)) if top > 0 else 0
    null = vt[rank:]  # rows: an orthonormal basis of the null space (n - rank of them)
    share = np.sqrt(np.sum(null**2, axis=0)) if null.size else np.zeros(n)
    return rank, tuple(bool(s <= NULL_SHARE) for s in share)


def _entry(data: CalibrationData, parameter: ParameterId) -> Entry:
    gpu, key = parameter
    return data.globals[key] if gpu is None else data.gpus[gpu][key]
