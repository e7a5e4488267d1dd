"""Loading a measurement file: every problem of a file collected, then the sets built.

The rules mirror the spec lint's (:mod:`roofline.specs.lint`): unknown and missing keys,
enum values, text without control characters (nor markup in names and labels), http(s)
source URLs. On top, each set must be comparable with the model: its GPU is in the spec
database, its recipe is modelled in its mode and computable on that GPU, its terms exist
in that model, and every shape is valid for the recipe.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from roofline.capability import Support, classify
from roofline.datafiles.core import bundled_text, is_subnormal
from roofline.errors import UnknownNameError, nearest
from roofline.measurements.fields import FieldLinter
from roofline.measurements.model import (
    MeasuredQuantity,
    MeasurementDatabase,
    MeasurementSet,
    SetRole,
    Source,
    TimedRegion,
)
from roofline.measurements.rules import (
    ENUM_FIELDS,
    HARNESS_FIELDS,
    MAX_GROUPS,
    MAX_ID_LENGTH,
    MAX_POINTS_PER_FILE,
    MAX_SETS,
    MAX_TERMS,
    REGION_MODES,
    REGION_QUANTITIES,
    REGION_TERM_PREFIXES,
    RESERVED_IDS,
    SCHEMA_VERSION,
    SET_KEYS,
    SLUG,
    SOURCE_RULE,
    TEXT_LIMITS,
    TOP_KEYS,
)
from roofline.model.build import build_model
from roofline.model.terms import LOWP_SIDE
from roofline.recipes import Mode, Recipe, get_recipe
from roofline.specs import SpecDatabase, load_specs
from roofline.specs.text import describe, escape_controls, is_finite

BUNDLED_NAME = "bundled measurements (roofline/data/measurements.toml)"


class _Linter(FieldLinter):
    """Collects every problem of one file; builds the sets that have none."""

    def __init__(self, file: str, specs: SpecDatabase) -> None:
        super().__init__(file)
        self.specs = specs

    def lint_document(self, doc: dict[str, Any]) -> list[Any]:
        """The set entries of a parsed file, top-level keys linted."""
        self.keys(None, "", doc, TOP_KEYS)
        version = doc.get("schema_version", SCHEMA_VERSION)
        if type(version) is not int or version != SCHEMA_VERSION:
            self.error(None, "schema_version", f"the integer {SCHEMA_VERSION}", describe(version))
        sets = doc.get("set", [])
        if not isinstance(sets, list) or not all(isinstance(s, dict) for s in sets):
            self.error(None, "set", "an array of [[set]] tables", describe(sets))
            return []
        if "set" in doc and not sets:
            self.error(None, "set", "at least one [[set]] table", "an empty array")
        return sets if self._within_limits(sets) else []

    def _within_limits(self, sets: list[dict[str, Any]]) -> bool:
        """Sets and points per file within the limits (counted before any set is linted:
        a fit costs tens of milliseconds per point)."""
        if len(sets) > MAX_SETS:
            self.error(None, "set", f"at most {MAX_SETS} [[set]] tables", f"{len(sets)} tables")
            return False
        points = sum(len(s["points"]) for s in sets if isinstance(s.get("points"), list))
        if points > MAX_POINTS_PER_FILE:
            expected = f"at most {MAX_POINTS_PER_FILE} [[set.points]] tables in a file"
            self.error(None, "set", expected, f"{points} tables")
            return False
        return True

    def lint_set(self, index: int, entry: dict[str, Any]) -> MeasurementSet | None:
        """The MeasurementSet of one entry, or None when it has errors (all recorded)."""
        where = _label(entry.get("id"), index)
        self.set_index = index
        before = self.count()
        self.keys(where, "", entry, SET_KEYS)
        fields = self._plain_fields(where, entry)
        mode, region, quantity, role = (
            self.choice(where, key, entry[key], kind) if key in entry else None
            for key, kind in ENUM_FIELDS
        )
        timer, l2, library = (
            self.choice(where, key, entry[key], kind) if key in entry else kind("unknown")
            for key, kind in HARNESS_FIELDS
        )
        fusion = entry.get("fusion")
        if "fusion" in entry and not isinstance(fusion, bool):
            self.error(where, "fusion", "true or false", describe(fusion))
        recipe = self._recipe(where, entry.get("recipe"), mode) if "recipe" in entry else None
        if recipe is not None and isinstance(fields.get("gpu"), str):
            self._gpu_runs(where, fields["gpu"], recipe, mode)
        self._region_rules(where, region, quantity, mode, role)
        error_bound = self._max_mean_error(where, entry, role)
        groups = self._groups(where, entry["groups"]) if "groups" in entry else None
        terms = self._terms(
            where, entry.get("terms", []), quantity, mode, recipe, fusion, groups is not None
        )
        self._region_terms(where, region, terms, fusion)
        side = entry.get("side_kernels", [])
        side_kernels = self.side_kernels(where, side, quantity, groups is not None)
        source = self._source(where, entry.get("source")) if "source" in entry else None
        points = self._points(where, entry["points"], recipe, quantity) if "points" in entry else ()
        if self.count() > before:
            return None
        return MeasurementSet(
            id=fields["id"],
            title=fields["title"],
            gpu=fields["gpu"],
            mode=mode,
            recipe=recipe.name,
            fusion=fusion,
            timed_region=region,
            quantity=quantity,
            terms=terms,
            role=role,
            max_mean_error=error_bound,
            software=fields["software"],
            command=fields.get("command", ""),
            notes=fields.get("notes", ""),
            source=source,
            points=points,
            groups=groups,
            timer=timer,
            l2=l2,
            library=library,
            side_kernels=side_kernels,
        )

    def _groups(self, where: str, value: Any) -> int | None:
        """The expert count of a grouped set: an integer from 1 to MAX_GROUPS."""
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_GROUPS:
            self.error(where, "groups", f"an integer from 1 to {MAX_GROUPS}", describe(value))
            return None
        return value

    def _plain_fields(self, where: str, entry: dict[str, Any]) -> dict[str, Any]:
        """id, title, gpu, software, command (plain text) and notes (markup allowed)."""
        fields: dict[str, Any] = {}
        if "id" in entry:
            fields["id"] = self._id(where, entry["id"])
        for field in ("title", "gpu", "software", "command", "notes"):
            if field in entry:
                limit = TEXT_LIMITS.get(field, MAX_ID_LENGTH)
                plain = field != "notes"
                fields[field] = self.text(where, field, entry[field], plain, limit)
        gpu = fields.get("gpu")
        if gpu is not None and gpu not in self.specs:
            guess = nearest(gpu, list(self.specs))
            hint = f"did you mean {guess!r}?" if guess else ""
            self.error(where, "gpu", f"a GPU name in {self.specs.origin}", describe(gpu), hint)
        return fields

    def _id(self, where: str, value: Any) -> str | None:
        if value in RESERVED_IDS:
            expected = "an id that is not the anchor of a Validation page heading"
            self.error(where, "id", expected, describe(value), "prefix it, e.g. 'set-overall'")
            return None
        if isinstance(value, str) and len(value) <= MAX_ID_LENGTH and SLUG.fullmatch(value):
            return value
        expected = f"a slug of a-z, 0-9 and single inner dashes, at most {MAX_ID_LENGTH} characters"
        self.error(where, "id", expected, describe(value))
        return None

    def _recipe(self, where: str, value: Any, mode: Mode | None) -> Recipe | None:
        if not isinstance(value, str):
            self.error(where, "recipe", "a recipe registry name", describe(value))
            return None
        try:
            recipe = get_recipe(value, mode)
        except UnknownNameError as exc:
            expected = f"a recipe modelled in {mode}" if mode else "a recipe registry name"
            self.error(where, "recipe", expected, describe(value), escape_controls(str(exc)))
            return None
        if recipe.name != value:
            expected = "the registry name, not an alias"
            self.error(where, "recipe", expected, describe(value), f"use {recipe.name!r}")
            return None
        return recipe

    def _gpu_runs(self, where: str, gpu: str, recipe: Recipe, mode: Mode | None) -> None:
        spec = self.specs.get(gpu)
        if spec is None:
            return  # reported by _plain_fields
        verdict = classify(spec, recipe, mode)
        if verdict.support is Support.IMPOSSIBLE:
            expected = "a GPU whose spec has the peaks the recipe needs"
            self.error(where, "gpu", expected, describe(gpu), verdict.reason)

    def _region_rules(
        self,
        where: str,
        region: TimedRegion | None,
        quantity: MeasuredQuantity | None,
        mode: Mode | None,
        role: SetRole | None,
    ) -> None:
        """Which quantities, modes and roles a timed region allows."""
        if region is None:
            return
        allowed = REGION_QUANTITIES[region]
        if quantity is not None and quantity not in allowed:
            expected = f"for timed_region {region}: {', '.join(allowed)}"
            self.error(where, "quantity", expected, describe(quantity.value))
        needed_mode = REGION_MODES.get(region)
        if mode is not None and needed_mode is not None and mode is not needed_mode:
            expected = f"{needed_mode} (timed_region {region} exists only there)"
            self.error(where, "mode", expected, describe(mode.value))
        if region is TimedRegion.END_TO_END and role is not None and role is not SetRole.CONTEXT:
            hint = "the model has no attention or communication terms, so it cannot be scored there"
            self.error(where, "role", "context for an end_to_end set", describe(role.value), hint)

    def _region_terms(
        self, where: str, region: TimedRegion | None, terms: tuple[str, ...], fusion: Any
    ) -> None:
        """A timed cast kernel is compared with cast terms, unfused; GEMMs with GEMM terms."""
        prefixes = REGION_TERM_PREFIXES.get(region) if region is not None else None
        for index, term in enumerate(terms):
            if prefixes and not term.startswith(prefixes):
                expected = f"for timed_region {region}: a term starting {' or '.join(prefixes)}"
                self.error(where, f"terms[{index}]", expected, describe(term))
        if region is TimedRegion.CAST_KERNEL and fusion is True:
            hint = "a kernel timed alone reads its whole input; fusion removes that read"
            self.error(where, "fusion", "false for a cast_kernel set", "true", hint)

    def _max_mean_error(self, where: str, entry: dict[str, Any], role: SetRole | None) -> Any:
        value = entry.get("max_mean_error")
        if role is SetRole.CONTEXT:
            if "max_mean_error" in entry:
                self.error(where, "max_mean_error", "no value for a context set", describe(value))
            return None
        if role is not None and "max_mean_error" not in entry:
            expected = f"a value for a {role} set (the key is required)"
            self.error(where, "max_mean_error", expected, "nothing")
        elif "max_mean_error" in entry and not (
            is_finite(value) and 0 < value <= 1 and not is_subnormal(value)
        ):
            expected = "a number in (0, 1] (mean relative error, 0.15 = 15%)"
            self.error(where, "max_mean_error", expected, describe(value))
        return float(value) if is_finite(value) else None

    def _terms(
        self,
        where: str,
        value: Any,
        quantity: MeasuredQuantity | None,
        mode: Mode | None,
        recipe: Recipe | None,
        fusion: Any,
        grouped: bool = False,
    ) -> tuple[str, ...]:
        """The model term keys a time_us set sums, or the low-precision terms a speedup
        set of timed_region gemm_quantize times (a subset of the region's, e.g. a static
        cast without its amax kernel); none for the other quantities."""
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            self.error(where, "terms", "an array of model term keys", describe(value))
            return ()
        if len(value) > MAX_TERMS:
            self.error(where, "terms", f"at most {MAX_TERMS} term keys", f"{len(value)} keys")
            return ()
        terms = tuple(value)
        if quantity is MeasuredQuantity.GEMM_SPEEDUP and terms:
            expected = f"an empty array for quantity {quantity} (it compares the GEMMs only)"
            self.error(where, "terms", expected, describe(value))
        if quantity is MeasuredQuantity.TIME_US and not terms:
            self.error(where, "terms", "at least one model term key for time_us", describe(value))
        if len(set(terms)) != len(terms):
            self.error(where, "terms", "each term once", describe(value))
        if recipe is None or mode is None or not isinstance(fusion, bool):
            return terms
        model_terms = build_model(mode, recipe, fusion, grouped=grouped).terms
        known = [t.key for t in model_terms]
        if quantity is MeasuredQuantity.SPEEDUP:  # the low-precision side: no bf16 term
            known = [t.key for t in model_terms if t.quantity in LOWP_SIDE]
        for index, term in enumerate(terms):
            if term not in known:
                model = f"{mode} {recipe.name} fusion={str(fusion).lower()}"
                model += " grouped" if grouped else ""
                expected = f"a term key of the {model} model: {', '.join(known)}"
                self.error(where, f"terms[{index}]", expected, describe(term))
        return terms

    def _source(self, where: str, value: Any) -> Source | None:
        if not isinstance(value, dict):
            self.error(where, "source", "a [set.source] table", describe(value))
            return None
        problems = SOURCE_RULE.problems("source", value)
        self.key_problems(where, problems)
        if problems:
            return None
        return Source(value["url"], value["read_on"], value.get("commit"), value.get("note", ""))

    def lint_duplicates(self, entries: list[dict[str, Any]]) -> None:
        """Ids used by more than one set (every later use is reported)."""
        first: dict[str, int] = {}
        for index, entry in enumerate(entries):
            set_id = entry.get("id")
            if not isinstance(set_id, str):
                continue
            self.set_index = index
            if set_id in first:
                received = f"{describe(set_id)}, also the id of set #{first[set_id] + 1}"
                self.error(_label(set_id, index), "id", "an id no other set uses", received)
            first.setdefault(set_id, index)


def _label(set_id: Any, index: int) -> str:
    """How messages name set ``index``: its id (cut short), else ``#<n>``."""
    if not isinstance(set_id, str) or not set_id.strip():
        return f"#{index + 1}"
    return set_id if len(set_id) <= MAX_ID_LENGTH else set_id[:MAX_ID_LENGTH] + "..."


