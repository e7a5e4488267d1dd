"""A content-addressed, self-checking cache of the build's expensive products.

Each product is stored under a key that digests everything it depends on, so a rebuild
reuses what is unchanged and redoes only what a change touches:

* evaluations: the GPU's spec entry, mode, recipe, model version, the model's source, the
  site's grids and the tool versions (numpy);
* instantiated formulas: the GPU's spec entry, model version and source, the formula code,
  sympy's version and the site URL (Cite permalinks are baked into them);
* charts: the chart's inputs and the drawing code (``site_gen/charts/draw/``, matplotlib);
* recipe pages (kind ``recipe-pages``): the Markdown, exports and chart jobs of each page
  of one GPU alone (GPU x mode x recipe, dense and grouped; model x GPU), keyed by its
  GPU's entry and calibrated parameters, the page and model code and the bundled data
  besides the specs (``site_gen/keys.py``: a change to one GPU renders its pages only);
* pages (``site_gen/output/mkdocs_cache.py``): each page's rendered body and HTML, keyed by
  what mkdocs makes them from;
* outputs (``site_gen/keys.py``): for a digest of every input of a build, the sha256 of
  every file it wrote into the site folder and ``docs/generated``; a rebuild with the
  same inputs whose folders still match has nothing to do.

Every entry is checked before use. An entry is one header line (format, kind, key,
sha256 and size of the payload) and a pickle; the pickle is loaded only after the header
names the requested kind and key and the payload's size and sha256 match. A damaged,
truncated, edited or misplaced entry is a miss: it is removed, one
``[build] cache: discarded damaged entry ...`` line is printed, and the product is
recomputed. The checksums catch damage and edits, not a hostile user of the same
account (who could rewrite a checksum as easily as an entry).

Entries are written atomically (private temporary file, then rename), so a build killed
midway leaves no half-written entry. Entries live under ``v3/`` of the cache folder; the
entries of earlier versions (``v2/`` held whole sites) are never read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from roofline.model.build import MODEL_VERSION
from roofline.specs import GpuSpec

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: Layout version of the cache folder (entries live under ``v<FORMAT>/``).
FORMAT = 3
MAGIC = "roofline-atlas-cache"
#: A header line longer than this is not one of ours.
MAX_HEADER_BYTES = 1024
#: The environment variable that caps the build cache's entries, in MiB.
MAX_MB_ENV = "ROOFLINE_ATLAS_BUILD_CACHE_MAX_MB"
#: The cap without it: about a dozen cold builds of the bundled database (each writes about
#: 170 MB of entries), so switching between a few spec files or branches stays cached.
DEFAULT_MAX_MB = 2048


def cache_dir() -> Path:
    """Where downloaded packages are kept between builds."""
    root = os.environ.get("ROOFLINE_ATLAS_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "roofline-atlas"


def max_cache_bytes() -> int:
    """The build cache's cap in bytes: ``$ROOFLINE_ATLAS_BUILD_CACHE_MAX_MB`` (a whole
    number of MiB, at least 1) or :data:`DEFAULT_MAX_MB`; ValueError naming the variable
    and the expected form otherwise."""
    text = os.environ.get(MAX_MB_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_MB * 2**20
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"${MAX_MB_ENV}: expected a whole number of MiB (>= 1), got {text!r}")
    return int(text) * 2**20


def warn(message: str) -> None:
    """Print one ``[build]`` warning line on stderr."""
    print(f"[build] {message}", file=sys.stderr, flush=True)


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
def source_digest(package: str, skip: tuple[str, ...] = ()) -> str:
    """Digest of a package's sources, templates and data (roofline's formulas, say),
    without the top-level folders named in ``skip``."""
    folder = PACKAGE_ROOT / package
    files = [
        p
        for p in folder.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not p.name.startswith(".")
        and p.relative_to(folder).parts[0] not in skip
    ]
    return files_digest(files, folder)


#: id -> (GpuSpec, its digest): a gather keys every record by its GPU's entry (about
#: 1,600 keys a build), and converting an entry to a dict is most of a key's time. A
#: GpuSpec is frozen and its figures are never changed after loading; the entry is kept
#: beside its digest, so an id reused by a new object is not mistaken for the old one.
_GPU_DIGESTS: dict[int, tuple[GpuSpec, str]] = {}


def gpu_digest(gpu: GpuSpec) -> str:
    """Digest of one GPU's spec entry (figures and provenance)."""
    known = _GPU_DIGESTS.get(id(gpu))
    if known is not None and known[0] is gpu:
        return known[1]
    value = digest(dataclasses.asdict(gpu))
    _GPU_DIGESTS[id(gpu)] = (gpu, value)
    return value


