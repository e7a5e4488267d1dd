"""Spec files from git, and the history of the spec database as diffs.

Pure apart from the ``git`` subprocess calls: :func:`load_specs_at_rev` reads a spec
file as it was at a revision (for ``roofline diff --base-rev``); :func:`spec_history`
walks the commits that changed the spec file (or the model version) and diffs each
against its parent with :func:`roofline.analysis.diff.diff_specs`, for the site's Changes page.
Outside a git repository, or without git, the history is empty and says why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from roofline.analysis.diff import SpecDiff, _GuidanceCache, diff_specs
from roofline.errors import RooflineError
from roofline.specs import SpecDatabase, parse_specs

SPEC_PATH = "roofline/data/gpus.toml"
#: Where ``MODEL_VERSION`` is set, newest first: the file moved, and the history of the
#: model version follows it through every place it has lived.
MODEL_PATHS = (
    "roofline/model/build.py",
    "roofline/model/formulas.py",
    "roofline/formulas.py",
)
_MODEL_VERSION_RE = re.compile(r"""^MODEL_VERSION\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_SEP = "\x1f"


class GitError(RooflineError):
    """git is missing, the path is outside a repository, or a revision is unknown."""


def git(repo: str | Path, *args: str) -> str:
    """Run ``git -C repo args`` and return stdout; GitError with git's message on failure."""
    exe = shutil.which("git")
    if exe is None:
        raise GitError("git is not installed (needed for --base-rev and the history)")
    proc = subprocess.run(
        [exe, "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        message = proc.stderr.strip() or f"exit status {proc.returncode}"
        raise GitError(f"git {' '.join(args)}: {message}")
    return proc.stdout


def repo_root(path: str | Path) -> Path:
    """The top folder of the git work tree holding ``path``."""
    folder = Path(path).resolve()
    folder = folder if folder.is_dir() else folder.parent
    return Path(git(folder, "rev-parse", "--show-toplevel").strip())


def load_specs_at_rev(rev: str, path: str | Path) -> SpecDatabase:
    """The spec file at ``path`` as it was at git revision ``rev`` (linted as usual)."""
    file = Path(path).resolve()
    root = repo_root(file)
    relative = file.relative_to(root.resolve()).as_posix()
    text = git(root, "show", f"{rev}:{relative}")
    return parse_specs(text, f"{rev}:{relative}")


def _model_version(root: Path, rev: str) -> str | None:
    for path in MODEL_PATHS:
        try:
            source = git(root, "show", f"{rev}:{path}")
        except GitError:
            continue
        match = _MODEL_VERSION_RE.search(source)
        return match.group(1) if match else None
    return None


@dataclass(frozen=True)
class HistoryEntry:
    """One commit that changed the spec file or the model version.

    ``diff`` compares the spec file with its parent commit's (both evaluated with the
    current model); None when the commit did not touch the specs or a side could not
    be loaded (``note`` says which).
    """

    sha: str
    date: str  # committer date, ISO 8601
    subject: str
    diff: SpecDiff | None
    model_version: str | None = None
    previous_model_version: str | None = None
    note: str = ""
    #: The parent commit is not in the clone (the boundary of a shallow clone): what
    #: this commit changed is unknown, not "everything added".
    parent_missing: bool = False

    @property
    def model_changed(self) -> bool:
        """True when this commit changed roofline.MODEL_VERSION (unknown: False)."""
        return not self.parent_missing and self.model_version != self.previous_model_version


@dataclass(frozen=True)
class SpecHistory:
    """Newest first; ``note`` explains an empty or shortened history."""

    entries: tuple[HistoryEntry, ...] = ()
    note: str = ""
    path: str = SPEC_PATH
    truncated: bool = False
    #: Read from a shallow clone: older commits are missing (``git fetch --unshallow``).
    shallow: bool = False


def _log(root: Path, limit: int, *args: str) -> list[tuple[str, str, str, str, int]]:
    """(sha, date, subject, path at that commit, time) of the commits ``git log`` lists."""
    fmt = _SEP.join(("%H", "%cI", "%ct", "%s"))
    out = git(root, "log", f"-n{limit}", f"--format={_SEP}{fmt}", "--name-only", *args)
    rows = []
    for chunk in out.split(f"\n{_SEP}") if out else []:
        head, _, names = chunk.lstrip(_SEP).partition("\n")
        sha, date, stamp, subject = head.split(_SEP, 3)
        paths = [n for n in names.splitlines() if n.strip()]
        rows.append((sha, date, subject, paths[0] if paths else "", int(stamp)))
    return rows


def _load_at(root: Path, rev: str, path: str) -> SpecDatabase | None:
    """The spec database at ``rev`` (None when the file did not exist there)."""
    try:
        text = git(root, "show", f"{rev}:{path}")
    except GitError:
        return None
    return parse_specs(text, f"{rev[:12]}:{path}")


def _entry(
    root: Path,
    sha: str,
    date: str,
    subject: str,
    paths: tuple[str, str] | None,
    cache: _GuidanceCache,
) -> HistoryEntry:
    version = _model_version(root, sha)
    if not _has_parent(root, sha) and _is_shallow(root):
        note = "its parent commit is not in this shallow clone, so what it changed is unknown"
        return HistoryEntry(sha, date, subject, None, version, None, note, True)
    previous = _model_version(root, f"{sha}^")
    if paths is None:
        return HistoryEntry(sha, date, subject, None, version, previous)
    path, parent_path = paths
    try:
        head = _load_at(root, sha, path)
        base = _load_at(root, f"{sha}^", parent_path) or SpecDatabase({}, "(no spec file)")
    except RooflineError as exc:
        note = f"could not load the spec file at this commit: {exc}"
        return HistoryEntry(sha, date, subject, None, version, previous, note)
    if head is None:
        return HistoryEntry(sha, date, subject, None, version, previous, "spec file deleted")
    return HistoryEntry(sha, date, subject, diff_specs(base, head, cache), version, previous)


def _moved_only(root: Path, sha: str) -> bool:
    """The commit moved ``MODEL_VERSION`` between files and kept its value."""
    if not _has_parent(root, sha):
        return False
    version = _model_version(root, sha)
    return version is not None and version == _model_version(root, f"{sha}^")


def _has_parent(root: Path, sha: str) -> bool:
    try:
        git(root, "rev-parse", "--verify", "--quiet", f"{sha}^")
    except GitError:
        return False
    return True


def _is_shallow(root: Path) -> bool:
    """True in a shallow clone (CI checkouts default to depth 1)."""
    return git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


def spec_history(repo_root: str | Path, path: str = SPEC_PATH, limit: int = 30) -> SpecHistory:
    """The last ``limit`` commits that changed ``path`` or MODEL_VERSION, newest first.

    Follows renames of the spec file. Each entry carries the diff against its parent;
    guidance is computed once per distinct GPU entry across the whole walk. Not a git
    repository, or no git: an empty history whose ``note`` says why.
    """
    root = Path(repo_root)
    try:
        root = Path(git(root, "rev-parse", "--show-toplevel").strip())
        spec_log = _log(root, limit, "--follow", "--", path)
        model_log = _log(root, limit, "-GMODEL_VERSION =", "--", *MODEL_PATHS)
    except GitError as exc:
        return SpecHistory(note=f"no history: {exc}", path=path)
    # A commit that moved the MODEL_VERSION line to another file changed no version.
    model_log = [row for row in model_log if not _moved_only(root, row[0])]
    spec_paths: dict[str, tuple[str, str]] = {}
    for i, (sha, _date, _subject, at, _t) in enumerate(spec_log):
        older = spec_log[i + 1][3] if i + 1 < len(spec_log) else at
        spec_paths[sha] = (at or path, older or at or path)
    commits = {row[0]: row for row in [*spec_log, *model_log]}
    ordered = sorted(commits.values(), key=lambda row: row[4], reverse=True)
    cache = _GuidanceCache()
    entries = tuple(
        _entry(root, sha, date, subject, spec_paths.get(sha), cache)
        for sha, date, subject, _at, _t in ordered[:limit]
    )
    truncated = len(spec_log) >= limit or len(ordered) > limit
    note = "" if entries else f"no commits changed {path}"
    shallow = _is_shallow(root)
    if shallow:
        note = (
            "this history was read from a shallow clone, so older commits are missing "
            f"(run git fetch --unshallow, or check out with fetch-depth 0). {note}"
        )
    return SpecHistory(entries, note.strip(), path, truncated, shallow)
