"""Time a cold build of the site and an unchanged rebuild (not a test).

Usage: ``.venv/bin/python benchmarks/bench_build.py [--runs N]``. Each build is a fresh
interpreter building the bundled specs into a temporary folder. The cold build starts
from an empty build cache; the rebuild reuses that cache with nothing changed. Targets:
a cold build under 60 s on 2 cores; an unchanged rebuild at most a quarter of it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLD_BUDGET_S = 60.0
REBUILD_FRACTION = 0.25
SNIPPET = (
    "import sys, json; from pathlib import Path; from site_gen.build import build; "
    "from site_gen.cache import BuildCache; "
    "t = build(None, Path(sys.argv[1]), cache=BuildCache(root=Path(sys.argv[2]))); "
    "print('TIMINGS', json.dumps(t))"
)


def one_build(site: Path, cache: Path) -> dict[str, float]:
    """One build in a subprocess; returns its stage timings plus wall time."""
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", SNIPPET, str(site), str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
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


def main() -> int:
    """Run cold + unchanged builds, print the summary, exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    ok = True
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            site, cache = Path(tmp) / "site", Path(tmp) / "cache"
            cold = one_build(site, cache)
            warm = one_build(site, cache)
        print(f"\nrun {run + 1}: {'stage':<32} {'cold':>7} {'unchanged':>10}")
        for stage in cold:
            print(f"       {stage:<32} {cold[stage]:6.1f}s {warm.get(stage, 0.0):9.1f}s")
        ratio = warm["total"] / cold["total"]
        cold_ok, warm_ok = cold["total"] <= COLD_BUDGET_S, ratio <= REBUILD_FRACTION
        ok &= cold_ok and warm_ok
        print(f"cold build {cold['total']:.1f} s ({'within' if cold_ok else 'OVER'} "
              f"{COLD_BUDGET_S:.0f} s); unchanged rebuild {warm['total']:.1f} s = "
              f"{ratio:.0%} of cold ({'within' if warm_ok else 'OVER'} "
              f"{REBUILD_FRACTION:.0%})")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
