"""Shared fixtures: paths to test data and the bundled database."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from roofline import SpecDatabase, load_specs

# Speed is measured by the benchmarks, never asserted in a test: hypothesis's per-example
# deadline (200 ms) fails property tests on a loaded 2-core machine for no fault of theirs.
settings.register_profile("roofline", deadline=None)
settings.load_profile("roofline")

DATA = Path(__file__).parent / "data"
BROKEN = DATA / "broken"


@pytest.fixture(scope="session")
def bundled() -> SpecDatabase:
    """The bundled spec database."""
    return load_specs()


@pytest.fixture()
def spec_file(tmp_path: Path):
    """Write TOML text to a temporary spec file and return its path."""

    def write(text: str, name: str = "specs.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture()
def refused_gpu_value(tmp_path: Path):
    """Load a calibration file holding one per-GPU value; return the refusal's message
    (after checking that it names the file)."""
    from roofline.calibration.data import load_calibration
    from roofline.errors import DataFileError

    def refuse(gpu: str, key: str, value: float) -> str:
        path = tmp_path / "calibration.toml"
        path.write_text(
            f'schema_version = 1\n[[gpu]]\nname = "{gpu}"\n[gpu.values."{key}"]\n'
            f'value = {value!r}\nbasis = "fitted"\nsets = ["a"]\n',
            encoding="utf-8",
        )
        with pytest.raises(DataFileError) as caught:
            load_calibration(path, gpu_names=set(load_specs()), set_ids={"a"})
        assert str(path) in str(caught.value)
        return str(caught.value)

    return refuse


@pytest.fixture(scope="session")
def small_site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small site (tests/data/site_small_specs.toml), built once per test run and
    shared by every test that only reads it (xdist-safe: tests/browser/site_fixtures.py)."""
    from browser.site_fixtures import shared_small_site

    return shared_small_site(tmp_path_factory)


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the files that build sites (``slow``) first, then the browser files, then the
    rest. pytest-xdist hands out whole files (``--dist loadfile``) in this order
    (``--no-loadscope-reorder``, pyproject.toml): the longest work starts while every
    worker is free and the many quick files even out the end, where xdist's own order
    (most tests first) left one worker building a site alone while the other idled."""
    rank: dict[str, int] = {}
    for item in items:
        own = (
            0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("browser") else 2
        )
        rank[_file_of(item)] = min(rank.get(_file_of(item), 2), own)
    items.sort(key=lambda item: rank[_file_of(item)])  # stable: each file keeps its order
