"""Which spec entry a GPU name or ``torch.cuda.get_device_name()`` string means.

A query matches an entry in one of three ways (:data:`MatchHow`):

- ``"name"``: it is the entry's name (any case, surrounding whitespace ignored);
- ``"device_prefix"``: it starts with one of the entry's ``device_prefixes``, strings the
  database lists because that device reports them;
- ``"name_prefix"``: it only starts with the entry's *name* and is longer, e.g. "NVIDIA
  GeForce RTX 4090 Laptop GPU" -> "NVIDIA GeForce RTX 4090": a variant the database does
  not list, whose figures may differ. This is a *fallback*: callers warn
  (:class:`VariantFallbackWarning`, or a ``warning:`` line in the CLI), never stay silent.

The longest matching prefix wins, whichever kind it is; a tie between entries is an
ambiguity error, and no match an unknown-name error naming the closest entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from roofline.errors import UnknownNameError, nearest

if TYPE_CHECKING:
    from roofline.specs.model import GpuSpec

MatchHow = Literal["name", "device_prefix", "name_prefix"]

#: Characters of a query a message quotes; longer ones are cut (a device string is short,
#: anything longer is a mistake or an attack, and should not flood a terminal).
MAX_QUOTED_QUERY = 120


class VariantFallbackWarning(UserWarning):
    """A device string matched an entry only by the entry's name: an unlisted variant whose
    figures may differ (e.g. a laptop part, or a PCIe card matched to an SXM entry)."""


def quoted(text: str, limit: int = MAX_QUOTED_QUERY) -> str:
    """``text`` quoted by ``repr`` (control characters, newlines and invisible characters
    escaped, so the quote stays on one line) and cut after ``limit`` characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


@dataclass(frozen=True)
class GpuMatch:
    """The entry a query resolved to, how it matched and the name or prefix it matched by."""

    gpu: GpuSpec
    how: MatchHow
    prefix: str
    query: str = ""

    @property
    def fallback(self) -> bool:
        """True when the query only starts with the entry's name (an unlisted variant)."""
        return self.how == "name_prefix"

    @property
    def warning(self) -> str | None:
        """One line saying which entry stands in for the unlisted variant (None unless
        :attr:`fallback`)."""
        if not self.fallback:
            return None
        return (
            f"device {quoted(self.query)} is not in the spec database; using "
            f"{quoted(self.gpu.name)}, whose name it starts with: figures may differ for "
            "this variant (add an entry or device_prefixes, or pass --gpu with an exact name)"
        )


def match_gpu(gpus: Iterable[GpuSpec], query: str, origin: str = "the spec database") -> GpuMatch:
    """The entry of ``gpus`` that ``query`` names: exact name, else the longest name or
    device prefix it starts with. UnknownNameError when it is ambiguous or matches nothing
    (``origin`` names the database in that message)."""
    entries = list(gpus)
    lowered = query.strip().lower()
    for gpu in entries:
        if gpu.name.strip() and gpu.name.lower() == lowered:
            return GpuMatch(gpu, "name", gpu.name, query)
    best: dict[str, tuple[int, MatchHow, str, GpuSpec]] = {}
    for gpu in entries:
        for how, prefix in _prefixes(gpu):
            # An empty prefix would match every query, typos included; the lint refuses
            # them, and this guards databases built without it.
            if not prefix.strip() or not lowered.startswith(prefix.lower()):
                continue
            # Longer wins; at equal length a listed device prefix wins over the name, so
            # an author who lists the name as a device prefix has vouched for its variants.
            rank = (len(prefix), how == "device_prefix")
            held = best.get(gpu.name)
            if held is None or rank > (held[0], held[1] == "device_prefix"):
                best[gpu.name] = (len(prefix), how, prefix, gpu)
    if best:
        length = max(length for length, *_ in best.values())
        winners = sorted(name for name, (n, *_) in best.items() if n == length)
        if len(winners) == 1:
            _, how, prefix, gpu = best[winners[0]]
            return GpuMatch(gpu, how, prefix, query)
        raise UnknownNameError(
            f"GPU name {quoted(query)} is ambiguous: it matches {', '.join(winners)}; "
            "pass one of those names exactly"
        )
    names = [gpu.name for gpu in entries]
    message = f"unknown GPU {quoted(query)} in {origin}; known: {', '.join(names)}"
    guess = nearest(query, names)
    if guess:
        message += f". Closest match: {guess!r}"
    raise UnknownNameError(message)


def _prefixes(gpu: GpuSpec) -> list[tuple[MatchHow, str]]:
    """The prefixes ``gpu`` matches by: its listed device prefixes, then its name."""
    return [*(("device_prefix", p) for p in gpu.device_prefixes), ("name_prefix", gpu.name)]
