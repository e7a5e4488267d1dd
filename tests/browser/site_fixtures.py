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


def make_root(tmp: Path) -> Path:
    """A build root in ``tmp``: copies of mkdocs.yml and the hand-written docs."""
    root = tmp / "root"
    shutil.copytree(ROOT / "docs", root / "docs",
                    ignore=shutil.ignore_patterns("generated", ".generated*", "__pycache__"))
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def build_small_site(tmp: Path, specs: Path = SMALL_SPECS, cache_enabled: bool = False
                     ) -> tuple[Path, dict[str, float]]:  # fmt: skip
    """Build the small site in ``tmp`` (its own root, site folder and build cache)."""
    from site_gen.build import build
    from site_gen.cache import BuildCache

    root = tmp / "root" if (tmp / "root").is_dir() else make_root(tmp)
    site = tmp / "site"
    cache = BuildCache(root=tmp / "cache", enabled=cache_enabled)
    timings = build(str(specs), site, root=root, cache=cache)
    return site, timings
