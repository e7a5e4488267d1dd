"""The data files a site is built from besides the spec database: the calibration file and
the measurement sets, loaded and cross-checked once, before minutes of gathering.

``roofline build`` publishes the bundled calibration and measurements by default. A GPU's
owner who measured it (``roofline measure``) and refit it (``roofline calibrate --gpu NAME
--measurements FILE -o calibration.toml``) passes both files: ``--calibration`` replaces the
bundled calibration file, ``--measurements`` adds its sets to the bundled ones on the
Validation page (the calibration file's ``sets`` link there). The GPU's pages then show its
parameters as fitted on its own sets and its numbers with its own cross-validated band.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from roofline.calibration.cited import bundled_set_refs, set_refs
from roofline.calibration.data import (
    CalibrationData,
    load_calibration,
)
from roofline.calibration.params import calibration_gpu_names
from roofline.errors import DataFileError, RooflineError
from roofline.measurements import MeasurementDatabase, load_measurements
from roofline.specs import SpecDatabase, load_specs


@dataclass(frozen=True)
class DataPaths:
    """``roofline build --calibration FILE --measurements FILE`` (None: bundled)."""

    calibration: Path | None = None
    measurements: Path | None = None

    def files(self) -> tuple[Path, ...]:
        """The files given, for the build's input digest."""
        return tuple(p for p in (self.calibration, self.measurements) if p is not None)


@dataclass(frozen=True)
class ModelInputs:
    """The calibration file and measurement sets of one build.

    ``measurements`` is None for the bundled file alone (the Validation page then loads it
    against the site's spec database, or the bundled one when the site's lacks a measured
    GPU); otherwise the bundled sets followed by the ``--measurements`` file's, predicted
    with ``measurement_specs``.
    """

    calibration: CalibrationData
    measurements: MeasurementDatabase | None = None
    measurement_specs: SpecDatabase | None = None

    def published(self) -> MeasurementDatabase:
        """The measurement sets the site publishes: the merged ones, or the bundled file."""
        return self.measurements if self.measurements is not None else _bundled_measurements()


@functools.cache
def _bundled_measurements() -> MeasurementDatabase:
    # Read once per build: the Methodology page asks for them three times.
    return load_measurements()


def bundled_inputs() -> ModelInputs:
    """The bundled calibration file and measurements (the default build)."""
    return ModelInputs(load_calibration())


def load_inputs(
    specs: SpecDatabase,
    calibration_path: str | Path | None = None,
    measurements_path: str | Path | None = None,
) -> ModelInputs:
    """Load ``--calibration`` and ``--measurements`` (None: the bundled files) for a site of
    ``specs``: the measurement file's GPUs must be in ``specs`` (the calibration file's in
    ``specs`` or the bundled database), its set ids must not repeat the bundled ones, and
    every set the calibration file cites must be a bundled set or one of the
    measurement file's; each problem names its file, entry and field."""
    if measurements_path is None:
        measurements, measurement_specs, ids = None, None, bundled_set_refs()
    else:
        measurements, measurement_specs = _merged(specs, Path(measurements_path))
        ids = set_refs(measurements.sets)
    if calibration_path is None:
        calibration = load_calibration()
    else:
        try:
            names = calibration_gpu_names(specs)
            calibration = load_calibration(calibration_path, gpu_names=names, set_ids=ids)
        except DataFileError as exc:
            cites = any(p.expected == "ids of measurement sets" for p in exc.problems)
            if measurements_path is None and cites:
                raise RooflineError(
                    f"{exc}\n(the calibration file cites sets that are not bundled: pass the "
                    "measurement file they are in with --measurements FILE)"
                ) from None
            raise
    return ModelInputs(calibration, measurements, measurement_specs)


def _merged(specs: SpecDatabase, path: Path) -> tuple[MeasurementDatabase, SpecDatabase]:
    """The bundled sets, then the sets of ``path`` (measured on GPUs of ``specs``), and the
    spec database to predict them with: ``specs``, or the bundled GPUs with ``specs``'s
    in place when ``specs`` lacks a GPU a bundled set was measured on (the bundled sets
    stay: the calibration's fallbacks cite them)."""
    own = load_measurements(path, specs=specs)
    bundled_specs = load_specs()
    bundled = load_measurements(specs=bundled_specs)
    taken = set(bundled.ids())
    clashes = [s.id for s in own.sets if s.id in taken]
    if clashes:
        raise RooflineError(
            f"{own.origin}: set ids {', '.join(clashes)} are already bundled set ids; "
            "expected ids of your own (roofline measure --id-prefix ID)"
        )
    merged = MeasurementDatabase(bundled.sets + own.sets, f"{own.origin} and the bundled sets")
    if all(s.gpu in specs for s in bundled.sets):
        return merged, specs
    gpus = {**{g.name: g for g in bundled_specs.values()}, **{g.name: g for g in specs.values()}}
    return merged, SpecDatabase(gpus, f"{specs.origin} with the bundled database's other GPUs")
