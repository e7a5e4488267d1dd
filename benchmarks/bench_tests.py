"""The test suite's wall time and its 20 slowest tests (not a test).

Usage: ``.venv/bin/python benchmarks/bench_tests.py [pytest arguments]``.

Runs the suite as ``make test`` does (``python -m pytest``, so pyproject's ``-n auto``
applies) with ``--durations=20``, prints pytest's list of the 20 slowest tests (setup,
call and teardown apart: a shared site's build shows as the setup of the first test that
asks for it), the reasons of any skip or failure (``-ra``) and the total wall time.
Speed is watched here, never by timing asserts in tests. Extra arguments go to pytest
(``-n 0`` for one process, a path for one folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLOWEST = 20


def main() -> int:
    """Run the suite once; print the slowest tests and the wall time; pytest's exit code."""
    command = [sys.executable, "-m", "pytest", f"--durations={SLOWEST}", "-q", *sys.argv[1:]]
    print("[bench] " + " ".join(command), flush=True)
    began = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    lines = proc.stdout.splitlines()
    start = next((i for i, ln in enumerate(lines) if "slowest" in ln and "durations" in ln), None)
    if start is None:
        sys.stdout.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        print(f"[bench] no durations in pytest's output (exit {proc.returncode})")
        return proc.returncode or 1
    block = []
    for line in lines[start:]:
        if block and (not line.strip() or line.startswith("=")):
            break
        block.append(line)
    print("\n".join(block))
    # pytest's -ra lines (addopts): what was skipped or failed, and why.
    summary = next((i for i, ln in enumerate(lines) if "short test summary info" in ln), None)
    if summary is not None:
        print("\n".join(lines[summary:-1]))
    print(lines[-1] if lines else "")  # pytest's summary: passed, failed, skipped
    print(f"[bench] suite wall time {wall:.1f} s on {os.cpu_count()} CPUs (exit {proc.returncode})")
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
