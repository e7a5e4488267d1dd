"""The code is ruff-clean and ruff-formatted: both checks run here, so CI runs them.

``ruff format`` is the one formatter (no ``# fmt: skip`` markers); a failure prints the
files to fix: ``ruff format . && ruff check --fix .``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    "args", [("check", "--no-cache", "."), ("format", "--check", "--no-cache", ".")]
)
def test_ruff(args: tuple[str, ...]) -> None:
    result = _ruff(*args)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_formatter_opt_outs() -> None:
    markers = [
        f"{path.relative_to(ROOT)}:{n}"
        for folder in ("roofline", "site_gen", "tests", "tools", "benchmarks", "docs")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.rstrip().endswith(("fmt: skip", "fmt: off"))
    ]
    assert markers == []
