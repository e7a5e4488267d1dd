"""Stage 1 for the Validation page: every published measurement set predicted by both models.

:func:`gather_validation` loads the measurement sets the page publishes (the bundled file,
or the merged sets of ``--measurements``), predicts them with
:func:`roofline.analysis.validation.validate`, and reads the stored cross-validation bands
and which calibration parameters too few points pin; the page receives the result
(:class:`ValidationData`) and neither reads a file nor evaluates a model. The measurements
name the GPUs they were taken on; a site built from a spec file without them validates
against the bundled spec database (and the page says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.analysis.error_bands import ErrorBands, load_error_bands
from roofline.analysis.support import Support, support
from roofline.analysis.validation import ValidationReport, validate
from roofline.calibration.data import CalibrationData
from roofline.measurements import MeasurementDatabase, MeasurementError, load_measurements
from roofline.specs import SpecDatabase, load_specs
from site_gen.inputs import ModelInputs


@dataclass(frozen=True)
class ValidationData:
    """What the Validation page shows: the sets, the spec database they were predicted
    with, the report, the stored error bands and the support of each stored parameter.
    ``site_specs``: whether that database is the site's own (else the page says the
    predictions used another), decided where the data is gathered: the data may be
    gathered on a worker, whose copy of the site's database is never the site's object."""

    measurements: MeasurementDatabase
    specs: SpecDatabase
    calibration: CalibrationData
    report: ValidationReport
    bands: ErrorBands
    support: tuple[Support, ...]
    site_specs: bool = True


def measurements_for(specs: SpecDatabase) -> tuple[MeasurementDatabase, SpecDatabase]:
    """The bundled measurements and the spec database to predict them with: the site's,
    or the bundled one when the site's lacks a GPU a set was measured on."""
    try:
        return load_measurements(specs=specs), specs
    except MeasurementError as exc:
        if not all(p.field == "gpu" for p in exc.problems):
            raise  # the measurement file itself is broken: a bug, not this site's
    bundled = load_specs()
    return load_measurements(specs=bundled), bundled


def validation_of(
    measurements: MeasurementDatabase,
    specs: SpecDatabase,
    calibration: CalibrationData,
    site_specs: bool = True,
) -> ValidationData:
    """``measurements`` predicted with ``specs`` (the site's, or, ``site_specs`` False,
    the bundled database when the site's lacks the measured GPUs) and ``calibration``."""
    report = validate(measurements, specs, calibration)
    return ValidationData(
        measurements,
        specs,
        calibration,
        report,
        load_error_bands(),
        tuple(support(calibration, measurements)),
        site_specs,
    )


def gather_validation(specs: SpecDatabase, inputs: ModelInputs) -> ValidationData:
    """The Validation page's data for a site of ``specs`` built from ``inputs``."""
    if inputs.measurements is not None and inputs.measurement_specs is not None:
        measurements, used = inputs.measurements, inputs.measurement_specs
    else:
        measurements, used = measurements_for(specs)
    return validation_of(measurements, used, inputs.calibration, site_specs=used is specs)
