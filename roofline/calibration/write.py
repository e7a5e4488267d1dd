"""Writing refit values into a calibration file's text, keeping every comment and note.

``roofline calibrate --gpu NAME -o FILE`` and ``tools/refit_calibration.py`` both change
only the ``value =`` line (and, for a refit on other measurements, the ``sets =`` line) of
each refit entry, so a written file differs from its input in exactly those lines. A GPU
refit on its owner's measurements may also gain entries it had none of
(:func:`add_entry`, at the end of its ``[[gpu]]`` table, appended when missing) and the
cross-validated error of its fit (:func:`set_cv`).
"""

from __future__ import annotations

import re

from roofline.errors import RooflineError
from roofline.specs.text import toml_string


def _entry_start(text: str, gpu: str | None, key: str) -> int:
    if gpu is None:
        start = re.search(re.escape(f"[parameters.{key}]"), text)
    else:
        block = _gpu_block(text, gpu)
        if block is None:
            raise RooflineError(f"calibration file: no [[gpu]] table for {gpu!r}")
        start = re.compile(re.escape(f'[gpu.values."{key}"]')).search(text, *block)
    if start is None:
        raise RooflineError(f"calibration file: no entry {key!r} for {gpu or 'all GPUs'}")
    return start.end()


def _replace_line(text: str, start: int, field: str, line: str) -> str:
    """``text`` with the first ``field = ...`` line after ``start`` (and before the next
    table) replaced by ``line``."""
    end = text.find("\n[", start)
    end = len(text) if end < 0 else end
    found = re.compile(rf"^{field} = [^\n]+", re.MULTILINE).search(text, start, end)
    if found is None:
        raise RooflineError(f"calibration file: an entry without {field} (at offset {start})")
    return text[: found.start()] + line + text[found.end() :]


def rewrite_value(
    text: str, gpu: str | None, key: str, value: float, sets: list[str] | None = None
) -> str:
    """``text`` with the ``value =`` line of (gpu, key) set to ``value`` (5 significant
    digits) and, when ``sets`` is given, its ``sets =`` line set to those ids."""
    start = _entry_start(text, gpu, key)
    text = _replace_line(text, start, "value", f"value = {value:.5g}")
    if sets is not None:
        text = _replace_line(text, _entry_start(text, gpu, key), "sets", f"sets = {_ids(sets)}")
    return text


def _ids(sets: list[str]) -> str:
    """A TOML array of set ids."""
    return "[" + ", ".join(toml_string(s) for s in sets) + "]"


def _gpu_block(text: str, gpu: str) -> tuple[int, int] | None:
    """(start, end) of the ``[[gpu]]`` table of ``gpu`` with its sub-tables, or None."""
    block = re.search(r"^\[\[gpu\]\]\nname = " + re.escape(toml_string(gpu)) + "$", text, re.M)
    if block is None:
        return None
    following = re.compile(r"^\[\[gpu\]\]$", re.M).search(text, block.end())
    return block.start(), following.start() if following else len(text)


def _insert_in_block(text: str, gpu: str, tables: str) -> str:
    """``text`` with ``tables`` (TOML, ending in a blank line) at the end of ``gpu``'s
    ``[[gpu]]`` table, which is appended first when the file has none."""
    found = _gpu_block(text, gpu)
    if found is None:
        text = text.rstrip("\n") + f"\n\n[[gpu]]\nname = {toml_string(gpu)}\n\n"
        found = _gpu_block(text, gpu)
        assert found is not None
    end = found[1]
    head, tail = text[:end].rstrip("\n") + "\n\n", text[end:]
    return head + tables + tail


def add_entry(
    text: str, gpu: str, key: str, value: float, sets: list[str], note: str, basis: str = "fitted"
) -> str:
    """``text`` with a new ``[gpu.values."key"]`` entry for ``gpu`` (its ``[[gpu]]`` table
    appended when the file has none)."""
    table = (
        f'[gpu.values."{key}"]\nvalue = {value:.5g}\nbasis = {toml_string(basis)}\n'
        f"sets = {_ids(sets)}\nnote = {toml_string(note)}\n\n"
    )
    return _insert_in_block(text, gpu, table)


def set_cv(
    text: str,
    gpu: str,
    mean_error: float,
    points: int,
    shapes: int,
    method: str,
    sets: list[str],
) -> str:
    """``text`` with ``gpu``'s ``[gpu.cv]`` table (the cross-validated error of its own
    fit) replaced by, or set to, the one given."""
    found = _gpu_block(text, gpu)
    if found is not None:  # drop the table the file has
        start, end = found
        old = re.compile(r"^\[gpu\.cv\]\n(?:(?!\[)[^\n]*\n)*", re.M).search(text, start, end)
        if old is not None:
            text = text[: old.start()] + text[old.end() :]
    table = (
        f"[gpu.cv]\nmean_error = {mean_error:.4g}\npoints = {points}\nshapes = {shapes}\n"
        f"method = {toml_string(method)}\nsets = {_ids(sets)}\n\n"
    )
    return _insert_in_block(text, gpu, table)
