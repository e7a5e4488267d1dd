"""The build deletes nothing it did not create, serves nothing unverified, never collides.

Tried as a careless user and a hostile one would: site folders that hold other things,
damaged cache entries, a second build while one runs, a killed build, a bad KaTeX
tarball. The unit tests need no site build; the few full builds are marked slow and
share one warm cache (a module fixture).
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import pytest
from browser.site_fixtures import (
    ROOT,
    SHARED_EPOCH,
    SHARED_URL,
    SMALL_SPECS,
    copy_of_warm_cache,
    file_tree,
    make_root,
    shared_small_build,
    shared_url_site,
)

from site_gen import keys
from site_gen.build import (
    MARKER,
    PLACEHOLDER_SVG,
    BuildError,
    build,
    build_lock,
    check_site_dir,
    remove_stale_staging,
)
from site_gen.cache import MAX_MB_ENV, BuildCache, max_cache_bytes
from site_gen.output import assets, write

EPOCH = "1764000000"
REAL_KATEX = assets.cache_dir() / f"katex-{assets.KATEX_VERSION}.tgz"
KEY = "ab" * 32
OTHER_KEY = "cd" * 32


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if "discarded damaged entry" in line]


@pytest.fixture(autouse=True)
def _reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("ROOFLINE_ATLAS_SITE_URL", raising=False)


# -- the site-folder guard (no build runs: it refuses before anything is written) -----


@pytest.fixture()
def layout(tmp_path: Path) -> dict[str, Path]:
    """A build root inside a git work tree, a cache, a home folder, all under tmp."""
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    root = make_root(work)
    return {"tmp": tmp_path, "work": work, "root": root, "cache": tmp_path / "cache" / "build"}


def _refused(site: Path, layout: dict[str, Path], match: str) -> None:
    root, before = layout["root"], file_tree(layout["tmp"])
    with pytest.raises(BuildError, match=match) as info:
        build(str(SMALL_SPECS), site, root=root, cache=BuildCache(root=layout["cache"]))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("refusing --site-dir ")
    assert "choose an empty or new folder, " in message
    if "not a Roofline Atlas site" in message:  # the one case where deleting is advice
        assert message.endswith(
            f"or delete {site.resolve()} yourself if it is a site you no longer need"
        )
    else:
        assert "delete" not in message
    assert file_tree(layout["tmp"]) == before  # nothing written, nothing removed
    assert not (root / ".roofline-build.lock").exists()


@pytest.mark.parametrize(
    ("where", "match"),
    [
        ("root", "it is the build root"),
        ("root/docs", "it is the docs folder"),
        ("root/docs/out", "inside the docs folder"),
        ("root/docs/assets", "inside the docs folder"),
        ("work", "it is the git work tree"),
        ("tmp", "contains the build root"),
        ("cache", "it is the build cache"),
        ("cache/..", "contains the build cache"),
        ("cache/v2/sites", "inside the build cache"),
    ],
)
def test_guard_refuses_what_the_build_needs(layout, where: str, match: str) -> None:
    first, _, rest = where.partition("/")
    site = layout[first] / rest if rest else layout[first]
    (layout["cache"] / "v2" / "sites").mkdir(parents=True)
    _refused(site, layout, match)


def test_guard_refuses_dot_in_the_root_and_links_to_it(layout, monkeypatch) -> None:
    monkeypatch.chdir(layout["root"])
    _refused(Path("."), layout, "it is the build root")
    _refused(Path("docs/.."), layout, "it is the build root")
    link = layout["tmp"] / "innocent"
    link.symlink_to(layout["root"] / "docs")
    _refused(link, layout, "it is the docs folder")


def test_guard_refuses_home_and_the_filesystem_root(layout, monkeypatch) -> None:
    home = layout["tmp"] / "users" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    _refused(home, layout, "it is your home folder")
    _refused(home.parent, layout, "contains your home folder")
    _refused(Path("/"), layout, "file-system root")


def test_guard_refuses_the_katex_cache(layout, monkeypatch) -> None:
    katex = layout["tmp"] / "katex-cache"
    monkeypatch.setenv("ROOFLINE_ATLAS_CACHE", str(katex))
    _refused(katex, layout, "it is the KaTeX cache")
    _refused(katex / "sub", layout, "inside the KaTeX cache")


def test_guard_refuses_foreign_folders_files_and_work_trees(layout) -> None:
    foreign = layout["tmp"] / "my-notes"
    foreign.mkdir()
    sentinel = foreign / "thesis.tex"
    sentinel.write_text("years of work")
    _refused(foreign, layout, "not empty and is not a Roofline Atlas site")
    assert sentinel.read_text() == "years of work"
    hidden_only = layout["tmp"] / "dotfiles"
    hidden_only.mkdir()
    (hidden_only / ".bashrc").write_text("x")
    _refused(hidden_only, layout, "not empty")
    a_file = layout["tmp"] / "report.pdf"
    a_file.write_bytes(b"%PDF")
    _refused(a_file, layout, "is a file")
    repo = layout["tmp"] / "gh-pages"
    (repo / ".git").mkdir(parents=True)
    (repo / MARKER).write_text("looks like a site")
    _refused(repo, layout, "git work tree")
    # A harmless-looking link to the foreign folder: links are resolved first.
    link = layout["tmp"] / "site-link"
    link.symlink_to(foreign)
    _refused(link, layout, "not empty")


def test_guard_accepts_new_empty_and_previous_sites(layout) -> None:
    root, cache = layout["root"], BuildCache(root=layout["cache"])
    new = layout["tmp"] / "out" / "site"
    assert check_site_dir(new, root, cache) == new.resolve()
    empty = layout["tmp"] / "empty"
    empty.mkdir()
    assert check_site_dir(empty, root, cache) == empty
    previous = layout["tmp"] / "previous"
    previous.mkdir()
    (previous / MARKER).write_text("made by roofline build")
    (previous / "index.html").write_text("<p>old</p>")
    assert check_site_dir(previous, root, cache) == previous
    assert check_site_dir(root / "site", root, cache) == root / "site"  # the default
    link = layout["tmp"] / "link"
    link.symlink_to(previous)
    assert check_site_dir(link, root, cache) == previous


def test_unwritable_site_folder_is_one_line(layout, monkeypatch) -> None:
    a_file = layout["tmp"] / "plain-file"
    a_file.write_text("x")
    cache = BuildCache(root=layout["cache"])
    with pytest.raises(BuildError, match="cannot write the site folder") as info:
        build(str(SMALL_SPECS), a_file / "site", root=layout["root"], cache=cache)
    assert "\n" not in str(info.value) and str(a_file) in str(info.value)

    def denied(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied", str(layout["tmp"] / "ro"))

    monkeypatch.setattr(write, "staging_folder", denied)
    with pytest.raises(BuildError, match="Permission denied") as info:
        build(str(SMALL_SPECS), layout["tmp"] / "ro" / "site", root=layout["root"], cache=cache)
    assert "\n" not in str(info.value) and str(layout["tmp"] / "ro") in str(info.value)


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="no sysfs")
def test_a_folder_nobody_may_write_is_one_line(layout) -> None:
    """sysfs refuses new folders even to root: a real unwritable parent as any user."""
    site = Path("/sys/roofline-atlas-site")
    with pytest.raises(BuildError, match=r"cannot write the site folder /sys/roofline") as info:
        build(str(SMALL_SPECS), site, root=layout["root"], cache=BuildCache(root=layout["cache"]))
    assert "\n" not in str(info.value)
    assert not site.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_parent_is_one_line(layout) -> None:
    parent = layout["tmp"] / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        with pytest.raises(BuildError, match="cannot write the site folder"):
            build(
                str(SMALL_SPECS),
                parent / "site",
                root=layout["root"],
                cache=BuildCache(root=layout["cache"]),
            )
    finally:
        parent.chmod(0o755)


# -- one build per root ------------------------------------------------------------------


def test_a_held_lock_fails_a_second_build_fast(layout) -> None:
    root = layout["root"]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys; sys.path.insert(0, {str(ROOT)!r})
            from pathlib import Path
            from site_gen.build import build_lock
            with build_lock(Path({str(root)!r})):
                print("locked", flush=True)
                sys.stdin.read()
        """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        site = layout["tmp"] / "site"
        with pytest.raises(BuildError) as info:
            build(str(SMALL_SPECS), site, root=root, cache=BuildCache(root=layout["cache"]))
        assert str(info.value) == (
            f"another roofline build is running in {root} (pid {holder.pid}); wait for it to finish"
        )
        assert not site.exists()
        assert not [p for p in root.iterdir() if p.name.startswith(".roofline-build.tmp")]
    finally:
        holder.communicate("", timeout=30)
    # Released when the holder ended; a second holder in this process is refused too.
    with build_lock(root), pytest.raises(BuildError, match=f"pid {os.getpid()}"), build_lock(root):
        pass
    with build_lock(root):  # and released again by the failed attempt's exit
        pass


