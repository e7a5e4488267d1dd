"""Cache keys of the build, and the manifests that let an unchanged rebuild do nothing.

:func:`input_key` digests every input of a whole build: the spec file, the model's and
the generator's code and data (``roofline/``, ``site_gen/`` with its templates), the
build root's ``mkdocs.yml``, hand-written docs and hooks, the tool versions, KaTeX's
version, the site URL, the build date, the package version in the marker and the git
state the Changes page is read from. A build whose key matches the last build's, and
whose site folder and ``docs/generated`` still hold exactly (sha256 per file) what that
build wrote (:func:`manifest`, :func:`matches`), has nothing to do.

The finer keys (:func:`latex_key`, :func:`chart_cache_key`) name the products a changed
input only partly invalidates.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from roofline.calibration.params import CalibratedParameters
from roofline.datafiles.core import FileRefused, read_bytes
from roofline.publish.cite import SITE_URL_ENV, site_url
from roofline.specs import GpuSpec
from site_gen import config
from site_gen.cache import (
    PACKAGE_ROOT,
    BuildCache,
    digest,
    files_digest,
    gpu_digest,
    model_digest,
    tool_versions,
)
from site_gen.charts.jobs import PlotJob, chart_key
from site_gen.gather import calibration_digest

BUNDLED_SPECS = PACKAGE_ROOT / "roofline" / "data" / "gpus.toml"
#: ``hooks:`` entries of mkdocs.yml (``  - path``), read without a YAML parser.
_HOOK_LINE = re.compile(r"^\s+-\s+([^\s#]+)")


def _tree_files(folder: Path, skip_top: tuple[str, ...] = ()) -> list[Path]:
    """Every regular file under ``folder`` except dot-files, ``__pycache__`` and ``skip_top``."""
    found = []
    for path in folder.rglob("*"):
        parts = path.relative_to(folder).parts
        if parts[0] in skip_top or any(p.startswith(".") or p == "__pycache__" for p in parts):
            continue
        if path.is_file() and not path.is_symlink():
            found.append(path)
    return found


@functools.cache
def package_digest(name: str) -> str:
    """Digest of every file of a package of this repository (code, templates, data)."""
    folder = PACKAGE_ROOT / name
    return files_digest(_tree_files(folder), folder)


@functools.cache
def generator_digest() -> str:
    """The code that turns results into files and pages: all of ``site_gen/``."""
    return package_digest("site_gen")


def _module_file(name: str) -> Path | None:
    """The source file of a module of this repository's packages, if it is one."""
    if name.split(".")[0] not in ("site_gen", "roofline"):
        return None
    base = PACKAGE_ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imports(path: Path) -> set[str]:
    """Names of the modules a file imports (``from a import b`` may name module a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def code_closure_digest(start: list[Path]) -> str:
    """Digest of ``start`` and of every module of this repository they import, transitively.

    What mkdocs runs of ours (hooks and the page cache) is keyed by this rather than by
    all of ``site_gen/``, so editing a template re-makes only the pages it changes.
    """
    seen: dict[Path, str] = {}
    todo = [p.resolve() for p in start]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        for name in _imports(path):
            found = _module_file(name)
            if found is not None:
                todo.append(found.resolve())
    return digest(sorted(seen.values()))


def _hook_paths(mkdocs_yml: Path) -> list[str]:
    """The hook modules mkdocs.yml lists, as written there (relative to it)."""
    paths, inside = [], False
    for line in mkdocs_yml.read_text("utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith((" ", "\t", "-")):
            inside = line.startswith("hooks:")
            continue
        match = _HOOK_LINE.match(line) if inside else None
        if match:
            paths.append(match.group(1))
    return paths


def root_digest(root: Path) -> str:
    """``mkdocs.yml``, the hand-written docs (what staging copies) and the hook modules."""
    mkdocs_yml = root / "mkdocs.yml"
    docs = _tree_files(root / "docs", skip_top=(config.GENERATED_DIRNAME,))
    hooks = {}
    for name in _hook_paths(mkdocs_yml):
        path = root / name
        hooks[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
    return digest(files_digest([mkdocs_yml, *docs], root), hooks)


def git_state(specs_path: str | None) -> str:
    """What the Changes page is read from: the HEAD commit of the spec file's repository.

    The history is a function of HEAD (``git log`` from it), so HEAD's sha, the work
    tree's top and whether the clone is shallow name it; outside git, git's message.
    """
    folder = Path(specs_path).resolve().parent if specs_path else config.REPO_ROOT
    exe = shutil.which("git")
    if exe is None:
        return "no git"
    proc = subprocess.run(
        [exe, "-C", str(folder), "rev-parse", "--show-toplevel", "HEAD", "--is-shallow-repository"],
        capture_output=True,
        text=True,
        check=False,
    )
    return f"{proc.returncode}\n{proc.stdout}{proc.stderr}"


def build_date() -> str:
    """The date mkdocs writes into the sitemap (``SOURCE_DATE_EPOCH``, else today)."""
    from mkdocs.utils import get_build_date

    return get_build_date()


def input_key(
    specs_path: str | None,
    root: Path,
    marker: str,
    extra_docs: Path | None = None,
    data_files: Sequence[Path] = (),
) -> str:
    """Digest of every input of a build of ``specs_path`` (None: bundled) in ``root``
    (and ``extra_docs``, a team's pages, and ``data_files``, a calibration or measurement
    file in place of a bundled one, when given).

    Empty when an input cannot be read: the build then runs in full and says why (a
    missing spec file is the spec loader's error to report, not this key's).
    """
    specs_file = Path(specs_path) if specs_path else BUNDLED_SPECS
    try:  # read_bytes refuses a device or FIFO (--specs /dev/zero) instead of reading it
        specs_bytes, root_part = read_bytes(specs_file), root_digest(root)
        team = files_digest(_tree_files(extra_docs), extra_docs) if extra_docs else ""
        data = [(str(p), hashlib.sha256(read_bytes(Path(p))).hexdigest()) for p in data_files]
    except (OSError, FileRefused):
        return ""
    return digest(
        "site-inputs",
        str(specs_path or ""),
        hashlib.sha256(specs_bytes).hexdigest(),
        model_digest(),
        package_digest("roofline"),
        generator_digest(),
        root_part,
        team,
        data,
        tool_versions(),
        sys.version,
        config.KATEX_VERSION,
        config.KATEX_INTEGRITY,
        marker,
        site_url(),
        os.environ.get(SITE_URL_ENV) or "",
        build_date(),
        git_state(specs_path),
    )


@functools.cache
def code_digest(*names: str) -> str:
    """Digest of some site_gen modules, by path under ``site_gen/`` (read once per build
    process)."""
    return files_digest([config.PACKAGE_DIR / n for n in names], config.PACKAGE_DIR)


def latex_key(gpu: GpuSpec) -> str:
    """Key of one GPU's instantiated formulas."""
    # Cite snippets in the formulas carry permalinks: the site URL shapes them too.
    code = code_digest("markup/formulas.py", "config.py")
    return digest("latex", model_digest(), code, gpu_digest(gpu), site_url(), tool_versions())


