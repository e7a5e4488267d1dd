"""Writing refit values into a calibration file's text, keeping every comment and note.

``roofline calibrate --gpu NAME -o FILE`` and ``tools/refit_calibration.py`` both change
only the ``value =`` line (and, for a refit on other measurements, the ``sets =`` line) of
each refit entry, so a written file differs from its input in exactly those lines.
"""

from __future__ import annotations

import re

from roofline.errors import RooflineError


def _entry_start(text: str, gpu: str | None, key: str) -> int:
    if gpu is None:
        start = re.search(re.escape(f"[parameters.{key}]"), text)
    else:
        block = re.search(r'\[\[gpu\]\]\nname = "' + re.escape(gpu) + '"', text)
        if block is None:
            raise RooflineError(f"calibration file: no [[gpu]] table for {gpu!r}")
        start = re.compile(re.escape(f'[gpu.values."{key}"]')).search(text, block.end())
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
        ids = ", ".join(f'"{s}"' for s in sets)
        text = _replace_line(text, _entry_start(text, gpu, key), "sets", f"sets = [{ids}]")
    return text
