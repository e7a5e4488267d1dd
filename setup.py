"""Ship the site's mkdocs.yml and hand-written docs/ inside the wheel.

``roofline build`` from a non-editable install reads them from ``site_gen/site_files/``
(``site_gen.config.source_root``); a checkout or an editable install reads the
repository's own ``mkdocs.yml`` and ``docs/``. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# Generated pages and caches are the build's output, never package data.
SKIP = shutil.ignore_patterns("generated", "__pycache__", "*.pyc", ".*")


class BuildPyWithSiteFiles(build_py):
    """build_py, plus mkdocs.yml and docs/ copied to site_gen/site_files/."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout itself
        target = Path(self.build_lib) / "site_gen" / "site_files"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copy2(HERE / "mkdocs.yml", target / "mkdocs.yml")
        shutil.copytree(HERE / "docs", target / "docs", ignore=SKIP)


setup(cmdclass={"build_py": BuildPyWithSiteFiles})
