"""The Changes page renders the spec history's diffs."""

from __future__ import annotations

from pathlib import Path

from roofline.diff import diff_specs
from roofline.history import HistoryEntry
from roofline.specs import parse_specs
from site_gen.render import _history_entry, environment

SMALL = Path(__file__).parent / "data" / "site_small_specs.toml"


def test_changes_page_shows_field_changes_and_moves():
    text = SMALL.read_text()
    base = parse_specs(text, "base")
    head = parse_specs(text.replace("peak_mem_bw_bytes_sec = 8e12", "peak_mem_bw_bytes_sec = 4e12"),
                       "head")  # fmt: skip
    entry = HistoryEntry("a" * 40, "2026-11-29T10:00:00+00:00", "Halve B200 bandwidth",
                         diff_specs(base, head), "torchao-0.18/r1", "torchao-0.18/r1")  # fmt: skip
    page = environment().get_template("changes.md.j2").render(
        entries=[_history_entry(entry)], note="", spec_path="specs.toml", truncated=False,
        page_path="generated/changes.md",
    )
    assert "## 2026-11-29 · Halve B200 bandwidth" in page
    assert "| Test B200 | `peak_mem_bw_bytes_sec` | 8e+12 | 4e+12 |" in page
    assert "Largest speedup moves" in page
    assert "No history available" not in page
