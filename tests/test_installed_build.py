"""An installed tool builds sites (issue #22): a wheel in a fresh virtualenv, run from a
folder outside the repository, builds a site from a spec file with a team's own pages.

The wheel is built from a copy of the working tree and installed without network
(``--no-deps --no-build-isolation``) into a new venv whose dependencies come from the
test venv through a ``.pth`` path entry (its editable-install hooks are not run, so
``roofline`` and ``site_gen`` are the wheel's). The build must not write into
site-packages; its work folder lives in the build cache (``$ROOFLINE_ATLAS_BUILD_CACHE``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "tests" / "data" / "site_small_specs.toml"
pytestmark = pytest.mark.slow


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)


def _source_copy(target: Path) -> Path:
    """The working tree's files (tracked and untracked, not ignored) copied to ``target``."""
    listed = _run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"])
    assert listed.returncode == 0, listed.stderr
    for name in filter(None, listed.stdout.split("\0")):
        path = ROOT / name
        if path.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / name)
    return target


def _files(folder: Path) -> set[str]:
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("installed")
    source = _source_copy(tmp / "src")
    wheels = tmp / "wheels"
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(source),
        ]
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("roofline_atlas-*.whl")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    query = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run([str(python), "-c", query], cwd=tmp).stdout.strip())
    (purelib / "_roofline_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(wheel),
        ]
    )
    assert install.returncode == 0, install.stderr
    return {"tmp": tmp, "bin": venv / "bin", "purelib": purelib}


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, ROOFLINE_ATLAS_BUILD_CACHE=str(tmp / "build-cache"))
    env.pop("PYTHONPATH", None)
    return env


def test_the_wheel_is_what_runs(installed):
    where = _run(
        [
            str(installed["bin"] / "python"),
            "-c",
            "import roofline, site_gen; print(roofline.__file__); print(site_gen.__file__)",
        ],
        cwd=installed["tmp"],
    )
    for line in where.stdout.split():
        assert Path(line).is_relative_to(installed["purelib"]), where.stdout
    files = _files(installed["purelib"] / "site_gen" / "site_files")
    assert {"mkdocs.yml", "docs/index.md", "docs/hooks.py"} <= files
    assert not any(f.startswith("docs/generated") for f in files)


def test_an_installed_tool_builds_a_site_from_any_folder(installed):
    tmp = installed["tmp"]
    work = tmp / "work"
    team = work / "our-pages"
    team.mkdir(parents=True)
    (team / "index.md").write_text("# Our cluster\n\nWhat we run, and why.\n")
    (team / "runbook.md").write_text("# Runbook\n\nHow we publish this site.\n")
    # One GPU is enough to show the installed tool builds a whole site (the small spec
    # file's second GPU alone: its header and the B200 entry): 28 -> 22 s of a worker.
    header, first, second = SPECS.read_text("utf-8").split("[[gpu]]\n")
    assert 'name = "Test H100"' in first and 'name = "Test B200"' in second
    (work / "specs.toml").write_text(f"{header}[[gpu]]\n{second}", "utf-8")
    before = _files(installed["purelib"])
    argv = [
        str(installed["bin"] / "roofline"),
        "build",
        "--specs",
        "specs.toml",
        "--site-dir",
        "site",
        "--docs-dir",
        "our-pages",
    ]
    done = _run(argv, cwd=work, env=_env(tmp))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "site built" in done.stdout
    assert _files(installed["purelib"]) == before  # nothing written into site-packages
    site = work / "site"
    assert (site / "index.html").is_file()
    assert (site / "team" / "index.html").is_file() and (
        site / "team" / "runbook" / "index.html"
    ).is_file()
    home = (site / "index.html").read_text()
    assert "Team pages" in home and "Our cluster" in (site / "team" / "index.html").read_text()
    assert (site / "generated" / "models" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text()  # mkdocstrings reads the installed code
    assert 'id="roofline.load_hf_config"' in api and 'id="roofline.calibrate"' in api
    assert sorted(p.name for p in work.iterdir()) == ["our-pages", "site", "specs.toml"]
    roots = list((tmp / "build-cache" / "roots").iterdir())
    assert len(roots) == 1 and (roots[0] / "docs" / "generated").is_dir()
    again = _run(argv, cwd=work, env=_env(tmp))
    assert again.returncode == 0 and "nothing to rebuild" in again.stdout, again.stdout[-2000:]


def test_installed_errors_are_one_line(installed):
    tmp = installed["tmp"]
    argv = [
        str(installed["bin"] / "roofline"),
        "build",
        "--site-dir",
        str(tmp / "s2"),
        "--docs-dir",
        str(tmp / "no-such-folder"),
    ]
    done = _run(argv, cwd=tmp, env=_env(tmp))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--docs-dir" in done.stderr and not (tmp / "s2").exists()
    models = _run(
        [
            str(installed["bin"] / "roofline"),
            "model",
            "--hf-config",
            str(ROOT / "tests" / "data" / "hf" / "qwen3-8b.json"),
            "--gpu",
            "NVIDIA H100",
            "--tokens",
            "4096",
        ],
        cwd=tmp,
        env=_env(tmp),
    )
    assert models.returncode == 0 and "lm_head" in models.stdout, models.stderr
