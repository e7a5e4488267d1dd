"""Every data-file loader against the same hostile inputs (issue #19).

Each of the four loaders (spec, measurement, calibration and model-preset files) is run
through the CLI on a device, a FIFO, a file with a byte-order mark, a 5 MB file, bidi
and NUL characters in a string, a subnormal number, a 400-digit number and an unknown
cross-reference. Every case must exit 2 with exactly one line on stderr, naming the
file, the key (for problems inside the file), what was expected and what was received:
never a hang, a traceback or a flood.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest

from roofline.cli import main


def _value_line(pattern: str) -> str:
    """The bundled calibration file's ``value = ...`` line right after ``pattern`` (the
    values move with every refit; the tests only need one valid line to damage)."""
    text = resources.files("roofline").joinpath("data/calibration.toml").read_text("utf-8")
    match = re.search(re.escape(pattern) + r"\n(value = \S+)", text)
    assert match is not None, pattern
    return match.group(1)


LATENCY_LINE = _value_line("[parameters.reduce_fixed_latency_s]")
FRACTION_LINE = _value_line('[gpu.values."gemm_efficiency.fp8_block"]')


SPEC = """\
[[gpu]]
name = "Hostile Test GPU"
bf16_peak_tops = 1.0e15
peak_mem_bw_bytes_sec = 3.0e12
pct_achievable_mem_bw = 0.9
notes = "NOTE"
[[gpu.sources]]
url = "https://example.com/datasheet.pdf"
read_on = 2026-01-01
figures = ["FIGURE"]
"""

MODELS = """\
schema_version = 1
[[model]]
name = "tiny"
display_name = "NOTE"
[[model.sources]]
url = "https://example.com/config.json"
read_on = 2026-01-01
[[model.block]]
name = "layers"
layers = 2
[[model.block.gemm]]
name = "q_proj"
K = 1024
N = 1024
kind = "KIND"
"""


def _bundled(name: str) -> str:
    return resources.files("roofline").joinpath(f"data/{name}").read_text("utf-8")


def _measurements(replace: dict[str, str]) -> str:
    """The bundled measurement file with its first set's title, GPU, point value or
    max_mean_error replaced (each key: the text the first occurrence becomes)."""
    text = _bundled("measurements.toml")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def _first_set() -> dict[str, str]:
    """Pieces of the bundled measurement file's first set, as written in it."""
    text = _bundled("measurements.toml")
    title = re.search(r'^title = "[^"]*"', text, re.M).group()
    gpu = re.search(r'^gpu = "[^"]*"', text, re.M).group()
    value = re.search(r"value = [0-9.]+", text).group()
    error = re.search(r"^max_mean_error = [0-9.]+", text, re.M).group()
    return {"title": title, "gpu": gpu, "value": value, "max_mean_error": error}


def _calibration(replace: dict[str, str]) -> str:
    text = _bundled("calibration.toml")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


@dataclass(frozen=True)
class Loader:
    """How to run one loader from the CLI, and its hostile variants of a valid file."""

    name: str
    argv: Callable[[str], list[str]]
    valid: str
    variants: dict[str, tuple[str, str]]  # hostile input -> (file text, key named)


FIRST = _first_set()
N400 = "9" * 400

