"""KaTeX for the site: fetched from the npm registry at build time, never committed.

``npm pack katex@<KATEX_VERSION>`` downloads the tarball into a cache outside the repo
(``$ROOFLINE_ATLAS_CACHE`` or ``~/.cache/roofline-atlas``); its ``dist/`` (the script,
stylesheet and fonts) is copied into the generated docs, so pages render math with no
network at view time. The build fails with a clear message when the assets cannot be
obtained.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

KATEX_VERSION = "0.16.22"

KATEX_FILES = ("katex.min.js", "katex.min.css")


class AssetError(RuntimeError):
    """The math assets could not be obtained."""


def cache_dir() -> Path:
    """Where downloaded packages are kept between builds."""
    root = os.environ.get("ROOFLINE_ATLAS_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "roofline-atlas"


def katex_tarball() -> Path:
    """The cached ``katex-<version>.tgz``, fetched with ``npm pack`` when missing."""
    folder = cache_dir()
    tarball = folder / f"katex-{KATEX_VERSION}.tgz"
    if tarball.is_file():
        return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise AssetError(
            "KaTeX is needed to render formulas but is not cached at "
            f"{tarball} and `npm` is not installed. Install Node.js/npm (Debian: "
            "`apt-get install -y npm`) or place the tarball there "
            f"(`npm pack katex@{KATEX_VERSION}`)."
        )
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [npm, "pack", f"katex@{KATEX_VERSION}", "--pack-destination", str(folder)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    if proc.returncode != 0 or not tarball.is_file():
        raise AssetError(
            f"`npm pack katex@{KATEX_VERSION}` failed (exit {proc.returncode}); is the npm "
            f"registry reachable?\n{proc.stderr.strip()[-2000:]}"
        )
    return tarball


def install_katex(dest: Path) -> str:
    """Extract KaTeX's dist/ (script, CSS, woff2 fonts) into ``dest``; returns its sha256."""
    tarball = katex_tarball()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            name = member.name.removeprefix("package/dist/")
            if name == member.name or not member.isfile():
                continue
            if name in KATEX_FILES or (name.startswith("fonts/") and name.endswith(".woff2")):
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                if source is None:
                    continue
                target.write_bytes(source.read())
    missing = [f for f in KATEX_FILES if not (dest / f).is_file()]
    if missing:
        raise AssetError(f"{tarball} lacks {', '.join(missing)}; delete it and rebuild")
    # Only woff2 fonts are shipped: drop the woff/ttf fallbacks from the stylesheet.
    css = dest / "katex.min.css"
    text = css.read_text("utf-8")
    import re

    text = re.sub(r",url\(fonts/[^)]+\.(?:woff|ttf)\) format\(\"(?:woff|truetype)\"\)", "", text)
    css.write_text(text, "utf-8")
    return digest
