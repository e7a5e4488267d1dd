"""The mkdocs page cache: a page is re-made exactly when something it shows changed.

Each test builds a three-page mkdocs project (material theme, search, strict) with
``site_gen.output.mkdocs.run_mkdocs`` and compares the cached builds with uncached ones.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser.site_fixtures import file_tree

from site_gen import config
from site_gen.cache import BuildCache
from site_gen.output.mkdocs import run_mkdocs

MKDOCS_YML = """\
site_name: Page cache test
theme:
  name: material
  features: [navigation.sections]
plugins: [search]
markdown_extensions:
  - pymdownx.snippets:
      check_paths: true
exclude_docs: |
  generated/_snippets/
validation:
  links: {unrecognized_links: warn, anchors: warn}
"""
PAGES = {
    "index.md": "# Home\n\nSee [one](one.md#details) and [the data](generated/data.csv).\n",
    "one.md": "# One\n\n## Details\n\nFirst page, $x$.\n",
    "two.md": "# Two\n\nSecond page.\n",
}


def _project(folder: Path, pages: dict[str, str], snippet: str = "Included.\n") -> Path:
    docs = folder / "docs"
    (docs / "generated" / "_snippets").mkdir(parents=True)
    for name, text in pages.items():
        (docs / name).write_text(text, "utf-8")
    (docs / "generated" / "data.csv").write_text("a,b\n1,2\n", "utf-8")
    (docs / "generated" / "_snippets" / "part.md.txt").write_text(snippet, "utf-8")
    (folder / "mkdocs.yml").write_text(MKDOCS_YML, "utf-8")
    return folder / "mkdocs.yml"


def _build(
    folder: Path, pages: dict[str, str], cache: BuildCache, snippet: str = "Included.\n"
) -> dict[str, bytes]:
    site = folder / "site"
    run_mkdocs(site, _project(folder, pages, snippet), cache)
    return file_tree(site)


@pytest.fixture(autouse=True)
def _reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764000000")
    monkeypatch.delenv("ROOFLINE_ATLAS_SITE_URL", raising=False)


def _cached_and_clean(
    tmp: Path, pages: dict[str, str], name: str, snippet: str = "Included.\n"
) -> tuple[dict, dict, BuildCache]:
    cache = BuildCache(root=tmp / "cache")
    cached = _build(tmp / f"{name}-cached", pages, cache, snippet)
    clean = _build(tmp / f"{name}-clean", pages, BuildCache(enabled=False), snippet)
    return cached, clean, cache


def test_an_unchanged_project_is_served_whole_from_the_cache(tmp_path: Path) -> None:
    first, clean, cache = _cached_and_clean(tmp_path, PAGES, "a")
    assert first == clean
    assert cache.misses["pages"] == 6 and cache.hits["pages"] == 0  # 3 bodies, 3 HTML
    again, _, cache = _cached_and_clean(tmp_path, PAGES, "b")
    assert (cache.hits["pages"], cache.misses["pages"]) == (6, 0)
    assert again == first
    index = json.loads(again["search/search_index.json"])
    assert {doc["location"] for doc in index["docs"]} >= {"", "one/", "one/#details", "two/"}


def test_an_edited_body_re_makes_that_page_only(tmp_path: Path) -> None:
    _cached_and_clean(tmp_path, PAGES, "warm")
    edited = {**PAGES, "two.md": "# Two\n\nSecond page, edited.\n"}
    cached, clean, cache = _cached_and_clean(tmp_path, edited, "edited")
    assert cached == clean
    assert cache.misses["pages"] == 2  # its body and its HTML
    assert cache.hits["pages"] == 4


def test_a_new_title_re_makes_every_page_that_shows_it(tmp_path: Path) -> None:
    _cached_and_clean(tmp_path, PAGES, "warm")
    renamed = {**PAGES, "two.md": "# Second\n\nSecond page.\n"}
    cached, clean, cache = _cached_and_clean(tmp_path, renamed, "renamed")
    assert cached == clean
    assert b"Second" in cached["index.html"]  # in every page's navigation
    assert b"Two" not in cached["index.html"]
    assert cache.misses["pages"] == 1 + 3  # the renamed body; all HTML (nav changed)


def test_a_page_with_snippets_follows_the_included_file(tmp_path: Path) -> None:
    pages = {**PAGES, "two.md": '# Two\n\n--8<-- "generated/_snippets/part.md.txt"\n'}
    first, clean, _ = _cached_and_clean(tmp_path, pages, "a", "Part one.\n")
    assert first == clean and b"Part one." in first["two/index.html"]
    cached, clean, cache = _cached_and_clean(tmp_path, pages, "b", "Part two.\n")
    assert cached == clean and b"Part two." in cached["two/index.html"]
    assert cache.misses["pages"] == 2  # two.md's body and HTML


@pytest.mark.parametrize(
    ("page", "snippet"),
    [
        ("# Two\n\n--8<--\ngenerated/_snippets/part.md.txt\n--8<--\n", "Part {}.\n"),
        (
            '# Two\n\n--8<-- "generated/_snippets/part.md.txt"\n',
            'Part {}.\n\n--8<-- "generated/data.csv"\n',
        ),
    ],
    ids=["block form", "nested"],
)
def test_a_page_with_other_snippet_forms_is_always_rendered(tmp_path, page, snippet) -> None:
    pages = {**PAGES, "two.md": page}
    _cached_and_clean(tmp_path, pages, "a", snippet.format("one"))
    cached, clean, cache = _cached_and_clean(tmp_path, pages, "b", snippet.format("two"))
    assert cached == clean and b"Part two." in cached["two/index.html"]
    assert cache.hits["pages"] + cache.misses["pages"] == 5  # no body lookup for two.md
    assert cache.misses["pages"] == 1  # its HTML (the content changed)


def test_a_removed_anchor_still_fails_a_strict_build(tmp_path: Path) -> None:
    from mkdocs.exceptions import Abort

    _cached_and_clean(tmp_path, PAGES, "warm")
    broken = {**PAGES, "one.md": "# One\n\n## Other\n\nFirst page.\n"}
    cache = BuildCache(root=tmp_path / "cache")
    with pytest.raises(Abort, match="strict"):
        _build(tmp_path / "broken", broken, cache)  # index.md's body is cached: still checked
    stored = sorted((cache.entries / "pages").glob("*.pkl"))
    with pytest.raises(Abort, match="strict"):
        _build(tmp_path / "broken-again", broken, BuildCache(root=tmp_path / "cache"))
    assert sorted((cache.entries / "pages").glob("*.pkl")) == stored  # nothing stored


def test_generated_static_files_are_linked_not_copied(tmp_path: Path) -> None:
    _build(tmp_path / "p", PAGES, BuildCache(root=tmp_path / "cache"))
    source = tmp_path / "p" / "docs" / "generated" / "data.csv"
    assert os.path.samefile(source, tmp_path / "p" / "site" / "generated" / "data.csv")
    _build(tmp_path / "q", PAGES, BuildCache(enabled=False))
    assert not os.path.samefile(
        tmp_path / "q" / "docs" / "generated" / "data.csv",
        tmp_path / "q" / "site" / "generated" / "data.csv",
    )


def _build_with(
    folder: Path, cache: BuildCache, add: str | None = None, remove: str | None = None
) -> dict[str, bytes]:
    """_build, with one static file added to or removed from docs/ before mkdocs runs."""
    config = _project(folder, PAGES)
    if add is not None:
        (folder / "docs" / add).write_text("x\n", "utf-8")
    if remove is not None:
        (folder / "docs" / remove).unlink()
    run_mkdocs(folder / "site", config, cache)
    return file_tree(folder / "site")


def test_a_new_static_file_re_makes_no_page(tmp_path: Path) -> None:
    # Static files are not in the pages' key (the Changes page's exports come and go).
    _cached_and_clean(tmp_path, PAGES, "warm")
    cache = BuildCache(root=tmp_path / "cache")
    cached = _build_with(tmp_path / "added", cache, add="generated/other.csv")
    clean = _build_with(tmp_path / "clean", BuildCache(enabled=False), add="generated/other.csv")
    assert cached == clean and "generated/other.csv" in cached
    assert (cache.hits["pages"], cache.misses["pages"]) == (6, 0)


def test_a_removed_static_file_a_page_links_to_is_not_served_from_the_cache(tmp_path) -> None:
    from mkdocs.exceptions import Abort

    _cached_and_clean(tmp_path, PAGES, "warm")
    cache = BuildCache(root=tmp_path / "cache")
    # index.md links to generated/data.csv: its cached body is not reused, so mkdocs
    # renders it again and strict mode fails on the broken link (a restored body would
    # not have been checked: mkdocs validates links while it renders the Markdown).
    with pytest.raises(Abort, match="strict"):
        _build_with(tmp_path / "removed", cache, remove="generated/data.csv")


#: Enough pages for the helpers (site_gen.split) to take some from the end.
MANY = {
    **PAGES,
    **{
        f"p{i:02d}.md": f"# Page {i}\n\nText {i}, see [one](one.md#details), $x_{i}$.\n"
        for i in range(14)
    },
}


def test_pages_made_by_helpers_equal_a_clean_build(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(config, "HELPERS", 2)
    cached, clean, cache = _cached_and_clean(tmp_path, MANY, "many")
    assert cached == clean
    assert cache.misses["pages"] == 2 * len(MANY)  # each body and HTML made once
    again, _, cache = _cached_and_clean(tmp_path, MANY, "again")
    assert again == clean and cache.hits["pages"] == 2 * len(MANY)


def test_a_warning_in_a_helper_still_fails_a_strict_build(tmp_path: Path) -> None:
    from mkdocs.exceptions import Abort

    broken = {**MANY, "zz.md": "# Last\n\nA link to [nothing](missing.md).\n"}  # made last
    cache = BuildCache(root=tmp_path / "cache")
    with pytest.raises(Abort, match="strict"):
        _build(tmp_path / "broken", broken, cache)
    assert not list((cache.entries / "pages").glob("*.pkl"))  # a failed run stores nothing


API_YML = """\
site_name: API cache test
theme:
  name: material
