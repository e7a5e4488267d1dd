"""Orchestration: gather -> render -> draw -> write -> mkdocs build --strict (-> serve).

:func:`build_site` is the only function that writes files. Stage timings are printed as
the build goes.

Safety, in the order the build does it:

* **Site-folder guard** (:func:`check_site_dir`, before anything is written): the site
  folder is replaced whole, so it must be new, empty or a previous site (it holds the
  :data:`MARKER` file every build writes), and never the build root, its ``docs/``, the
  git work tree, a cache folder, the home folder or ``/`` (nor contain one of them, nor lie
  inside ``docs/`` or a cache), a file, or a git work tree itself. Symlinks are resolved
  first.
* **One build per root** (:func:`build_lock`): ``fcntl.flock`` on
  ``<root>/.roofline-build.lock``; a second build fails fast, naming the first one's pid.
* **Private staging**: every folder the build writes before the swap carries its pid,
  ``<root>/.roofline-build.tmp-<pid>-<random>/`` (a copy of ``mkdocs.yml`` and the
  hand-written docs, plus ``docs/generated/``, which mkdocs reads) and
  ``<site parent>/.<site>.tmp-<pid>-<random>/`` (``site/``, mkdocs' output; ``old/``, the
  replaced site on its way out). Charts still being drawn while mkdocs runs exist as 1x1
  placeholders only in these private copies, and are overwritten there; the repository's
  ``docs/generated/`` and the site folder are replaced, by renames, only after every stage
  succeeded, so a killed build leaves no placeholder in either. The next build of the
  root removes staging folders of the build's own naming whose pid is no longer alive
  (restoring the previous site if a build died between its two final renames), and
  nothing else.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import http.server
import logging
import multiprocessing
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from roofline.cite import SITE_URL_ENV, site_url
from roofline.errors import RooflineError
from roofline.formulas import MODEL_VERSION
from roofline.specs import GpuSpec, SpecDatabase, load_specs
from site_gen import config, pool
from site_gen.assets import (
    KATEX_VERSION,
    cache_dir,
    install_katex,
    staging_folder,
    stale_staging,
)
from site_gen.cache import (
    BuildCache,
    digest,
    files_digest,
    gpu_digest,
    model_digest,
    tool_versions,
)
from site_gen.formulas import Formula, instantiated_for_gpu
from site_gen.gather import gather
from site_gen.render import PlotJob, chart_key, render_pages

WORKERS = 2
PLOT_BATCH = 6
#: Written into every site the build makes; a non-empty folder without it is not replaced.
MARKER = ".roofline-atlas-site"
LOCK_NAME = ".roofline-build.lock"
#: Stem of the private build root's name: ``<root>/.roofline-build.tmp-<pid>-<random>``.
ROOT_STAGING_STEM = "roofline-build"
#: Fixed names earlier versions staged ``docs/generated`` in (removed under the lock).
LEGACY_DOCS_STAGING = (".generated.tmp", ".generated.old")


class StageTimer:
    """Prints ``[stage] ... seconds`` lines and keeps the totals."""

    def __init__(self, stream=sys.stdout) -> None:
        self.stream = stream
        self.start = time.perf_counter()
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        print(f"[build] {name:<8} {detail}", file=self.stream, flush=True)
        began = time.perf_counter()
        yield
        self.timings[name] = time.perf_counter() - began
        print(
            f"[build] {name:<8} done in {self.timings[name]:5.1f} s", file=self.stream, flush=True
        )

    def total(self) -> float:
        """Seconds since the build began."""
        return time.perf_counter() - self.start


class BuildError(RooflineError):
    """A build stage failed; the previous site folder was left untouched."""


def generate_docs(
    specs: SpecDatabase,
    instantiated: dict[str, dict[tuple[str, str], tuple[Formula, ...]]] | None = None,
) -> tuple[dict[str, str], list[PlotJob]]:
    """Gather and render without drawing or writing (used by the golden tests)."""
    atlas = gather(specs)
    if instantiated is None:
        instantiated = {gpu.name: instantiated_for_gpu(gpu) for gpu in specs.values()}
    return render_pages(atlas, instantiated)


def _batches(jobs: list[PlotJob], size: int) -> list[list[PlotJob]]:
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


# -- the site-folder guard -------------------------------------------------------------


def marker_text() -> str:
    """The marker file's text: what made the site (no dates, so builds stay identical)."""
    try:
        version = metadata.version("roofline-atlas")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return (
        f"Roofline Atlas site made by `roofline build` (roofline-atlas {version}, "
        f"model {MODEL_VERSION}).\nThe next build into this folder replaces it whole.\n"
    )


