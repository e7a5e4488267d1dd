"""Loading ``roofline/data/calibration.toml``: the calibrated model's stored parameters.

The file holds model-wide parameters (``[parameters.<key>]``: the fixed latencies) and
per-GPU values (``[[gpu]]`` with ``[gpu.values."<key>"]``), each with its ``value``, its
``basis`` (``fitted`` on layer-level sets, or ``measured`` from a kernel-level one), the
measurement ``sets`` it came from and a ``note``. A ``[[gpu]]`` table may also carry a
``[gpu.cv]`` table (:class:`GpuCv`): the cross-validated error of that GPU's own fit, which
``roofline calibrate --gpu NAME -o FILE`` writes for a GPU its owner measured and which
the site then shows as that GPU's error band. Every problem is collected and raised
together, each naming the file, the entry, the field and the expected form.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from roofline.calibration.bounds import bounds_of, expected_text
from roofline.calibration.cited import SET_ID, SetRef, bundled_set_refs, check_cited
from roofline.datafiles.core import bundled_text, is_subnormal
from roofline.datafiles.problems import Collector
from roofline.datafiles.text import length_problem
from roofline.specs.text import describe, text_problems
from roofline.symbols import CALIBRATION_SYMBOLS, HARNESS_SYMBOLS, PER_GPU_LATENCY_SYMBOLS

BUNDLED_CALIBRATION = "bundled calibration (roofline/data/calibration.toml)"
STORED_BASES = ("fitted", "measured")
#: The fixed latencies stored per GPU ([gpu.values."<key>"]), not model-wide.
PER_GPU_LATENCY_KEYS = tuple(hw.spec_key for hw in PER_GPU_LATENCY_SYMBOLS)
# Model-wide parameters: the other fixed latencies (in seconds) and how benchmarks are
# scored (the harness parameters); every other one is per GPU.
GLOBAL_KEYS = tuple(
    hw.spec_key
    for hw in CALIBRATION_SYMBOLS
    if (hw.unit == "s" and hw.spec_key not in PER_GPU_LATENCY_KEYS) or hw in HARNESS_SYMBOLS
)
GPU_VALUE_KEYS = tuple(hw.spec_key for hw in CALIBRATION_SYMBOLS if hw.spec_key not in GLOBAL_KEYS)
#: Model-wide parameters a file may leave out: the cold starts of L2-flushed benchmarks and
#: the warm cache's bandwidth are how measurements are scored, not a kernel's cost, and
#: files written before they existed stay valid (without the GEMMs' cold start, cold-L2
#: sets are scored with none; without the casts', casts take the GEMMs'; without the warm
#: fraction, warm sets stream from DRAM).
OPTIONAL_GLOBAL_KEYS = tuple(hw.spec_key for hw in HARNESS_SYMBOLS)
#: An absent scoring parameter's value (one that changes nothing) and its source text.
HARNESS_DEFAULTS: dict[str, tuple[float, str]] = {
    hw.spec_key: (0.0, "assumed 0: no stored value (cold-L2 measurements scored without it)")
    if hw.unit == "s"
    else (1.0, "assumed 1: no stored value (warm measurements scored at DRAM bandwidth)")
    for hw in HARNESS_SYMBOLS
}
_ENTRY_FIELDS = ("value", "basis", "sets", "note")
_CV_FIELDS = ("mean_error", "points", "shapes", "method", "sets")
#: Largest ``[gpu.cv]`` count: more points than any measurement file may hold.
MAX_CV_COUNT = 1_000_000
MAX_METHOD_LENGTH = 200
#: Largest ``[gpu.cv] mean_error``: a fit that far off is still recorded as it is.
MAX_CV_ERROR = 1000
#: Longest ``note``: it is copied onto the site's pages and into the exported CSV.
MAX_NOTE_LENGTH = 1000
MAX_SET_ID_LENGTH = 64


@dataclass(frozen=True)
class Entry:
    """One stored parameter value and where it came from."""

    key: str
    value: float
    basis: str
    sets: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class GpuCv:
    """The cross-validated error of one GPU's own fit (``[gpu.cv]``).

    ``mean_error`` is the mean absolute relative error of predictions of points the refit
    did not see (0.08 = +/-8%), over ``points`` points at ``shapes`` distinct shapes of
    the measurement ``sets``; ``method`` says how the folds were cut (e.g. leave one
    shape out).
    """

    mean_error: float
    points: int
    shapes: int
    method: str
    sets: tuple[str, ...]


@dataclass(frozen=True)
class CalibrationData:
    """A loaded calibration file."""

    globals: Mapping[str, Entry]
    gpus: Mapping[str, Mapping[str, Entry]]
    origin: str = BUNDLED_CALIBRATION
    fitted_sets: tuple[str, ...] = field(default=())
    #: GPU name -> the cross-validated error of its own fit, where the file records one.
    cv: Mapping[str, GpuCv] = field(default_factory=dict)

    def gpu_entry(self, gpu: str, key: str) -> Entry | None:
        """The stored value of ``key`` for ``gpu``, if the file has one."""
        return self.gpus.get(gpu, {}).get(key)

    def entries(self) -> list[tuple[str | None, Entry]]:
        """Every stored entry with its GPU (None for model-wide ones), in file order."""
        out: list[tuple[str | None, Entry]] = [(None, e) for e in self.globals.values()]
        out += [(gpu, e) for gpu, values in self.gpus.items() for e in values.values()]
        return out

    def without(self, parameters: set[tuple[str | None, str]]) -> CalibrationData:
        """A copy without the entries ``parameters`` ((GPU or None, key) pairs): each falls
        back as if the file had never held it."""
        globals_ = {k: e for k, e in self.globals.items() if (None, k) not in parameters}
        gpus = {
            name: {k: e for k, e in entries.items() if (name, k) not in parameters}
            for name, entries in self.gpus.items()
        }
        return replace(self, globals=globals_, gpus=gpus)


class _Linter(Collector):
    """The problems of one calibration file; ``received`` values are described here."""

    file_kind = "calibration file"

    def error(
        self, entry: str | None, key: str | None, expected: str, received: Any, hint: str = ""
    ) -> None:
        text = received if isinstance(received, str) and received.startswith("<") else None
        super().error(entry, key, expected, text or describe(received), hint)

    def entry(self, where: str, key: str, raw: Any) -> Entry | None:
        if not isinstance(raw, dict):
            self.error(where, key, "a table with value, basis, sets, note", raw)
            return None
        for name in raw:
            if name not in _ENTRY_FIELDS:
                self.error(where, f"{key}.{name}", f"one of {', '.join(_ENTRY_FIELDS)}", name)
        value = self._value(where, key, raw.get("value"))
        basis = raw.get("basis")
        if basis not in STORED_BASES:
            self.error(where, f"{key}.basis", " or ".join(repr(b) for b in STORED_BASES), basis)
        sets = self._sets(where, key, raw.get("sets", []))
        note = self._note(where, key, raw.get("note", ""))
        if value is None or basis not in STORED_BASES:
            return None
        return Entry(key, value, basis, tuple(sets), note)

    def _sets(self, where: str, key: str, sets: Any) -> list[str]:
        """Measurement set ids: slugs (they become links to Validation page anchors)."""
        if not isinstance(sets, list) or not sets or not all(isinstance(s, str) for s in sets):
            self.error(where, f"{key}.sets", "a non-empty list of measurement set ids", sets)
            return []
        for index, set_id in enumerate(sets):
            if len(set_id) > MAX_SET_ID_LENGTH or not SET_ID.fullmatch(set_id):
                expected = (
                    "a measurement set id: a-z, 0-9 and single inner dashes, at most "
                    f"{MAX_SET_ID_LENGTH} characters"
                )
                self.error(where, f"{key}.sets[{index}]", expected, set_id)
        return sets

    def _note(self, where: str, key: str, note: Any) -> str:
        """Plain text of at most MAX_NOTE_LENGTH characters, without control characters."""
        if not isinstance(note, str):
            self.error(where, f"{key}.note", "a string", note)
            return ""
        problems = text_problems(f"{key}.note", note, plain=False)
        self.key_problems(where, problems)
        too_long = length_problem(f"{key}.note", note, MAX_NOTE_LENGTH)
        if too_long:
            self.key_problems(where, [too_long])
            return ""
        return "" if problems else note

    def cv(self, where: str, raw: Any) -> GpuCv | None:
        """A ``[gpu.cv]`` table: an error fraction, two counts, a method text, set ids."""
        if not isinstance(raw, dict):
            self.error(where, "cv", "a table with " + ", ".join(_CV_FIELDS), raw)
            return None
        before = self.count()
        for name in raw:
            if name not in _CV_FIELDS:
                self.error(where, f"cv.{name}", f"one of {', '.join(_CV_FIELDS)}", name)
        error = raw.get("mean_error")
        ok = isinstance(error, int | float) and not isinstance(error, bool)
        if not (ok and 0 <= error <= MAX_CV_ERROR) or is_subnormal(error):
            expected = f"a fraction in [0, {MAX_CV_ERROR}] (0.08 = 8%)"
            self.error(where, "cv.mean_error", expected, error)
        counts = {}
        for name in ("points", "shapes"):
            value = raw.get(name)
            if type(value) is not int or not 1 <= value <= MAX_CV_COUNT:
                self.error(where, f"cv.{name}", f"a whole number in [1, {MAX_CV_COUNT}]", value)
            counts[name] = value
        method = raw.get("method")
        if not isinstance(method, str) or not method.strip() or len(method) > MAX_METHOD_LENGTH:
            expected = (
                "how the folds were cut, e.g. 'leave one shape out' "
                f"(at most {MAX_METHOD_LENGTH} characters)"
            )
            self.error(where, "cv.method", expected, method)
        else:
            self.key_problems(where, text_problems("cv.method", method, plain=True))
        sets = self._sets(where, "cv", raw.get("sets", []))
        if self.count() > before:
            return None
        return GpuCv(float(error), counts["points"], counts["shapes"], method, tuple(sets))

    def _value(self, where: str, key: str, value: Any) -> float | None:
        # bounds_of(...).contains is False for an int beyond the float range (a 400-digit
        # value); a subnormal fraction would divide a time to infinity.
        if is_subnormal(value) or not bounds_of(key).contains(value):
            self.error(where, f"{key}.value", f"{expected_text(key)}, not subnormal", value)
            return None
        return float(value)


def parse_calibration(
    doc: Mapping[str, Any],
    origin: str,
    gpu_names: set[str] | None = None,
    set_ids: Collection[str] | Mapping[str, SetRef] | None = None,
    declared_sets: bool = False,
) -> CalibrationData:
    """Lint a parsed calibration document; DataFileError lists every problem.

    ``set_ids``: the measurement sets its ``sets`` may cite (None: not checked); a mapping
    of ids to :class:`SetRef` also checks each cited set's role and GPU.
    ``declared_sets``: the sets its own ``[gpu.cv]`` tables declare may be cited too (a
    command that reads no measurement file cannot check a refit owner's sets)."""
    lint = _Linter(origin)
    for key in doc:
        if key not in ("schema_version", "parameters", "gpu"):
            lint.error(None, key, "schema_version, parameters or gpu", key)
    if doc.get("schema_version") != 1:
        lint.error(None, "schema_version", "1", doc.get("schema_version"))
    params = doc.get("parameters", {})
    if not isinstance(params, dict):  # e.g. parameters = 5
        lint.error(None, "parameters", "[parameters.<key>] tables", params)
        params = {}
    globals_: dict[str, Entry] = {}
    for key in GLOBAL_KEYS:
        if key not in params and key not in OPTIONAL_GLOBAL_KEYS:
            lint.error("parameters", key, "a [parameters.<key>] table", "<missing>")
    for key, raw in params.items():
        if key not in GLOBAL_KEYS:
            # A per-GPU latency in the model-wide table: say where it goes instead.
            where = f'stored per GPU: [gpu.values."{key}"] in the GPU\'s [[gpu]] table'
            hint = where if key in PER_GPU_LATENCY_KEYS else ""
            lint.error("parameters", key, f"one of {', '.join(GLOBAL_KEYS)}", key, hint)
        elif (entry := lint.entry("parameters", key, raw)) is not None:
            globals_[key] = entry
    cvs: dict[str, GpuCv] = {}
    gpus = _gpus(lint, doc.get("gpu", []), gpu_names, cvs)
    data = CalibrationData(globals_, gpus, origin, cv=cvs)
    if set_ids is not None:
        check_cited(lint, data.entries(), cvs, set_ids, declared_sets)
    lint.strings(doc)
    lint.raise_if_any()
    return data


def _gpus(
    lint: _Linter, raw: Any, gpu_names: set[str] | None, cvs: dict[str, GpuCv]
) -> dict[str, dict[str, Entry]]:
    if not isinstance(raw, list):
        lint.error(None, "gpu", "an array of [[gpu]] tables", raw)
        return {}
    gpus: dict[str, dict[str, Entry]] = {}
    for index, table in enumerate(raw):
        name = table.get("name") if isinstance(table, dict) else None
        where = f"gpu {name!r}" if isinstance(name, str) else f"gpu #{index + 1}"
        if not isinstance(name, str) or (gpu_names is not None and name not in gpu_names):
            lint.error(where, "name", "the name of a GPU in the spec database", name)
            continue
        if name in gpus:
            lint.error(where, "name", "each GPU once", name)
            continue
        for key in table:
            if key not in ("name", "values", "cv"):
                lint.error(where, key, "name, values or cv", key)
        if "cv" in table and (cv := lint.cv(where, table["cv"])) is not None:
            cvs[name] = cv
        values: dict[str, Entry] = {}
        raw_values = table.get("values", {})
        if not isinstance(raw_values, dict):  # e.g. values = [1, 2] or "ab"
            lint.error(where, "values", '[gpu.values."<key>"] tables', raw_values)
            raw_values = {}
        for key, entry_raw in raw_values.items():
            if key not in GPU_VALUE_KEYS:
                lint.error(where, key, f"one of {', '.join(GPU_VALUE_KEYS)}", key)
            elif (entry := lint.entry(where, key, entry_raw)) is not None:
                values[key] = entry
        gpus[name] = values
    return gpus


def load_calibration(
    path: str | Path | None = None,
    gpu_names: set[str] | None = None,
    set_ids: Collection[str] | Mapping[str, SetRef] | None = None,
    declared_sets: bool = False,
) -> CalibrationData:
    """Load and lint a calibration file (None: the bundled one, cached); the options are
    :func:`parse_calibration`'s."""
    if path is None and gpu_names is None and set_ids is None:
        return _bundled()
    return _load(path, gpu_names, set_ids, declared_sets)


def _load(
    path: str | Path | None,
    gpu_names: set[str] | None,
    set_ids: Collection[str] | Mapping[str, SetRef] | None,
    declared_sets: bool = False,
) -> CalibrationData:
    if path is None:
        text = bundled_text("calibration.toml")
        origin = BUNDLED_CALIBRATION
    else:
        origin = str(Path(path))
        # A device, FIFO, a file over the size limit or not UTF-8: one problem.
        text = _Linter(origin).read(path, "calibration file")
    doc = _Linter(origin).parse(text)
    return parse_calibration(doc, origin, gpu_names, set_ids, declared_sets)


def bundled_set_ids() -> set[str]:
    """The set ids of the bundled measurement file (:func:`bundled_set_refs`)."""
    return set(bundled_set_refs())


_BUNDLED: list[CalibrationData] = []


def _bundled() -> CalibrationData:
    if not _BUNDLED:
        _BUNDLED.append(_load(None, None, bundled_set_refs()))
    return _BUNDLED[0]
