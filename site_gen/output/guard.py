"""What the build checks before it writes anything: the site folder and the build lock.

* **Site-folder guard** (:func:`check_site_dir`): the site folder is replaced whole, so it
  must be new, empty or a previous site (it holds the :data:`MARKER` file every build
  writes), and never the build root, its ``docs/``, the git work tree, a cache folder,
  the home folder or ``/`` (nor contain one of them, nor lie inside ``docs/``, a cache,
  the ``roofline`` or ``site_gen`` package or ``.git``), a file, or a git work tree
  itself. Symlinks are resolved first.
* **One build per root** (:func:`build_lock`): ``fcntl.flock`` on
  ``<root>/.roofline-build.lock``; a second build fails fast, naming the first one's pid.
* **An installed tool's build root** (:func:`work_root`): a folder of the build cache, so
  nothing is written into site-packages.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import roofline
from roofline.errors import RooflineError
from roofline.model.build import MODEL_VERSION
from site_gen.cache import BuildCache
from site_gen.output.assets import cache_dir

#: Written into every site the build makes; a non-empty folder without it is not replaced.
MARKER = ".roofline-atlas-site"
LOCK_NAME = ".roofline-build.lock"


class BuildError(RooflineError):
    """A build stage failed; the previous site folder was left untouched."""


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


def _packages_and_git(root: Path) -> list[tuple[str, Path]]:
    """The packages whose files key the build cache (a site inside one would change that
    key on every build) and the git folder of the work tree (never a place for output)."""
    places = [
        ("the roofline package", Path(roofline.__file__).parent),
        ("the site_gen package", Path(__file__).parents[1]),
    ]
    work_tree = _git_work_tree(root)
    if work_tree is not None:  # a worktree's .git is a file: nothing may go under it either
        places.append(("the git folder", work_tree / ".git"))
    return places


def _resolved(places: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    return [(what, Path(path).expanduser().resolve()) for what, path in places]


def check_site_dir(
    site_dir: Path, root: Path, cache: BuildCache, extra_docs: Path | None = None
) -> Path:
    """The resolved site folder, or BuildError when replacing it could destroy anything else.

    Refused: the file-system root; a folder that is or contains the build root, its docs
    folder, the git work tree, the build or KaTeX cache, or the home folder; a folder
    inside the docs folder or a cache; a file; a git work tree; a non-empty folder
    without the :data:`MARKER` of a previous site. Nothing is written.
    """
    site = Path(site_dir).expanduser().resolve()

    def refuse(why: str, how: str = f"such as {root / 'site'}") -> BuildError:
        return BuildError(
            f"refusing --site-dir {site}: {why}; the build replaces the site "
            f"folder whole, so choose an empty or new folder, {how}"
        )

    if site == Path(site.anchor):
        raise refuse("it is the file-system root")
    # Folders the build itself writes or reads: the site may be neither one nor inside one.
    owned = _resolved(
        [
            ("the docs folder of the build root", root / "docs"),
            ("the build cache", cache.root),
            ("the KaTeX cache", cache_dir()),
            *_packages_and_git(root),
            *([("the --docs-dir folder", extra_docs)] if extra_docs is not None else []),
        ]
    )
    # Folders holding the user's work: the site may sit inside them, not be or hold them.
    holders = _resolved([("the build root", root), *_git_and_home(root)])
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
                raise refuse(
                    f"it is not empty and is not a Roofline Atlas site (no {MARKER})",
                    f"or delete {site} yourself if it is a site you no longer need",
                )
        except OSError as exc:
            raise BuildError(f"cannot read the site folder {site}: {exc.strerror}") from exc
    return site


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
            raise BuildError(
                f"another roofline build is running in {root} (pid {holder}); wait for it to finish"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield fd
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def work_root(site_dir: Path, cache: BuildCache) -> Path:
    """The build root of an installed tool for ``site_dir``: a folder of the build cache
    (``~/.cache/roofline-atlas/build/roots/<digest of the site path>``, or under
    ``$ROOFLINE_ATLAS_BUILD_CACHE``) holding the packaged mkdocs.yml and docs/, the lock
    and ``docs/generated``, so nothing is written into site-packages and two site folders
    build side by side."""
    site = str(Path(site_dir).expanduser().resolve())
    root = cache.root / "roots" / hashlib.sha256(site.encode()).hexdigest()[:16]
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"cannot create the build's work folder {root}: {exc.strerror}") from exc
    return root
