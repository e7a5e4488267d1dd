"""Loading a model-preset file: every problem of a file collected, then the presets built.

The rules follow the other data files' (:mod:`roofline.measurements.lint`): unknown and
missing keys (with the nearest valid key), text without control, invisible or markup
characters, http(s) source URLs, and on top: names safe for the command line and page
URLs, no duplicate models or GEMMs, positive integer dimensions up to the GEMM libraries'
limit, and experts / top_k exactly on the blocks that route tokens to experts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from roofline.datafiles.core import bundled_text, skeleton
from roofline.datafiles.sources import Source
from roofline.presets import rules as R
from roofline.presets.fields import FieldLinter
from roofline.presets.hf import HfConfigError, load_hf_config
from roofline.presets.model import LayerBlock, LinearKind, ModelDatabase, ModelPreset, PresetGemm
from roofline.publish.slugs import slug
from roofline.shapes import MAX_DIM
from roofline.specs.text import describe

BUNDLED_NAME = "bundled model presets (roofline/data/models.toml)"
#: The bundled preset file (read through roofline.datafiles.core.bundled_text when loaded).
BUNDLED_MODELS_PATH = Path(__file__).resolve().parent.parent / "data" / "models.toml"


class _Linter(FieldLinter):
    """The entry rules: models, sources, blocks, GEMMs, and names across models."""

    base_dir: Path = Path(".")  # where hf_config paths are read from

    def document(self, doc: dict[str, Any]) -> list[dict[str, Any]]:
        """The model tables of a parsed file, top-level keys linted."""
        self.keys(None, "", doc, R.TOP_KEYS)
        version = doc.get("schema_version", R.SCHEMA_VERSION)
        if type(version) is not int or version != R.SCHEMA_VERSION:
            self.error(None, "schema_version", f"the integer {R.SCHEMA_VERSION}", describe(version))
        tables = self.tables(None, "model", doc, "model", R.MAX_MODELS)
        gemms = _gemm_tables(tables)
        if gemms > R.MAX_GEMMS_PER_FILE:  # each GEMM is evaluated per GPU, recipe and mode
            expected = f"at most {R.MAX_GEMMS_PER_FILE} [[model.block.gemm]] tables in a file"
            self.error(None, "model", expected, f"{gemms} tables")
            return []
        return tables

    def model(self, index: int, table: dict[str, Any]) -> ModelPreset | None:
        """The preset of one [[model]] table, or None when it has problems (all recorded)."""
        entry = _label(table.get("name"), index)
        before = self.count()
        self.keys(entry, "", table, R.MODEL_KEYS)
        name = None
        if "name" in table:
            name = self.name(
                entry,
                "name",
                table["name"],
                R.MODEL_NAME,
                R.MODEL_NAME_EXPECTED,
                R.MAX_MODEL_NAME_LENGTH,
            )
        display = None
        if "display_name" in table:
            limit = R.TEXT_LIMITS["display_name"]
            display = self.text(entry, "display_name", table["display_name"], limit)
        notes = ""
        if "notes" in table:
            notes = self.text(entry, "notes", table["notes"], R.TEXT_LIMITS["notes"]) or ""
        sources = self.tables(entry, "sources", table, "sources", R.MAX_SOURCES)
        built_sources = [self.source(entry, f"sources[{i}]", s) for i, s in enumerate(sources)]
        if "hf_config" in table:
            built = self.hf_blocks(entry, table, name)
        else:
            if "block" not in table:
                expected = "[[model.block]] tables, or hf_config naming a config.json"
                self.error(entry, "block", expected, "nothing")
            blocks = self.tables(entry, "block", table, "block", R.MAX_BLOCKS)
            built = [self.block(entry, f"block[{i}]", b) for i, b in enumerate(blocks)]
            self.duplicates(entry, "block", [b.get("name") for b in blocks], "name")
            self.experts_agree(entry, built)
        if self.count() > before:
            return None
        return ModelPreset(
            name=name,
            display_name=display,
            blocks=tuple(built),
            sources=tuple(built_sources),
            notes=notes,
        )

    def hf_blocks(
        self, entry: str, table: dict[str, Any], name: str | None
    ) -> list[LayerBlock | None]:
        """The blocks derived from the model's ``hf_config``: a relative path to a
        transformers config.json inside the preset file's folder (:mod:`.hf`)."""
        if "block" in table:
            expected = "either hf_config or [[model.block]] tables, not both"
            self.error(entry, "hf_config", expected, "both")
            return []
        value = table["hf_config"]
        path = _config_path(value, self.base_dir)
        if path is None:
            expected = (
                "a relative path to a config.json inside the preset file's folder "
                "(no '..', not absolute)"
            )
            self.error(entry, "hf_config", expected, describe(value))
            return []
        try:
            derived = load_hf_config(path, name=name or None)
        except HfConfigError as exc:
            self.error(entry, "hf_config", "a supported transformers config.json", str(exc))
            return []
        return list(derived.blocks)

    def source(self, entry: str, prefix: str, table: dict[str, Any]) -> Source | None:
        problems = R.SOURCE_RULE.problems(prefix, table)
        self.key_problems(entry, problems)
        if problems:
            return None
        return Source(table["url"], table["read_on"], table.get("commit"), table.get("note", ""))

    def block(self, entry: str, prefix: str, table: dict[str, Any]) -> LayerBlock | None:
        before = self.count()
        self.keys(entry, f"{prefix}.", table, R.BLOCK_KEYS)
        name = self.part_name(entry, prefix, table)
        layers = None
        if "layers" in table:
            layers = self.integer(entry, f"{prefix}.layers", table["layers"], 1, R.MAX_LAYERS)
        rows = self.tables(entry, f"{prefix}.gemm", table, "gemm", R.MAX_GEMMS)
        gemms = [self.gemm(entry, f"{prefix}.gemm[{i}]", g) for i, g in enumerate(rows)]
        self.duplicates(entry, f"{prefix}.gemm", [g.get("name") for g in rows], "name")
        kinds = [g.get("kind", LinearKind.DENSE.value) for g in rows]
        experts, top_k = self.routing(entry, prefix, table, LinearKind.EXPERT.value in kinds)
        if LinearKind.EXPERT.value not in kinds:
            for i, kind in enumerate(kinds):
                if kind == LinearKind.SHARED.value:
                    expected = "dense or expert (a shared expert needs routed experts beside it)"
                    self.error(entry, f"{prefix}.gemm[{i}].kind", expected, describe(kind))
        if self.count() > before:
            return None
        return LayerBlock(name, layers, tuple(gemms), experts, top_k)

    def part_name(self, entry: str, prefix: str, table: dict[str, Any]) -> str | None:
        """The ``name`` of a block or GEMM table (None when absent or refused)."""
        if "name" not in table:
            return None
        limit = R.MAX_PART_NAME_LENGTH
        return self.name(
            entry, f"{prefix}.name", table["name"], R.PART_NAME, R.PART_NAME_EXPECTED, limit
        )

    def routing(
        self, entry: str, prefix: str, table: dict[str, Any], routed: bool
    ) -> tuple[int | None, int | None]:
        """experts and top_k: required on a block with expert GEMMs, refused elsewhere."""
        if not routed:
            for key in ("experts", "top_k"):
                if key in table:
                    expected = f'no {key} on a block without kind = "expert" GEMMs'
                    self.error(entry, f"{prefix}.{key}", expected, describe(table[key]))
            return None, None
        experts = top_k = None
        if "experts" in table:
            experts = self.integer(entry, f"{prefix}.experts", table["experts"], 2, R.MAX_EXPERTS)
        else:
            self.error(
                entry,
                f"{prefix}.experts",
                "the routed experts per layer (a block with expert GEMMs)",
                "nothing",
            )
        if "top_k" in table:
            top_k = self.integer(
                entry, f"{prefix}.top_k", table["top_k"], 1, experts or R.MAX_EXPERTS
            )
        else:
            self.error(
                entry,
                f"{prefix}.top_k",
                "the experts each token is routed to (a block with expert GEMMs)",
                "nothing",
            )
        return experts, top_k

    def gemm(self, entry: str, prefix: str, table: dict[str, Any]) -> PresetGemm | None:
        before = self.count()
        self.keys(entry, f"{prefix}.", table, R.GEMM_KEYS)
        name = self.part_name(entry, prefix, table)
        dims = [
            self.integer(entry, f"{prefix}.{key}", table[key], 1, MAX_DIM)
            for key in ("K", "N")
            if key in table
        ]
        count = self.integer(entry, f"{prefix}.count", table.get("count", 1), 1, R.MAX_COUNT)
        kind = self.kind(entry, f"{prefix}.kind", table.get("kind", LinearKind.DENSE.value))
        note = ""
        if "note" in table:
            note = (
                self.text(entry, f"{prefix}.note", table["note"], R.TEXT_LIMITS["gemm_note"]) or ""
            )
        if self.count() > before:
            return None
        return PresetGemm(name, dims[0], dims[1], count, kind, note)

    def experts_agree(self, entry: str, blocks: list[LayerBlock | None]) -> None:
        """One routed-expert count per model: expert parallelism divides it."""
        counts = {b.experts for b in blocks if b is not None and b.experts is not None}
        if len(counts) > 1:
            self.error(
                entry,
                "block",
                "MoE blocks with the same number of experts",
                f"experts {sorted(counts)}",
            )

    def models_unique(self, tables: list[dict[str, Any]]) -> None:
        """Names, page slugs and display names no other model of the file uses."""
        seen: dict[str, tuple[str, int]] = {}
        for index, table in enumerate(tables):
            entry = _label(table.get("name"), index)
            # Display names compare by skeleton: a soft hyphen, a tag character or a
            # Hangul filler must not make a second "Llama 3" look like a different one.
            checks = (
                ("name", table.get("name"), lambda v: v.lower()),
                ("name", table.get("name"), lambda v: "slug:" + slug(v)),
                ("display_name", table.get("display_name"), lambda v: "display:" + skeleton(v)),
            )
            for field, value, key_of in checks:
                if not isinstance(value, str):
                    continue
                key = key_of(value)
                if key in seen and seen[key][1] != index:
                    other = _label(tables[seen[key][1]].get("name"), seen[key][1])
                    what = "page slug" if key.startswith("slug:") else field
                    received = f"{describe(value)}, the same {what} as {other}"
                    self.error(entry, field, f"a {what} no other model uses", received)
                    break
                seen.setdefault(key, (field, index))


