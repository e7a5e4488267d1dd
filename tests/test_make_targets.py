"""The make targets the CI workflows call, run as the workflows run them.

``pr.yml`` and ``pages.yml`` call ``make test``, ``make site`` and ``make spec-diff`` and
nothing else; this file checks that list against the workflows and runs ``site`` (with a
site URL, as the Pages workflow does) and ``spec-diff``. ``make test`` is the command that
runs this suite (``.ci/run``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from browser.site_fixtures import SHARED_URL, shared_url_site

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
#: Targets this suite runs (``test`` is the suite itself).
EXERCISED = {"test", "site", "spec-diff"}


def _make_targets_in_workflows() -> set[str]:
    targets: set[str] = set()
    for path in WORKFLOWS.glob("*.yml"):
        doc = yaml.safe_load(path.read_text("utf-8"))
        for job in doc["jobs"].values():
            for step in job.get("steps", []):
                for line in str(step.get("run", "")).splitlines():
                    for call in re.findall(r"\bmake((?:\s+[-\w=./\"$]+)+)", line):
                        words = [w for w in call.split() if not w.startswith("-") and "=" not in w]
                        targets.update(words[:1] or ["(default)"])
    return targets


def _make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (ROOT / ".venv" / ".installed").is_file():
        pytest.skip("run through `make test`: the targets use the .venv it installs")
    return subprocess.run(
        ["make", "-s", "-C", str(ROOT), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=900,
    )


def test_workflows_call_only_targets_the_suite_runs() -> None:
    called = _make_targets_in_workflows()
    assert called, "the workflows call no make target"
    assert called <= EXERCISED, f"workflows call make targets no test runs: {called - EXERCISED}"
    makefile = (ROOT / "Makefile").read_text("utf-8")
    for target in called:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), target


@pytest.mark.slow
def test_make_site_publishes_real_permalinks(tmp_path_factory) -> None:
    url = SHARED_URL
    site = shared_url_site(tmp_path_factory)  # `make site` with the site URL set
    sitemap = (site / "sitemap.xml").read_text("utf-8")
    assert f"<loc>{url}generated/gpus/test-b200/</loc>" in sitemap
    page = site / "generated" / "gpus" / "test-b200" / "training-rowwise" / "index.html"
    html = page.read_text("utf-8")
    assert f'<link rel="canonical" href="{url}generated/gpus/test-b200/training-rowwise/">' in html
    assert f"{url}generated/gpus/test-b200/training-rowwise/#f-" in html  # the Cite snippets
    assert "roofline-atlas.example" not in html


def test_make_spec_diff_reports_against_a_revision() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = _make("spec-diff", "BASE_REV=HEAD")
    assert proc.returncode == 0, proc.stderr
    assert "HEAD:roofline/data/gpus.toml" in proc.stdout
    assert not proc.stdout.startswith("make") and "roofline diff" not in proc.stdout[:200]
