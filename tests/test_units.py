"""roofline.units (every number a reader sees) and the one Markdown table builder."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline import units
from roofline.publish.table import markdown_table

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        (0.075, {}, "7.5%"),
        (0.075, {"signed": True}, "+7.5%"),
        (-0.04, {"signed": True}, "-4.0%"),
        (0.1234, {"digits": 2, "signed": True}, "+12.34%"),
        (None, {}, units.MISSING),
        (math.nan, {"missing": "-"}, "-"),
    ],
)
def test_percent(value, kwargs, expected):
    assert units.percent(value, **kwargs) == expected


def test_percent_number_has_no_sign_so_csv_reads_a_number():
    assert units.percent_number(0.075) == "7.5"
    assert units.percent_number(-0.04, signed=True) == "-4.0"
    assert units.percent_number(0.15, None) == "15"
    assert units.percent_number(None) == units.MISSING
    assert units.percent_number(math.nan) == units.MISSING


def test_magnitudes_significant_and_times():
    assert units.magnitude(12345.6) == "12,346"
    assert units.magnitude(812.34) == "812.3"
    assert units.magnitude(123.4, 3, whole_from=100) == "123"
    assert units.significant(0.77612) == "0.776"
    assert units.significant(1234567.0, None) == "1.23457e+06"  # Python's g, six digits
    assert units.microseconds(2e-6) == "2 µs"
    assert units.microseconds(1.2345e-5, 3) == "12.3 µs"
    assert units.microseconds_measured(1234.56) == "1,234.6 µs"
    assert units.band(0.18) == "±18%"


@given(st.floats(min_value=1e-9, max_value=1e12, allow_nan=False))
def test_magnitude_round_trips_to_its_precision(value):
    shown = float(units.magnitude(value).replace(",", ""))
    assert shown == pytest.approx(value, rel=5e-4, abs=0.5)


def test_table_builder_lays_out_header_alignment_and_rows():
    lines = markdown_table(["a", "b"], [["1", "2"], ["3", "4"]], ("---", "--:"))
    assert lines == ["| a | b |", "|---|--:|", "| 1 | 2 |", "| 3 | 4 |"]
    assert markdown_table(["x"], [])[1] == "|---|"


def test_table_builder_refuses_alignment_of_another_width():
    with pytest.raises(ValueError, match="2 alignment markers for 1 columns"):
        markdown_table(["x"], [], ("---", "---"))


def test_one_table_builder_in_the_code():
    """No module but roofline/publish/table.py writes a pipe table's alignment row."""
    alignment_row = re.compile(r"""["']\|["']\s*\+|["']\|---\|""")
    writers = [
        str(path.relative_to(ROOT))
        for package in ("roofline", "site_gen")
        for path in (ROOT / package).rglob("*.py")
        if alignment_row.search(path.read_text(encoding="utf-8"))
    ]
    assert writers == ["roofline/publish/table.py"]


def test_mebibytes_prints_caches_as_device_queries_do():
    from roofline.units import mebibytes

    assert mebibytes(52428800) == "50 MiB"
    assert mebibytes(132644864) == "126.5 MiB"
    assert mebibytes(268435456) == "256 MiB"