def _gemm_tables(models: list[dict[str, Any]]) -> int:
    """[[model.block.gemm]] tables in the file (counted before any is linted)."""
    count = 0
    for model in models:
        blocks = model.get("block")
        for block in blocks if isinstance(blocks, list) else ():
            gemms = block.get("gemm") if isinstance(block, dict) else None
            count += len(gemms) if isinstance(gemms, list) else 0
    return count


def _label(name: Any, index: int) -> str:
    """How messages name model ``index``: ``model 'name' (#n)`` for a valid name, else
    ``model #n`` (a hostile name is quoted in its own problem, cut short)."""
    valid = isinstance(name, str) and len(name) <= R.MAX_MODEL_NAME_LENGTH
    if valid and R.MODEL_NAME.fullmatch(name):
        return f"model {name!r} (#{index + 1})"
    return f"model #{index + 1}"


def _config_path(value: Any, base_dir: Path) -> Path | None:
    """``base_dir / value`` when ``value`` is a relative path that stays inside
    ``base_dir`` (symlinks resolved), else None: a preset file names no file elsewhere."""
    if not isinstance(value, str) or not value or len(value) > 1000 or "\x00" in value:
        return None
    relative = Path(value)
    if relative.is_absolute() or ".." in relative.parts:
        return None
    base = base_dir.resolve()
    path = (base / relative).resolve()
    return path if path.is_relative_to(base) and path != base else None


