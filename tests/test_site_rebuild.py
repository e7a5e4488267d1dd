"""Incremental rebuilds of the small site: unchanged inputs do nothing, one changed GPU
redoes only its own work, and the result is the site a clean build makes (slow: a warm
build, a one-GPU rebuild and a clean build; a file of its own so that pytest-xdist runs
it beside test_site_build.py).

The last comparison is also the suite's reproducibility check: the rebuilt site holds
pages, charts and formulas made by the cached path in the process that built the shared
small site (another xdist worker, often), and it must equal, byte for byte, a build made
here without any cache (plain mkdocs, every chart drawn in this process's workers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser.site_fixtures import (
    SHARED_EPOCH,
    SMALL_SPECS,
    build_small_site,
    copy_of_warm_cache,
    file_tree,
    make_root,
    shared_small_build,
)


@pytest.mark.slow
def test_rebuilds_reuse_what_is_unchanged(tmp_path: Path, tmp_path_factory, monkeypatch) -> None:
    from site_gen.build import build
    from site_gen.cache import BuildCache

    shared = shared_small_build(tmp_path_factory)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SHARED_EPOCH)
    monkeypatch.delenv("ROOFLINE_ATLAS_SITE_URL", raising=False)
    # Both spec files outside git, so the Changes page (the spec file's git history, with
    # an export per changed commit) is the same for both and only the bandwidth differs.
    base = tmp_path / "base.toml"
    base.write_text(SMALL_SPECS.read_text())
    # A warm start: the shared small site's cache (the same GPUs; only its Changes page,
    # from the spec file's git history, is made anew here).
    cache = BuildCache(root=copy_of_warm_cache(shared, tmp_path))
    build(str(base), tmp_path / "site", root=make_root(tmp_path), cache=cache)
    cache = BuildCache(root=tmp_path / "cache")
    build(str(base), tmp_path / "site", root=tmp_path / "root", cache=cache)
    assert sum(cache.misses.values()) == 0
    assert dict(cache.hits) == {"outputs": 1}  # every input unchanged, the site verified

    # One GPU's bandwidth changes: only its evaluations, formulas and charts are redone.
    changed = tmp_path / "changed.toml"
    changed.write_text(
        base.read_text().replace("peak_mem_bw_bytes_sec = 8e12", "peak_mem_bw_bytes_sec = 7.5e12")
    )
    cache = BuildCache(root=tmp_path / "cache")
    build(str(changed), tmp_path / "site", root=tmp_path / "root", cache=cache)
    # One evaluation per mode x recipe and model (torchao's and the calibrated one); the
    # other GPU's calibration does not read bandwidths, so its evaluations are all hits.
    per_gpu = 2 * sum(len(r.modes) for r in __import__("roofline").recipes.RECIPE_LIST)
    assert cache.misses["evaluations"] == per_gpu
    assert cache.hits["evaluations"] == per_gpu  # the other GPU
    assert (cache.misses["latex"], cache.hits["latex"]) == (1, 1)
    # Its GPU x mode x recipe pages (dense and grouped) are rendered again, the other
    # GPU's taken as they were (both GPUs have the same recipe pages).
    assert cache.misses["recipe-pages"] == cache.hits["recipe-pages"] > per_gpu // 2
    assert 0 < cache.misses["charts"] < cache.hits["charts"] + cache.misses["charts"]
    assert cache.misses["outputs"] == 1
    # mkdocs re-makes the changed GPU's pages (and the pages that compare GPUs) only,
    # and the site is the one a clean build makes.
    assert cache.misses["pages"] > 0 and cache.hits["pages"] > 0
    site = file_tree(tmp_path / "site")
    clean = tmp_path / "clean"
    clean.mkdir()
    build_small_site(clean, specs=changed)
    assert file_tree(clean / "site") == site
