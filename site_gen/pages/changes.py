"""The Changes page: the spec and model history, one entry per commit."""

from __future__ import annotations

from dataclasses import dataclass

from roofline import units
from roofline.analysis.diff_report import fmt_value
from roofline.analysis.history import HistoryEntry
from site_gen.context import GEN, Table
from site_gen.markup import safe
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows.speedup import fmt_m

PAGE = f"{GEN}/changes.md"
#: Speedup moves and break-even shifts shown per entry (the rest are counted).
MAX_SPEEDUP_ROWS = 8
MAX_BREAK_EVEN_SHIFTS = 5


@dataclass(frozen=True)
class Shift:
    """One break-even shift of an entry, formatted."""

    gpu: str
    mode: str
    recipe: str
    kn: int
    old: str
    new: str


@dataclass(frozen=True)
class Entry:
    """One commit of the Changes page: its summary and compact tables of what moved."""

    date: str
    subject: str
    sha: str
    model_changed: bool
    model_version: str | None
    previous_model: str | None
    note: str
    summary: str = ""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    fields: Table | None = None
    flips: Table | None = None
    speedups: Table | None = None
    more_speedups: int = 0
    break_even: tuple[Shift, ...] = ()
    more_break_even: int = 0

    @property
    def tables(self) -> list[Table]:
        """The entry's tables (exported beside the page)."""
        return [t for t in (self.fields, self.flips, self.speedups) if t is not None]


def _best(name: str | None, speedup: float) -> str:
    return f"{name or 'bf16'} ({units.speedup(speedup)})"


def history_entry(entry: HistoryEntry, index: int = 0) -> Entry:
    """The ``index``-th entry (newest first): tables named ``entries-<index>-<what>``."""
    head = dict(
        date=entry.date[:10],
        subject=entry.subject,
        sha=entry.sha[:12],
        model_changed=entry.model_changed,
        model_version=entry.model_version,
        previous_model=entry.previous_model_version,
        note=entry.note,
    )
    diff = entry.diff
    if diff is None:
        return Entry(**head)
    name = f"entries-{index}"
    fields = flips = speedups = None
    if diff.fields:
        fields = Table(
            ("GPU", "field", "old", "new"),
            [(c.gpu, safe.code(c.field), fmt_value(c.old), fmt_value(c.new)) for c in diff.fields],
            name=f"{name}-fields",
        )
    if diff.flips:
        flips = Table(
            ("GPU", "mode", "was", "now"),
            [
                (f.gpu, f.mode, _best(f.old, f.old_speedup), _best(f.new, f.new_speedup))
                for f in diff.flips
            ],
            name=f"{name}-flips",
        )
    moved = [d for d in diff.speedups if not d.new_gpu]
    if moved:
        speedups = Table(
            ("GPU", "mode", "recipe", "shape", "was", "now"),
            [
                (d.gpu, d.mode, d.recipe, d.shape, units.speedup(d.old), units.speedup(d.new))
                for d in moved[:MAX_SPEEDUP_ROWS]
            ],
            name=f"{name}-speedups",
        )
    shifts = tuple(
        Shift(b.gpu, b.mode, b.recipe, b.kn, fmt_m(b.old), fmt_m(b.new))
        for b in diff.break_even[:MAX_BREAK_EVEN_SHIFTS]
    )
    return Entry(
        **head,
        summary=diff.summary(),
        added=diff.added,
        removed=diff.removed,
        fields=fields,
        flips=flips,
        speedups=speedups,
        more_speedups=max(0, len(moved) - MAX_SPEEDUP_ROWS),
        break_even=shifts,
        more_break_even=len(diff.break_even) - len(shifts),
    )


def render(site: SiteInput) -> PageOutput:
    """The Changes page and its tables' exports."""
    history = site.history
    entries = [history_entry(e, i) for i, e in enumerate(history.entries)]
    tables = [t for e in entries for t in e.tables]
    return page(
        PAGE,
        "changes.md.j2",
        tables,
        entries=entries,
        note=history.note,
        spec_path=history.path,
        truncated=history.truncated,
        shallow=history.shallow,
    )