def parse_models(
    text: str, file: str, base_dir: str | os.PathLike[str] | None = None
) -> ModelDatabase:
    """Lint and load model-preset ``text``; ``file`` names it in messages.

    ``hf_config`` paths are read relative to ``base_dir`` (default: the folder of ``file``).

    Raises :class:`roofline.errors.DataFileError` listing every problem when any is found.
    """
    linter = _Linter(file)
    linter.base_dir = Path(base_dir) if base_dir is not None else Path(file).parent
    doc = linter.parse(text)
    tables = linter.document(doc)
    models = [linter.model(i, t) for i, t in enumerate(tables)]
    linter.models_unique(tables)
    linter.strings(doc)
    linter.raise_if_any()
    return ModelDatabase(tuple(m for m in models if m is not None), file)


def load_models(path: str | os.PathLike[str] | None = None) -> ModelDatabase:
    """Load and lint a model-preset file, or the bundled one when ``path`` is None.

    A file that cannot be read, is not a regular file, is larger than 4 MiB or is not
    UTF-8 is one problem naming the file (a :class:`roofline.errors.DataFileError`), never
    a traceback (:func:`roofline.datafiles.core.read_text`).
    """
    if path is None:
        text = bundled_text("models.toml")
        return parse_models(text, BUNDLED_NAME, BUNDLED_MODELS_PATH.parent)
    file = str(Path(path))
    text = FieldLinter(file).read(path, "model-preset file")
    return parse_models(text, file)
