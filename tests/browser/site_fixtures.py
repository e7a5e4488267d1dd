"""Helpers shared by the site build and browser tests: build a small site in a temp dir."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SMALL_SPECS = ROOT / "tests" / "data" / "site_small_specs.toml"


def require_katex() -> None:
    """Skip when KaTeX is neither cached nor obtainable (no npm)."""
    from site_gen.assets import KATEX_VERSION, cache_dir

    if shutil.which("npm") is None and not (cache_dir() / f"katex-{KATEX_VERSION}.tgz").is_file():
        pytest.skip("npm is not installed and KaTeX is not cached; the site needs it")


def build_small_site(tmp: Path) -> tuple[Path, dict[str, float]]:
    """Copy mkdocs.yml and the hand-written docs to ``tmp`` and build the small site there."""
    from site_gen.build import build

    root = tmp / "root"
    shutil.copytree(ROOT / "docs", root / "docs",
                    ignore=shutil.ignore_patterns("generated", ".generated*", "__pycache__"))
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    site = tmp / "site"
    timings = build(str(SMALL_SPECS), site, root=root)
    return site, timings
