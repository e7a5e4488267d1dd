"""KaTeX for the site: fetched from the npm registry at build time, never committed.

``npm pack katex@<KATEX_VERSION>`` downloads the tarball into a private temporary folder
inside the cache (``$ROOFLINE_ATLAS_CACHE`` or ``~/.cache/roofline-atlas``); its sha512 is
checked against the integrity npm publishes for that version (:data:`KATEX_INTEGRITY`)
and only then is it renamed into the cache, atomically, so builds running at the same
time never see half a tarball. A cached tarball is checked the same way before each use:
one that does not verify is discarded and fetched again, with a warning line. Its
``dist/`` (the script, stylesheet and fonts) is copied into the generated docs, so pages
render math with no network at view time. The build fails with a clear message when the
assets cannot be obtained.

The module also holds the naming of the build's staging folders
(``.<name>.tmp-<pid>-<random>``), shared with the build and its cache: the pid in the name
tells a later build whether the folder's owner is still running.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from site_gen.cache import cache_dir, warn
from site_gen.config import KATEX_INTEGRITY, KATEX_VERSION

KATEX_FILES = ("katex.min.js", "katex.min.css")


class AssetError(RuntimeError):
    """The math assets could not be obtained."""


# -- staging folders named after their owner's pid ------------------------------------


def staging_folder(parent: Path, stem: str) -> Path:
    """Create ``parent/.<stem>.tmp-<pid>-<random>`` (a new, empty, private folder)."""
    return Path(tempfile.mkdtemp(prefix=f".{stem}.tmp-{os.getpid()}-", dir=parent))


#: Linux's largest pid (PID_MAX_LIMIT, 2**22); a larger number in a staging folder's name
#: was never a process, so the folder is not one this build made.
MAX_PID = 2**22


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as alive). A pid
    outside 1..MAX_PID counts as alive: it names nothing ``os.kill`` could check (a
    20-digit one overflows), so the folder is left alone rather than removed."""
    if not 0 < pid <= MAX_PID:  # os.kill(0, ...) would signal our own process group
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def stale_staging(parent: Path, stem: str) -> list[Path]:
    """Folders in ``parent`` named like :func:`staging_folder` of ``stem`` whose pid is dead.

    Only real folders (not links) whose whole name matches the pattern are returned, so
    nothing the build did not name is ever picked up.
    """
    pattern = re.compile(rf"\.{re.escape(stem)}\.tmp-([0-9]{{1,10}})-[a-z0-9_]+")
    try:
        entries = list(parent.iterdir())
    except OSError:
        return []
    found = []
    for entry in sorted(entries):
        match = pattern.fullmatch(entry.name)
        if (
            match
            and entry.is_dir()
            and not entry.is_symlink()
            and not pid_alive(int(match.group(1)))
        ):
            found.append(entry)
    return found


# -- KaTeX ---------------------------------------------------------------------------


def integrity(path: Path) -> str:
    """npm's integrity string of a file: ``sha512-`` and the base64 of its sha512."""
    sha = hashlib.sha512()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return "sha512-" + base64.b64encode(sha.digest()).decode("ascii")


def npm_pack_package(name: str, version: str, dest: Path) -> Path:
    """``npm pack <name>@<version>`` into ``dest``; the tarball's path (AssetError if not)."""
    npm = shutil.which("npm")
    if npm is None:
        raise AssetError(
            f"{name} is needed but is not cached at {cache_dir()} and `npm` is not installed. "
            "Install Node.js/npm (Debian: `apt-get install -y npm`) or place the tarball "
            f"there (`npm pack {name}@{version}`)."
        )
    proc = subprocess.run(
        [npm, "pack", f"{name}@{version}", "--pack-destination", str(dest)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    tarball = dest / f"{name}-{version}.tgz"
    if proc.returncode != 0 or not tarball.is_file():
        raise AssetError(
            f"`npm pack {name}@{version}` failed (exit {proc.returncode}); is the npm "
            f"registry reachable?\n{proc.stderr.strip()[-2000:]}"
        )
    return tarball


def npm_pack(dest: Path) -> Path:
    """``npm pack katex@<KATEX_VERSION>`` into ``dest``; the tarball's path."""
    return npm_pack_package("katex", KATEX_VERSION, dest)


def _fetch_verified(tarball: Path) -> None:
    """Fetch the tarball into a private folder, verify it, rename it to ``tarball``."""
    folder = tarball.parent
    for stale in stale_staging(folder, "katex"):
        shutil.rmtree(stale, ignore_errors=True)
    private = staging_folder(folder, "katex")
    try:
        fetched = npm_pack(private)
        got = integrity(fetched)
        if got != KATEX_INTEGRITY:
            raise AssetError(
                f"`npm pack katex@{KATEX_VERSION}` gave a tarball whose sha512 ({got}) is not "
                f"npm's published integrity ({KATEX_INTEGRITY}); refusing to use it (a proxy "
                "or mirror served a different file)"
            )
        os.replace(fetched, tarball)  # atomic: readers see the old file or the whole new one
    finally:
        shutil.rmtree(private, ignore_errors=True)


def katex_tarball() -> Path:
    """The cached, verified ``katex-<version>.tgz``; fetched with ``npm pack`` when missing.

    A cached tarball whose sha512 does not match :data:`KATEX_INTEGRITY` is discarded and
    fetched again (one warning line).
    """
    folder = cache_dir()
    tarball = folder / f"katex-{KATEX_VERSION}.tgz"
    if tarball.is_file():
        if integrity(tarball) == KATEX_INTEGRITY:
            return tarball
        warn(
            f"katex: discarded cached {tarball} (sha512 does not match npm's integrity for "
            f"katex {KATEX_VERSION}); fetching it again"
        )
        with contextlib.suppress(FileNotFoundError):
            tarball.unlink()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _fetch_verified(tarball)
    except OSError as exc:
        raise AssetError(f"cannot store KaTeX in {folder}: {exc.strerror or exc}") from exc
    return tarball


def katex_files() -> dict[str, bytes]:
    """KaTeX's dist/ (script, CSS, woff2 fonts) from the verified tarball: name -> bytes."""
    tarball = katex_tarball()
    files: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name.removeprefix("package/dist/")
            if name == member.name or not member.isfile():
                continue
            if name in KATEX_FILES or (name.startswith("fonts/") and name.endswith(".woff2")):
                source = archive.extractfile(member)
                if source is not None:
                    files[name] = source.read()
    missing = [f for f in KATEX_FILES if f not in files]
    if missing:
        # The tarball verified, so this is a change of layout in a new KaTeX version.
        raise AssetError(
            f"{tarball} (katex {KATEX_VERSION}) lacks dist/{', dist/'.join(missing)}; "
            "site_gen/output/assets.py KATEX_FILES does not match this KaTeX version"
        )
    # Only woff2 fonts are shipped: drop the woff/ttf fallbacks from the stylesheet.
    css = files["katex.min.css"].decode("utf-8")
    css = re.sub(r",url\(fonts/[^)]+\.(?:woff|ttf)\) format\(\"(?:woff|truetype)\"\)", "", css)
    files["katex.min.css"] = css.encode("utf-8")
    return files


def install_katex(dest: Path) -> str:
    """Write :func:`katex_files` into ``dest``; returns the tarball's sha256."""
    files = katex_files()
    for name, data in files.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return hashlib.sha256(katex_tarball().read_bytes()).hexdigest()
