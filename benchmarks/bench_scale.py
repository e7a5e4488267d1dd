"""Does the site grow linearly with its database? (not a test)

Usage: ``.venv/bin/python benchmarks/bench_scale.py``.

Builds the site cold (empty build cache, fresh interpreter) twice in a temporary folder,
as ``benchmarks/bench_build.py`` does: once from the bundled database (22 GPUs today) and
once from a database holding every bundled GPU twice, the copy under a new name
(``<name> (copy 2)``, its device prefixes renamed too, so torch's names still match one
entry each). The loader takes at most 64 GPUs (roofline/specs), so the doubled database
fits while the bundled one has at most 32. For both it prints the site's bytes (the sum
of the files' sizes), its HTML pages, the largest and median page, each stage's seconds
and the wall time, then the ratios of the doubled build to the bundled one.

Target (issue 21): the doubled build costs at most 2.2x the bundled one in bytes and in
time (wall time of the build subprocess). Exit 1 when a target is missed.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import BUNDLED, GIT, make_root, one_build

TARGET = 2.2
COPY_SUFFIX = " (copy 2)"
_GPU_TABLE = re.compile(r"^\[\[gpu\]\]\s*$", re.MULTILINE)
_NAME = re.compile(r'^(name\s*=\s*")([^"]*)(")', re.MULTILINE)
_PREFIXES = re.compile(r"^(device_prefixes\s*=\s*)\[(.*)\]", re.MULTILINE)


def doubled_database(text: str) -> str:
    """The spec file with every ``[[gpu]]`` table (and its sources) repeated once more,
    renamed: ``name`` and each device prefix get :data:`COPY_SUFFIX`."""
    starts = [m.start() for m in _GPU_TABLE.finditer(text)]
    if not starts:
        raise SystemExit(f"no [[gpu]] table in {BUNDLED}")
    blocks = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    copies = []
    for block in blocks:
        block, count = _NAME.subn(lambda m: m[1] + m[2] + COPY_SUFFIX + m[3], block, count=1)
        if count != 1:
            raise SystemExit(f"a [[gpu]] table without a name line in {BUNDLED}")
        block = _PREFIXES.sub(
            lambda m: m[1] + "[" + re.sub(r'"([^"]*)"', rf'"\1{COPY_SUFFIX}"', m[2]) + "]", block
        )
        copies.append(block if block.endswith("\n") else block + "\n")
    return text.rstrip("\n") + "\n\n" + "".join(copies)


def committed_specs(folder: Path, text: str) -> Path:
    """``text`` as gpus.toml, committed once in a new git repository (the Changes page)."""
    folder.mkdir()
    specs = folder / "gpus.toml"
    specs.write_text(text, "utf-8")
    for args in (["init", "-q"], ["add", "gpus.toml"], ["commit", "-q", "-m", "specs"]):
        subprocess.run([*GIT, "-C", str(folder), *args], check=True, capture_output=True)
    return specs


def site_size(site: Path) -> dict[str, float]:
    """Bytes of every file, HTML pages, median and largest page of a built site."""
    sizes = [p.stat().st_size for p in site.rglob("*") if p.is_file()]
    pages = [p.stat().st_size for p in site.rglob("*.html")]
    return {
        "bytes": float(sum(sizes)),
        "pages": float(len(pages)),
        "median page": float(statistics.median(pages)),
        "largest page": float(max(pages)),
    }


def measure(tmp: Path, label: str, text: str) -> dict[str, float]:
    """One cold build of ``text`` in ``tmp/label``: its stage timings and site size."""
    folder = tmp / label
    folder.mkdir()
    root, specs = make_root(folder), committed_specs(folder / "specs-repo", text)
    gpus = len(_GPU_TABLE.findall(text))
    print(f"[scale] {label}: {gpus} GPUs, cold build ...", flush=True)
    timings = one_build(specs, folder / "site", root, folder / "cache")
    return {**timings, **site_size(folder / "site"), "gpus": float(gpus)}


def report(runs: dict[str, dict[str, float]]) -> bool:
    """Print both builds side by side and the ratios; True when both ratios are met."""
    (small, large), names = runs.values(), list(runs)
    print(f"\n{'':<14}" + "".join(f"{n:>18}" for n in names) + f"{'ratio':>10}")
    fixed = ("gpus", "bytes", "pages", "median page", "largest page")
    stages = [s for s in small if s not in fixed]
    for key in (*fixed, *stages):
        a, b = small.get(key), large.get(key)
        unit = "" if key in ("gpus", "pages") else (" B" if key in fixed else " s")
        fmt = "{:>16,.0f}" if key in fixed else "{:>16.2f}"
        cells = "".join(
            (fmt.format(v) + unit).rjust(18) if v is not None else f"{'-':>18}" for v in (a, b)
        )
        ratio = f"{b / a:>9.2f}x" if a and b is not None else f"{'-':>10}"
        print(f"{key:<14}{cells}{ratio}")
    ok = True
    for key, label in (("bytes", "site bytes"), ("wall", "cold-build time")):
        ratio = large[key] / small[key]
        ok &= ratio <= TARGET
        print(
            f"{label}: {ratio:.2f}x for {large['gpus'] / small['gpus']:.0f}x the GPUs, "
            f"target <= {TARGET}x: {'PASS' if ratio <= TARGET else 'FAIL'}"
        )
    return ok


def main() -> int:
    """Build the bundled and the doubled database cold; exit 1 when a ratio is missed."""
    text = BUNDLED.read_text("utf-8")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as name:
        tmp = Path(name)
        runs = {
            "bundled": measure(tmp, "bundled", text),
            "doubled": measure(tmp, "doubled", doubled_database(text)),
        }
    print(f"\n(cold builds, {os.cpu_count()} CPUs)")
    return 0 if report(runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
