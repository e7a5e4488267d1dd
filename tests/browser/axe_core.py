"""axe-core for the accessibility tests: fetched with ``npm pack`` into the build's cache.

Like KaTeX (site_gen/output/assets.py), the tarball is checked against the integrity npm
publishes for the pinned version before it is used, and extracted once.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

import pytest

from site_gen.output.assets import (
    AssetError,
    cache_dir,
    integrity,
    npm_pack_package,
    staging_folder,
)

AXE_VERSION = "4.14.1"
#: ``dist.integrity`` of axe-core@4.14.1 on registry.npmjs.org.
AXE_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="


def _fetch(tarball: Path) -> None:
    private = staging_folder(tarball.parent, "axe-core")
    try:
        try:
            fetched = npm_pack_package("axe-core", AXE_VERSION, private)
        except AssetError as exc:
            pytest.skip(str(exc)[:500])
        got = integrity(fetched)
        assert got == AXE_INTEGRITY, f"axe-core tarball sha512 {got} is not npm's integrity"
        os.replace(fetched, tarball)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def axe_script() -> Path:
    """The path of a verified ``axe.min.js`` (fetched on first use; skips without npm)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"axe-core-{AXE_VERSION}.tgz"
    script = folder / f"axe-core-{AXE_VERSION}.min.js"
    if script.is_file() and tarball.is_file() and integrity(tarball) == AXE_INTEGRITY:
        return script
    if not tarball.is_file() or integrity(tarball) != AXE_INTEGRITY:
        _fetch(tarball)
    with tarfile.open(tarball, "r:gz") as archive:
        member = archive.extractfile("package/axe.min.js")
        assert member is not None, f"{tarball} has no package/axe.min.js"
        partial = script.with_name(f".{script.name}.{os.getpid()}")
        partial.write_bytes(member.read())
    os.replace(partial, script)
    return script


#: WCAG 2.0/2.1 A and AA rules.
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_violations(page, impacts: tuple[str, ...] = ("serious", "critical")) -> list[dict]:
    """Run axe-core on the loaded ``page``; its violations of ``impacts`` as plain dicts."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_script()))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: "
        "['violations']})",
        WCAG_TAGS,
    )
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "count": len(v["nodes"]),
            "nodes": [" ".join(n["target"]) for n in v["nodes"][:5]],
            "summary": v["nodes"][0].get("failureSummary", "")[:300],
        }
        for v in result["violations"]
        if v["impact"] in impacts
    ]