LOADERS = [
    Loader(
        "spec",
        lambda path: ["specs", "check", path],
        SPEC.replace("NOTE", "plain").replace("FIGURE", "bf16_peak_tops"),
        {
            "bidi": (
                SPEC.replace("NOTE", "a\\u202eb").replace("FIGURE", "bf16_peak_tops"),
                "notes",
            ),
            "nul": (SPEC.replace("NOTE", "a\\u0000b").replace("FIGURE", "bf16_peak_tops"), "notes"),
            "subnormal": (
                SPEC.replace("0.9", "5e-324")
                .replace("NOTE", "x")
                .replace("FIGURE", "bf16_peak_tops"),
                "pct_achievable_mem_bw",
            ),
            "400 digits": (
                SPEC.replace("1.0e15", N400)
                .replace("NOTE", "x")
                .replace("FIGURE", "bf16_peak_tops"),
                "bf16_peak_tops",
            ),
            "unknown reference": (
                SPEC.replace("NOTE", "x").replace("FIGURE", "no_such_key"),
                "sources[0].figures",
            ),
        },
    ),
    Loader(
        "measurement",
        lambda path: ["validate", "--measurements", path],
        _bundled("measurements.toml"),
        {
            "bidi": (_measurements({FIRST["title"]: 'title = "a\\u202eb"'}), "title"),
            "nul": (_measurements({FIRST["title"]: 'title = "a\\u0000b"'}), "title"),
            "subnormal": (
                _measurements({FIRST["max_mean_error"]: "max_mean_error = 5e-324"}),
                "max_mean_error",
            ),
            "400 digits": (_measurements({FIRST["value"]: f"value = {N400}"}), "points[0].value"),
            "unknown reference": (_measurements({FIRST["gpu"]: 'gpu = "NVIDIA Nope 9000"'}), "gpu"),
        },
    ),
    Loader(
        "calibration",
        lambda path: [
            "eval",
            "--gpu",
            "NVIDIA B200",
            "--recipe",
            "rowwise",
            "--shape",
            "1024,1024,1024",
            "--calibrated",
            "--calibration",
            path,
        ],
        _bundled("calibration.toml"),
        {
            "bidi": (
                _calibration({'note = "fixed latency': 'note = "\\u202efixed latency'}),
                "reduce_fixed_latency_s.note",
            ),
            "nul": (
                _calibration({'note = "fixed latency': 'note = "\\u0000fixed latency'}),
                "reduce_fixed_latency_s.note",
            ),
            "subnormal": (
                _calibration({FRACTION_LINE: "value = 5e-324"}),
                "gemm_efficiency.fp8_block.value",
            ),
            "400 digits": (
                _calibration({LATENCY_LINE: f"value = {N400}"}),
                "reduce_fixed_latency_s.value",
            ),
            "unknown reference": (
                _calibration({'sets = ["m1-b200-relu-linear-nvfp4", ': 'sets = ["no-such-set", '}),
                "fp4_gemm_fixed_latency_s.sets",
            ),
        },
    ),
    Loader(
        "model-preset",
        lambda path: ["models", "--models", path],
        MODELS.replace("NOTE", "Tiny").replace("KIND", "dense"),
        {
            "bidi": (
                MODELS.replace("NOTE", "Ti\\u202eny").replace("KIND", "dense"),
                "display_name",
            ),
            "nul": (MODELS.replace("NOTE", "Ti\\u0000ny").replace("KIND", "dense"), "display_name"),
            "subnormal": (
                MODELS.replace("NOTE", "Tiny")
                .replace("KIND", "dense")
                .replace("K = 1024", "K = 5e-324"),
                "block[0].gemm[0].K",
            ),
            "400 digits": (
                MODELS.replace("NOTE", "Tiny")
                .replace("KIND", "dense")
                .replace("N = 1024", f"N = {N400}"),
                "block[0].gemm[0].N",
            ),
            "unknown reference": (
                MODELS.replace("NOTE", "Tiny").replace("KIND", "expertise"),
                "block[0].gemm[0].kind",
            ),
        },
    ),
]
FILE_LEVEL = ("device", "FIFO", "BOM", "5 MB file")
CASES = [(loader, case) for loader in LOADERS for case in (*FILE_LEVEL, *loader.variants)]


def _path(tmp_path: Path, loader: Loader, case: str) -> tuple[str, str | None]:
    """The hostile file for ``case`` and the key its one problem must name (None for a
    problem of the file as a whole)."""
    target = tmp_path / f"{loader.name}.toml"
    if case == "device":
        return "/dev/zero", None
    if case == "FIFO":
        os.mkfifo(target)  # reading it would wait for a writer forever
        return str(target), None
    if case == "BOM":
        target.write_bytes(b"\xef\xbb\xbf" + loader.valid.encode())
        return str(target), None
    if case == "5 MB file":
        target.write_text(loader.valid + "# " + "x" * (5 << 20) + "\n", "utf-8")
        return str(target), None
    text, key = loader.variants[case]
    target.write_text(text, "utf-8")
    return str(target), key


@pytest.mark.parametrize("loader", LOADERS, ids=lambda loader: loader.name)
def test_each_loaders_valid_file_is_accepted(capsys, tmp_path, loader: Loader) -> None:
    """The base of every hostile variant is valid: a refusal is the hostile part's."""
    path = tmp_path / "valid.toml"
    path.write_text(loader.valid, "utf-8")
    code = main(loader.argv(str(path)))
    _, err = capsys.readouterr()
    assert code in (0, 1) and "error:" not in err, err  # validate exits 1 on a failed gate


@pytest.mark.parametrize(
    ("loader", "case"), CASES, ids=[f"{loader.name}-{case}" for loader, case in CASES]
)
def test_hostile_input_is_one_line_naming_file_key_expected_received(
    capsys, tmp_path, loader: Loader, case: str
) -> None:
    path, key = _path(tmp_path, loader, case)
    code = main(loader.argv(path))
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    assert "expected " in err and ", received " in err, err
    assert "Traceback" not in err and err.count("error:") == 1, err
    if key is not None:
        assert f"'{key}'" in err, err
