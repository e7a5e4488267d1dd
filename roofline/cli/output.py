"""Output files of the CLI: written atomically (never half-written), or stdout."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from roofline.errors import RooflineError

#: The arguments that name input files (spec, shapes, measurement, calibration, preset).
INPUT_ARGS = ("specs", "file", "shapes_file", "measurements", "calibration", "models")


def named_inputs(args: argparse.Namespace) -> list[str]:
    """The input files named on the command line (``diff``'s ``files`` too)."""
    named = [getattr(args, key, None) for key in INPUT_ARGS]
    named += getattr(args, "files", None) or []
    return [str(f) for f in named if f]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # hard links and symlinks too
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def output_path(value: str | None, inputs: Iterable[str] = ()) -> Path | None:
    """The ``-o`` path, refused early when it names a folder or one of ``inputs`` (the
    files the command reads: writing there would overwrite its own input)."""
    if value is None:
        return None
    if not value.strip():
        raise RooflineError("output '' is empty; give a file name, e.g. -o out.csv")
    path = Path(value)
    if value.endswith(("/", os.sep)) or path.is_dir():
        example = os.path.join(value, "out.csv")
        raise RooflineError(
            f"output {value!r} names a folder; give a file name in it, e.g. {example}"
        )
    for source in inputs:
        if _same_file(path, Path(source)):
            raise RooflineError(
                f"output {value!r} is the input file {source!r}; writing it would overwrite "
                "the input, so give another file name"
            )
    return path


def _write_error(path: Path, exc: OSError) -> RooflineError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileExistsError | NotADirectoryError):
        reason = "a part of the path is a file, not a folder"
    return RooflineError(f"cannot write output file {str(path)!r}: {reason}")


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text file written via a temporary file and renamed: never half-written.

    Missing parent folders are created; a symlink's target is replaced, not the link;
    a device or FIFO (``-o /dev/null``, ``/dev/stdout``) is written in place, as a rename
    would replace the device node itself. OSError (a read-only folder, a path through a
    file, a full disk) becomes a RooflineError naming the path; on any failure the
    temporary file is removed and ``path`` is untouched."""
    if path.exists() and not path.is_file():  # stat follows links: /dev/stdout -> a pipe
        with _write_errors(path), path.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        return
    real = Path(os.path.realpath(path))
    with _write_errors(path):
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", dir=real.parent)
    try:
        with _write_errors(path):
            os.chmod(tmp, _file_mode(real))  # mkstemp's 0600 would stick to the result
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                yield handle
            os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _write_errors(path: Path) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise _write_error(path, exc) from None


def _file_mode(path: Path) -> int:
    """The mode for ``path``: the file's own when it exists, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and rename: never half-written."""
    with atomic_writer(path) as handle:
        handle.write(text)


@contextlib.contextmanager
def output(path: Path | None) -> Iterator[TextIO]:
    """``-o FILE`` (atomic) or stdout."""
    if path is None:
        yield sys.stdout
    else:
        with atomic_writer(path) as handle:
            yield handle