def models_script_key() -> str:
    """Key of the calculator's model script: the whole model package (its code and the
    data it may read) and the tools that print it."""
    return digest("models-js", model_digest(), package_digest("roofline"), tool_versions())


@functools.cache
def _page_data_digest() -> str:
    """The bundled data files besides the spec database (error bands, calibration,
    measurements, model presets): a page may show what they hold."""
    folder = PACKAGE_ROOT / "roofline" / "data"
    return files_digest([p for p in _tree_files(folder) if p.name != "gpus.toml"], folder)


def gpu_pages_key(gpu: GpuSpec, calibration: CalibratedParameters | None) -> str:
    """What every page of one GPU alone is made from: its entry and calibrated parameters
    (which other GPUs shape through the fallbacks), the page code (all of ``site_gen/``),
    the model, the bundled data besides the specs, the site URL and the tools. Another
    GPU's change leaves it as it was."""
    return digest(
        "gpu-pages",
        gpu_digest(gpu),
        calibration_digest(calibration),
        generator_digest(),
        model_digest(),
        _page_data_digest(),
        site_url(),
        tool_versions(),
    )


def gpu_page_key(gpu_key: str, kind: str, mode: str, recipe: str) -> str:
    """Key of the output (Markdown, exports, chart jobs) of one GPU x mode x recipe page
    of ``kind`` (the dense page, the grouped one), or of a model x GPU page (``kind``
    "model", ``recipe`` the preset's name); ``gpu_key``: :func:`gpu_pages_key`."""
    return digest("recipe-page", gpu_key, kind, mode, recipe)


@functools.cache
def _drawing_digest() -> str:
    """Every module under ``site_gen/charts/draw/`` (a new one included) and the pool's
    entry points that call them."""
    draw = config.PACKAGE_DIR / "charts" / "draw"
    return files_digest([*_tree_files(draw), config.PACKAGE_DIR / "pool.py"], config.PACKAGE_DIR)


def chart_cache_key(job: PlotJob) -> str:
    """Key of one chart's SVG: its inputs and the drawing code."""
    code = _drawing_digest()
    return digest("chart", chart_key(job.kind, job.kwargs), code, tool_versions())


# -- output manifests -----------------------------------------------------------------


def manifest(folder: Path) -> dict[str, str] | None:
    """``relative path -> sha256`` of every file under ``folder``; None if one is not plain.

    A link, a device or any other special file makes the folder not one the build
    wrote, so it never matches.
    """
    found: dict[str, str] = {}
    stack = [(folder, "")]
    while stack:
        path, prefix = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            return None
        for entry in entries:
            rel = prefix + entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                stack.append((Path(entry.path), rel + "/"))
            elif stat.S_ISREG(mode):
                with open(entry.path, "rb") as handle:
                    found[rel] = hashlib.sha256(handle.read()).hexdigest()
            else:
                return None
    return found


def matches(folder: Path, expected: dict[str, str]) -> bool:
    """Whether ``folder`` holds exactly the files of ``expected``, byte for byte (sha256)."""
    if not folder.is_dir() or folder.is_symlink():
        return False
    return manifest(folder) == expected


def history_key(specs_path: str | None) -> str:
    """Key of the Changes page's git history of the spec file a build uses."""
    where = str(Path(specs_path).resolve()) if specs_path else ""
    return digest(
        "history",
        where,
        git_state(specs_path),
        model_digest(),
        package_digest("roofline"),
        code_digest("pool.py"),
    )


def outputs_unchanged(key: str, site_dir: Path, root: Path, cache: BuildCache) -> bool:
    """Whether the last build with inputs ``key`` left both folders exactly as they are."""
    stored = cache.get("outputs", key)
    if stored is None:
        return False
    generated = root / "docs" / config.GENERATED_DIRNAME
    if matches(site_dir, stored["site"]) and matches(generated, stored["generated"]):
        return True
    cache.hits["outputs"] -= 1  # the record is fine, the folders changed since: a miss
    cache.misses["outputs"] += 1
    return False
