"""A content-addressed, self-checking cache of the build's expensive products.

Each product is stored under a key that digests everything it depends on, so a rebuild
reuses what is unchanged and redoes only what a change touches:

* evaluations: the GPU's spec entry, mode, recipe, model version, the model's source, the
  site's grids and the tool versions (numpy);
* instantiated formulas: the GPU's spec entry, model version and source, the formula code,
  sympy's version and the site URL (Cite permalinks are baked into them);
* charts: the chart's inputs and the plotting code (``site_gen/plots.py``, matplotlib);
* the mkdocs output: every file mkdocs reads (hand-written docs, ``mkdocs.yml``, the
  generated pages, the charts by their keys), KaTeX's version and installer, the build
  code, the tool versions, the site URL and the build date (``SOURCE_DATE_EPOCH``, else
  today: mkdocs writes it into the sitemap).

Every entry is checked before use. A pickled entry is one header line (format, kind, key,
sha256 and size of the payload) and the pickle; the pickle is loaded only after the header
names the requested kind and key and the payload's size and sha256 match. A stored site
carries a manifest (its key and the sha256 of every file) and is verified file by file as
it is copied out. A damaged, truncated, edited or misplaced entry is a miss: it is
removed, one ``[build] cache: discarded damaged entry ...`` line is printed, and the
product is recomputed. The checksums catch damage and edits, not a hostile user of the
same account (who could rewrite a checksum as easily as an entry).

Entries are written atomically (private temporary file or folder, then rename), so a
build killed midway leaves no half-written entry. Entries live under ``v2/`` of the cache
folder; the unchecked entries of earlier versions are never read.
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
import tempfile
from collections import Counter
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from roofline.formulas import MODEL_VERSION
from roofline.specs import GpuSpec
from site_gen.assets import cache_dir, staging_folder, stale_staging, warn

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: Kept mkdocs outputs (each a whole site); older ones are pruned.
KEPT_SITES = 2
#: Layout version of the cache folder (entries live under ``v<FORMAT>/``).
FORMAT = 2
MAGIC = "roofline-atlas-cache"
#: A header line longer than this is not one of ours.
MAX_HEADER_BYTES = 1024
MANIFEST = ".manifest.json"


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


class DamagedEntry(Exception):
    """A cache entry failed its check; the message says how (e.g. ``checksum mismatch``)."""


def _header(kind: str, key: str, payload: bytes) -> bytes:
    fields = {"format": FORMAT, "kind": kind, "key": key, "size": len(payload),
              "sha256": hashlib.sha256(payload).hexdigest()}  # fmt: skip
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
        raise DamagedEntry(f"truncated: {len(payload)} of {size} bytes"
                           if len(payload) < size else "size mismatch")  # fmt: skip
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
                return value
        self.misses[kind] += 1
        return None

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

    def restore_site(self, key: str, target: Path) -> bool:
        """Copy the stored mkdocs output for ``key`` into ``target`` once it verifies.

        Every file is checked against the stored manifest as it is copied; on any
        mismatch the entry is discarded, ``target`` is emptied and False returned (a miss).
        """
        path = self.entries / "sites" / key
        if not (self.enabled and path.is_dir()):
            self.misses["site"] += 1
            return False
        try:
            _copy_verified(path, target, key)
        except DamagedEntry as exc:
            reason = str(exc)
        except OSError as exc:
            reason = f"unreadable: {exc.strerror or exc}"
        else:
            self.hits["site"] += 1
            with contextlib.suppress(OSError):
                os.utime(path)  # most recently used survives pruning
            return True
        self._discard("sites", key, path, reason)
        _empty_folder(target)
        self.misses["site"] += 1
        return False

    def put_site(self, key: str, built: Path) -> None:
        """Keep a copy of a built site under ``key``; prune all but the newest few."""
        if not self.enabled:
            return
        sites = self.entries / "sites"
        try:
            sites.mkdir(parents=True, exist_ok=True)
            for stale in stale_staging(sites, "site"):
                shutil.rmtree(stale, ignore_errors=True)
            staging = staging_folder(sites, "site")
        except OSError as exc:
            self._cannot_write(sites, exc)
            return
        try:
            files = {}
            for source in _files(built):
                rel = source.relative_to(built).as_posix()
                data = source.read_bytes()
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                files[rel] = hashlib.sha256(data).hexdigest()
            manifest = {"format": FORMAT, "key": key, "files": files}
            (staging / MANIFEST).write_text(json.dumps(manifest, sort_keys=True), "utf-8")
            target = sites / key
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
        except OSError as exc:
            self._cannot_write(sites / key, exc)
            return
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        stored = sorted((p for p in sites.iterdir() if not p.name.startswith(".")),
                        key=lambda p: p.stat().st_mtime, reverse=True)  # fmt: skip
        for old in stored[KEPT_SITES:]:
            shutil.rmtree(old, ignore_errors=True)

    def summary(self) -> str:
        """``kind hits/total`` for each kind used, e.g. ``charts 480/480``."""
        kinds = sorted(set(self.hits) | set(self.misses))
        if not self.enabled:
            return "cache off"
        text = ", ".join(f"{k} {self.hits[k]}/{self.hits[k] + self.misses[k]}" for k in kinds)
        if self.discarded:
            text += f"; {len(self.discarded)} damaged entries discarded"
        return text


def _files(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted; a link or special file is refused."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise DamagedEntry(f"not a plain file: {path.relative_to(folder)}")
        if path.is_file():
            found.append(path)
    return found


def _copy_verified(stored: Path, target: Path, key: str) -> None:
    """Copy a stored site into ``target`` checking each file against the manifest."""
    try:
        manifest = json.loads((stored / MANIFEST).read_text("utf-8"))
        files: dict[str, str] = dict(manifest["files"])
        stored_as = (manifest["format"], manifest["key"])
    except FileNotFoundError as exc:
        raise DamagedEntry("no manifest") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise DamagedEntry("unreadable manifest") from exc
    if stored_as != (FORMAT, key):
        raise DamagedEntry("stored under another key")
    seen = set()
    for source in _files(stored):
        rel = source.relative_to(stored).as_posix()
        if rel == MANIFEST:
            continue
        if rel not in files:
            raise DamagedEntry(f"unexpected file {rel}")
        data = source.read_bytes()
        if hashlib.sha256(data).hexdigest() != files[rel]:
            raise DamagedEntry(f"checksum mismatch in {rel}")
        out = target / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        seen.add(rel)
    missing = sorted(set(files) - seen)
    if missing:
        raise DamagedEntry(f"missing {missing[0]}" + (f" and {len(missing) - 1} more"
                                                      if len(missing) > 1 else ""))  # fmt: skip


def _empty_folder(folder: Path) -> None:
    """Remove everything inside ``folder`` (a staging folder the build made)."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
