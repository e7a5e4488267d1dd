"""roofline.analysis.diff and `roofline diff`: the Done-when case, no-change reports, JSON, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from roofline.analysis.diff import NO_CHANGES, diff_specs
from roofline.analysis.diff_report import from_json, to_json, to_markdown
from roofline.analysis.history import spec_history
from roofline.cli import BUNDLED_SPEC_PATH, main
from roofline.model.build import MODEL_VERSION
from roofline.specs import load_specs

OLD_BW = "peak_mem_bw_bytes_sec = 3.35e12"  # NVIDIA H100 SXM, the first entry
NEW_BW = "peak_mem_bw_bytes_sec = 1.2e12"
NEW_GPU = """
[[gpu]]
name = "Test GPU X"
vendor = "Test"
bf16_peak_tops = 1000e12
fp8_peak_tops = 2000e12
peak_mem_bw_bytes_sec = 4e12
pct_achievable_gemm_tops = 0.78
pct_achievable_mem_bw = 0.92
"""


def changed_text() -> str:
    text = BUNDLED_SPEC_PATH.read_text("utf-8")
    # the first occurrence is the H100 SXM's (the H800 shares its HBM3 bandwidth)
    first = text.index(OLD_BW)
    assert text.rfind('name = "', 0, first) == text.index('name = "NVIDIA H100 SXM"')
    return text.replace(OLD_BW, NEW_BW, 1) + NEW_GPU


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("diff")
    base, head = folder / "base.toml", folder / "head.toml"
    shutil.copy(BUNDLED_SPEC_PATH, base)
    head.write_text(changed_text(), encoding="utf-8")
    return base, head


@pytest.fixture(scope="module")
def result(pair):
    return diff_specs(load_specs(pair[0]), load_specs(pair[1]))


def test_diff_names_the_changed_and_the_added_gpu(result):
    assert result.added == ("Test GPU X",)
    assert result.removed == ()
    assert result.changed_gpus == ("NVIDIA H100 SXM",)
    (change,) = result.fields
    assert (change.field, change.old, change.new) == ("peak_mem_bw_bytes_sec", 3.35e12, 1.2e12)
    assert change.relative_change == pytest.approx(1.2 / 3.35 - 1)


def test_speedup_deltas_sorted_and_new_gpu_marked(result):
    moved = [r for r in result.speedups if r.gpu == "NVIDIA H100 SXM"]
    assert moved and all(r.delta is not None and r.delta < 0 for r in moved)
    deltas = [abs(r.delta) for r in moved]
    assert deltas == sorted(deltas, reverse=True)
    new = [r for r in result.speedups if r.gpu == "Test GPU X"]
    assert new and all(r.new_gpu and r.old is None and r.new > 0 for r in new)
    assert {r.shape for r in new} == {"canonical", "llama"}
    assert {r.new_support for r in new} == {"native", "emulated", "hypothetical"}
    assert result.speedups.index(new[0]) > result.speedups.index(moved[-1])


def test_less_bandwidth_flips_and_shifts_break_even(result):
    (flip,) = [f for f in result.flips if f.mode == "training"]
    assert flip.gpu == "NVIDIA H100 SXM" and flip.old != flip.new
    assert result.break_even
    for shift in result.break_even:
        assert shift.gpu == "NVIDIA H100 SXM" and shift.kn in (1024, 2048, 4096, 8192, 16384)
        # less bandwidth: break-even moves to larger M (or to never)
        assert shift.new is None or (shift.old is not None and shift.new > shift.old)


def test_markdown_report(result):
    md = to_markdown(result)
    lines = md.splitlines()
    assert lines[0] == "# Spec diff"
    assert lines[2].startswith("**1 GPU added, 1 GPU changed (1 field),")
    assert "## GPUs added" in md and "**Test GPU X** (new)" in md
    assert "### NVIDIA H100 SXM" in md
    assert "| `peak_mem_bw_bytes_sec` | 3.35e+12 | -> | 1.2e+12 | -64.2% |" in md
    assert "## Speedup deltas" in md and "## Recommendation flips" in md
    assert "## Break-even shifts" in md and "never (≤ 262,144)" in md
    assert "new GPU; native" in md
    assert MODEL_VERSION in md


def test_identical_inputs_say_no_changes(pair):
    same = diff_specs(load_specs(pair[0]), load_specs(pair[0]))
    assert same.empty
    md = to_markdown(same)
    assert NO_CHANGES in md
    assert "##" not in md
    assert json.loads(to_json(same))["summary"] == NO_CHANGES


def test_json_round_trips(result):
    text = to_json(result)
    assert from_json(text) == result
    assert to_json(from_json(text)) == text
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert all(isinstance(s["old"], float | str) for s in data["break_even"])


def test_provenance_changes_are_fields_without_guidance_moves(tmp_path):
    text = BUNDLED_SPEC_PATH.read_text("utf-8")
    head = tmp_path / "head.toml"
    head.write_text(text.replace('sku = "H100 SXM5 80GB HBM3"', 'sku = "renamed"'), "utf-8")
    result = diff_specs(load_specs(BUNDLED_SPEC_PATH), load_specs(head))
    assert [(c.field, c.old, c.new) for c in result.fields] == [
        ("sku", "H100 SXM5 80GB HBM3", "renamed")
    ]
    assert not (result.speedups or result.flips or result.break_even)


# -- CLI -----------------------------------------------------------------------------


def test_cli_markdown_json_and_output_file(pair, capsys, tmp_path):
    base, head = pair
    assert main(["diff", str(base), str(head)]) == 0
    out = capsys.readouterr().out
    assert "Test GPU X" in out and "NVIDIA H100 SXM" in out
    target = tmp_path / "report.json"
    assert main(["diff", str(base), str(head), "--format", "json", "-o", str(target)]) == 0
    assert json.loads(target.read_text())["added"] == ["Test GPU X"]
    assert main(["diff", str(base), str(base)]) == 0
    assert NO_CHANGES in capsys.readouterr().out


def test_cli_invalid_inputs_exit_2(pair, capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(changed_text().replace(NEW_BW, "peak_mem_bw_bytes_sec = 1.2e15"), "utf-8")
    assert main(["diff", str(pair[0]), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "NVIDIA H100 SXM" in err and "peak_mem_bw_bytes_sec" in err
    assert main(["diff", str(pair[0]), str(tmp_path / "missing.toml")]) == 2
    assert main(["diff", str(pair[0])]) == 2
    assert main(["diff", "--base-rev", "HEAD", str(pair[0]), str(pair[1])]) == 2


def git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture()
def repo(tmp_path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    spec = tmp_path / "roofline" / "data" / "gpus.toml"
    spec.parent.mkdir(parents=True)
    shutil.copy(BUNDLED_SPEC_PATH, spec)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "specs")
    return tmp_path


def test_cli_base_rev(repo, capsys, monkeypatch):
    spec = repo / "roofline" / "data" / "gpus.toml"
    assert main(["diff", "--base-rev", "HEAD", str(spec)]) == 0
    assert NO_CHANGES in capsys.readouterr().out
    spec.write_text(changed_text(), "utf-8")
    monkeypatch.chdir(repo / "roofline")  # the path is resolved against the repo root
    assert main(["diff", "--base-rev", "HEAD", "data/gpus.toml"]) == 0
    out = capsys.readouterr().out
    assert "Base: `HEAD:roofline/data/gpus.toml`" in out
    assert "**Test GPU X** (new)" in out and "| 3.35e+12 | -> | 1.2e+12 |" in out
    assert main(["diff", "--base-rev", "no-such-rev", "data/gpus.toml"]) == 2
    assert "no-such-rev" in capsys.readouterr().err


def test_cli_base_rev_outside_git_exits_2(tmp_path, capsys):
    spec = tmp_path / "gpus.toml"
    shutil.copy(BUNDLED_SPEC_PATH, spec)
    assert main(["diff", "--base-rev", "HEAD", str(spec)]) == 2
    assert "git" in capsys.readouterr().err


# -- history -------------------------------------------------------------------------


def test_history_walks_spec_commits(repo):
    spec = repo / "roofline" / "data" / "gpus.toml"
    spec.write_text(changed_text(), "utf-8")
    git(repo, "commit", "-q", "-am", "Faster H100 SXM? No: slower, and a new GPU")
    history = spec_history(repo)
    assert history.note == ""
    newest, oldest = history.entries
    assert newest.subject.startswith("Faster H100 SXM?")
    assert newest.diff.added == ("Test GPU X",)
    assert newest.diff.changed_gpus == ("NVIDIA H100 SXM",)
    assert oldest.subject == "specs" and len(oldest.diff.added) == len(load_specs())
    assert len(newest.sha) == 40 and newest.date[:4].isdigit()
    assert spec_history(repo, limit=1).entries == (newest,)


def test_history_outside_git_is_empty_with_a_note(tmp_path):
    history = spec_history(tmp_path)
    assert history.entries == () and history.note.startswith("no history:")
