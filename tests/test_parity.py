"""Parity of ``roofline.evaluate`` with the torchao roofline references.

The pinned goldens in ``tests/data/`` were computed from two references by
``tools/make_parity_goldens.py`` (the seed model, torchao roofline utils as of
2025-11, and torchao 0.18), exactly the way torchao's benchmark scripts evaluate
their sympy expressions. Each golden case is evaluated here through the public
``roofline.evaluate`` with the matching reference spec table
(``tests/data/<source>_specs.toml``) and every CLI column must agree to a
relative 1e-12.

These pinned tests never import the seed or torchao. ``TestInstalledTorchao``
additionally recomputes a few values live from the installed torchao when it is
available.

If a golden file is missing or stale, regenerate with::

    .venv/bin/python tools/make_parity_goldens.py
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import roofline
from roofline.model import torchao_compat as compat

DATA_DIR = Path(__file__).parent / "data"
TORCHAO_SPECS_PATH = compat.TORCHAO_SPECS_PATH
SOURCES = ("seed", "torchao018")
RTOL = 1e-12
REGENERATE = ".venv/bin/python tools/make_parity_goldens.py"

# evaluate() warns (warnings.warn) about hypothetical combos, e.g. mxfp8 on H100.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

Case = dict[str, Any]


def specs_path(source: str) -> Path:
    """The reference spec table a source's goldens were computed with."""
    # torchao's table ships with the package (roofline.model.torchao_compat answers from it).
    if source == "torchao018":
        return TORCHAO_SPECS_PATH
    return DATA_DIR / f"{source}_specs.toml"


def case_id(case: Case) -> str:
    """Readable test id, e.g. ``seed-NVIDIA_H100-training-rowwise-fusion``."""
    fusion = "fusion" if case["fusion"] else "nofusion"
    gpu = case["gpu"].replace(" ", "_")
    return f"{case['source']}-{gpu}-{case['mode']}-{case['recipe']}-{fusion}"


def load_cases(source: str) -> list[Case]:
    """Read one source's golden cases."""
    path = DATA_DIR / f"parity_{source}.json"
    with path.open() as fh:
        cases: list[Case] = json.load(fh)
    return cases


ALL_CASES: list[Case] = [case for source in SOURCES for case in load_cases(source)]


def shapes_as_arrays(shapes: Sequence[Sequence[int]]) -> tuple[np.ndarray, ...]:
    """Split ``[[M, K, N], ...]`` into three int64 arrays."""
    arr = np.asarray(shapes, dtype=np.int64).reshape(-1, 3)
    return arr[:, 0], arr[:, 1], arr[:, 2]


def column(result: Any, name: str) -> np.ndarray:
    """One named column of an ``evaluate`` result as a float64 array."""
    return np.asarray(result[name], dtype=np.float64)


def mismatches(result: Any, expected: dict[str, Sequence[float]], label: str) -> Iterator[str]:
    """Yield one message per column that misses the expected values."""
    for name, values in expected.items():
        try:
            actual = column(result, name)
        except (KeyError, IndexError, ValueError) as exc:
            yield f"{label}: column {name!r} missing from evaluate() result ({exc!r})"
            continue
        try:
            np.testing.assert_allclose(
                actual, np.asarray(values, dtype=np.float64), rtol=RTOL, atol=0, err_msg=name
            )
        except AssertionError as exc:
            yield f"{label}: column {name!r}{exc}"


def assert_columns_match(result: Any, expected: dict[str, Sequence[float]], label: str) -> None:
    """Fail once, listing every mismatching column."""
    problems = list(mismatches(result, expected, label))
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


