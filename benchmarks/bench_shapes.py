"""Benchmark: ``roofline eval`` over a 10**6-row shapes file, time and peak memory (not a test).

Usage: ``.venv/bin/python benchmarks/bench_shapes.py [--rows N] [--no-names] [--runs R]``.
Writes a CSV with header ``M,K,N,name`` (random dimensions, a name per row) to a temporary
folder, then runs, in a fresh interpreter each time,

    roofline eval --gpu "NVIDIA H100" --recipe rowwise --shapes-file big.csv --format csv -o out.csv

and reports the wall time (interpreter start included) and the peak resident memory of
the command and any process it starts (``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the
largest of them, not a sum). Budget (issue #9): under 5 s and under 300 MB for 10**6 rows;
the best of ``--runs`` counts, as other load on a shared machine only slows a run down.
Exit status 1 when the budget is missed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 5.0
BUDGET_MB = 300.0
COMMAND = ["eval", "--gpu", "NVIDIA H100", "--recipe", "rowwise", "--format", "csv"]


def write_shapes(path: Path, rows: int, names: bool, seed: int = 0) -> None:
    """A shapes CSV of ``rows`` random shapes (dimensions 1 ... 65535)."""
    rng = np.random.default_rng(seed)
    m, k, n = (rng.integers(1, 65536, rows).tolist() for _ in range(3))
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("M,K,N,name\n" if names else "M,K,N\n")
        step = 100_000
        for start in range(0, rows, step):
            part = range(start, min(rows, start + step))
            if names:
                lines = (f"{m[i]},{k[i]},{n[i]},layer{i}.w{i % 7}\n" for i in part)
            else:
                lines = (f"{m[i]},{k[i]},{n[i]}\n" for i in part)
            handle.write("".join(lines))


def peak_rss_mb() -> float:
    """The largest resident set of any finished child process so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes vs KiB


def run_once(shapes: Path, output: Path) -> float:
    """One eval in a fresh interpreter; its wall time in seconds."""
    argv = [sys.executable, "-m", "roofline.cli", *COMMAND, "--shapes-file", str(shapes)]
    began = time.perf_counter()
    proc = subprocess.run([*argv, "-o", str(output)], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"roofline eval failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def main() -> int:
    """Generate the file, time the runs, print the verdict; exit 1 when over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--no-names", action="store_true", help="header M,K,N only")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-shapes-") as tmp:
        shapes, output = Path(tmp) / "big.csv", Path(tmp) / "out.csv"
        write_shapes(shapes, args.rows, names=not args.no_names)
        size_mb = shapes.stat().st_size / 2**20
        print(f"{args.rows} rows, {size_mb:.1f} MB: roofline {' '.join(COMMAND)} -o out.csv")
        times = []
        for run in range(1, args.runs + 1):
            times.append(run_once(shapes, output))
            print(f"  run {run}: {times[-1]:.2f} s")
        with output.open("rb") as handle:
            lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
        if lines != args.rows + 1:
            raise SystemExit(f"out.csv has {lines} lines, expected {args.rows + 1}")
    best, peak = min(times), peak_rss_mb()
    ok_time, ok_memory = best < BUDGET_S, peak < BUDGET_MB
    print(f"best wall time {best:.2f} s (budget {BUDGET_S:g} s): {'PASS' if ok_time else 'FAIL'}")
    print(f"peak RSS {peak:.0f} MB (budget {BUDGET_MB:g} MB): {'PASS' if ok_memory else 'FAIL'}")
    verdict = "PASS" if ok_time and ok_memory else "FAIL"
    print(f"{verdict}: {args.rows} rows in {best:.2f} s and {peak:.0f} MB")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
