"""One linter framework for every data file (issue #20).

The four kinds of data file (spec, measurement, model-preset and calibration files) are
read by the same reader and report their problems as the same record, so a hostile file
is refused by each of them the same way: a bidi override, a NUL or a 2 MB string in a
text value, a file over the size cap and a FIFO each give one message of one shape,
``<file>: [<entry>: ]key '<key>': expected <form>, received <value>``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from roofline.calibration.data import GLOBAL_KEYS, load_calibration
from roofline.datafiles.core import INVISIBLE_EXPECTED, MAX_FILE_BYTES, FileRefused, bundled_text
from roofline.datafiles.problems import Collector
from roofline.datafiles.text import MAX_STRING_CHARS, string_problems, toml_string
from roofline.errors import (
    DataFileError,
    DataProblem,
    Problem,
    ProblemsError,
    SpecError,
    SpecProblem,
)
from roofline.measurements import MeasurementError, MeasurementProblem, load_measurements
from roofline.presets import load_models
from roofline.specs import load_specs

TEXT = "@TEXT@"  # where each valid file holds a free-text value a test replaces

SPEC = f"""schema_version = 1
[[gpu]]
name = "Acme X1"
bf16_peak_tops = 1e15
peak_mem_bw_bytes_sec = 3e12
notes = {TEXT}
"""

MEASUREMENTS = f"""schema_version = 1
[[set]]
id = "base-relu"
title = {TEXT}
gpu = "NVIDIA B200"
mode = "inference"
recipe = "mxfp8_cublas"
fusion = true
timed_region = "relu_linear"
quantity = "speedup"
role = "fit"
max_mean_error = 0.15
software = "torch 2.12"
[set.source]
url = "https://example.org/table"
read_on = 2026-11-30
[[set.points]]
shape = [1024, 1024, 1024]
value = 0.96
"""

PRESETS = f"""schema_version = 1
[[model]]
name = "tiny-1b"
display_name = {TEXT}
[[model.sources]]
url = "https://example.org/config.json"
read_on = 2026-11-30
[[model.block]]
name = "layers"
layers = 2
[[model.block.gemm]]
name = "q_proj"
K = 1024
N = 1024
"""

CALIBRATION = "schema_version = 1\n" + "".join(
    f'[parameters.{key}]\nvalue = 5e-6\nbasis = "fitted"\nsets = ["a"]\n'
    + (f"note = {TEXT}\n" if key == GLOBAL_KEYS[0] else "")
    for key in GLOBAL_KEYS
)


@dataclass(frozen=True)
class Kind:
    """One kind of data file: a valid text, its loader, its error and the text key."""

    name: str
    text: str
    load: Callable[[Path], Any]
    error: type[ProblemsError]
    key: str  # the key of the planted text, as the message names it

    def write(self, folder: Path, value: str) -> Path:
        path = folder / f"{self.name}.toml"
        path.write_text(self.text.replace(TEXT, toml_string(value)), encoding="utf-8")
        return path


KINDS = [
    Kind("specs", SPEC, load_specs, SpecError, "notes"),
    Kind("measurements", MEASUREMENTS, load_measurements, MeasurementError, "title"),
    Kind("presets", PRESETS, load_models, DataFileError, "display_name"),
    Kind("calibration", CALIBRATION, load_calibration, DataFileError, f"{GLOBAL_KEYS[0]}.note"),
]

#: The one shape every problem prints in.
SHAPE = re.compile(
    r"(?P<file>[^:]+): (?:(?P<entry>[^:]+): )?key '(?P<key>[^']+)': "
    r"expected (?P<expected>.+), received (?P<received>.+)"
)

HOSTILE = {
    "bidi override": ("tame \u202etext", INVISIBLE_EXPECTED, r"'\\u202e' at index 5"),
    "NUL": ("tame\x00text", "text without control characters", r"'\\x00' at index 4"),
    "2 MB value": ("x" * 2_000_000, r"at most \d+ characters", r"^2000000 characters$"),
}


def refusal(kind: Kind, path: Path) -> ProblemsError:
    with pytest.raises(kind.error) as info:
        kind.load(path)
    return info.value


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_valid_file_loads(kind: Kind, tmp_path: Path) -> None:
    kind.load(kind.write(tmp_path, "A plain note"))


@pytest.mark.parametrize("hostile", list(HOSTILE), ids=str)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_hostile_string_is_refused_by_every_kind_in_one_shape(
    kind: Kind, hostile: str, tmp_path: Path
) -> None:
    value, expected, received = HOSTILE[hostile]
    path = kind.write(tmp_path, value)
    error = refusal(kind, path)
    assert isinstance(error.problems[0], Problem)
    lines = [str(p) for p in error.problems]
    # Named by its entry and key, or (where no field rule caps it: a spec note's length)
    # by its dotted path from the last pass over every string of the file.
    keys = (kind.key, f"gpu[0].{kind.key}")
    named = [m for m in map(SHAPE.fullmatch, lines) if m and m["key"] in keys]
    assert named, "\n".join(lines)
    match = named[0]
    assert match["file"] == str(path)
    assert re.fullmatch(expected, match["expected"]), match["expected"]
    assert re.search(received, match["received"]), match["received"]
    assert "\x00" not in str(error) and "\u202e" not in str(error)
    assert len(str(error)) < 2000  # a 2 MB value is counted, never echoed


def _fifo(kind: Kind, folder: Path) -> Path:
    path = folder / f"{kind.name}.toml"
    os.mkfifo(path)
    return path


def _huge(kind: Kind, folder: Path) -> Path:
    path = folder / f"{kind.name}.toml"
    path.write_text("# " + "x" * MAX_FILE_BYTES + "\n", encoding="utf-8")
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize(
    ("make", "expected", "received"),
    [
        (_fifo, r"a .* file that is a regular file", r"a FIFO \(named pipe\)"),
        (_huge, rf"a file of at most {MAX_FILE_BYTES} bytes", rf"more than {MAX_FILE_BYTES}"),
    ],
    ids=["FIFO", "over the size cap"],
)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_refused_file_is_one_problem_of_the_same_shape(
    kind: Kind, make: Callable[[Kind, Path], Path], expected: str, received: str, tmp_path: Path
) -> None:
    path = make(kind, tmp_path)
    error = refusal(kind, path)
    (problem,) = error.problems
    line = str(problem)
    assert line == f"{path}: expected {problem.expected}, received {problem.received}"
    assert re.fullmatch(expected, problem.expected) and re.match(received, problem.received)


def test_the_four_kinds_print_a_problem_in_the_same_format() -> None:
    """Every problem record is a Problem and prints through one __str__."""
    made = [
        SpecProblem("f.toml", "Acme X1", "notes", "a string", "int 5", hint="why"),
        MeasurementProblem("f.toml", "base-relu", "title", "a string", "int 5", "why", 0),
        DataProblem("f.toml", "model 'tiny-1b' (#1)", "display_name", "a string", "int 5"),
        DataProblem("f.toml", "parameters", "gemm_fixed_latency_s.note", "a string", "int 5"),
    ]
    lines = [str(p) for p in made]
    assert lines == [
        "f.toml: gpu 'Acme X1': key 'notes': expected a string, received int 5 (why)",
        "f.toml: set 'base-relu' (#1): key 'title': expected a string, received int 5 (why)",
        "f.toml: model 'tiny-1b' (#1): key 'display_name': expected a string, received int 5",
        "f.toml: parameters: key 'gemm_fixed_latency_s.note': expected a string, received int 5",
    ]
    assert all(type(p).__str__ is Problem.__str__ for p in made)
    assert all(SHAPE.fullmatch(line) for line in lines)


def test_the_last_pass_reads_every_key_and_string_of_a_document() -> None:
    """Keys and strings anywhere (in arrays of tables too) are named by their dotted path."""
    doc = {"a": [{"b": "ok", "c\u202ed": 1}], "e": "x" * (MAX_STRING_CHARS + 1), "f": "n\x00"}
    found = {(p.key, p.expected) for p in string_problems(doc)}
    assert found == {
        ("a[0].c\u202ed", INVISIBLE_EXPECTED),
        ("e", f"at most {MAX_STRING_CHARS} characters"),
        ("f", "text without control characters"),
    }


def test_calibration_gpu_name_is_refused_without_a_spec_database(tmp_path: Path) -> None:
    """Without a spec database to look the name up in, no field rule reads a calibration
    GPU's name as text: the last pass refuses a bidi override in it all the same."""
    text = CALIBRATION.replace(TEXT, '"plain"') + '[[gpu]]\nname = "Acme \u202eX1"\n'
    path = tmp_path / "calibration.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as info:
        load_calibration(path)
    (problem,) = info.value.problems
    assert problem.key == "gpu[0].name" and problem.expected == INVISIBLE_EXPECTED
    assert SHAPE.fullmatch(str(problem))