class TestGoldenData:
    """The golden files themselves are present and consistent."""

    def test_spec_tables_parse(self) -> None:
        """Both spec tables parse and declare the launch floor."""
        for source in SOURCES:
            with specs_path(source).open("rb") as fh:
                table = tomllib.load(fh)
            assert table["kernel_launch_overhead_s"] == 2e-06
            assert table["gpu"], f"{specs_path(source)} lists no GPU"

    def test_cases_reference_known_gpus(self) -> None:
        """Every case's GPU is in its source's spec table."""
        for source in SOURCES:
            with specs_path(source).open("rb") as fh:
                names = {gpu["name"] for gpu in tomllib.load(fh)["gpu"]}
            unknown = {c["gpu"] for c in load_cases(source)} - names
            assert not unknown, f"{source}: GPUs missing from spec table: {unknown}"


@pytest.mark.parametrize("case", ALL_CASES, ids=[case_id(c) for c in ALL_CASES])
def test_parity(case: Case) -> None:
    """``roofline.evaluate`` reproduces the reference's columns for one case."""
    if "deviation" in case:
        pytest.skip(case["deviation"])
    m, k, n = shapes_as_arrays(case["shapes"])
    result = roofline.evaluate(
        case["gpu"],
        case["mode"],
        case["recipe"],
        m,
        k,
        n,
        fusion=case["fusion"],
        specs=str(specs_path(case["source"])),
    )
    assert_columns_match(result, case["columns"], case_id(case))


# --- live comparison with the installed torchao ---------------------------------------------

LIVE_INFERENCE_RECIPES = (
    "tensorwise",
    "rowwise",
    "mxfp8_cublas",
    "mxfp8_emulated",
    "mxfp8_cublas_rceil",
    "mxfp4",
    "nvfp4",
    "nvfp4_static",
    "nvfp4_no_global_scale",
)
LIVE_RECIPES = [("inference", r) for r in LIVE_INFERENCE_RECIPES] + [("training", "blockwise")]
# B200: torchao 0.18's re-derived bandwidth, every recipe with and without fusion.
# B300: different efficiencies and fp4 peak, without fusion only (keeps the class fast).
LIVE_COMBOS = [
    ("NVIDIA B200", mode, recipe, fusion)
    for mode, recipe in LIVE_RECIPES
    for fusion in (False, True)
] + [("NVIDIA B300 SXM6 AC", mode, recipe, False) for mode, recipe in LIVE_RECIPES]