def parse_measurements(
    text: str, origin: str, specs: SpecDatabase | str | os.PathLike[str] | None = None
) -> MeasurementDatabase:
    """Lint and load measurement-file ``text``; ``origin`` names it in messages.

    ``specs`` is the spec database the sets' GPUs must be in (None: the bundled one).
    Raises :class:`MeasurementError` listing every problem when any is found.
    """
    linter = _Linter(origin, _specs(specs))
    doc = linter.parse(text)
    entries = linter.lint_document(doc)
    built = [linter.lint_set(i, entry) for i, entry in enumerate(entries)]
    linter.lint_duplicates(entries)
    linter.strings(doc)
    linter.raise_if_any()
    return MeasurementDatabase(tuple(s for s in built if s is not None), origin)


def load_measurements(
    path: str | os.PathLike[str] | None = None,
    specs: SpecDatabase | str | os.PathLike[str] | None = None,
) -> MeasurementDatabase:
    """Load and lint a measurement file, or the bundled one when ``path`` is None.

    ``specs``: a loaded spec database, a spec file path, or None for the bundled database.
    """
    if path is None:
        text = bundled_text("measurements.toml")
        return parse_measurements(text, BUNDLED_NAME, specs)
    file = str(Path(path))
    # A device, FIFO, a file over the size limit or not UTF-8: one problem.
    text = FieldLinter(file).read(path, "measurement file")
    return parse_measurements(text, file, specs)


def _specs(specs: SpecDatabase | str | os.PathLike[str] | None) -> SpecDatabase:
    if isinstance(specs, SpecDatabase):
        return specs
    return load_specs(specs)