def test_a_collector_keeps_the_first_problems_and_counts_the_rest() -> None:
    collector = Collector("f.toml", limit=3)
    for index in range(5):
        collector.error(None, f"k{index}", "a value", "nothing")
    collector.warn(None, "w", "a value", "nothing")
    assert len(collector.problems) == 3 and collector.unlisted == 3
    assert collector.count() == 6 and collector.error_count() == 5
    error = collector.exception()
    assert isinstance(error, DataFileError)
    assert error.report_lines()[-1] == "error: f.toml: 3 more problem(s), not shown"


# -- the one source-entry rule ----------------------------------------------------------

BAD_SOURCE = 'url = "https://example.org/x"\nread_on = 2026-11-30T01:02:03\nnote = " padded "\n'
SOURCE_FILES = {
    "specs": (SPEC.replace(TEXT, '"n"') + "[[gpu.sources]]\n" + BAD_SOURCE, "sources[0]"),
    "measurements": (
        MEASUREMENTS.replace(TEXT, '"t"').replace(
            '[set.source]\nurl = "https://example.org/table"\nread_on = 2026-11-30\n',
            "[set.source]\n" + BAD_SOURCE,
        ),
        "source",
    ),
    "presets": (
        PRESETS.replace(TEXT, '"Tiny"').replace(
            '[[model.sources]]\nurl = "https://example.org/config.json"\nread_on = 2026-11-30\n',
            "[[model.sources]]\n" + BAD_SOURCE,
        ),
        "sources[0]",
    ),
}


