"""A share of a mkdocs run's page work done by forked helper processes.

mkdocs makes its pages one after another in one process: Markdown to HTML for every page,
then every page through the theme's template, the search index and the hooks. The page
cache (:mod:`site_gen.output.mkdocs_cache`) forks helpers at the start of each of those
two loops, when everything a page needs (the config, the file list, the navigation, every
page's body) is in memory, so a helper is this process as it is then. The helpers take
pages from the end of the list while this process takes them from the start; where they
meet, this process waits for the helpers' results, which come back through a queue.

A result is only what the page cache would otherwise store for the page (under the same
key, computed in the helper from the same inputs); a page whose work logged a warning or
failed in a helper comes back as None and is made here again, where mkdocs sees the
warning or the error as in a run without helpers. A helper that dies is a helper whose
pages are made here.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue
import sys
from collections.abc import Callable, Sequence
from typing import Any

#: How long one wait for a helper's result lasts before checking that the helpers live.
POLL_S = 1.0


class _Warnings(logging.Handler):
    """Counts mkdocs' warnings and errors in a helper (what strict mode would fail on)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class Split:
    """``items`` (page paths, in the order mkdocs makes them) shared between this process
    and ``helpers`` forked ones, each item done by ``work(item)`` in whichever process
    claims it first; a helper's result is None where its work warned or raised."""

    def __init__(self, items: Sequence[str], work: Callable[[str], Any], helpers: int) -> None:
        context = multiprocessing.get_context("fork")
        # A helper starts with a copy of this process' unwritten output; write it first.
        sys.stdout.flush()
        sys.stderr.flush()
        self.items = list(items)
        self.index = {item: i for i, item in enumerate(self.items)}
        self._lock = context.Lock()
        self._front = context.RawValue("i", 0)  # the first item not yet claimed here
        self._back = context.RawValue("i", len(self.items))  # the last one helpers took
        self._queue: Any = context.Queue()
        self._results: dict[int, Any] = {}
        self._work = work
        self._processes = [context.Process(target=self._serve, daemon=True) for _ in range(helpers)]
        for process in self._processes:
            process.start()

    def mine(self, item: str) -> bool:
        """Claim ``item`` for this process: True unless a helper has it (or it is not one
        of the items, which no helper does)."""
        i = self.index.get(item)
        if i is None:
            return True
        with self._lock:
            if i < self._back.value:
                self._front.value = max(self._front.value, i + 1)
                return True
        return False

    def result(self, item: str) -> Any:
        """A helper's result for ``item`` (waiting for it); None when it warned, failed
        or its helper died."""
        i = self.index[item]
        while i not in self._results:
            try:
                done = self._queue.get(timeout=POLL_S)
            except queue.Empty:
                if not any(p.is_alive() for p in self._processes) and self._queue.empty():
                    return None
                continue
            if done is not None:
                self._results[done[0]] = done[1]
        return self._results.pop(i)

    def close(self) -> None:
        """End the helpers (at the end of the loop, or when it failed)."""
        for process in self._processes:
            process.join(timeout=POLL_S)  # done with its share by now, unless this failed
            if process.is_alive():
                process.terminate()
                process.join()
        self._queue.close()

    def _claim_back(self) -> int | None:
        with self._lock:
            if self._back.value - 1 < self._front.value:
                return None
            self._back.value -= 1
            return self._back.value

    def _serve(self) -> None:
        """A helper's loop: claim from the end, work, send; warnings silenced (the page
        is made again where they count)."""
        warnings = _Warnings()
        logger = logging.getLogger("mkdocs")
        logger.handlers = [warnings]
        logger.propagate = False
        while (i := self._claim_back()) is not None:
            warnings.count = 0
            try:
                value = self._work(self.items[i])
            except Exception:  # made again here, where the error is reported
                value = None
            self._queue.put((i, None if warnings.count else value))
        self._queue.put(None)
