"""Helpers shared by the site build and browser tests: build a small site in a temp dir."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent.parent
SMALL_SPECS = ROOT / "tests" / "data" / "site_small_specs.toml"
#: The sitemap date of the shared small site (``SOURCE_DATE_EPOCH``): a test that builds
#: the small site again under the same epoch gets the same bytes.
SHARED_EPOCH = "1764000000"
#: The site URL of the shared small site built by ``make site`` (:func:`shared_url_site`).
SHARED_URL = "https://atlas.example.org/roofline/"


def file_tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes): two builds compare equal when
    their trees do."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def require_katex() -> None:
    """Skip when KaTeX is neither cached nor obtainable (no npm)."""
    from site_gen.output.assets import KATEX_VERSION, cache_dir

    if shutil.which("npm") is None and not (cache_dir() / f"katex-{KATEX_VERSION}.tgz").is_file():
        pytest.skip("npm is not installed and KaTeX is not cached; the site needs it")


def make_root(tmp: Path) -> Path:
    """A build root in ``tmp``: copies of mkdocs.yml and the hand-written docs."""
    root = tmp / "root"
    shutil.copytree(
        ROOT / "docs",
        root / "docs",
        ignore=shutil.ignore_patterns("generated", ".generated*", "__pycache__"),
    )
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def build_small_site(
    tmp: Path, specs: Path = SMALL_SPECS, cache_enabled: bool = False
) -> tuple[Path, dict[str, float]]:
    """Build the small site in ``tmp`` (its own root, site folder and build cache)."""
    from site_gen.build import build
    from site_gen.cache import BuildCache

    root = tmp / "root" if (tmp / "root").is_dir() else make_root(tmp)
    site = tmp / "site"
    cache = BuildCache(root=tmp / "cache", enabled=cache_enabled)
    timings = build(str(specs), site, root=root, cache=cache)
    return site, timings


def shared_small_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The small site, built once for the whole test run with the build cache on, and
    shared read-only: ``{"root", "site", "cache"}`` (its build root, site folder and
    warm build cache; tests that start from a warm cache copy it).

    Built once across xdist workers (:func:`_built_once`), under :data:`SHARED_EPOCH` and
    without a site URL (a cached build is byte-identical to a clean one:
    ``test_rebuilds_reuse_what_is_unchanged`` compares a rebuild from this very site's
    cache with a build made without any cache, in its own process).
    """
    require_katex()

    def small(folder: Path) -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SOURCE_DATE_EPOCH", SHARED_EPOCH)
            patch.delenv("ROOFLINE_ATLAS_SITE_URL", raising=False)
            build_small_site(folder, cache_enabled=True)

    folder = _built_once(tmp_path_factory, "shared-small-site", small)
    return {"root": folder / "root", "site": folder / "site", "cache": folder / "cache"}


def _built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The folder ``name`` that ``build`` filled, once per test run: under pytest-xdist
    every worker has its own base temp folder, but they share its parent, so the first
    worker to take the lock there builds and the others wait and reuse it. A build that
    failed leaves no ``built`` marker, so the next caller builds again."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / name
    with FileLock(str(base / f"{name}.lock")):
        if not (folder / "built").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / "built").write_text("ok\n", "utf-8")
    return folder


def make_site(site: Path, cache: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``make site`` of the small spec file into ``site``, as the Pages workflow runs it
    (skips where make or the ``make test`` install is missing)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (ROOT / ".venv" / ".installed").is_file():
        pytest.skip("run through `make test`: the targets use the .venv it installs")
    return subprocess.run(
        ["make", "-s", "-C", str(ROOT), "site", f"SITE_DIR={site}", f"SPECS={SMALL_SPECS}"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "ROOFLINE_ATLAS_BUILD_CACHE": str(cache), **env},
        timeout=900,
    )


def shared_url_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small site as ``make site`` builds it for :data:`SHARED_URL` (a cold build,
    under :data:`SHARED_EPOCH`), once per test run and read only: the make target's test
    reads its permalinks, and the cached rebuilds for a new site URL must equal it.
    A failed build fails the test that asked for it (with make's output) and is retried
    by the next one."""
    require_katex()

    def with_url(folder: Path) -> None:
        env = {"ROOFLINE_ATLAS_SITE_URL": SHARED_URL, "SOURCE_DATE_EPOCH": SHARED_EPOCH}
        proc = make_site(folder / "site", folder / "cache", env)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    folder = _built_once(tmp_path_factory, "shared-url-site", with_url)
    return folder / "site"


def shared_small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared small site's folder (:func:`shared_small_build`)."""
    return shared_small_build(tmp_path_factory)["site"]


def copy_of_small_site(shared: Path, tmp: Path) -> Path:
    """``tmp/site``: a copy of the shared small site, with a build root beside it, as
    :func:`build_small_site` in ``tmp`` would leave them (a test that only needs a built
    site to start from saves a build)."""
    make_root(tmp)
    shutil.copytree(shared, tmp / "site", symlinks=True)
    return tmp / "site"


def copy_of_warm_cache(shared: dict[str, Path], tmp: Path) -> Path:
    """``tmp/cache``: a copy of the shared small site's warm build cache (``shared`` is
    :func:`shared_small_build`'s), where :func:`build_small_site` in ``tmp`` keeps its
    cache (a test whose build may reuse the shared one's work starts from it)."""
    shutil.copytree(shared["cache"], tmp / "cache", symlinks=True)
    return tmp / "cache"


def site_mkdocs_config():
    """The site's mkdocs configuration as mkdocs builds its pages: mkdocs.yml with each
    plugin's ``on_config`` run (a plugin's may add plugins, run in turn: mkdocstrings adds
    mkdocs-autorefs). The project's own hooks are left out: they read the generated
    navigation. A fresh one per call (the plugins are stateful)."""
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    done: set[str] = set()
    while pending := [name for name in config.plugins if name not in done]:
        for name in pending:
            done.add(name)
            if not name.endswith(".py"):
                config = config.plugins[name].on_config(config) or config
    return config
