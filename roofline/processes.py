"""Forked worker pools, shared by the commands that spread work over the CPUs (the big
outputs' formatting in ``roofline eval``, the folds of ``roofline validate --cv source``):
whether this platform can fork, how many CPUs this process may use, and the workers'
handling of Ctrl-C."""

from __future__ import annotations

import multiprocessing
import os
import signal


def can_fork() -> bool:
    """Whether worker processes can be forked here (a forked worker starts at once and
    inherits what the parent loaded; a spawned one imports everything again)."""
    return "fork" in multiprocessing.get_all_start_methods()


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def ignore_sigint() -> None:
    """A pool worker's initializer: Ctrl-C reaches the whole process group, and the parent
    stops the pool and reports it, so a worker must not print a KeyboardInterrupt traceback
    of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
