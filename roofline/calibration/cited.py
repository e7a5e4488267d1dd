"""Which measurement sets a calibration file's values may cite (:func:`check_cited`).

A value's ``sets`` name the measurement sets it came from: each must exist in the
measurement file in use, be a ``fit`` set (a held-out or context set never informs a
value) and, for a per-GPU value or a ``[gpu.cv]`` table, be measured on that GPU. A
calibration file comes from pull requests like any data file; one that labelled a value
as measured on a held-out set would make the Validation page count held-out data as
fitted, and one citing another GPU's set would make the staged fit hold the value.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from roofline.datafiles.core import bundled_text
from roofline.specs.text import load_toml

if TYPE_CHECKING:
    from roofline.calibration.data import Entry, GpuCv
    from roofline.datafiles.problems import Collector

#: A measurement set id (the measurement lint's rule): a slug, at most 64 characters.
SET_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class SetRef(NamedTuple):
    """What the linter needs of a measurement set a calibration entry cites: its role and
    GPU (None: not known, not checked)."""

    role: str | None
    gpu: str | None


def set_refs(sets: Iterable[Any]) -> dict[str, SetRef]:
    """``{id: SetRef}`` of measurement sets (anything with ``id``, ``role`` and ``gpu``:
    a :class:`~roofline.measurements.model.MeasurementSet`)."""
    return {s.id: SetRef(getattr(s.role, "value", s.role), s.gpu) for s in sets}


#: The role a cited set must have: held-out and context sets never inform a value.
CITABLE_ROLE = "fit"


def check_cited(
    lint: Collector,
    entries: Iterable[tuple[str | None, Entry]],
    cvs: Mapping[str, GpuCv],
    set_ids: Collection[str] | Mapping[str, SetRef],
    declared_sets: bool,
) -> None:
    """Every cited set exists; where ``set_ids`` maps ids to :class:`SetRef`, each value's
    sets are also fit sets, measured on the value's GPU (a GPU's ``[gpu.cv]`` sets on that
    GPU): a value said to come from a held-out set, or from another GPU's, would be
    shown as measured where it is not, and the staged fit holds an entry none of whose
    sets it fits on."""
    checked = isinstance(set_ids, Mapping)
    unknown = SetRef(None, None)
    refs = dict(set_ids) if checked else dict.fromkeys(set_ids, unknown)
    if declared_sets:  # the refit owner's sets: on the GPU whose [gpu.cv] names them
        for gpu, cv in cvs.items():
            for set_id in cv.sets:
                refs.setdefault(set_id, SetRef(None, gpu))
    cited = [(gpu, f"{entry.key}.sets", entry.sets, True) for gpu, entry in entries]
    cited += [(gpu, "cv.sets", cv.sets, False) for gpu, cv in cvs.items()]
    for gpu, key, ids, informs in cited:
        where = f"gpu {gpu!r}" if gpu else "parameters"
        for index, set_id in enumerate(ids):
            if not SET_ID.fullmatch(set_id):
                continue  # a malformed id is reported once, by the entry's own lint
            ref = refs.get(set_id)
            if ref is None:
                lint.error(where, key, "ids of measurement sets", set_id)
            elif checked:
                _check_ref(lint, where, f"{key}[{index}]", set_id, ref, gpu, informs)


def _check_ref(
    lint: Collector,
    where: str,
    key: str,
    set_id: str,
    ref: SetRef,
    gpu: str | None,
    informs: bool,
) -> None:
    """One cited set's role (a value's sets) and GPU (a per-GPU entry's sets)."""
    if informs and ref.role is not None and ref.role != CITABLE_ROLE:
        lint.error(
            where,
            key,
            f"a measurement set of role {CITABLE_ROLE!r} (held-out and context sets never "
            "inform a value)",
            f"<{set_id!r}, a set of role {ref.role!r}>",
        )
    if gpu is not None and ref.gpu is not None and ref.gpu != gpu:
        lint.error(
            where,
            key,
            f"a measurement set measured on {gpu!r} (a GPU's values come from its own sets)",
            f"<{set_id!r}, measured on {ref.gpu!r}>",
        )


def bundled_set_refs() -> dict[str, SetRef]:
    """The sets of the bundled measurement file (id, role and GPU), read without linting
    it (the cross-reference check of a calibration file: a broken ``sets`` id is reported
    at load, naming the calibration file, not minutes later as a dead link)."""
    text = bundled_text("measurements.toml")
    refs: dict[str, SetRef] = {}
    for raw in load_toml(text).get("set", []):
        if isinstance(raw, dict) and isinstance(raw.get("id"), str):
            role, gpu = raw.get("role"), raw.get("gpu")
            refs[raw["id"]] = SetRef(
                role if isinstance(role, str) else None, gpu if isinstance(gpu, str) else None
            )
    return refs


def citable_sets(sets: Iterable[Any]) -> dict[str, SetRef]:
    """The sets a calibration file may cite when ``sets`` (a measurement file's) are in
    use beside the bundled ones: the bundled sets (a calibration file derives from the
    bundled one) and ``sets``."""
    return {**bundled_set_refs(), **set_refs(sets)}
