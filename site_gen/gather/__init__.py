"""Stage 1: evaluate the models over the site's grids (dense, grouped, models, validation)
and the decision layer's views of them (decisions).

Every gatherer stores its records in the build cache the same way: :func:`gather_key` says
what a record depends on, :func:`cached` gets it or computes and stores it, and
:func:`model_pair` builds torchao's model and the calibrated one of one combination.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from roofline.calibration.params import CalibratedParameters
from roofline.specs import GpuSpec
from site_gen.cache import BuildCache, digest, files_digest, gpu_digest, model_digest, tool_versions

T = TypeVar("T")
_SITE_GEN = Path(__file__).resolve().parents[1]


@functools.cache
def code_digest(*files: str) -> str:
    """Digest of a gatherer's code: ``files`` (paths relative to ``site_gen/``)."""
    return files_digest([_SITE_GEN / f for f in files], _SITE_GEN)


def calibration_digest(calibration: CalibratedParameters | None) -> str:
    """Digest of a GPU's calibrated parameters ("" for torchao's model).

    They depend on the calibration file and on other GPUs of the database (fallbacks
    average over them), neither of which the GPU's own entry says.
    """
    if calibration is None:
        return ""
    own = dataclasses.asdict(calibration.cv) if calibration.cv is not None else None
    return digest({k: dataclasses.asdict(v) for k, v in calibration.values.items()}, own)


def gather_key(kind: str, code: str, gpu: GpuSpec, calibration_key: str, *parts: Any) -> str:
    """The cache key of one gathered record: what it is (``kind``), the model and the
    gatherer's ``code``, the GPU, its calibrated parameters (``calibration_key``, "" for
    torchao's model), what else it depends on (``parts``) and the numeric tools' versions
    (a numpy upgrade may change the last bits of an evaluation)."""
    return digest(
        kind, model_digest(), code, gpu_digest(gpu), calibration_key, tool_versions(), *parts
    )


def cached(
    cache: BuildCache,
    kind: str,
    key: str,
    compute: Callable[[], T],
    stored: Callable[[T], Any] = lambda value: value,
    restored: Callable[[Any], T] = lambda value: value,
) -> T:
    """The record of ``key`` from ``cache`` (``restored`` from what was stored), or
    ``compute()``d and stored (as ``stored(value)``)."""
    record = cache.get(kind, key)
    if record is not None:
        return restored(record)
    value = compute()
    cache.put(kind, key, stored(value))
    return value


def model_pair(
    one: Callable[[CalibratedParameters | None], T], calibration: CalibratedParameters
) -> tuple[T, T]:
    """torchao's model and the calibrated one, built the same way: ``one(None)`` and
    ``one(calibration)``."""
    return one(None), one(calibration)
