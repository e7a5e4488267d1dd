"""A list of work shared between this process and forked helpers (pages, mostly).

Some of the build's loops run in the build's own process, one item after another, with
everything an item needs in memory: rendering the pages (:mod:`site_gen.pages.render`)
and mkdocs' two page loops, Markdown to HTML and HTML through the theme's template
(:mod:`site_gen.output.mkdocs_cache`). :class:`Split` forks helpers at the start of such a
loop, so a helper is this process as it is then; the helpers take items from the end of
the list while this process takes them from the start, and where they meet this process
waits for the helpers' results, which come back through a queue.

A helper's item that raised, or logged a warning on the watched logger (mkdocs', whose
warnings fail a strict build), comes back as None: the caller does that item itself, where
the error or the warning counts as in a run without helpers. A helper that dies is a
helper whose items are done here.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import sys
from collections.abc import Callable, Sequence
from typing import Any

#: How long one wait for a helper's result lasts before checking that the helpers live.
POLL_S = 1.0


class _Warnings(logging.Handler):
    """Counts a helper's warnings and errors (what mkdocs' strict mode fails on)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class Split:
    """``items`` (names, in the order this process does them) shared between this process
    and ``helpers`` forked ones, each item done by ``work(item)`` in whichever process
    claims it first; a helper's result is None where its work raised or logged a warning
    on the logger ``watch`` (None: warnings are not watched)."""

    def __init__(
        self,
        items: Sequence[str],
        work: Callable[[str], Any],
        helpers: int,
        watch: str | None = "mkdocs",
    ) -> None:
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
        self._watch = watch
        # Read here, before the fork: a helper that asked os.getppid() itself could start
        # after this process died and already see its new parent (init), never noticing.
        self._parent = os.getpid()
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
        """A helper's loop: claim from the end, work, send; the watched warnings are
        counted, not shown (the item is done again where they count)."""
        warnings = _Warnings()
        if self._watch is not None:
            logger = logging.getLogger(self._watch)
            logger.handlers = [warnings]
            logger.propagate = False
        while (i := self._claim_back()) is not None:
            if os.getppid() != self._parent:  # the build died (killed): so does its helper,
                self._queue.cancel_join_thread()  # not waiting for a reader
                return  # which frees what it inherited (the build lock among them)
            warnings.count = 0
            try:
                value = self._work(self.items[i])
            except Exception:  # made again here, where the error is reported
                value = None
            self._queue.put((i, None if warnings.count else value))
        self._queue.put(None)