def live_shapes(blockwise: bool) -> list[tuple[int, int, int]]:
    """A launch-floor shape, a K off the 16/32 grid, and two seeded random shapes."""
    rng = np.random.default_rng(20251129)
    dims = np.exp(rng.uniform(np.log(16), np.log(65536), size=(2, 3))).round().astype(int)
    if blockwise:
        dims[:, 1:] = np.maximum(128, (dims[:, 1:] // 128) * 128)
        fixed = [(16, 128, 128), (5000, 1152, 3072)]
    else:
        fixed = [(16, 16, 16), (5000, 1000, 3000)]
    return fixed + [(int(a), int(b), int(c)) for a, b, c in dims]


def torchao_columns(
    ru: Any, gpu: str, mode: str, recipe: str, fusion: bool, shapes: list[tuple[int, int, int]]
) -> dict[str, list[float]]:
    """Columns computed live from torchao, built like its benchmark scripts build them."""
    import sympy
    import torch

    M, K, N = sympy.symbols("M K N")
    if mode == "training":  # blockwise
        bf16_e = ru.get_gemm_time_sympy(M, K, N, torch.bfloat16, None, None, gpu)
        gemm_e = ru.get_blockwise_gemm_time_sympy(M, K, N, gpu)
        ovhd_e = ru.get_blockwise_float8_mem_sympy(M, K, N, fusion, gpu)
        bf16_ovhd_e = None
    else:
        ovhd_e = ru.get_inference_float8_mem_sympy(M, K, N, recipe, gpu)
        bf16_e = ru.get_inference_gemm_time_sympy(M, K, N, torch.bfloat16, None, gpu)
        bf16_ovhd_e = ru.get_inference_bf16_activation_mem_sympy(M, K, N, gpu) if fusion else M * 0
        if recipe.startswith(("nvfp4", "mxfp4")):
            gemm_e = ru.get_inference_gemm_time_sympy(M, K, N, torch.float4_e2m1fn_x2, recipe, gpu)
        else:
            gemm_recipe = "mxfp8" if recipe.startswith("mxfp8") else None
            gemm_e = ru.get_inference_gemm_time_sympy(
                M, K, N, torch.float8_e4m3fn, gemm_recipe, gpu
            )

    def at(expr: Any, shape: tuple[int, int, int]) -> float:
        # One simultaneous xreplace instead of the scripts' chained .subs (the pinned
        # goldens use those): ~50x faster, equal to within a few ulps (< 1e-15 relative).
        return float(expr.xreplace(dict(zip((M, K, N), shape, strict=True))))

    cols: dict[str, list[float]] = {}
    for shape in shapes:
        bf16, gemm, ovhd = at(bf16_e, shape), at(gemm_e, shape), at(ovhd_e, shape)
        row = {
            "fwd_M": float(shape[0]),
            "fwd_K": float(shape[1]),
            "fwd_N": float(shape[2]),
            "r_bf16_gemm_s": bf16,
            "r_fp8_gemm_s": gemm,
            "r_fp8_ovhd_s": ovhd,
            "r_fp8_gemm_and_ovhd_s": gemm + ovhd,
            "r_fp8_gemm_and_ovhd_spdp": bf16 / (gemm + ovhd),
        }
        if bf16_ovhd_e is not None:
            bf16_ovhd = at(bf16_ovhd_e, shape)
            row["r_bf16_ovhd_s"] = bf16_ovhd
            row["r_fp8_gemm_and_ovhd_spdp"] = (bf16 + bf16_ovhd) / (gemm + ovhd)
        for name, value in row.items():
            cols.setdefault(name, []).append(value)
    return cols


@pytest.fixture(scope="module")
def torchao_roofline() -> Any:
    """torchao's roofline utilities, or skip when torchao is absent or not the pinned version."""
    ru = pytest.importorskip("torchao.testing.training.roofline_utils")
    import torchao

    with (DATA_DIR / "parity_meta.json").open() as fh:
        pinned = json.load(fh)["torchao_version"]
    if torchao.__version__ != pinned:
        pytest.skip(f"installed torchao {torchao.__version__} is not the pinned {pinned}")
    return ru


class TestInstalledTorchao:
    """Live cross-check against the installed torchao (skipped without it)."""

    def test_spec_table_matches(self, torchao_roofline: Any) -> None:
        """torchao018_specs.toml is torchao's table (entries with every key), bit for bit."""
        with specs_path("torchao018").open("rb") as fh:
            ours = {gpu.pop("name"): gpu for gpu in tomllib.load(fh)["gpu"]}
        required = (
            "bf16_peak_tops",
            "peak_mem_bw_bytes_sec",
            "pct_achievable_gemm_tops",
            "pct_achievable_mem_bw",
        )
        theirs = {
            name: {key: float(value) for key, value in specs.items()}
            for name, specs in torchao_roofline.gpu_name_to_specs.items()
            if all(key in specs for key in required)
        }
        assert ours == theirs

    @pytest.mark.parametrize(
        ("gpu", "mode", "recipe", "fusion"),
        LIVE_COMBOS,
        ids=[
            f"{g.replace(' ', '_')}-{m}-{r}-{'fusion' if f else 'nofusion'}"
            for g, m, r, f in LIVE_COMBOS
        ],
    )
    def test_live(
        self, torchao_roofline: Any, gpu: str, mode: str, recipe: str, fusion: bool
    ) -> None:
        """``roofline.evaluate`` matches torchao computed now, for a handful of shapes."""
        shapes = live_shapes(blockwise=recipe == "blockwise")
        expected = torchao_columns(torchao_roofline, gpu, mode, recipe, fusion, shapes)
        m, k, n = shapes_as_arrays(shapes)
        result = roofline.evaluate(
            gpu, mode, recipe, m, k, n, fusion=fusion, specs=str(specs_path("torchao018"))
        )
        assert_columns_match(result, expected, f"live torchao {gpu} {mode} {recipe} {fusion}")
