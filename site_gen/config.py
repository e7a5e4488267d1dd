"""Constants of the site: grids, canonical shapes, slugs and paths."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from roofline.analysis import guidance
from roofline.publish import site_paths
from roofline.publish.cite import formula_id, slug  # noqa: F401  (re-exported for templates)
from roofline.recipes import Mode

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
DOCS_DIR = REPO_ROOT / "docs"
GENERATED_DIRNAME = site_paths.GENERATED_DIRNAME
MKDOCS_YML = REPO_ROOT / "mkdocs.yml"
#: mkdocs.yml and docs/ as a non-editable install ships them (setup.py copies them).
SITE_FILES = PACKAGE_DIR / "site_files"


def is_checkout() -> bool:
    """True when site_gen runs from the repository (a checkout or an editable install),
    False when it runs from an installed wheel (mkdocs.yml and docs/ in SITE_FILES)."""
    return (MKDOCS_YML.is_file() and (DOCS_DIR / "hooks.py").is_file()) or not (
        SITE_FILES / "mkdocs.yml"
    ).is_file()


#: The shape the home page and the GPU pages quote first.
CANONICAL_M = guidance.CANONICAL_M
CANONICAL_KN = guidance.CANONICAL_KN

#: K = N values of the break-even table and of the speedup-vs-M curves.
BREAK_EVEN_KN: tuple[int, ...] = guidance.BREAK_EVEN_KN

#: Shapes of the stacked time breakdown, (M, K, N).
BREAKDOWN_SHAPES: tuple[tuple[int, int, int], ...] = (
    (1024, 1024, 1024),
    (4096, 4096, 4096),
    (8192, 4096, 4096),
    (16384, 8192, 8192),
)

MODES: tuple[Mode, ...] = (Mode.TRAINING, Mode.INFERENCE)


def _round_to(values: np.ndarray, multiple: int) -> np.ndarray:
    return np.maximum(multiple, np.round(values / multiple) * multiple)


#: Heatmap / decision-map axes: log2 steps of 1/4 octave.
HEAT_M_LOG2 = np.arange(8.0, 16.0 + 1e-9, 0.25)  # M = 256 ... 65536
HEAT_KN_LOG2 = np.arange(9.0, 15.0 + 1e-9, 0.25)  # K = N = 512 ... 32768
HEAT_M = _round_to(2.0**HEAT_M_LOG2, 16)
HEAT_KN = _round_to(2.0**HEAT_KN_LOG2, 128)  # blockwise needs multiples of 128

#: Speedup-vs-M curves and break-even search: 1/16 octave from 16 to 262144.
CURVE_M = guidance.BREAK_EVEN_M_GRID  # the curves are what break-even M is read from


recipe_page_name = site_paths.recipe_page_name