@pytest.mark.parametrize("kind", KINDS[:3], ids=lambda k: k.name)
def test_every_source_entry_is_checked_by_one_rule(kind: Kind, tmp_path: Path) -> None:
    """A date-time for read_on and a padded note: the same two problems, worded the same,
    from a GPU's, a measurement set's and a model preset's source entry."""
    text, prefix = SOURCE_FILES[kind.name]
    assert BAD_SOURCE in text
    path = tmp_path / f"{kind.name}.toml"
    path.write_text(text, encoding="utf-8")
    found = {(p.key, p.expected) for p in refusal(kind, path).problems}
    assert found == {
        (f"{prefix}.read_on", "a TOML date, e.g. 2026-11-30"),
        (f"{prefix}.note", "text without leading or trailing whitespace"),
    }


@pytest.mark.parametrize(
    "name",
    ["gpus.toml", "measurements.toml", "models.toml", "calibration.toml", "error_bands.toml"],
)
def test_every_bundled_file_is_read_through_the_one_reader(name: str) -> None:
    text = bundled_text(name)
    assert text.strip() and "\ufeff" not in text[:1]


def test_a_missing_bundled_file_is_refused_by_name() -> None:
    with pytest.raises(FileRefused, match=r"bundled data file nothing\.toml"):
        bundled_text("nothing.toml")


def test_no_module_reads_a_bundled_data_file_around_the_reader() -> None:
    root = Path(__file__).resolve().parents[1]
    around = [
        str(path.relative_to(root))
        for folder in ("roofline", "site_gen")
        for path in sorted((root / folder).rglob("*.py"))
        if re.search(r"joinpath\(\"data/[^\"]+\"\)\.read_(text|bytes)", path.read_text("utf-8"))
    ]
    assert around == []
