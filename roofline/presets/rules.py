"""The model-preset file's schema as data: keys, name patterns, text limits and bounds.
:mod:`roofline.presets.lint` applies them; docs/models-format.md documents them."""

from __future__ import annotations

import re

from roofline.datafiles import core as datafile
from roofline.datafiles import sources
from roofline.datafiles.sources import SourceRule

SCHEMA_VERSION = 1

# key -> required
TOP_KEYS: dict[str, bool] = {"schema_version": True, "model": True}
MODEL_KEYS: dict[str, bool] = {
    "name": True,
    "display_name": True,
    "notes": False,
    "sources": True,
    "block": False,  # required unless hf_config derives the blocks
    "hf_config": False,
}
SOURCE_KEYS: dict[str, bool] = {"url": True, "read_on": True, "commit": False, "note": False}
BLOCK_KEYS: dict[str, bool] = {
    "name": True,
    "layers": True,
    "experts": False,
    "top_k": False,
    "gemm": True,
}
GEMM_KEYS: dict[str, bool] = {
    "name": True,
    "K": True,
    "N": True,
    "count": False,
    "kind": False,
    "note": False,
}

# A model name is its id on the command line and in page URLs: lower-case letters and
# digits, single inner dots or dashes ("llama3.1-70b"); never "." or "..", never a slash.
MODEL_NAME = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")
MODEL_NAME_EXPECTED = (
    "a name of lower-case letters and digits with single inner dots or dashes "
    "(e.g. llama3.1-70b), at most {limit} characters"
)
MAX_MODEL_NAME_LENGTH = 64
# Block and GEMM names join as "block.gemm" keys (e.g. "moe_layers.q_proj").
PART_NAME = re.compile(r"[a-z][a-z0-9_]*")
PART_NAME_EXPECTED = (
    "an identifier of lower-case letters, digits and underscores starting with a letter "
    "(e.g. q_proj), at most {limit} characters"
)
MAX_PART_NAME_LENGTH = 48
COMMIT = sources.COMMIT
# Characters that reorder or hide text: refused in every text field of every data file.
INVISIBLE = datafile.INVISIBLE

# Longest text per field: long enough for any real entry, short enough that a hostile
# file cannot flood a terminal or a page.
TEXT_LIMITS = {
    "display_name": 64,
    "notes": 4000,
    "source_note": sources.SOURCE_NOTE_LIMIT,
    "gemm_note": 500,
}
#: A ``[[model.sources]]`` table: the one source-entry rule, with these keys.
SOURCE_RULE = SourceRule(SOURCE_KEYS, TEXT_LIMITS["source_note"], plain_note=True)

# Bounds that keep a file reasonable (the largest real model has 126 layers and 256
# experts) without refusing any plausible one.
MAX_FILE_BYTES = datafile.MAX_FILE_BYTES
MAX_MODELS = datafile.MAX_MODELS
MAX_GEMMS_PER_FILE = datafile.MAX_GEMMS_PER_FILE
MAX_SOURCES = 16
MAX_BLOCKS = 16
MAX_GEMMS = 64
MAX_LAYERS = 4096
MAX_COUNT = 64
MAX_EXPERTS = 65536
MAX_PROBLEMS = datafile.MAX_PROBLEMS  # kept in one error; the rest are counted
