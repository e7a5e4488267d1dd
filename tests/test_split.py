"""site_gen.split: a forked helper shares a list of page work with this process.

Each item is done once, by this process (which takes them from the start) or by a helper
(from the end); a helper's work that warns on mkdocs' logger or raises comes back as
None, so the caller makes that page itself, where the warning or error counts.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from site_gen.split import Split

ITEMS = [f"page-{i:02d}.md" for i in range(40)]


def _run(work, helpers: int = 1, slow_s: float = 0.0) -> tuple[dict[str, object], set[str]]:
    """Every item through a Split: results by item, and the items the helpers did."""
    split = Split(ITEMS, work, helpers)
    results: dict[str, object] = {}
    theirs: set[str] = set()
    try:
        for item in ITEMS:
            if split.mine(item):
                time.sleep(slow_s)  # this process' own page
                results[item] = ("here", item.upper())
            else:
                theirs.add(item)
                results[item] = split.result(item)
    finally:
        split.close()
    return results, theirs


def _upper(item: str) -> tuple[str, str]:
    time.sleep(0.005)
    return ("helper", item.upper())


def test_every_item_is_done_once_and_both_sides_work() -> None:
    results, theirs = _run(_upper, slow_s=0.01)
    assert set(results) == set(ITEMS)
    assert all(value[1] == item.upper() for item, value in results.items())
    assert theirs and len(theirs) < len(ITEMS)  # the helper took some from the end
    assert {item for item, value in results.items() if value[0] == "helper"} == theirs
    assert max(ITEMS.index(i) for i in set(ITEMS) - theirs) < min(ITEMS.index(i) for i in theirs)


def test_two_helpers_share_the_end() -> None:
    results, theirs = _run(_upper, helpers=2, slow_s=0.01)
    assert set(results) == set(ITEMS) and theirs


def _warns_on_odd(item: str) -> str:
    if int(item[5:7]) % 2:
        logging.getLogger("mkdocs.structure.pages").warning("a broken link in %s", item)
    return item


def test_a_helper_result_that_warned_is_none() -> None:
    results, theirs = _run(_warns_on_odd, slow_s=0.01)
    for item in theirs:
        assert results[item] == (None if int(item[5:7]) % 2 else item)


def _raises_on_ten(item: str) -> str:
    if item == "page-30.md":
        raise RuntimeError("cannot render")
    return item


def test_a_helper_result_that_raised_is_none() -> None:
    results, theirs = _run(_raises_on_ten, slow_s=0.02)
    assert "page-30.md" in theirs
    assert results["page-30.md"] is None
    assert all(results[i] == i for i in theirs - {"page-30.md"})


def _dies(item: str) -> str:
    os._exit(3)  # a helper killed while it works


def test_a_dead_helper_leaves_its_pages_here() -> None:
    results, theirs = _run(_dies, slow_s=0.02)
    assert theirs
    assert all(results[i] is None for i in theirs)


KILLED = """
import os, sys, time
from site_gen.split import Split
split = Split([str(i) for i in range(2000)], lambda item: time.sleep(0.05), 1)
print(split._processes[0].pid, flush=True)
os._exit(0)  # killed: no close, nobody reads the queue
"""


def test_a_helper_ends_when_the_build_dies() -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED], capture_output=True, text=True, check=True, timeout=60
    )
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