@functools.cache
def model_digest() -> str:
    """The model's identity: its version string and its source.

    Not the bundled spec database (``roofline/data/``): each product's key names the
    spec entries it reads (:func:`gpu_digest`), so editing one GPU there invalidates
    that GPU's products only.
    """
    return digest(MODEL_VERSION, source_digest("roofline", skip=("data",)))


@functools.cache
def tool_versions() -> tuple[tuple[str, str], ...]:
    """Versions of the tools whose output the cache stores."""
    names = (
        "mkdocs",
        "mkdocs-material",
        "mkdocstrings",
        "mkdocstrings-python",
        "griffelib",
        "pymdown-extensions",
        "markdown",
        "jinja2",
        "pygments",
        "matplotlib",
        "contourpy",  # the heatmaps' contours
        "pillow",  # the heatmaps' cells (PNG)
        "sympy",
        "numpy",
    )
    versions = []
    for name in names:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, "absent"))
    return tuple(versions)


class DamagedEntry(Exception):
    """A cache entry failed its check; the message says how (e.g. ``checksum mismatch``)."""


def _header(kind: str, key: str, payload: bytes) -> bytes:
    fields = {
        "format": FORMAT,
        "kind": kind,
        "key": key,
        "size": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }
    return f"{MAGIC} {json.dumps(fields, sort_keys=True)}\n".encode()


def _verified_payload(data: bytes, kind: str, key: str) -> bytes:
    """The payload of an entry read as ``kind``/``key``; raises DamagedEntry."""
    line, newline, payload = data[: MAX_HEADER_BYTES + 1].partition(b"\n")
    if not newline or not line.startswith(MAGIC.encode() + b" "):
        raise DamagedEntry("no valid header")
    try:
        fields = json.loads(line[len(MAGIC) + 1 :])
        size, sha = int(fields["size"]), str(fields["sha256"])
        stored_as = (fields["format"], fields["kind"], fields["key"])
    except (ValueError, KeyError, TypeError) as exc:
        raise DamagedEntry("no valid header") from exc
    if stored_as != (FORMAT, kind, key):
        raise DamagedEntry("stored under another key")
    payload = data[len(line) + 1 :]
    if len(payload) != size:
        raise DamagedEntry(
            f"truncated: {len(payload)} of {size} bytes" if len(payload) < size else "size mismatch"
        )
    if hashlib.sha256(payload).hexdigest() != sha:
        raise DamagedEntry("checksum mismatch")
    return payload


