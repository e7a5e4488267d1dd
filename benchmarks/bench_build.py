"""Time a full cold build of the site from the bundled specs (not a test).

Usage: ``.venv/bin/python benchmarks/bench_build.py [--runs N]``. Each run is a fresh
interpreter (cold imports and model compilation) building into a temporary folder; the
per-stage timings are printed by the build itself and summarised here. Budget: 60 s on
2 cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 60.0
SNIPPET = (
    "import sys, json; from pathlib import Path; from site_gen.build import build; "
    "t = build(None, Path(sys.argv[1])); print('TIMINGS', json.dumps(t))"
)


def one_run() -> dict[str, float]:
    """One cold build in a subprocess; returns its stage timings plus wall time."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", SNIPPET, str(Path(tmp) / "site")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - began
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"build failed (exit {proc.returncode})")
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("TIMINGS "))
    timings = json.loads(line.removeprefix("TIMINGS "))
    timings["wall (incl. interpreter start)"] = wall
    return timings


def main() -> None:
    """Run the benchmark and print a summary against the budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for run in range(args.runs):
        timings = one_run()
        print(f"run {run + 1}:")
        for stage, seconds in timings.items():
            print(f"  {stage:<32} {seconds:6.1f} s")
        verdict = "within" if timings["total"] <= BUDGET_S else "OVER"
        print(f"  {verdict} the {BUDGET_S:.0f} s budget")


if __name__ == "__main__":
    main()
