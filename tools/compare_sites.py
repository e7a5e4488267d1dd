"""Compare two built sites: identical, or different only where a renamed module is named.

A refactor that moves modules must not change the site (issue #20): build the site at the
commit before and at the commit after, then::

    python tools/compare_sites.py SITE_BEFORE SITE_AFTER --base REV

``--base`` is the commit the "before" site was built from; the module renames are read
from ``git diff -M --name-status REV`` (``roofline/formulas.py`` renamed to
``roofline/model/formulas.py`` makes ``roofline.formulas`` and ``roofline/formulas.py``
equivalent to their new names). A file whose text is equal once those names are mapped
counts as renamed-only; every other difference is listed, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import filecmp
import re
import subprocess
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("roofline", "site_gen")


def module_renames(base: str) -> dict[str, str]:
    """Old -> new source paths of the packages' modules renamed since ``base``."""
    out = subprocess.run(
        ["git", "diff", "-M", "--name-status", base, "--", *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    renames = {}
    for line in out.splitlines():
        status, *paths = line.split("\t")
        if status.startswith("R") and paths[0].endswith(".py"):
            renames[paths[0]] = paths[1]
    return renames


def _dotted(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def name_mapper(renames: dict[str, str]):
    """A function mapping every old module name (dotted or as a path) to its new one."""
    names = {_dotted(old): _dotted(new) for old, new in renames.items()} | renames
    if not names:
        return lambda text: text
    pattern = re.compile(
        r"(?<![\w./])("
        + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")(?!\w)"
    )
    return lambda text: pattern.sub(lambda m: names[m.group(1)], text)


def _text(path: Path) -> str:
    """A file's text; a Sphinx inventory (mkdocstrings' objects.inv) is zlib after 4 lines."""
    data = path.read_bytes()
    if path.name == "objects.inv":
        head = data.split(b"\n", 4)
        data = b"\n".join(head[:4]) + b"\n" + zlib.decompress(head[4])
    return data.decode("utf-8", errors="replace")


def _ordered(text: str, rel: Path) -> str:
    """An inventory lists objects sorted by module path: a rename reorders its lines."""
    return "\n".join(sorted(text.splitlines())) if rel.name == "objects.inv" else text


def compare(before: Path, after: Path, renames: dict[str, str]) -> dict[str, list[str]]:
    """Files by outcome: identical, renamed (equal once names map), differ, only_before/after."""
    files_a = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    files_b = {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    mapped = name_mapper(renames)
    kinds = ("identical", "renamed", "differ", "only_before", "only_after")
    result: dict[str, list[str]] = {kind: [] for kind in kinds}
    result["only_before"] = sorted(map(str, files_a - files_b))
    result["only_after"] = sorted(map(str, files_b - files_a))
    for rel in sorted(files_a & files_b):
        if filecmp.cmp(before / rel, after / rel, shallow=False):
            result["identical"].append(str(rel))
            continue
        text_a, text_b = _text(before / rel), _text(after / rel)
        same = _ordered(mapped(text_a), rel) == _ordered(text_b, rel)
        result["renamed" if same else "differ"].append(str(rel))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--base", required=True, help="the commit the before site was built from")
    args = parser.parse_args(argv)
    for site in (args.before, args.after):
        if not site.is_dir():
            parser.error(f"{site}: not a folder (build a site there first)")
    result = compare(args.before, args.after, module_renames(args.base))
    print(
        f"identical {len(result['identical'])}, module names only {len(result['renamed'])}, "
        f"different {len(result['differ'])}, only before {len(result['only_before'])}, "
        f"only after {len(result['only_after'])}"
    )
    for kind in ("differ", "only_before", "only_after"):
        for rel in result[kind]:
            print(f"  {kind}: {rel}")
    return 1 if result["differ"] or result["only_before"] or result["only_after"] else 0


if __name__ == "__main__":
    sys.exit(main())
