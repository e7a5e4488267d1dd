"""Loading ``roofline/data/calibration.toml``: the calibrated model's stored parameters.

The file holds model-wide parameters (``[parameters.<key>]``: the fixed latencies) and
per-GPU values (``[[gpu]]`` with ``[gpu.values."<key>"]``), each with its ``value``, its
``basis`` (``fitted`` on layer-level sets, or ``measured`` from a kernel-level one), the
measurement ``sets`` it came from and a ``note``. Every problem is collected and raised
together, each naming the file, the entry, the field and the expected form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from roofline.calibration.bounds import bounds_of, expected_text
from roofline.errors import DataFileError, DataProblem
from roofline.specs.text import TomlProblem, describe, load_toml
from roofline.symbols import CALIBRATION_SYMBOLS

BUNDLED_CALIBRATION = "bundled calibration (roofline/data/calibration.toml)"
STORED_BASES = ("fitted", "measured")
# Model-wide parameters: the fixed latencies (in seconds); every other one is per GPU.
GLOBAL_KEYS = tuple(hw.spec_key for hw in CALIBRATION_SYMBOLS if hw.unit == "s")
GPU_VALUE_KEYS = tuple(hw.spec_key for hw in CALIBRATION_SYMBOLS if hw.spec_key not in GLOBAL_KEYS)
_ENTRY_FIELDS = ("value", "basis", "sets", "note")


@dataclass(frozen=True)
class Entry:
    """One stored parameter value and where it came from."""

    key: str
    value: float
    basis: str
    sets: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class CalibrationData:
    """A loaded calibration file."""

    globals: Mapping[str, Entry]
    gpus: Mapping[str, Mapping[str, Entry]]
    origin: str = BUNDLED_CALIBRATION
    fitted_sets: tuple[str, ...] = field(default=())

    def gpu_entry(self, gpu: str, key: str) -> Entry | None:
        """The stored value of ``key`` for ``gpu``, if the file has one."""
        return self.gpus.get(gpu, {}).get(key)

    def entries(self) -> list[tuple[str | None, Entry]]:
        """Every stored entry with its GPU (None for model-wide ones), in file order."""
        out: list[tuple[str | None, Entry]] = [(None, e) for e in self.globals.values()]
        out += [(gpu, e) for gpu, values in self.gpus.items() for e in values.values()]
        return out


class _Linter:
    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.problems: list[DataProblem] = []

    def error(self, entry: str | None, key: str | None, expected: str, received: Any) -> None:
        text = received if isinstance(received, str) and received.startswith("<") else None
        self.problems.append(
            DataProblem(self.origin, entry, key, expected, text or describe(received))
        )

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
        sets = raw.get("sets", [])
        if not isinstance(sets, list) or not sets or not all(isinstance(s, str) for s in sets):
            self.error(where, f"{key}.sets", "a non-empty list of measurement set ids", sets)
            sets = []
        note = raw.get("note", "")
        if not isinstance(note, str):
            self.error(where, f"{key}.note", "a string", note)
            note = ""
        if value is None or basis not in STORED_BASES:
            return None
        return Entry(key, value, basis, tuple(sets), note)

    def _value(self, where: str, key: str, value: Any) -> float | None:
        if not bounds_of(key).contains(value):
            self.error(where, f"{key}.value", expected_text(key), value)
            return None
        return float(value)


def parse_calibration(
    doc: Mapping[str, Any],
    origin: str,
    gpu_names: set[str] | None = None,
    set_ids: set[str] | None = None,
) -> CalibrationData:
    """Lint a parsed calibration document; DataFileError lists every problem."""
    lint = _Linter(origin)
    for key in doc:
        if key not in ("schema_version", "parameters", "gpu"):
            lint.error(None, key, "schema_version, parameters or gpu", key)
    if doc.get("schema_version") != 1:
        lint.error(None, "schema_version", "1", doc.get("schema_version"))
    params = doc.get("parameters", {})
    globals_: dict[str, Entry] = {}
    for key in GLOBAL_KEYS:
        if key not in params:
            lint.error("parameters", key, "a [parameters.<key>] table", "<missing>")
    for key, raw in params.items() if isinstance(params, dict) else []:
        if key not in GLOBAL_KEYS:
            lint.error("parameters", key, f"one of {', '.join(GLOBAL_KEYS)}", key)
        elif (entry := lint.entry("parameters", key, raw)) is not None:
            globals_[key] = entry
    gpus = _gpus(lint, doc.get("gpu", []), gpu_names)
    data = CalibrationData(globals_, gpus, origin)
    if set_ids is not None:
        for gpu, entry in data.entries():
            for set_id in entry.sets:
                if set_id not in set_ids:
                    where = f"gpu {gpu!r}" if gpu else "parameters"
                    lint.error(where, f"{entry.key}.sets", "ids of measurement sets", set_id)
    if lint.problems:
        raise DataFileError("calibration file", lint.problems)
    return data


def _gpus(lint: _Linter, raw: Any, gpu_names: set[str] | None) -> dict[str, dict[str, Entry]]:
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
            if key not in ("name", "values"):
                lint.error(where, key, "name or values", key)
        values: dict[str, Entry] = {}
        for key, entry_raw in dict(table.get("values", {})).items():
            if key not in GPU_VALUE_KEYS:
                lint.error(where, key, f"one of {', '.join(GPU_VALUE_KEYS)}", key)
            elif (entry := lint.entry(where, key, entry_raw)) is not None:
                values[key] = entry
        gpus[name] = values
    return gpus


def load_calibration(
    path: str | Path | None = None,
    gpu_names: set[str] | None = None,
    set_ids: set[str] | None = None,
) -> CalibrationData:
    """Load and lint a calibration file (None: the bundled one, cached)."""
    if path is None and gpu_names is None and set_ids is None:
        return _bundled()
    return _load(path, gpu_names, set_ids)


def _load(
    path: str | Path | None, gpu_names: set[str] | None, set_ids: set[str] | None
) -> CalibrationData:
    if path is None:
        text = resources.files("roofline").joinpath("data/calibration.toml").read_text("utf-8")
        origin = BUNDLED_CALIBRATION
    else:
        origin = str(path)
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problem = DataProblem(origin, None, None, "a readable UTF-8 TOML file", str(exc))
            raise DataFileError("calibration file", [problem]) from None
    try:
        doc = load_toml(text)
    except TomlProblem as exc:
        problem = DataProblem(origin, None, None, "valid TOML", str(exc))
        raise DataFileError("calibration file", [problem]) from None
    return parse_calibration(doc, origin, gpu_names, set_ids)


_BUNDLED: list[CalibrationData] = []


def _bundled() -> CalibrationData:
    if not _BUNDLED:
        _BUNDLED.append(_load(None, None, None))
    return _BUNDLED[0]
