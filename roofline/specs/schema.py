"""The spec file's JSON Schema, written by the key descriptors themselves."""

from __future__ import annotations

from typing import Any

from roofline.specs.keys import TOP_SPECS


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the spec file, generated from the key descriptors.

    Every bound and refused character comes from the descriptors the lint runs, so the
    two agree; JSON has no nan or inf, so "finite" needs no keyword. Checks that span
    entries (duplicate names, colliding slugs and prefixes) are the lint's alone.
    """
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://roofline-atlas.invalid/spec-file.schema.json",
        "title": "Roofline Atlas GPU spec file",
        "type": "object",
        "additionalProperties": False,
        "required": [k for k, s in TOP_SPECS.items() if s.required],
        "properties": {key: spec.schema() for key, spec in TOP_SPECS.items()},
    }
