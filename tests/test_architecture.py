"""The layout's rules, read from the import graph of ``roofline/`` and ``site_gen/``.

* no import cycle (every cycle is named by its modules);
* no function-level import of a project module (a lazy import of a heavy third-party
  package such as matplotlib or torch is fine; so is the ``roofline build`` command
  starting the build, the one edge where ``roofline`` may reach ``site_gen``);
* no upward import: each module belongs to a layer (``LAYERS``), and a module imports only
  its own layer or those before it, so the folders read as the pipeline;
* at most 12 modules directly in ``roofline/`` and ``site_gen/``, none over 400 lines.

The checks run on the source text (``ast``), never by importing it, so a planted circle in
a scratch tree (the tests at the end) is seen the same way as one in the packages.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("roofline", "site_gen")

#: The layers, first to last: a module may import its own layer and earlier ones. A module
#: belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the model's vocabulary, and the forked worker pools the commands share
    (
        "roofline.errors",
        "roofline.processes",
        "roofline.symbol_types",
        "roofline.scoring_symbols",
        "roofline.symbols",
        "roofline.units",
    ),
    # the data files' framework, then the inputs: recipes, GPUs, models
    ("roofline.datafiles", "roofline.publish.slugs", "roofline.publish.table", "roofline.shapes"),
    ("roofline.recipes", "roofline.specs", "roofline.presets"),
    # what a GPU can run, and the calibrated model's stored parameters
    ("roofline.capability", "roofline.device", "roofline.calibration"),
    ("roofline.model",),  # both models' terms
    ("roofline.measurements",),  # published measurements: their quantities are the models'
    ("roofline.evaluate",),
    ("roofline.analysis",),
    ("roofline.publish",),
    ("roofline.cli",),
    ("roofline",),  # the package's public API re-exports everything above
    # the build, in pipeline order: its base (parameters, caches, the escaping boundary)
    ("site_gen.markup.safe", "site_gen.config", "site_gen.cache", "site_gen.split"),
    ("site_gen.inputs", "site_gen.context"),
    ("site_gen.markup",),  # values as page text: formulas, the calculator
    ("site_gen.gather",),  # stage 1
    ("site_gen.markup.exports",),  # the gathered tables as CSV and JSON
    ("site_gen.charts", "site_gen.keys"),  # what each chart plots (jobs), and cache keys
    ("site_gen.pages",),  # stage 2
    ("site_gen.output",),  # stage 4, the only writer
    ("site_gen.charts.draw",),  # every matplotlib call: the workers' alone
    ("site_gen.pool",),
    ("site_gen.stages", "site_gen.build", "site_gen"),  # the stage sequence
)

#: Function-level project imports that are the design, not a dodge: ``(importer, imported)``
#: prefixes. ``roofline build`` starts the build lazily, so the model never needs site_gen.
LAZY_ALLOWED: tuple[tuple[str, str], ...] = (("roofline.cli", "site_gen"),)

MAX_TOP_LEVEL_MODULES = 12
MAX_MODULE_LINES = 400


@dataclass(frozen=True)
class Import:
    """One import of a project module: who imports whom, where, and whether lazily."""

    importer: str
    imported: str
    line: int
    lazy: bool


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path) -> dict[str, Path]:
    """Every module of the packages under ``root``, by dotted name."""
    return {
        module_name(root, path): path
        for package in PACKAGES
        if (root / package).is_dir()
        for path in sorted((root / package).rglob("*.py"))
    }


def _targets(node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> Iterator[str]:
    """The project modules one import statement names (``from a import b`` may be a.b)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        names = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
            for alias in node.names
        ]
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            yield name


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The project imports of one module; imports only type checkers see are left out."""
    found: list[Import] = []

    def walk(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            inner = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom) and not getattr(child, "level", 0):
                found.extend(
                    Import(name, target, child.lineno, inner)
                    for target in _targets(child, modules)
                    if target != name
                )
            walk(child, inner)

    walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return found


def import_graph(root: Path) -> list[Import]:
    modules = project_modules(root)
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def cycles(imports: list[Import]) -> list[list[str]]:
    """Strongly connected components of more than one module, among eager imports."""
    edges: dict[str, set[str]] = {}
    for imp in imports:
        if not imp.lazy:
            edges.setdefault(imp.importer, set()).add(imp.imported)
            edges.setdefault(imp.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(edges[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str) -> int:
    """The index in ``LAYERS`` of the longest prefix naming ``name``."""
    best, best_len = -1, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if _within(name, prefix) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    if best < 0:
        raise AssertionError(f"module {name} is in no layer of tests/test_architecture.py")
    return best


def lazy_problems(imports: list[Import]) -> list[str]:
    return _unique(
        [
            f"{imp.importer} (line {imp.line}) imports {imp.imported} inside a function"
            for imp in imports
            if imp.lazy
            and not any(
                _within(imp.importer, a) and _within(imp.imported, b) for a, b in LAZY_ALLOWED
            )
        ]
    )


def upward_problems(imports: list[Import]) -> list[str]:
    return _unique(
        [
            f"{imp.importer} (line {imp.line}) imports {imp.imported}, a later layer"
            for imp in imports
            if not imp.lazy and layer_of(imp.imported) > layer_of(imp.importer)
        ]
    )


def _unique(problems: list[str]) -> list[str]:
    """One line per statement (``from a import b, c`` is one import of a)."""
    return list(dict.fromkeys(problems))


def _cycle_text(component: list[str]) -> str:
    return "import cycle: " + " <-> ".join(component)


# -- the rules on this repository ------------------------------------------------------


@pytest.fixture(scope="module")
def graph() -> list[Import]:
    return import_graph(ROOT)


def test_no_import_cycle(graph: list[Import]) -> None:
    assert [_cycle_text(c) for c in cycles(graph)] == []


def test_no_function_level_project_import(graph: list[Import]) -> None:
    assert lazy_problems(graph) == []


def test_no_upward_import(graph: list[Import]) -> None:
    assert upward_problems(graph) == []


def test_roofline_never_imports_site_gen_eagerly(graph: list[Import]) -> None:
    leaks = [
        f"{imp.importer} imports {imp.imported}"
        for imp in graph
        if _within(imp.importer, "roofline") and _within(imp.imported, "site_gen") and not imp.lazy
    ]
    assert leaks == []


@pytest.mark.parametrize("package", PACKAGES)
def test_top_level_holds_at_most_12_modules(package: str) -> None:
    top = sorted(p.name for p in (ROOT / package).glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_module_over_400_lines() -> None:
    long = {
        name: n
        for name, path in project_modules(ROOT).items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_every_module_is_in_a_layer() -> None:
    for name in project_modules(ROOT):
        layer_of(name)  # raises, naming the module, when no layer claims it


# -- the checks catch what they are for: planted in a scratch tree ----------------------


def _plant(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    for package in (p for p in PACKAGES if (root / p).is_dir()):
        for folder in [root / package, *(p for p in (root / package).rglob("*") if p.is_dir())]:
            (folder / "__init__.py").touch()
    return root


def test_a_planted_circle_is_named(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "roofline/model/a.py": "from roofline.analysis import b\n",
            "roofline/analysis/b.py": "from roofline.model.a import thing\n",
        },
    )
    found = cycles(import_graph(root))
    assert found == [["roofline.analysis.b", "roofline.model.a"]]
    assert _cycle_text(found[0]) == "import cycle: roofline.analysis.b <-> roofline.model.a"


def test_a_circle_through_a_package_init_is_seen(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "site_gen/gather/__init__.py": "from site_gen.gather.dense import run\n",
            "site_gen/gather/dense.py": "import site_gen.gather\n",
        },
    )
    assert cycles(import_graph(root)) == [["site_gen.gather", "site_gen.gather.dense"]]


def test_a_planted_function_level_import_is_named(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "roofline/evaluate.py": """\
            def run():
                from roofline.model import calibrated  # dodges a circle
                import matplotlib  # a heavy third-party package: allowed
            """,
            "roofline/model/calibrated.py": "",
            "roofline/cli/build.py": "def build():\n    from site_gen import build\n",
            "site_gen/build.py": "",
        },
    )
    assert lazy_problems(import_graph(root)) == [
        "roofline.evaluate (line 2) imports roofline.model.calibrated inside a function"
    ]


def test_a_planted_upward_import_is_named(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "site_gen/gather/dense.py": "from site_gen.pages.gpu import render\n",
            "site_gen/pages/gpu.py": "from site_gen.gather.dense import Run\n",
            "roofline/model/terms.py": "from roofline.analysis.guidance import best\n",
            "roofline/analysis/guidance.py": "",
        },
    )
    assert sorted(upward_problems(import_graph(root))) == [
        "roofline.model.terms (line 1) imports roofline.analysis.guidance, a later layer",
        "site_gen.gather.dense (line 1) imports site_gen.pages.gpu, a later layer",
    ]


def test_type_checking_imports_are_not_edges(tmp_path: Path) -> None:
    root = _plant(
        tmp_path,
        {
            "roofline/model/a.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from roofline.analysis.b import B
            """,
            "roofline/analysis/b.py": "from roofline.model.a import A\n",
        },
    )
    imports = import_graph(root)
    assert cycles(imports) == [] and upward_problems(imports) == []