# -- stale staging folders -------------------------------------------------------------


def test_stale_staging_of_dead_builds_is_removed_and_nothing_else(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    site = tmp_path / "out" / "site"
    site.mkdir(parents=True)
    (site / MARKER).write_text("site")
    dead, live = _dead_pid(), os.getpid()
    removed = [
        root / f".roofline-build.tmp-{dead}-abc_12xy",
        site.parent / f".site.tmp-{dead}-q1w2e3r4",
        root / "docs" / ".generated.tmp",  # fixed names of earlier versions, in docs/
        root / "docs" / ".generated.old",
    ]
    kept = [
        root / f".roofline-build.tmp-{live}-abc_12xy",  # a running build
        site.parent / f".site.tmp-{live}-q1w2e3r4",
        site.parent / ".site.old",  # not the build's naming: could be anyone's
        site.parent / ".site.tmp-q1w2e3r4",
        site.parent / f".site.tmp-{dead}",
        site.parent / f".site.tmp-{dead}-x.bak",
        site.parent / f".other.tmp-{dead}-q1w2e3r4",
        root / f".roofline-build.tmp-{dead}-abc12xy-mine",
    ]
    for folder in removed + kept:
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "f.txt").write_text("x")
    as_file = site.parent / f".site.tmp-{dead}-asfile00"
    as_file.write_text("a file, not a staging folder")
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    as_link = site.parent / f".site.tmp-{dead}-aslink00"
    as_link.symlink_to(target)
    remove_stale_staging(root, site)
    assert [p for p in removed if p.exists()] == []
    assert [p for p in kept if not (p / "sub" / "f.txt").is_file()] == []
    assert as_file.is_file() and as_link.is_symlink() and (target / "keep.txt").is_file()
    assert (site / MARKER).is_file()


