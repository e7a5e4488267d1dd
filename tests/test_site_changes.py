"""The Changes page renders the spec history's diffs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from roofline.analysis.diff import diff_specs
from roofline.analysis.history import HistoryEntry, spec_history
from roofline.specs import parse_specs
from site_gen.markup.safe import md_text
from site_gen.pages.base import environment
from site_gen.pages.changes import history_entry as _history_entry

SMALL = Path(__file__).parent / "data" / "site_small_specs.toml"


def test_changes_page_shows_field_changes_and_moves():
    text = SMALL.read_text()
    base = parse_specs(text, "base")
    head = parse_specs(
        text.replace("peak_mem_bw_bytes_sec = 8e12", "peak_mem_bw_bytes_sec = 4e12"), "head"
    )
    entry = HistoryEntry(
        "a" * 40,
        "2026-11-29T10:00:00+00:00",
        "Halve B200 bandwidth",
        diff_specs(base, head),
        "torchao-0.18/r1",
        "torchao-0.18/r1",
    )
    page = (
        environment()
        .get_template("changes.md.j2")
        .render(
            entries=[_history_entry(entry)],
            note="",
            spec_path="specs.toml",
            truncated=False,
            shallow=False,
            page_path="generated/changes.md",
        )
    )
    assert "## 2026-11-29 · Halve B200 bandwidth" in page
    assert "| Test B200 | <code>peak_mem_bw_bytes_sec</code> | 8e+12 | 4e+12 |" in page
    assert "Largest speedup moves" in page
    assert "No history available" not in page


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture()
def two_commits(tmp_path: Path) -> Path:
    """A repository whose spec file changed in two commits, the second with a hostile subject."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "origin"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    spec = repo / "roofline" / "data" / "gpus.toml"
    spec.parent.mkdir(parents=True)
    spec.write_text(SMALL.read_text())
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "First specs")
    spec.write_text(
        SMALL.read_text().replace("peak_mem_bw_bytes_sec = 8e12", "peak_mem_bw_bytes_sec = 4e12")
    )
    _git(repo, "commit", "-q", "-am", "<img src=x onerror=alert(1)> [x](javascript:alert(2))")
    return repo


def _render(history) -> str:
    entries = [_history_entry(e) for e in history.entries]
    return (
        environment()
        .get_template("changes.md.j2")
        .render(
            entries=entries,
            note=history.note,
            spec_path=history.path,
            truncated=history.truncated,
            shallow=history.shallow,
            page_path="generated/changes.md",
        )
    )


def test_commit_subjects_are_text(two_commits: Path) -> None:
    page = _render(spec_history(two_commits))
    assert "<img" not in page and "](javascript" not in page
    subject = "<img src=x onerror=alert(1)> [x](javascript:alert(2))"
    assert f" · {md_text(subject)}\n" in page  # the entry's heading, as text


def test_shallow_clone_says_so_instead_of_adding_every_gpu(
    two_commits: Path, tmp_path: Path
) -> None:
    clone = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{two_commits}", str(clone))
    history = spec_history(clone)
    assert history.shallow
    (entry,) = history.entries
    assert entry.parent_missing and entry.diff is None and not entry.model_changed
    page = _render(history)
    assert "Incomplete history: shallow clone" in page and "fetch-depth 0" in page
    assert "GPUs added" not in page

    full = spec_history(two_commits)
    assert not full.shallow and "shallow" not in full.note
    assert [e.parent_missing for e in full.entries] == [False, False]
