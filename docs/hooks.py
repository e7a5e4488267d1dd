"""MkDocs hooks: expand the GPUs and Recipes sections from the generated nav.

``roofline build`` writes ``docs/generated/nav.json`` (one entry per GPU, with its
training and inference recipe pages, and one per recipe). This hook swaps it into the
``nav`` of ``mkdocs.yml``, so ``mkdocs serve`` shows the same navigation as the build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NAV_FILE = Path(__file__).parent / "generated" / "nav.json"


def on_config(config: Any, **_: Any) -> Any:
    """Replace the GPUs and Recipes placeholders with the generated sections."""
    if not NAV_FILE.is_file():
        raise SystemExit(
            f"{NAV_FILE} is missing: run `roofline build` once to generate the pages"
        )
    generated = json.loads(NAV_FILE.read_text("utf-8"))
    nav = []
    for entry in config["nav"]:
        title = next(iter(entry)) if isinstance(entry, dict) else None
        nav.append({title: generated[title]} if title in generated else entry)
    config["nav"] = nav
    return config
