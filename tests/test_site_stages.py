"""The site build's stages do not leak: rendering pages needs no matplotlib, pages neither
gather nor read files, and only the chart workers import ``site_gen.charts.draw``.

Each check runs in a fresh interpreter, so what an earlier test imported cannot hide an
import (``sys.modules`` is per process).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE_GEN = ROOT / "site_gen"


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "module",
    [
        "site_gen.pages.render",
        "site_gen.gather.dense",
        "site_gen.charts.jobs",
        "site_gen.output.write",
    ],
)
def test_rendering_pages_imports_no_matplotlib(module: str) -> None:
    done = _fresh(
        f"import {module}, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib' "
        "or m.startswith('site_gen.charts.draw')))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"{module} imports {done.stdout.strip()}"


def test_the_chart_workers_do_import_matplotlib() -> None:
    """The check above can fail: the workers' module does pull matplotlib in."""
    done = _fresh("import site_gen.pool, sys; print('matplotlib' in sys.modules)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (absolute imports: the project's style)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def test_only_the_workers_import_the_drawing_code() -> None:
    importers = [
        str(p.relative_to(ROOT))
        for p in _modules(SITE_GEN)
        if p.parent.name != "draw"
        and any(m.startswith("site_gen.charts.draw") for m in _imports(p))
    ]
    assert importers == ["site_gen/pool.py"]


#: What a page module may not call or import: gathering, evaluating, reading or writing.
_PAGE_FORBIDDEN = (
    "site_gen.output",
    "site_gen.build",
    "site_gen.pool",
    "site_gen.inputs",
    "roofline.analysis.validation.validate",
    "roofline.analysis.error_bands.load_error_bands",
    "roofline.measurements.load_measurements",
    "roofline.specs.load_specs",
    "roofline.calibration.data.load_calibration",
)


def test_pages_neither_gather_nor_touch_the_disk() -> None:
    found = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in _modules(SITE_GEN / "pages")
        for m in sorted(_imports(p))
        if m.startswith(_PAGE_FORBIDDEN)
        or (m.startswith("site_gen.gather.") and m.rpartition(".")[2].startswith("gather"))
    ]
    assert found == []
    for path in _modules(SITE_GEN / "pages"):
        text = path.read_text("utf-8")
        for call in ("open(", ".read_text(", ".write_text(", ".read_bytes(", ".write_bytes("):
            assert call not in text, f"{path.relative_to(ROOT)} calls {call}"


def test_the_page_check_can_fail(tmp_path: Path) -> None:
    """A planted page module that runs ``validate`` is caught by the import check."""
    planted = tmp_path / "planted.py"
    planted.write_text("from roofline.analysis.validation import validate\n", "utf-8")
    assert any(m.startswith(_PAGE_FORBIDDEN) for m in _imports(planted))


def test_nothing_imports_the_build_and_gather_imports_no_later_stage() -> None:
    later = {
        "gather": (
            "site_gen.pages",
            "site_gen.charts",
            "site_gen.output",
            "site_gen.build",
            "site_gen.pool",
        ),
        "pages": ("site_gen.output", "site_gen.build", "site_gen.pool"),
        "charts": ("site_gen.pages", "site_gen.output", "site_gen.build"),
    }
    found = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in _modules(SITE_GEN)
        if p.name != "build.py"
        for m in sorted(_imports(p))
        if m == "site_gen.build" or m.startswith("site_gen.build.")
    ]
    # The floor every stage stands on imports no stage after gather.
    for name in ("config.py", "cache.py", "keys.py", "inputs.py", "context.py", "stages.py"):
        found += [
            f"site_gen/{name} imports {m}"
            for m in sorted(_imports(SITE_GEN / name))
            if m.startswith(("site_gen.pages", "site_gen.build", "site_gen.pool"))
            or (m.startswith("site_gen.output") and name != "stages.py")
        ]
    for stage, banned in later.items():
        found += [
            f"{p.relative_to(ROOT)} imports {m}"
            for p in _modules(SITE_GEN / stage)
            if p.parent.name != "draw"
            for m in sorted(_imports(p))
            if m.startswith(banned)
        ]
    assert found == []