plugins:
  - search
  - mkdocstrings:
      default_handler: python
validation:
  links: {unrecognized_links: warn, anchors: warn}
"""
API_PAGES = {
    "index.md": "# Home\n\nSee [the function][apidemo.double].\n",
    "api.md": "# API\n\n::: apidemo\n",
}


def _api_build(folder: Path, package: Path, source: str, cache: BuildCache) -> dict[str, bytes]:
    (package / "__init__.py").write_text(source, "utf-8")
    docs = folder / "docs"
    docs.mkdir(parents=True)
    for name, text in API_PAGES.items():
        (docs / name).write_text(text, "utf-8")
    (folder / "mkdocs.yml").write_text(API_YML, "utf-8")
    run_mkdocs(folder / "site", folder / "mkdocs.yml", cache)
    return file_tree(folder / "site")


@pytest.mark.parametrize("helpers", [0, 2])
def test_an_api_page_is_restored_with_its_inventory_and_anchors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: int
) -> None:
    """A mkdocstrings page's body comes from the cache with what rendering it registered
    (objects.inv, the anchor another page's cross-reference resolves to, its handler's
    style sheet): the site is the one a full render makes; an edited docstring renders
    it again. With helpers, the page may be made in one of them."""
    monkeypatch.setattr(config, "HELPERS", helpers)
    package = tmp_path / "src" / "apidemo"
    package.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    # griffe finds the package where Python does: on sys.path.
    monkeypatch.chdir(tmp_path / "src")
    source = (
        '"""Demo."""\n\n\ndef double(x: int) -> int:\n    """Twice ``x``."""\n    return 2 * x\n'
    )
    cache = BuildCache(root=tmp_path / "cache")
    first = _api_build(tmp_path / "first", package, source, cache)
    assert b"Twice" in first["api/index.html"] and "objects.inv" in first
    assert b'href="api/#apidemo.double"' in first["index.html"]
    assert (cache.hits["pages"], cache.misses["pages"]) == (0, 3)
    again = _api_build(tmp_path / "again", package, source, cache)
    # Both bodies and the home page's HTML; the API page's HTML is made every build.
    assert (cache.hits["pages"], cache.misses["pages"]) == (3, 3)
    assert again == first
    edited = source.replace("Twice", "Two times")
    cached = _api_build(tmp_path / "edited", package, edited, cache)
    clean = _api_build(tmp_path / "clean", package, edited, BuildCache(enabled=False))
    assert cached == clean and b"Two times" in cached["api/index.html"]