class BuildCache:
    """Stores build products by key under one folder; ``enabled=False`` stores nothing."""

    def __init__(self, root: Path | None = None, enabled: bool = True) -> None:
        env = os.environ.get("ROOFLINE_ATLAS_BUILD_CACHE")
        #: The cache folder the user names (the build never writes a site into it).
        self.root = Path(root or (Path(env) if env else cache_dir() / "build"))
        self.enabled = enabled
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self.discarded: list[str] = []
        self._write_failed = False

    @property
    def entries(self) -> Path:
        """Where this version's entries live."""
        return self.root / f"v{FORMAT}"

    def _path(self, kind: str, key: str, suffix: str) -> Path:
        return self.entries / kind / f"{key}{suffix}"

    def _discard(self, kind: str, key: str, path: Path, reason: str) -> None:
        """Remove a damaged entry (a file, or a stored site's folder) and say so once."""
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        self.discarded.append(f"{kind}/{key}")
        warn(f"cache: discarded damaged entry {kind}/{key[:12]}... ({reason}); recomputing")

    def get(self, kind: str, key: str) -> Any | None:
        """The object stored as ``kind``/``key`` once its checksum verifies, or None."""
        path = self._path(kind, key, ".pkl")
        if self.enabled and path.is_file():
            try:
                payload = _verified_payload(path.read_bytes(), kind, key)
                value = pickle.loads(payload)  # only after the checksum verified
            except DamagedEntry as exc:
                self._discard(kind, key, path, str(exc))
            except OSError as exc:
                self._discard(kind, key, path, f"unreadable: {exc.strerror or exc}")
            except Exception as exc:  # a verified pickle of a class that changed since
                self._discard(kind, key, path, f"does not load: {type(exc).__name__}")
            else:
                self.hits[kind] += 1
                _touch(path)  # recently used: the last to go when the cache is trimmed
                return value
        self.misses[kind] += 1
        return None

    def holds(self, kind: str, key: str) -> bool:
        """Whether an entry is stored as ``kind``/``key``, unread: a hint for work that
        can be skipped because :meth:`get`, which verifies it, will find it."""
        return self.enabled and self._path(kind, key, ".pkl").is_file()

    def put(self, kind: str, key: str, value: Any) -> None:
        """Store ``value`` (pickled, behind a checksummed header) as ``kind``/``key``."""
        if self.enabled:
            payload = pickle.dumps(value, protocol=5)
            self._write(self._path(kind, key, ".pkl"), _header(kind, key, payload) + payload)

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            self._cannot_write(path, exc)

    def _cannot_write(self, path: Path, exc: OSError) -> None:
        """The cache is an optimisation: a full disk or read-only folder only warns (once)."""
        if not self._write_failed:
            self._write_failed = True
            warn(f"cache: cannot write {path} ({exc.strerror or exc}); continuing uncached")

    def prune(self, kind: str, keep: int, protect: set[str]) -> None:
        """Delete the oldest entries of ``kind`` beyond ``keep``, never one in ``protect``."""
        if not self.enabled:
            return
        try:
            entries = [(p.stat().st_mtime_ns, p) for p in (self.entries / kind).glob("*.pkl")]
        except OSError:
            return
        if len(entries) <= keep:
            return
        entries.sort(reverse=True)
        for _, path in entries[keep:]:
            if path.stem not in protect:
                with contextlib.suppress(OSError):
                    path.unlink()

    def trim(self, max_bytes: int, since_ns: int) -> tuple[int, int]:
        """Delete the least recently used entries, of every kind, until the entries take
        at most ``max_bytes``; never one written or read since ``since_ns`` (this build's:
        reading an entry marks it used, in whichever process reads it). Only entry files
        of this format version are looked at (not the installed tool's work roots, nor
        another version's folder). Returns (entries deleted, bytes freed)."""
        if not self.enabled:
            return 0, 0
        entries: list[tuple[int, int, Path]] = []  # (last used, bytes, path)
        for kind in _subfolders(self.entries):
            with contextlib.suppress(OSError), os.scandir(kind) as found:
                for entry in found:
                    if entry.name.endswith(".pkl") and entry.is_file(follow_symlinks=False):
                        with contextlib.suppress(OSError):
                            stat = entry.stat(follow_symlinks=False)
                            entries.append((stat.st_mtime_ns, stat.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in entries)
        deleted = freed = 0
        for used_ns, size, path in sorted(entries):
            if total <= max_bytes or used_ns >= since_ns:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                deleted, freed = deleted + 1, freed + size
        return deleted, freed

    def trim_to(self, max_bytes: int, since_ns: int) -> None:
        """:meth:`trim` after a build (``since_ns``: when it started), saying what went."""
        deleted, freed = self.trim(max_bytes, since_ns)
        if deleted:
            print(
                f"[build] cache: {deleted} least recently used entries removed "
                f"({freed / 2**20:.0f} MiB) to stay under {max_bytes / 2**20:.0f} MiB "
                f"(${MAX_MB_ENV})",
                flush=True,
            )

    def summary(self) -> str:
        """``kind hits/total`` for each kind used, e.g. ``charts 480/480``."""
        kinds = sorted(set(self.hits) | set(self.misses))
        if not self.enabled:
            return "cache off"
        text = ", ".join(f"{k} {self.hits[k]}/{self.hits[k] + self.misses[k]}" for k in kinds)
        if self.discarded:
            text += f"; {len(self.discarded)} damaged entries discarded"
        return text


def _touch(path: Path) -> None:
    """Mark ``path`` used now (its modification time: what :meth:`BuildCache.trim` and
    the per-kind prunes order by); a cache folder that is read-only stays as it is."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _subfolders(folder: Path) -> list[Path]:
    """The folders directly in ``folder`` (none if it is missing), not through links."""
    try:
        with os.scandir(folder) as found:
            return [Path(e.path) for e in found if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
