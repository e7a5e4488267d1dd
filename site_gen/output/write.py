"""The build's private folders, the generated files written into them, and the final swap.

Every folder the build writes before the swap carries its pid:
``<root>/.roofline-build.tmp-<pid>-<random>/`` (a copy of ``mkdocs.yml`` and the
hand-written docs, plus ``docs/generated/``, which mkdocs reads) and
``<site parent>/.<site>.tmp-<pid>-<random>/`` (``site/``, mkdocs' output; ``old/``, the
replaced site on its way out). Charts still being drawn while mkdocs runs exist as 1x1
placeholders only in these private copies, and are replaced there; the repository's
``docs/generated/`` and the site folder are replaced, by renames, only after every stage
succeeded, so a killed build leaves no placeholder in either. The next build of the root
removes staging folders of the build's own naming whose pid is no longer alive
(restoring the previous site if a build died between its two final renames), and
nothing else.

Writing thousands of small files is most of what a rebuild costs, so a generated file
whose bytes equal the one the previous build left in ``docs/generated`` is hard-linked
from it instead of written (:func:`put_file`): the same bytes, one directory entry. No
file the build links is ever written in place afterwards (replacements are renames), so
a link can never carry a change from one folder into another.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from site_gen import config
from site_gen.output.assets import katex_files, staging_folder, stale_staging
from site_gen.output.guard import MARKER, BuildError

#: Stem of the private build root's name: ``<root>/.roofline-build.tmp-<pid>-<random>``.
ROOT_STAGING_STEM = "roofline-build"
#: Fixed names earlier versions staged ``docs/generated`` in (removed under the lock).
LEGACY_DOCS_STAGING = (".generated.tmp", ".generated.old")


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
        return {
            n
            for n in names
            if n.startswith(".") or n == "__pycache__" or (top and n == config.GENERATED_DIRNAME)
        }

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


#: Where a team's own pages (``roofline build --docs-dir DIR``) sit in the staged docs;
#: docs/hooks.py gives them a nav section of their own.
TEAM_DIRNAME = "team"


def copy_team_docs(source: Path, target: Path) -> int:
    """Copy the regular files of ``source`` (a team's pages) into ``target``: dot-files,
    ``__pycache__`` and symbolic links are left out (a link could carry a file from
    anywhere into the site). Returns the number of Markdown pages copied."""
    pages = 0
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d != "__pycache__" and not (Path(folder) / d).is_symlink()
        )
        out = target / Path(folder).relative_to(source)
        out.mkdir(parents=True, exist_ok=True)
        for name in files:
            path = Path(folder) / name
            if name.startswith(".") or path.is_symlink() or not path.is_file():
                continue
            shutil.copy2(path, out / name)
            pages += name.endswith(".md")
    return pages


def sync_site_files(source: Path, root: Path) -> None:
    """Make ``root`` hold ``source``'s mkdocs.yml and docs/ (an installed tool's package
    data), keeping ``root/docs/generated`` (the last build's pages, for linking). ``root``
    is the tool's own work folder in the user's cache, so what it replaced was its own."""
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for entry in docs.iterdir():
        if entry.name == config.GENERATED_DIRNAME:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.copy2(source / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(
        source / "docs", docs, ignore=_staging_ignore(source / "docs"), dirs_exist_ok=True
    )


def make_staging(root: Path, site_dir: Path, extra_docs: Path | None = None) -> Staging:
    """Create the private folders; BuildError naming the path when it is not writable.
    ``extra_docs``: a team's pages, copied into the staged docs as ``team/``."""
    try:
        site_dir.parent.mkdir(parents=True, exist_ok=True)
        holder = staging_folder(site_dir.parent, site_dir.name)
    except OSError as exc:
        where = exc.filename or site_dir.parent
        raise BuildError(
            f"cannot write the site folder {site_dir}: {exc.strerror} ({where})"
        ) from exc
    try:
        private = staging_folder(root, ROOT_STAGING_STEM)
    except OSError as exc:
        shutil.rmtree(holder, ignore_errors=True)
        raise BuildError(f"cannot write in the build root {root}: {exc.strerror}") from exc
    staging = Staging(private, holder)
    try:
        shutil.copy2(root / "mkdocs.yml", private / "mkdocs.yml")
        shutil.copytree(root / "docs", staging.docs, ignore=_staging_ignore(root / "docs"))
        if extra_docs is not None:
            team = staging.docs / TEAM_DIRNAME
            if team.exists():
                staging.remove()
                raise BuildError(f"--docs-dir: the site's own docs already have {TEAM_DIRNAME}/")
            pages = copy_team_docs(extra_docs, team)
            if not pages:
                staging.remove()
                raise BuildError(
                    f"--docs-dir {extra_docs}: expected Markdown pages (*.md), found none"
                )
    except OSError as exc:
        staging.remove()
        raise BuildError(
            f"cannot stage the build in {private}: {exc.strerror} ({exc.filename or root})"
        ) from exc
    return staging


# -- writing files ---------------------------------------------------------------------


def _same_bytes(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a plain file (not a link) holding exactly ``data``."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


def put_file(target: Path, data: bytes, previous: Path | None = None) -> bool:
    """Create ``target`` holding ``data``: a hard link to ``previous`` when that holds the
    same bytes, else a new file. True when linked. ``target`` must not exist yet."""
    if previous is not None and _same_bytes(previous, data) and _linked(previous, target):
        return True
    with open(target, "xb") as handle:
        handle.write(data)
    return False


def replace_file(target: Path, data: bytes) -> None:
    """Replace ``target`` by a new file holding ``data`` (a rename: never written in place,
    so a file linked elsewhere keeps its bytes)."""
    temporary = _temporary(target)
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, target)


def _temporary(target: Path) -> Path:
    """A name beside ``target`` to make its replacement under, then rename over it."""
    return target.with_name(f".{target.name}.tmp-{os.getpid()}")


def replace_with_link(source: Path, target: Path) -> None:
    """Replace ``target`` by a hard link to ``source`` (made under a temporary name, then
    renamed over it: never written through), or by a copy of its bytes where links
    cannot be made."""
    temporary = _temporary(target)
    if not _linked(source, temporary):
        replace_file(target, source.read_bytes())
        return
    os.replace(temporary, target)


def _generated_target(generated: Path, path: str) -> Path:
    prefix = config.GENERATED_DIRNAME + "/"
    if not path.startswith(prefix):
        raise ValueError(f"generated path outside {prefix}: {path}")
    relative = path.removeprefix(prefix)
    # Checked by name, not by resolving links: the folder is new and the build makes
    # every folder in it, so no link can be on the way (and resolving costs a system
    # call per path component, for thousands of files).
    parts = relative.split("/")
    if relative.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in relative:
        raise ValueError(f"generated path escapes {prefix}: {path}")
    return generated / relative


def write_generated(
    pages: dict[str, str], charts: dict[str, str], docs_dir: Path, previous: Path | None = None
) -> Path:
    """Write every generated file and KaTeX into ``docs_dir/generated`` (a staging copy).

    With ``previous`` (the ``docs/generated`` the last build left), a file whose bytes
    are unchanged there is hard-linked from it instead of written; a file with the same
    bytes as one written before it in this call (a chart's placeholder, an export that
    two pages share: a quarter of a cold build's files) is a hard link to that one.
    Creating a file is what costs here, not its bytes: on these machines a cold build's
    17,000 new files took from 1 to 14 s of kernel time. Nothing writes into a file in
    place (:func:`replace_file` renames), so linked files never change together.
    Returns the folder.
    """
    generated = (docs_dir / config.GENERATED_DIRNAME).resolve()
    generated.mkdir(parents=True, exist_ok=True)
    if previous is not None and (previous.is_symlink() or not previous.is_dir()):
        previous = None
    files = {_generated_target(generated, p): t.encode() for p, t in {**pages, **charts}.items()}
    katex = generated / "katex"
    files.update({katex / name: data for name, data in katex_files().items()})
    made: set[Path] = {generated}
    first_with: dict[bytes, Path] = {}
    for target, data in files.items():
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        twin = first_with.setdefault(data, target)
        if twin is not target and _linked(twin, target):
            continue
        before = previous / target.relative_to(generated) if previous is not None else None
        put_file(target, data, before)
    return generated


def _linked(source: Path, target: Path) -> bool:
    """Make ``target`` a hard link to ``source``; False where links cannot be made."""
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not allowed: the caller writes it
        return False
    return True


# -- the swap ----------------------------------------------------------------------------


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