def _git_work_tree(start: Path) -> Path | None:
    """The top of the git work tree holding ``start`` (the first folder up with .git)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_and_home(root: Path) -> list[tuple[str, Path]]:
    places = []
    work_tree = _git_work_tree(root)
    if work_tree is not None:
        places.append(("the git work tree", work_tree))
    with contextlib.suppress(RuntimeError, KeyError):  # no home folder known
        places.append(("your home folder", Path.home()))
    return places


def _resolved(places: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    return [(what, Path(path).expanduser().resolve()) for what, path in places]


def check_site_dir(site_dir: Path, root: Path, cache: BuildCache) -> Path:
    """The resolved site folder, or BuildError when replacing it could destroy anything else.

    Refused: the file-system root; a folder that is or contains the build root, its docs
    folder, the git work tree, the build or KaTeX cache, or the home folder; a folder
    inside the docs folder or a cache; a file; a git work tree; a non-empty folder
    without the :data:`MARKER` of a previous site. Nothing is written.
    """
    site = Path(site_dir).expanduser().resolve()

    def refuse(why: str, how: str = f"such as {root / 'site'}") -> BuildError:
        return BuildError(f"refusing --site-dir {site}: {why}; the build replaces the site "
                          f"folder whole, so choose an empty or new folder, {how}")  # fmt: skip

    if site == Path(site.anchor):
        raise refuse("it is the file-system root")
    # Folders the build itself writes or reads: the site may be neither one nor inside one.
    owned = _resolved(
        [
            ("the docs folder of the build root", root / "docs"),
            ("the build cache", cache.root),
            ("the KaTeX cache", cache_dir()),
        ]
    )
    # Folders holding the user's work: the site may sit inside them, not be or hold them.
    holders = _resolved([("the build root", root), *_git_and_home(root)])  # fmt: skip
    for what, place in owned + holders:
        if site == place:
            raise refuse(f"it is {what}")
    for what, place in holders + owned:
        if site in place.parents:
            raise refuse(f"it contains {what} ({place})")
    for what, place in owned:
        if place in site.parents:
            raise refuse(f"it is inside {what} ({place})")
    if site.exists() and not site.is_dir():
        raise refuse("it is a file, not a folder")
    if site.is_dir():
        try:
            if (site / ".git").exists():
                raise refuse("it is a git work tree (it holds .git)")
            if any(site.iterdir()) and not (site / MARKER).is_file():
                raise refuse(f"it is not empty and is not a Roofline Atlas site (no {MARKER})",
                             f"or delete {site} yourself if it is a site you no longer need")
        except OSError as exc:
            raise BuildError(f"cannot read the site folder {site}: {exc.strerror}") from exc
    return site


# -- one build per root ----------------------------------------------------------------


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[int]:
    """Hold ``<root>/.roofline-build.lock`` (flock, non-blocking); yields its descriptor.

    A second build of the same root fails at once, naming the pid that holds the lock.
    """
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise BuildError(f"cannot create the build lock {path}: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise BuildError(f"another roofline build is running in {root} (pid {holder}); "
                             "wait for it to finish") from None  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield fd
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


# -- staging folders -------------------------------------------------------------------


@dataclass(frozen=True)
class Staging:
    """The build's private folders (see the module docstring)."""

    root: Path  # <root>/.roofline-build.tmp-<pid>-<random>: mkdocs.yml, docs/
    holder: Path  # <site parent>/.<site>.tmp-<pid>-<random>: site/, old/

    @property
    def docs(self) -> Path:
        """The docs folder mkdocs reads (hand-written copies and generated/)."""
        return self.root / "docs"

    @property
    def site(self) -> Path:
        """mkdocs' output folder."""
        return self.holder / "site"

    def remove(self) -> None:
        """Delete both folders (they hold nothing but what this build made)."""
        for folder in (self.holder, self.root):
            shutil.rmtree(folder, ignore_errors=True)


