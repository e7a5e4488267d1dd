"""Time a cold build of the site, an unchanged rebuild and a one-GPU change (not a test).

Usage: ``.venv/bin/python benchmarks/bench_build.py [--runs N] [--settle S]``.

Everything happens in a temporary folder: a build root (copies of ``mkdocs.yml`` and
the hand-written ``docs/``, as ``tests/browser/site_fixtures.make_root`` makes), a build
cache, the site folder, and a one-commit git repository holding a copy of the bundled
spec database (so the Changes page has a history, and the one-GPU change is an edit of a
committed spec file, as a contributor makes it). Nothing is written into the
repository. Each build is a fresh interpreter (``build()`` in a subprocess):

1. **cold**: empty build cache;
2. **unchanged**: the same inputs again;
3. **one GPU changed**: one GPU's memory bandwidth edited in the spec file.

On ext4 without a journal (these machines' disks), making a file within a minute of
many deletions (six while the deleted inodes' table blocks are not yet written back) is
slow: the kernel skips every recently deleted inode of the group one by one
(``recently_deleted`` in ``find_inode_bit``, seen with ``perf``), and a cold build's
17,000 new files then took up to 14 s of kernel time more. So the runs' folders are
deleted only after the last run, and ``--settle S`` waits S seconds before each cold
build (after a test run's or another benchmark's deletions, and after the previous
run's rebuilds, which delete the trees they replace); without it, the cold time includes
what the file system makes of the deletions before it.

Targets: the cold build at most 45 s (issue 21), the unchanged rebuild at most 10% of
the cold build and the one-GPU rebuild at most 35% (issue 10), measured on the wall time
of the whole subprocess (interpreter start and imports included); ``build()``'s own
total and the CPU time (user + system, which a busy machine inflates less) are shown
beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "roofline" / "data" / "gpus.toml"
TARGETS = {"unchanged": 0.10, "one GPU changed": 0.35}
#: Issue 21: a cold build of the bundled database on 2 cores, in seconds (wall).
COLD_TARGET_S = 45.0
SNIPPET = (
    "import sys, json; from pathlib import Path; from site_gen.build import build; "
    "from site_gen.cache import BuildCache; "
    "t = build(sys.argv[1], Path(sys.argv[2]), root=Path(sys.argv[3]), "
    "cache=BuildCache(root=Path(sys.argv[4]))); "
    "print('TIMINGS', json.dumps(t))"
)
GIT = [
    "git",
    "-c",
    "user.name=bench",
    "-c",
    "user.email=bench@example.invalid",
    "-c",
    "commit.gpgsign=false",
]


def make_root(tmp: Path) -> Path:
    """A build root: copies of mkdocs.yml and the hand-written docs (no generated/)."""
    root = tmp / "root"
    shutil.copytree(
        ROOT / "docs",
        root / "docs",
        ignore=shutil.ignore_patterns("generated", ".generated*", "__pycache__"),
    )
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root


def make_specs(tmp: Path) -> Path:
    """The bundled spec database, committed once in a new git repository."""
    repo = tmp / "specs-repo"
    repo.mkdir()
    specs = repo / "gpus.toml"
    shutil.copy2(BUNDLED, specs)
    for args in (["init", "-q"], ["add", "gpus.toml"], ["commit", "-q", "-m", "specs"]):
        subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)
    return specs


def change_one_gpu(specs: Path) -> None:
    """Lower the first GPU's memory bandwidth by 3% (one GPU's figures change)."""
    text = specs.read_text("utf-8")
    pattern = re.compile(r"^(peak_mem_bw_bytes_sec\s*=\s*)([0-9_.eE+]+)", re.MULTILINE)

    def lower(match: re.Match[str]) -> str:
        return match.group(1) + repr(float(match.group(2).replace("_", "")) * 0.97)

    changed, count = pattern.subn(lower, text, count=1)
    if count != 1:
        raise SystemExit(f"no peak_mem_bw_bytes_sec line in {specs}")
    specs.write_text(changed, "utf-8")


def one_build(specs: Path, site: Path, root: Path, cache: Path) -> dict[str, float]:
    """One build in a subprocess; its stage timings plus the subprocess' wall and CPU time
    (user + system of it and its pool workers: what a busy machine does not inflate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", SNIPPET, str(specs), str(site), str(root), str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"build failed (exit {proc.returncode})")
    print("\n".join(ln for ln in proc.stdout.splitlines() if ln.startswith("[build] cache")))
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("TIMINGS "))
    timings = json.loads(line.removeprefix("TIMINGS "))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    timings["wall"] = wall
    timings["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return timings


def report(runs: dict[str, dict[str, float]]) -> bool:
    """Print the stage table and the ratios; True when every target is met."""
    names = list(runs)
    summary = ("total", "wall", "cpu")
    stages = list(dict.fromkeys(s for r in runs.values() for s in r if s not in summary))
    print(f"\n{'stage':<10}" + "".join(f"{n:>17}" for n in names))
    for stage in [*stages, *summary]:
        row = "".join(
            f"{runs[n][stage]:16.2f}s" if stage in runs[n] else f"{'-':>17}" for n in names
        )
        print(f"{stage:<10}{row}")
    cold = runs["cold"]
    ok = cold["wall"] <= COLD_TARGET_S
    print(
        f"{'cold':<16} {cold['wall']:6.2f} s (CPU {cold['cpu']:.2f} s), "
        f"target <= {COLD_TARGET_S:.0f} s: {'PASS' if ok else 'FAIL'}"
    )
    for name, target in TARGETS.items():
        ratio, inner = runs[name]["wall"] / cold["wall"], runs[name]["total"] / cold["total"]
        cpu = runs[name]["cpu"] / cold["cpu"]
        passed = ratio <= target
        ok &= passed
        print(
            f"{name:<16} {runs[name]['wall']:6.2f} s = {ratio:6.1%} of cold "
            f"({cold['wall']:.2f} s; build() alone {inner:.1%}, CPU time {cpu:.1%}), "
            f"target <= {target:.0%}: "
            f"{'PASS' if passed else 'FAIL'}"
        )
    return ok


def main() -> int:
    """Run cold, unchanged and one-GPU builds; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds to wait before each cold build (see the module's notes)",
    )
    args = parser.parse_args()
    ok = True
    # Every run's folders are kept until the last run ends: a run's cold build right
    # after the previous run's folders were deleted measured the file system instead
    # (see the module's notes).
    with tempfile.TemporaryDirectory(prefix="bench-build-") as name:
        for run in range(args.runs):
            tmp = Path(name) / f"run-{run + 1}"
            tmp.mkdir()
            root, specs = make_root(tmp), make_specs(tmp)
            site, cache = tmp / "site", tmp / "cache"
            time.sleep(args.settle)
            runs = {"cold": one_build(specs, site, root, cache)}
            runs["unchanged"] = one_build(specs, site, root, cache)
            change_one_gpu(specs)
            runs["one GPU changed"] = one_build(specs, site, root, cache)
            print(f"\nrun {run + 1} of {args.runs} (bundled spec database, {os.cpu_count()} CPUs)")
            ok &= report(runs)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
