"""Parameters of the site, in one place: paths, grids, canonical shapes, the grouped and
model pages' tokens and expert counts, and the build's pool and cache limits."""

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


#: Fusion off and on: every dense combination is evaluated both ways.
FUSIONS: tuple[bool, ...] = (False, True)

# -- grouped (MoE) pages ------------------------------------------------------------------

#: Expert counts per device the pages tabulate (G = 1 is the dense layer).
GROUPS: tuple[int, ...] = (1, 8, 16, 32, 64, 128, 256)
#: Tokens per device (micro-batch x sequence length); an expert GEMM routes top_k times as
#: many rows. The last is the default the per-term tables use.
GROUPED_TOKENS: tuple[int, ...] = (4096, 16384)
GROUPED_DEFAULT_TOKENS = GROUPED_TOKENS[-1]
#: Modes with grouped pages. Inference would add as many pages again for a GEMM whose
#: grouped-only terms (one 2D-3D GEMM, the activation's rearrangement) training shows too.
GROUPED_MODES: tuple[Mode, ...] = (Mode.TRAINING,)

# -- model x GPU pages --------------------------------------------------------------------

#: Tokens per device and step (M = micro-batch x sequence length), e.g. a micro-batch of
#: 2 sequences of 8,192 tokens: the size torchao's llama shapes use (M = 16,384).
SITE_TOKENS = 16384
#: Expert parallelism per bundled MoE preset: experts spread over one 8-GPU node (NVLink
#: domain) for the models whose expert weights do not fit one device (DeepSeek-V3 671B,
#: Qwen3-235B-A22B, gpt-oss-120b); the smaller MoE models (Llama 4 Scout's 16 experts,
#: Qwen3-30B-A3B) keep every expert on each device. Any other preset (and a dense one)
#: runs with ep = 1.
SITE_EP: dict[str, int] = {"deepseek-v3": 8, "qwen3-235b-a22b": 8, "gpt-oss-120b": 8}

# -- the build ----------------------------------------------------------------------------

#: Processes of the build's pool (formulas, history, charts).
WORKERS = 2
#: Forked processes that share the build's own loops with it (site_gen.split): rendering
#: the pages, and mkdocs' two page loops. With the pool's workers drawing charts meanwhile,
#: one keeps both cores busy; the rendering of a rebuild, whose charts are cached, gains most.
HELPERS = 1
#: Charts drawn per pool task (fewer round trips).
PLOT_BATCH = 6
#: Records of earlier builds' outputs kept in the cache (sites and roots built in turn).
KEPT_OUTPUTS = 4


#: The KaTeX release the site typesets its math with (fetched once, checked, cached).
KATEX_VERSION = "0.16.22"
#: ``dist.integrity`` of katex@0.16.22 on registry.npmjs.org: base64 of the tarball's sha512.
KATEX_INTEGRITY = "sha512-XCHRdUw4lf3SKBaJe4EvgqIuWwkPSo9XoeO8GjQW94Bp7TWv9hNhzZjZ+OH9yf1UmLygb7DIT5GSFQiyt16zYg=="  # noqa: E501 (one hash)


recipe_page_name = site_paths.recipe_page_name