def test_a_site_lost_between_the_final_renames_is_restored(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    site = tmp_path / "site"
    holder = tmp_path / f".site.tmp-{_dead_pid()}-zzzzzzzz"
    (holder / "old").mkdir(parents=True)
    (holder / "old" / MARKER).write_text("site")
    (holder / "old" / "index.html").write_text("previous")
    remove_stale_staging(root, site)
    assert (site / "index.html").read_text() == "previous"
    assert not holder.exists()


# -- the self-checking cache: pickles ------------------------------------------------------


class _Boom:
    """Unpickling this creates a file: proof that a pickle was (or was not) loaded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def _entry(cache: BuildCache, kind: str = "charts", key: str = KEY) -> Path:
    return cache.entries / kind / f"{key}.pkl"


def _damage_cases(path: Path) -> dict[str, tuple[bytes, str]]:
    data = path.read_bytes()
    header, _, payload = data.partition(b"\n")
    flipped = bytearray(data)
    flipped[-5] ^= 0x40
    edited = header + b"\n" + payload.replace(b"<svg/>", b"<svg!>")
    return {
        "garbled": (bytes(flipped), "checksum mismatch"),
        "truncated": (data[:-7], f"truncated: {len(payload) - 7} of {len(payload)} bytes"),
        "edited": (edited, "checksum mismatch"),
        "no header": (payload, "no valid header"),
        "empty": (b"", "no valid header"),
        "header only": (header, "no valid header"),
        "bad json": (header[:40] + b"\n" + payload, "no valid header"),
        "padded": (data + b"\0", "size mismatch"),
    }


@pytest.mark.parametrize(
    "case",
    ["garbled", "truncated", "edited", "no header", "empty", "header only", "bad json", "padded"],
)
def test_a_damaged_pickle_is_a_miss_with_one_warning(tmp_path, capfd, case: str) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    cache.put("charts", KEY, {"svg": "<svg/>", "speedup": 1.25})
    path = _entry(cache)
    data, reason = _damage_cases(path)[case]
    path.write_bytes(data)
    assert cache.get("charts", KEY) is None
    assert not path.exists()  # removed, so the recomputed value is stored afresh
    lines = _warnings(capfd.readouterr().err)
    assert lines == [
        f"[build] cache: discarded damaged entry charts/{KEY[:12]}... ({reason}); recomputing"
    ]
    assert (cache.hits["charts"], cache.misses["charts"]) == (0, 1)
    cache.put("charts", KEY, {"svg": "<svg/>", "speedup": 1.25})
    assert cache.get("charts", KEY) == {"svg": "<svg/>", "speedup": 1.25}


def test_a_misplaced_entry_is_a_miss(tmp_path, capfd) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    cache.put("charts", KEY, "svg of chart A")
    cache.put("latex", KEY, "formulas")
    shutil.copy(_entry(cache), _entry(cache, key=OTHER_KEY))  # renamed entry
    shutil.copy(_entry(cache, "latex"), _entry(cache))  # right key, wrong kind
    assert cache.get("charts", OTHER_KEY) is None
    assert cache.get("charts", KEY) is None
    assert cache.get("latex", KEY) == "formulas"
    assert len(_warnings(capfd.readouterr().err)) == 2


def test_pickles_are_loaded_only_after_the_checksum(tmp_path, capfd) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    proof = tmp_path / "pwned"
    cache.put("charts", KEY, "harmless")
    path = _entry(cache)
    header = path.read_bytes().partition(b"\n")[0]
    hostile = pickle.dumps(_Boom(str(proof)))
    path.write_bytes(header + b"\n" + hostile)  # the old checksum, a new payload
    assert cache.get("charts", KEY) is None
    path.write_bytes(hostile)  # a bare pickle, as earlier versions stored them
    assert cache.get("charts", KEY) is None
    assert not proof.exists()
    assert len(_warnings(capfd.readouterr().err)) == 2


def test_a_verified_payload_that_does_not_unpickle_is_a_miss(tmp_path, capfd) -> None:
    from site_gen.cache import _header

    cache = BuildCache(root=tmp_path / "cache")
    payload = b"\x80\x05not a pickle"
    path = _entry(cache)
    path.parent.mkdir(parents=True)
    path.write_bytes(_header("charts", KEY, payload) + payload)
    assert cache.get("charts", KEY) is None
    assert "does not load" in capfd.readouterr().err


def test_an_unwritable_cache_warns_once_and_goes_on(tmp_path, capfd) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    cache = BuildCache(root=blocker)
    cache.put("charts", KEY, "a")
    cache.put("charts", OTHER_KEY, "b")
    cache.put("pages", KEY, "c")
    assert cache.get("charts", KEY) is None
    assert capfd.readouterr().err.count("cannot write") == 1


def _aged(cache: BuildCache, kind: str, key: str, age_s: int, size: int = 1000) -> Path:
    """An entry of about ``size`` bytes last used ``age_s`` seconds after the epoch."""
    cache.put(kind, key, b"x" * size)
    path = _entry(cache, kind, key)
    os.utime(path, ns=(10**9 * age_s, 10**9 * age_s))
    return path


def test_prune_keeps_the_newest_and_the_protected(tmp_path) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    keys_in_age_order = [f"{i:064x}" for i in range(6)]
    for age, key in enumerate(keys_in_age_order):
        _aged(cache, "pages", key, age_s=age)
    cache.put("charts", KEY, "another kind")
    cache.prune("pages", keep=3, protect={keys_in_age_order[0]})
    kept = sorted(p.stem for p in (cache.entries / "pages").glob("*.pkl"))
    assert kept == sorted([keys_in_age_order[0], *keys_in_age_order[3:]])
    assert cache.get("charts", KEY) == "another kind"


def test_trim_removes_the_least_recently_used_until_under_the_cap(tmp_path) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    paths = [_aged(cache, kind, f"{i:064x}", age_s=i) for i, kind in enumerate("abcab")]
    sizes = [p.stat().st_size for p in paths]
    # Room for the newest three: the two least recently used go, whatever their kind.
    deleted, freed = cache.trim(sum(sizes[2:]), since_ns=10**12 * 10**9)
    assert (deleted, freed) == (2, sum(sizes[:2]))
    assert [p.exists() for p in paths] == [False, False, True, True, True]


def test_trim_never_removes_what_this_build_used(tmp_path) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    old = [_aged(cache, "charts", f"{i:064x}", age_s=i) for i in range(3)]
    # Reading an entry marks it used now: it outlives a trim to nothing.
    started_ns = 10**9 * 100
    assert cache.get("charts", f"{1:064x}") == b"x" * 1000
    assert cache.trim(0, since_ns=started_ns)[0] == 2
    assert [p.exists() for p in old] == [False, True, False]
    assert BuildCache(root=tmp_path / "cache", enabled=False).trim(0, 0) == (0, 0)


def test_trim_touches_only_this_versions_entries(tmp_path) -> None:
    cache = BuildCache(root=tmp_path / "cache")
    entry = _aged(cache, "charts", KEY, age_s=1)
    others = [
        cache.entries / "charts" / ".tmp-123",  # a write in flight
        cache.entries / "charts" / "notes.txt",
        cache.root / "v2" / "charts" / f"{OTHER_KEY}.pkl",  # another version's
        cache.root / "roots" / "abc" / "docs" / "index.md",  # an installed tool's root
    ]
    for path in others:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"y" * 5000)
        os.utime(path, ns=(0, 0))
    outside = tmp_path / "outside.pkl"
    outside.write_bytes(b"z")
    (cache.entries / "charts" / f"{OTHER_KEY}.pkl").symlink_to(outside)
    size = entry.stat().st_size
    assert cache.trim(0, since_ns=10**18) == (1, size)
    assert not entry.exists()
    assert all(p.exists() for p in others) and outside.exists()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", 2048 * 2**20),
        ("1", 2**20),
        (" 500 ", 500 * 2**20),
        *[(bad, None) for bad in ("0", "-5", "1.5", "2G", "\u00b2", "abc")],
    ],
)
def test_the_cache_cap_is_read_from_the_environment(monkeypatch, value, expected) -> None:
    monkeypatch.setenv(MAX_MB_ENV, value)
    if expected is not None:
        assert max_cache_bytes() == expected
        return
    with pytest.raises(ValueError, match=re.escape(MAX_MB_ENV) + ".*whole number of MiB"):
        max_cache_bytes()


def test_a_bad_cache_cap_fails_the_build_before_it_starts(layout, monkeypatch) -> None:
    monkeypatch.setenv(MAX_MB_ENV, "lots")
    site = layout["root"] / "site"
    site.mkdir()
    (site / "index.html").write_text("previous site")
    with pytest.raises(BuildError, match=f"{MAX_MB_ENV}: expected a whole number"):
        build(str(SMALL_SPECS), site, root=layout["root"], cache=BuildCache(root=layout["cache"]))
    assert (site / "index.html").read_text() == "previous site"


# -- the record of the last build: output manifests -------------------------------------


def _small_site(folder: Path) -> Path:
    (folder / "generated" / "gpus").mkdir(parents=True)
    (folder / "index.html").write_text("<p>home</p>")
    (folder / "generated" / "gpus" / "chart.svg").write_text("<svg/>")
    (folder / MARKER).write_text("site")
    return folder


def _site_damage(site: Path) -> dict[str, object]:
    def edit() -> None:
        (site / "index.html").write_text("<p>h0me</p>")

    def truncate() -> None:
        (site / "generated" / "gpus" / "chart.svg").write_text("<sv")

    def remove() -> None:
        (site / "index.html").unlink()

    def add() -> None:
        (site / "generated" / "evil.js").write_text("alert(1)")

    def link() -> None:
        (site / "index.html").unlink()
        (site / "index.html").symlink_to(site / MARKER)

    def same_bytes_as_a_link() -> None:
        copy = site.parent / "elsewhere.html"
        copy.write_bytes((site / "index.html").read_bytes())
        (site / "index.html").unlink()
        (site / "index.html").symlink_to(copy)

    def empty_folder() -> None:
        (site / "generated" / "new").mkdir()
        (site / "generated" / "new" / "x").write_text("")

    return {
        "edited": edit,
        "truncated": truncate,
        "missing": remove,
        "extra": add,
        "link": link,
        "link, same bytes": same_bytes_as_a_link,
        "new file": empty_folder,
    }


@pytest.mark.parametrize(
    "case", ["edited", "truncated", "missing", "extra", "link", "link, same bytes", "new file"]
)
def test_a_changed_output_folder_does_not_match_its_manifest(tmp_path, case: str) -> None:
    site = _small_site(tmp_path / "site")
    recorded = keys.manifest(site)
    assert recorded is not None and keys.matches(site, recorded)
    _site_damage(site)[case]()
    assert not keys.matches(site, recorded)


def test_a_missing_or_linked_output_folder_does_not_match(tmp_path) -> None:
    site = _small_site(tmp_path / "site")
    recorded = keys.manifest(site)
    link = tmp_path / "link"
    link.symlink_to(site)
    assert not keys.matches(link, recorded)
    assert not keys.matches(tmp_path / "absent", recorded)


def test_generated_paths_cannot_leave_the_generated_folder(tmp_path) -> None:
    docs = tmp_path / "docs"
    for bad in (
        "generated/../x.md",
        "generated//x.md",
        "generated/./x.md",
        "other/x.md",
        "generated/a/../../x.md",
    ):
        with pytest.raises(ValueError, match="generated path"):
            write.write_generated({bad: "x"}, {}, docs)
    assert not (tmp_path / "x.md").exists() and not (docs / "x.md").exists()


def test_unchanged_files_are_linked_and_changed_ones_written(tmp_path) -> None:
    previous = tmp_path / "previous"
    previous.mkdir()
    (previous / "same.txt").write_bytes(b"same")
    (previous / "old.txt").write_bytes(b"old")
    (previous / "link.txt").symlink_to(previous / "same.txt")
    out = tmp_path / "out"
    out.mkdir()
    assert write.put_file(out / "same.txt", b"same", previous / "same.txt") is True
    assert write.put_file(out / "old.txt", b"new", previous / "old.txt") is False
    assert write.put_file(out / "link.txt", b"same", previous / "link.txt") is False
    assert write.put_file(out / "none.txt", b"x", previous / "absent.txt") is False
    assert os.path.samefile(out / "same.txt", previous / "same.txt")
    assert (out / "old.txt").read_bytes() == b"new" and not (out / "link.txt").is_symlink()
    # A replacement is a rename: the linked twin keeps its bytes.
    write.replace_file(out / "same.txt", b"changed")
    assert (previous / "same.txt").read_bytes() == b"same"
    assert (out / "same.txt").read_bytes() == b"changed"


def test_files_with_the_same_bytes_are_one_file_and_never_change_together(tmp_path) -> None:
    docs = tmp_path / "docs"
    placeholder = "<svg/>\n"
    pages = {"generated/a.md": "a", "generated/b.csv": "x,y", "generated/c/b.csv": "x,y"}
    charts = {"generated/img/1.svg": placeholder, "generated/img/2.svg": placeholder}
    generated = write.write_generated(pages, charts, docs)
    assert os.path.samefile(generated / "b.csv", generated / "c" / "b.csv")
    assert os.path.samefile(generated / "img" / "1.svg", generated / "img" / "2.svg")
    assert not os.path.samefile(generated / "a.md", generated / "b.csv")
    assert (generated / "c" / "b.csv").read_text() == "x,y"
    # The chart drawn over one placeholder leaves the other as it was.
    write.replace_file(generated / "img" / "1.svg", b"<svg>drawn</svg>")
    assert (generated / "img" / "2.svg").read_text() == placeholder
    # A copy into another folder is a link made beside it and renamed over the target.
    site = tmp_path / "site" / "img"
    site.mkdir(parents=True)
    (site / "1.svg").write_bytes(b"old")
    write.replace_with_link(generated / "img" / "1.svg", site / "1.svg")
    assert os.path.samefile(site / "1.svg", generated / "img" / "1.svg")
    assert sorted(p.name for p in site.iterdir()) == ["1.svg"]  # no temporary left


# -- KaTeX ---------------------------------------------------------------------------------


@pytest.fixture()
def katex_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not REAL_KATEX.is_file():
        pytest.skip(f"{REAL_KATEX} is not cached")
    folder = tmp_path / "katex-cache"
    folder.mkdir()
    monkeypatch.setenv("ROOFLINE_ATLAS_CACHE", str(folder))
    return folder


def test_the_pinned_integrity_matches_the_cached_tarball(katex_cache) -> None:
    assert assets.integrity(REAL_KATEX) == assets.KATEX_INTEGRITY


def test_a_bad_cached_tarball_is_fetched_again(katex_cache, monkeypatch, capfd) -> None:
    tarball = katex_cache / REAL_KATEX.name
    tarball.write_bytes(REAL_KATEX.read_bytes()[:-100])  # truncated download
    fetched = []

    def fake_pack(dest: Path) -> Path:
        fetched.append(dest)
        assert dest.parent == katex_cache and dest.name.startswith(f".katex.tmp-{os.getpid()}-")
        return Path(shutil.copy(REAL_KATEX, dest))

    monkeypatch.setattr(assets, "npm_pack", fake_pack)
    assert assets.katex_tarball() == tarball
    assert tarball.read_bytes() == REAL_KATEX.read_bytes()
    err = capfd.readouterr().err
    assert err.count("[build] katex: discarded cached") == 1 and "delete it" not in err
    assert sorted(p.name for p in katex_cache.iterdir()) == [tarball.name]
    assets.katex_tarball()  # a good cached tarball is used as it is
    assert len(fetched) == 1


def test_a_fetched_tarball_that_does_not_verify_is_refused(katex_cache, monkeypatch) -> None:
    def evil_pack(dest: Path) -> Path:
        out = dest / REAL_KATEX.name
        out.write_bytes(b"\x1f\x8b not katex")
        return out

    monkeypatch.setattr(assets, "npm_pack", evil_pack)
    with pytest.raises(assets.AssetError, match="not npm's published integrity"):
        assets.katex_tarball()
    assert list(katex_cache.iterdir()) == []  # nothing stored, no temporary folder left


def test_stale_katex_fetch_folders_are_removed(katex_cache, monkeypatch) -> None:
    stale = katex_cache / f".katex.tmp-{_dead_pid()}-abcdefgh"
    stale.mkdir()
    monkeypatch.setattr(assets, "npm_pack", lambda dest: Path(shutil.copy(REAL_KATEX, dest)))
    assets.katex_tarball()
    assert not stale.exists()


# -- full builds (slow) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One cold build with the cache on: the reference site and a warm cache (the shared
    small site's, built under the same epoch and without a site URL; read only)."""
    assert EPOCH == SHARED_EPOCH
    return shared_small_build(tmp_path_factory)


def _warm_copy(warm: dict[str, Path], tmp: Path) -> tuple[Path, BuildCache]:
    return make_root(tmp), BuildCache(root=copy_of_warm_cache(warm, tmp))


def _placeholders(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*.svg") if p.read_text("utf-8") == PLACEHOLDER_SVG]


@pytest.mark.slow
def test_a_damaged_cache_gives_a_byte_identical_site(warm, tmp_path, capfd) -> None:
    reference = file_tree(warm["site"])
    assert reference[MARKER].startswith(b"Roofline Atlas site")
    assert not _placeholders(warm["root"] / "docs" / "generated")
    root, cache = _warm_copy(warm, tmp_path)
    entries = {
        kind: sorted((cache.entries / kind).glob("*.pkl"))
        for kind in ("charts", "evaluations", "latex")
    }
    garbled = bytearray(entries["charts"][0].read_bytes())
    garbled[-3] ^= 0xFF
    entries["charts"][0].write_bytes(bytes(garbled))
    truncated = entries["evaluations"][0].read_bytes()
    entries["evaluations"][0].write_bytes(truncated[: len(truncated) // 2])
    edited = bytearray(entries["latex"][0].read_bytes())
    edited[len(edited) // 2] ^= 0x01  # one bit of a formula
    entries["latex"][0].write_bytes(bytes(edited))
    shutil.copy(entries["charts"][2], entries["charts"][1])  # misplaced
    html = {}  # a page's stored HTML, told apart from its stored body by its keys
    for path in sorted((cache.entries / "pages").glob("*.pkl")):
        value = cache.get("pages", path.stem)
        if value.get("html") and b"Test H100" in zlib.decompress(value["html"]):
            html = {"path": path, "value": value}
            break
    page = zlib.decompress(html["value"]["html"]).replace(b"Test H100", b"Test H1OO")
    forged = {**html["value"], "html": zlib.compress(page)}
    payload = pickle.dumps(forged, protocol=5)
    old_header = html["path"].read_bytes().partition(b"\n")[0]
    html["path"].write_bytes(old_header + b"\n" + payload)  # edited behind its checksum
    (outputs,) = (cache.entries / "outputs").glob("*.pkl")
    outputs.write_bytes(outputs.read_bytes()[:-1])
    capfd.readouterr()

    site = tmp_path / "site"
    shutil.copytree(warm["site"], site)  # a previous site: replaced without complaint
    (site / "stale.html").write_text("from an older build")
    build(str(SMALL_SPECS), site, root=root, cache=cache)
    assert file_tree(site) == reference
    lines = _warnings(capfd.readouterr().err)
    assert len(lines) == 6, lines
    assert sorted(line.split("entry ")[1].split("/")[0] for line in lines) == [
        "charts",
        "charts",
        "evaluations",
        "latex",
        "outputs",
        "pages",
    ]
    assert cache.misses["outputs"] == 1 and cache.hits["charts"] > 0
    assert cache.misses["pages"] == 1 and cache.hits["pages"] > 0
    # The repaired cache: nothing to redo, the site verifies as it is, silently.
    again = BuildCache(root=tmp_path / "cache")
    build(str(SMALL_SPECS), site, root=root, cache=again)
    assert file_tree(site) == reference
    assert _warnings(capfd.readouterr().err) == []
    assert dict(again.hits) == {"outputs": 1} and sum(again.misses.values()) == 0
    # An edited site no longer verifies: rebuilt from the cache, whole again.
    (site / "index.html").write_text("tampered")
    (root / "docs" / "generated" / "stray.md").write_text("# stray")
    tampered = BuildCache(root=tmp_path / "cache")
    build(str(SMALL_SPECS), site, root=root, cache=tampered)
    assert file_tree(site) == reference
    assert not (root / "docs" / "generated" / "stray.md").exists()
    assert tampered.misses["outputs"] == 1 and tampered.misses["pages"] == 0


@pytest.mark.slow
def test_a_new_site_url_reaches_cached_rebuilds(
    warm, tmp_path, tmp_path_factory, monkeypatch, capfd
) -> None:
    url = SHARED_URL
    monkeypatch.setenv("ROOFLINE_ATLAS_SITE_URL", url)
    # A cap this build's own entries exceed: the warm copy's entries it did not use go.
    monkeypatch.setenv(MAX_MB_ENV, "1")
    root, cache = _warm_copy(warm, tmp_path)
    started_ns = time.time_ns()
    build(str(SMALL_SPECS), tmp_path / "cached", root=root, cache=cache)
    assert "least recently used entries removed" in capfd.readouterr().out
    left = [p.stat().st_mtime_ns for p in cache.entries.glob("*/*.pkl")]
    assert left and min(left) >= started_ns - 10**9  # only what this build read or wrote
    assert cache.misses["latex"] == 2 and cache.misses["outputs"] == 1
    assert cache.hits["charts"] > 0 and cache.misses["charts"] == 0
    assert cache.misses["pages"] > 0  # canonical links, Cite permalinks
    # The same site as a cold build for that URL (`make site`'s, under the same epoch).
    cached, clean = file_tree(tmp_path / "cached"), file_tree(shared_url_site(tmp_path_factory))
    assert cached.keys() == clean.keys()
    assert [name for name in cached if cached[name] != clean[name]] == []
    page = cached["generated/gpus/test-h100/training-rowwise/index.html"].decode()
    assert f"{url}generated/gpus/test-h100/training-rowwise/#f-" in page
    assert "roofline-atlas.example" not in page
    assert f'<link rel="canonical" href="{url}' in cached["index.html"].decode()
    assert f"<loc>{url}</loc>" in cached["sitemap.xml"].decode()
    generated = root / "docs" / "generated" / "gpus" / "test-h100" / "training-rowwise.md"
    assert generated.is_file()
    assert url in generated.read_text("utf-8")  # docs/generated (mkdocs serve) follows
    assert 'rel="canonical"' not in file_tree(warm["site"])["index.html"].decode()  # unset: none


@pytest.mark.slow
def test_a_killed_build_leaves_no_placeholders_and_is_cleaned_up(warm, tmp_path) -> None:
    root, cache = _warm_copy(warm, tmp_path)
    # Every stage but the charts is cached (and the finished site is not, so the build
    # runs): it reaches mkdocs in seconds, its chart placeholders written and drawing.
    shutil.rmtree(cache.entries / "charts")
    shutil.rmtree(cache.entries / "outputs")
    shutil.copytree(warm["root"] / "docs" / "generated", root / "docs" / "generated")
    site = tmp_path / "site"
    shutil.copytree(warm["site"], site)
    before_docs, before_site = file_tree(root / "docs"), file_tree(site)
    script = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); from pathlib import Path; "
        "from site_gen.build import build; from site_gen.cache import BuildCache; "
        f"build({str(SMALL_SPECS)!r}, Path({str(site)!r}), root=Path({str(root)!r}), "
        f"cache=BuildCache(root=Path({str(cache.root)!r})))"
    )
    # Its orphaned pool workers complain on stderr as they find the pipe gone: not ours.
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("[build] mkdocs   build"):
            break  # placeholders are written; mkdocs and the chart drawing are running
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    stale_root = [p for p in root.iterdir() if p.name.startswith(".roofline-build.tmp-")]
    stale_site = [p for p in tmp_path.iterdir() if p.name.startswith(".site.tmp-")]
    pids = [re.search(r"\.tmp-(\d+)-", p.name).group(1) for p in stale_root + stale_site]
    assert pids == [str(proc.pid)] * 2
    assert _placeholders(stale_root[0] / "docs" / "generated")  # they only ever lived there
    assert file_tree(root / "docs") == before_docs
    assert file_tree(site) == before_site
    with build_lock(root):  # the killed build's workers do not hold the lock
        remove_stale_staging(root, site)
    assert not [p for p in stale_root + stale_site if p.exists()]
    assert file_tree(site) == before_site


def test_the_input_key_covers_every_input(tmp_path, monkeypatch) -> None:
    root = make_root(tmp_path)
    specs = tmp_path / "specs.toml"
    shutil.copy(SMALL_SPECS, specs)
    marker = "made by a test"

    def key() -> str:
        return keys.input_key(str(specs), root, marker)

    seen = {key()}
    assert key() in seen  # stable
    twin = make_root(tmp_path / "elsewhere")  # the same content in another place
    assert keys.input_key(str(specs), twin, marker) in seen
    changes = [
        lambda: monkeypatch.setenv("ROOFLINE_ATLAS_SITE_URL", "https://a.example/"),
        lambda: monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(EPOCH) + 86400)),
        lambda: specs.write_text(specs.read_text() + "\n# a comment\n"),
        lambda: (root / "docs" / "index.md").write_text("# edited"),
        lambda: (root / "mkdocs.yml").write_text((root / "mkdocs.yml").read_text() + "\n"),
        lambda: (root / "docs" / "hooks.py").write_text("# another hook"),
        lambda: (root / "docs" / "assets" / "new.css").write_text("a{}"),
    ]
    for change in changes:
        change()
        seen.add(key())
    assert len(seen) == len(changes) + 1
    assert keys.input_key(str(specs), root, "another package version") not in seen
    (root / "docs" / "generated").mkdir()
    (root / "docs" / "generated" / "x.md").write_text("output, not input")
    assert key() in seen


def test_the_input_key_follows_the_code_and_git(monkeypatch) -> None:
    base = keys.input_key(None, ROOT, "m")
    monkeypatch.setattr(keys, "generator_digest", lambda: "templates edited")
    assert keys.input_key(None, ROOT, "m") != base
    monkeypatch.undo()
    monkeypatch.setattr(keys, "git_state", lambda _path: "another HEAD")
    assert keys.input_key(None, ROOT, "m") != base
    monkeypatch.undo()
    monkeypatch.setattr(keys, "tool_versions", lambda: (("mkdocs", "9.9"),))
    assert keys.input_key(None, ROOT, "m") != base


def test_hook_modules_listed_in_mkdocs_yml_are_inputs(tmp_path) -> None:
    root = make_root(tmp_path)
    outside = tmp_path / "hook_outside.py"
    outside.write_text("# v1")
    yml = root / "mkdocs.yml"
    yml.write_text(yml.read_text().replace("hooks:\n", "hooks:\n  - ../hook_outside.py\n"))
    assert "../hook_outside.py" in keys._hook_paths(yml)
    before = keys.root_digest(root)
    outside.write_text("# v2")
    assert keys.root_digest(root) != before
