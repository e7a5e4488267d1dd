"""A content-addressed cache of the build's expensive products.

Each product is stored under a key that digests everything it depends on, so a rebuild
reuses what is unchanged and redoes only what a change touches:

* evaluations: the GPU's spec entry, mode, recipe, model version, the model's source and
  the site's grids;
* instantiated formulas: the GPU's spec entry, model version and source;
* charts: the chart's inputs and the plotting code (``site_gen/plots.py``, matplotlib);
* the mkdocs output: every file under ``docs/``, ``mkdocs.yml`` and the tool versions.

A changed GPU entry changes only its own keys. Entries are written atomically (temporary
file, then rename), so a build killed midway leaves no half-written entry.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pickle
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from roofline.formulas import MODEL_VERSION
from roofline.specs import GpuSpec
from site_gen.assets import cache_dir

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: Kept mkdocs outputs (each a whole site); older ones are pruned.
KEPT_SITES = 2


def digest(*parts: Any) -> str:
    """SHA-256 of the JSON form of ``parts`` (sorted keys; unknown types via str)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """Digest of files' root-relative names and bytes, in sorted order."""
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(str(path.relative_to(root)).encode() + b"\0")
        sha.update(hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()


@functools.cache
def source_digest(package: str) -> str:
    """Digest of a package's Python sources and data (roofline's formulas, say)."""
    folder = PACKAGE_ROOT / package
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".py", ".toml", ".j2")]
    return files_digest(files, folder)


def gpu_digest(gpu: GpuSpec) -> str:
    """Digest of one GPU's spec entry (figures and provenance)."""
    return digest(dataclasses.asdict(gpu))


@functools.cache
def model_digest() -> str:
    """The model's identity: its version string and its source."""
    return digest(MODEL_VERSION, source_digest("roofline"))


@functools.cache
def tool_versions() -> tuple[tuple[str, str], ...]:
    """Versions of the tools whose output the cache stores."""
    names = ("mkdocs", "mkdocs-material", "pymdown-extensions", "matplotlib", "sympy", "numpy")
    versions = []
    for name in names:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, "absent"))
    return tuple(versions)


class BuildCache:
    """Stores build products by key under one folder; ``enabled=False`` stores nothing."""

    def __init__(self, root: Path | None = None, enabled: bool = True) -> None:
        env = os.environ.get("ROOFLINE_ATLAS_BUILD_CACHE")
        self.root = root or (Path(env) if env else cache_dir() / "build")
        self.enabled = enabled
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()

    def _path(self, kind: str, key: str, suffix: str) -> Path:
        return self.root / kind / f"{key}{suffix}"

    def get(self, kind: str, key: str) -> Any | None:
        """The pickled object stored as ``kind``/``key``, or None."""
        path = self._path(kind, key, ".pkl")
        if self.enabled and path.is_file():
            try:
                with path.open("rb") as handle:
                    value = pickle.load(handle)
            except (OSError, pickle.UnpicklingError, EOFError):
                value = None  # a damaged entry is a miss
            if value is not None:
                self.hits[kind] += 1
                return value
        self.misses[kind] += 1
        return None

    def put(self, kind: str, key: str, value: Any) -> None:
        """Store ``value`` (pickled) as ``kind``/``key``, atomically."""
        if self.enabled:
            self._write(self._path(kind, key, ".pkl"), pickle.dumps(value, protocol=5))

    def _write(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)

    def site(self, key: str) -> Path | None:
        """The stored mkdocs output for ``key`` (copy it with :func:`copy_site`), or None."""
        path = self.root / "sites" / key
        if self.enabled and (path / ".complete").is_file():
            self.hits["site"] += 1
            os.utime(path)  # most recently used survives pruning
            return path
        self.misses["site"] += 1
        return None

    def put_site(self, key: str, built: Path) -> None:
        """Keep a copy of a built site under ``key``; prune all but the newest few."""
        if not self.enabled:
            return
        sites = self.root / "sites"
        sites.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=sites))
        shutil.copytree(built, staging, dirs_exist_ok=True)
        (staging / ".complete").touch()
        target = sites / key
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        stored = sorted((p for p in sites.iterdir() if not p.name.startswith(".")),
                        key=lambda p: p.stat().st_mtime, reverse=True)  # fmt: skip
        for old in stored[KEPT_SITES:]:
            shutil.rmtree(old, ignore_errors=True)

    def summary(self) -> str:
        """``kind hits/total`` for each kind used, e.g. ``charts 480/480``."""
        kinds = sorted(set(self.hits) | set(self.misses))
        if not self.enabled:
            return "cache off"
        return ", ".join(f"{k} {self.hits[k]}/{self.hits[k] + self.misses[k]}" for k in kinds)


def copy_site(stored: Path, target: Path) -> None:
    """Copy a stored site into ``target`` (without the cache's completion marker)."""
    shutil.copytree(stored, target, ignore=shutil.ignore_patterns(".complete"),
                    dirs_exist_ok=True)  # fmt: skip