def _staging_ignore(docs: Path):
    """copytree filter: not generated/ (written fresh), dot-files (mkdocs skips them), caches."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = Path(folder) == docs
        return {n for n in names if n.startswith(".") or n == "__pycache__"
                or (top and n == config.GENERATED_DIRNAME)}  # fmt: skip

    return ignore


def remove_stale_staging(root: Path, site_dir: Path) -> None:
    """Remove staging folders of dead builds (own naming only); restore a lost site."""
    for stale in stale_staging(root, ROOT_STAGING_STEM):
        shutil.rmtree(stale, ignore_errors=True)
    for name in LEGACY_DOCS_STAGING:
        legacy = root / "docs" / name
        if legacy.is_dir() and not legacy.is_symlink():
            shutil.rmtree(legacy, ignore_errors=True)
    for stale in stale_staging(site_dir.parent, site_dir.name):
        old = stale / "old"
        if not site_dir.exists() and (old / MARKER).is_file():
            # Killed between its two renames: the previous site is still whole here.
            old.rename(site_dir)
            print(f"[build] restored {site_dir} left by an interrupted build", flush=True)
        shutil.rmtree(stale, ignore_errors=True)


def make_staging(root: Path, site_dir: Path) -> Staging:
    """Create the private folders; BuildError naming the path when it is not writable."""
    try:
        site_dir.parent.mkdir(parents=True, exist_ok=True)
        holder = staging_folder(site_dir.parent, site_dir.name)
    except OSError as exc:
        where = exc.filename or site_dir.parent
        raise BuildError(f"cannot write the site folder {site_dir}: {exc.strerror} ({where})"
                         ) from exc  # fmt: skip
    try:
        private = staging_folder(root, ROOT_STAGING_STEM)
    except OSError as exc:
        shutil.rmtree(holder, ignore_errors=True)
        raise BuildError(f"cannot write in the build root {root}: {exc.strerror}") from exc
    staging = Staging(private, holder)
    try:
        shutil.copy2(root / "mkdocs.yml", private / "mkdocs.yml")
        shutil.copytree(root / "docs", staging.docs, ignore=_staging_ignore(root / "docs"))
    except OSError as exc:
        staging.remove()
        raise BuildError(f"cannot stage the build in {private}: {exc.strerror} "
                         f"({exc.filename or root})") from exc  # fmt: skip
    return staging


def write_generated(pages: dict[str, str], charts: dict[str, str], docs_dir: Path) -> Path:
    """Write every generated file and KaTeX into ``docs_dir/generated`` (a staging copy)."""
    prefix = config.GENERATED_DIRNAME + "/"
    generated = (docs_dir / config.GENERATED_DIRNAME).resolve()
    generated.mkdir(parents=True, exist_ok=True)
    for path, text in {**pages, **charts}.items():
        if not path.startswith(prefix):
            raise ValueError(f"generated path outside {prefix}: {path}")
        target = generated / path.removeprefix(prefix)
        if generated not in target.resolve().parents:
            raise ValueError(f"generated path escapes {prefix}: {path}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    install_katex(generated / "katex")
    return generated


def _rename(source: Path, target: Path) -> None:
    """``source.rename(target)``; a failure is a BuildError naming both paths."""
    try:
        source.rename(target)
    except OSError as exc:
        raise BuildError(f"cannot move {source} to {target}: {exc.strerror}") from exc


def _replace(new: Path, target: Path, old: Path) -> None:
    """Move ``target`` (if any) to ``old``, then ``new`` to ``target``; undo on failure."""
    moved = target.exists() or target.is_symlink()
    if moved:
        _rename(target, old)
    try:
        _rename(new, target)
    except BuildError:
        if moved:
            old.rename(target)
        raise


def swap_into_place(staging: Staging, site_dir: Path, docs_dir: Path) -> None:
    """Replace ``site_dir`` and ``docs_dir/generated`` by the finished build (renames).

    Each replaced folder goes into the build's staging folders first and is deleted with
    them, so nothing outside what the build made is ever removed.
    """
    _replace(staging.site, site_dir, staging.holder / "old")
    generated = config.GENERATED_DIRNAME
    _replace(staging.docs / generated, docs_dir / generated, staging.root / f"{generated}.old")


# -- mkdocs ----------------------------------------------------------------------------


def run_mkdocs(site_dir: Path, mkdocs_yml: Path = config.MKDOCS_YML) -> None:
    """``mkdocs build --strict`` into ``site_dir``; raises on any warning.

    With ``$ROOFLINE_ATLAS_SITE_URL`` set, it is mkdocs' ``site_url`` (canonical links and
    a sitemap with real addresses); unset, mkdocs.yml's own (none) stays.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logger = logging.getLogger("mkdocs")
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("[mkdocs] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    url = site_url() if os.environ.get(SITE_URL_ENV) else None
    # Loading the hooks would leave __pycache__/ in docs/, which mkdocs would then publish.
    no_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        cfg = load_config(str(mkdocs_yml), site_dir=str(site_dir.resolve()), strict=True,
                          site_url=url)  # fmt: skip
        # Snippet paths are relative to the working directory; pin them to this docs_dir.
        cfg.mdx_configs.setdefault("pymdownx.snippets", {})["base_path"] = [cfg.docs_dir]
        build(cfg)
    finally:
        sys.dont_write_bytecode = no_bytecode
        logger.removeHandler(handler)


def serve_site(site_dir: Path, port: int = 8000) -> None:
    """Serve ``site_dir`` on http://127.0.0.1:port until interrupted."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"[build] serving {site_dir} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


def build_site(specs_path: str | None, site_dir: Path, serve: bool, use_cache: bool = True
               ) -> None:  # fmt: skip
    """``roofline build``: the site from ``specs_path`` (None: bundled) into ``site_dir``."""
    build(specs_path, Path(site_dir), cache=BuildCache(enabled=use_cache))
    if serve:
        serve_site(Path(site_dir))


@contextlib.contextmanager
def _failing_as(stage: str, site_dir: Path) -> Iterator[None]:
    """Turn any failure of ``stage`` into a BuildError that says the site is unchanged."""
    try:
        yield
    except RooflineError:
        raise
    except Exception as exc:
        # One line (the CLI prints it as one): a multi-line detail is folded.
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise BuildError(
            f"build failed in stage {stage}: {detail}; "
            f"the previous site in {site_dir} was left exactly as it was"
        ) from exc


# -- cache keys ------------------------------------------------------------------------


@functools.cache
def _code_digest(*names: str) -> str:
    """Digest of some site_gen modules (read once per build process)."""
    return files_digest([config.PACKAGE_DIR / n for n in names], config.PACKAGE_DIR)


def _latex_key(gpu: GpuSpec) -> str:
    # Cite snippets in the formulas carry permalinks: the site URL shapes them too.
    code = _code_digest("formulas.py", "config.py")
    return digest("latex", model_digest(), code, gpu_digest(gpu), site_url(), tool_versions())


def _chart_cache_key(job: PlotJob) -> str:
    return digest("chart", chart_key(job.kind, job.kwargs), _code_digest("plots.py"),
                  tool_versions())  # fmt: skip


def _build_date() -> str:
    """The date mkdocs writes into the sitemap (``SOURCE_DATE_EPOCH``, else today)."""
    from mkdocs.utils import get_build_date

    return get_build_date()


def _site_key(stage_root: Path, pages: dict[str, str], chart_keys: dict[str, str]) -> str:
    """Digest of every input of the mkdocs run, charts by their cache keys (not bytes).

    ``stage_root`` is the private root mkdocs reads (``mkdocs.yml`` and ``docs/``; the
    generated files are digested from ``pages`` and ``chart_keys``). Keys come from
    content, not from the drawn SVGs, so the lookup can happen before the charts are
    finished (they are drawn while mkdocs runs).
    """
    docs = stage_root / "docs"
    written = [p for p in docs.rglob("*") if p.is_file()
               and config.GENERATED_DIRNAME not in p.relative_to(docs).parts[:1]]  # fmt: skip
    page_digests = {path: hashlib.sha256(text.encode()).hexdigest() for path, text in pages.items()}
    mkdocs_yml = (stage_root / "mkdocs.yml").read_text("utf-8")
    return digest("site", files_digest(written, stage_root), page_digests, chart_keys,
                  KATEX_VERSION, mkdocs_yml, tool_versions(),
                  _code_digest("build.py", "assets.py"), marker_text(),
                  os.environ.get(SITE_URL_ENV) or "", _build_date())  # fmt: skip


#: Stands in for a chart still being drawn while mkdocs runs; replaced before the swap.
PLACEHOLDER_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>' + "\n"


def _start_charts(workers, jobs: list[PlotJob], cache: BuildCache):
    """Cached charts now; the rest start drawing on the pool (returned as a pending result)."""
    keys = {job.path: _chart_cache_key(job) for job in jobs}
    charts: dict[str, str] = {}
    missing = []
    for job in jobs:
        svg = cache.get("charts", keys[job.path])
        if svg is None:
            missing.append(job)
        else:
            charts.update((path, svg) for path in job.paths)
    pending = workers.map_async(pool.draw_many, _batches(missing, PLOT_BATCH))
    chart_keys = {path: keys[job.path] for job in jobs for path in job.paths}
    return charts, missing, pending, chart_keys


def _finish_charts(pending, missing: list[PlotJob], cache: BuildCache,
                   folders: list[Path]) -> int:  # fmt: skip
    """Wait for the drawn charts, store them, write them over their placeholders."""
    drawn = dict(item for batch in pending.get() for item in batch)
    for job in missing:
        cache.put("charts", _chart_cache_key(job), drawn[job.path])
    for folder in folders:
        for path, svg in drawn.items():
            (folder / path).write_text(svg, "utf-8")
    return len(drawn)


# -- the build -------------------------------------------------------------------------


def build(
    specs_path: str | None,
    site_dir: Path,
    root: Path = config.REPO_ROOT,
    cache: BuildCache | None = None,
) -> dict[str, float]:
    """Build the reference site from ``specs_path`` (None: bundled database) into ``site_dir``.

    ``root`` holds ``mkdocs.yml`` and ``docs/`` (the repository, or a copy in tests).

    First the guard (:func:`check_site_dir`) and the root's lock (:func:`build_lock`).
    Stages: load specs, gather (evaluate everything once), LaTeX and git history (in a
    pool of 2 workers, overlapping gather), render Markdown, write the generated files
    into a private copy of the docs (charts still being drawn get placeholders there),
    ``mkdocs build --strict`` into a staging folder while the pool draws the charts, then
    the charts over their placeholders; the staging folders replace ``site_dir`` and
    ``docs/generated`` only when the whole build succeeded. Evaluations, formulas, charts
    and the mkdocs output are reused from ``cache`` when their inputs are unchanged and
    their checksums verify (pass ``BuildCache(enabled=False)`` for a cold build).
    """
    cache = cache if cache is not None else BuildCache()
    root = Path(root).resolve()
    site_dir = check_site_dir(Path(site_dir), root, cache)
    timer = StageTimer()
    with build_lock(root) as lock_fd:
        remove_stale_staging(root, site_dir)
        staging = make_staging(root, site_dir)
        try:
            _build_staged(specs_path, site_dir, root, cache, staging, timer, lock_fd)
        finally:
            staging.remove()
    timer.timings["total"] = timer.total()
    print(f"[build] cache: {cache.summary()}", flush=True)
    print(f"[build] site built in {timer.total():.1f} s: {site_dir}", flush=True)
    return timer.timings


def _build_staged(specs_path: str | None, site_dir: Path, root: Path, cache: BuildCache,
                  staging: Staging, timer: StageTimer, lock_fd: int) -> None:  # fmt: skip
    """The stages of :func:`build`, writing only into ``staging`` until the final swap."""
    with timer.stage("specs", specs_path or "bundled database"):
        specs = load_specs(specs_path)
    context = multiprocessing.get_context("fork")
    # Workers close their inherited copy of the lock, so a worker outliving a killed
    # build cannot keep the root locked.
    with context.Pool(WORKERS, initializer=pool.close_inherited, initargs=(lock_fd,)
                      ) as workers:  # fmt: skip
        instantiated = {g.name: cache.get("latex", _latex_key(g)) for g in specs.values()}
        missing = [g for g in specs.values() if instantiated[g.name] is None]
        latex_jobs = workers.map_async(pool.latex_for, missing)
        history_job = workers.apply_async(pool.history_for, (specs_path,))
        with timer.stage("gather", f"{len(specs)} GPUs x modes x recipes x fusion"), \
                _failing_as("gather", site_dir):  # fmt: skip
            atlas = gather(specs, cache)
        with timer.stage("latex", f"instantiated formulas of {len(missing)} GPUs (pool)"), \
                _failing_as("latex", site_dir):  # fmt: skip
            for name, formulas in latex_jobs.get():
                instantiated[name] = formulas
                cache.put("latex", _latex_key(specs[name]), formulas)
        with timer.stage("history", "spec and model changes from git (pool)"), \
                _failing_as("history", site_dir):  # fmt: skip
            history = history_job.get()
        with timer.stage("render", "Markdown, CSV"), _failing_as("render", site_dir):
            pages, jobs = render_pages(atlas, instantiated, history)
        with timer.stage("plots", f"{len(jobs)} SVG charts: cached ones now, the rest on "
                         f"{WORKERS} workers while mkdocs runs"), \
                _failing_as("plots", site_dir):  # fmt: skip
            charts, missing, pending, chart_keys = _start_charts(workers, jobs, cache)
            placeholders = {path: PLACEHOLDER_SVG for job in missing for path in job.paths}
        with timer.stage("write", f"{len(pages)} pages and files, {len(chart_keys)} charts, "
                         "KaTeX"), _failing_as("write", site_dir):  # fmt: skip
            write_generated(pages, {**charts, **placeholders}, staging.docs)
        with timer.stage("mkdocs", f"build --strict -> {site_dir}"), \
                _failing_as("mkdocs", site_dir):  # fmt: skip
            key = _site_key(staging.root, pages, chart_keys)
            staging.site.mkdir()
            stored = cache.restore_site(key, staging.site)
            if not stored:
                run_mkdocs(staging.site, staging.root / "mkdocs.yml")
        with timer.stage("charts", f"waiting for {len(missing)} drawings"), \
                _failing_as("plots", site_dir):  # fmt: skip
            _finish_charts(pending, missing, cache, [staging.docs, staging.site])
        with _failing_as("swap", site_dir):
            (staging.site / MARKER).write_text(marker_text(), "utf-8")
            if not stored:
                cache.put_site(key, staging.site)
    swap_into_place(staging, site_dir, root / "docs")
