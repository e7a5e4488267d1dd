"""Generate the pinned parity goldens under ``tests/data/``.

Run by hand from the repository root::

    .venv/bin/python tools/make_parity_goldens.py

Two references are evaluated exactly the way torchao's benchmark scripts
(``benchmarks/float8/float8_roofline.py``, ``float8_inference_roofline.py`` and
the blockwise training benchmark) do it: build a sympy expression in the symbols
``M, K, N`` once per case, then for each shape ``float(expr.subs(M, m).subs(K, k).subs(N, n))``.

* ``seed``: ``../shared/reference/seed_model.py`` (torchao roofline utils as of 2025-11),
  loaded by path with importlib.
* ``torchao018``: ``torchao.testing.training.roofline_utils`` from the installed torchao 0.18.

Files written (under ``tests/data/``; torchao's table under ``roofline/data/``, where
``roofline.model.torchao_compat`` reads it):

* ``seed_specs.toml``, ``torchao018_specs.toml``: each reference's GPU table in the
  project's TOML spec format (only entries that have every key).
* ``parity_seed.json``, ``parity_torchao018.json``: one object per
  (gpu, mode, recipe, fusion) case with its shapes and the expected CLI columns.
* ``parity_meta.json``: provenance (torchao version, seed sha256, date, RNG seed,
  recipes each reference rejects).

Each case holds 24 shapes (22 for ``blockwise``): fixed anchors (launch floor, K off the
16/32 grid, 16384^3) plus 18 seeded log-uniform draws. That keeps all goldens under 1 MB.
Chained ``subs`` is slow (a few seconds per case), so cases run in a process pool; a full
run takes roughly 20 minutes on two cores. The output is deterministic apart from
``generated_on`` (which honours ``SOURCE_DATE_EPOCH``).

The tests never import the seed or torchao for the pinned comparison; they only read these files.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import math
import os
import sys
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import sympy
import torch

REPO_ROOT = Path(__file__).resolve().parent.parent
SEED_PATH = (REPO_ROOT / ".." / "shared" / "reference" / "seed_model.py").resolve()
DATA_DIR = REPO_ROOT / "tests" / "data"
TORCHAO_SPECS_PATH = REPO_ROOT / "roofline" / "data" / "torchao018_specs.toml"

RNG_SEED = 20251129
N_RANDOM_SHAPES = 18
DIM_LO, DIM_HI = 16, 65536
BLOCKWISE_BLOCK = 128
KERNEL_LAUNCH_OVERHEAD_S = 2e-06

SPEC_KEYS_REQUIRED = (
    "bf16_peak_tops",
    "peak_mem_bw_bytes_sec",
    "pct_achievable_gemm_tops",
    "pct_achievable_mem_bw",
)
SPEC_KEYS_ORDER = (
    "bf16_peak_tops",
    "fp8_peak_tops",
    "fp4_peak_tops",
    "peak_mem_bw_bytes_sec",
    "pct_achievable_gemm_tops",
    "pct_achievable_mem_bw",
)

FLOAT8_TRAINING_RECIPES = ("tensorwise", "rowwise", "rowwise_with_gw_hp")
MX_TRAINING_RECIPES = (
    "mxfp8_emulated",
    "mxfp8_cublas",
    "mxfp8_cublas_rceil",
    "mxfp8_32x32_flexible_gemm_layout",
    "mxfp8_32x32_weight",
    "mxfp4_cutlass",
)
TRAINING_RECIPES = (*FLOAT8_TRAINING_RECIPES, *MX_TRAINING_RECIPES, "blockwise")
INFERENCE_RECIPES = {
    "seed": (
        "tensorwise",
        "rowwise",
        "mxfp8_cublas",
        "mxfp8_emulated",
        "mxfp8_cublas_rceil",
        "mxfp4_cutlass",
        "nvfp4",
        "nvfp4_static",
        "nvfp4_no_global_scale",
    ),
    "torchao018": (
        "tensorwise",
        "rowwise",
        "mxfp8_cublas",
        "mxfp8_emulated",
        "mxfp8_cublas_rceil",
        "mxfp4",
        "nvfp4",
        "nvfp4_static",
        "nvfp4_no_global_scale",
    ),
}
# Every recipe name either reference might be asked about, probed to report rejections.
PROBE_NAMES = {
    "training": (*TRAINING_RECIPES, "mxfp4"),
    "inference": tuple(dict.fromkeys(INFERENCE_RECIPES["seed"] + INFERENCE_RECIPES["torchao018"])),
}
NVFP4_DEVIATION = "nvfp4 inference follows torchao 0.18"

TRAINING_COLUMNS = (
    "fwd_M",
    "fwd_K",
    "fwd_N",
    "r_bf16_gemm_s",
    "r_fp8_gemm_s",
    "r_fp8_ovhd_s",
    "r_fp8_gemm_and_ovhd_s",
    "r_fp8_gemm_and_ovhd_spdp",
)
INFERENCE_COLUMNS = (*TRAINING_COLUMNS[:5], "r_bf16_ovhd_s", *TRAINING_COLUMNS[5:])

# Reference rejections surface as these (assert False / match default / missing peak key).
REJECTIONS = (AssertionError, ValueError, KeyError, AttributeError)

Shape = tuple[int, int, int]


@dataclass(frozen=True)
class Expressions:
    """The sympy expressions one case is evaluated from."""

    bf16_gemm: sympy.Expr
    lowp_gemm: sympy.Expr
    lowp_ovhd: sympy.Expr
    bf16_ovhd: sympy.Expr | None  # inference only


def load_seed() -> ModuleType:
    """Import the seed roofline module by path (it is not a package)."""
    spec = importlib.util.spec_from_file_location("roofline_seed_model", SEED_PATH)
    assert spec is not None and spec.loader is not None, SEED_PATH
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_torchao() -> ModuleType:
    """Import torchao 0.18's roofline utilities."""
    from torchao.testing.training import roofline_utils

    return roofline_utils


def complete_specs(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Keep only GPUs that have every required key (drops e.g. the RTX 5090 entry)."""
    return {
        name: specs
        for name, specs in table.items()
        if all(key in specs for key in SPEC_KEYS_REQUIRED)
    }


def specs_toml(table: dict[str, dict[str, float]], source: str) -> str:
    """Render a reference's GPU table in the project's TOML spec format.

    Floats are written with ``repr`` so they parse back to the identical double.
    """
    lines = [
        f"# Reference GPU specs ({source}); generated by tools/make_parity_goldens.py.",
        "# Do not edit by hand.",
        f"kernel_launch_overhead_s = {KERNEL_LAUNCH_OVERHEAD_S!r}",
    ]
    for name, specs in complete_specs(table).items():
        lines += ["", "[[gpu]]", f"name = {json.dumps(name)}"]
        for key in SPEC_KEYS_ORDER:
            if key in specs:
                lines.append(f"{key} = {float(specs[key])!r}")
    return "\n".join(lines) + "\n"


def log_uniform_dims(rng: np.random.Generator, n: int, multiple: int = 1) -> list[int]:
    """Draw ``n`` integers log-uniformly in [DIM_LO, DIM_HI], rounded to ``multiple``."""
    raw = np.exp(rng.uniform(math.log(DIM_LO), math.log(DIM_HI), size=n))
    out = []
    for value in raw:
        dim = max(multiple, round(value / multiple) * multiple)
        out.append(int(min(max(dim, DIM_LO), DIM_HI)))
    return out


def case_shapes(case_id: str, blockwise: bool) -> list[Shape]:
    """Fixed anchor shapes plus seeded random shapes for one case.

    Anchors cover the launch floor (tiny shapes), K not a multiple of 16/32 (the
    scale-count floors), and the large square shape used for hand sanity checks.
    Random shapes mix raw integers, multiples of 16 and multiples of 128; for
    ``blockwise`` K and N are always multiples of 128.
    """
    rng = np.random.default_rng([RNG_SEED, zlib.crc32(case_id.encode())])
    if blockwise:
        anchors: list[Shape] = [
            (16, 128, 128),
            (17, 128, 256),
            (8191, 4096, 14336),
            (16384, 16384, 16384),
        ]
        ms = log_uniform_dims(rng, N_RANDOM_SHAPES)
        ks = log_uniform_dims(rng, N_RANDOM_SHAPES, BLOCKWISE_BLOCK)
        ns = log_uniform_dims(rng, N_RANDOM_SHAPES, BLOCKWISE_BLOCK)
        return anchors + list(zip(ms, ks, ns, strict=True))
    anchors = [
        (16, 16, 16),
        (17, 23, 19),
        (48, 100, 40),
        (4097, 4100, 8191),
        (2048, 1000, 3072),
        (16384, 16384, 16384),
    ]
    shapes = list(anchors)
    thirds = (1, 16, 128)
    for i in range(N_RANDOM_SHAPES):
        mult = thirds[i % 3]
        m, k, n = (log_uniform_dims(rng, 1, mult)[0] for _ in range(3))
        shapes.append((m, k, n))
    return shapes


def training_expressions(
    ref: ModuleType, recipe: str, fusion: bool, gpu: str, syms: tuple[sympy.Symbol, ...]
) -> Expressions:
    """Training expressions as float8_roofline.py / the blockwise benchmark build them."""
    M, K, N = syms
    bf16 = ref.get_gemm_time_sympy(M, K, N, torch.bfloat16, None, None, gpu)
    if recipe == "blockwise":
        gemm = ref.get_blockwise_gemm_time_sympy(M, K, N, gpu)
        ovhd = ref.get_blockwise_float8_mem_sympy(M, K, N, fusion, gpu)
    elif recipe in FLOAT8_TRAINING_RECIPES:
        gemm = ref.get_gemm_time_sympy(M, K, N, torch.float8_e4m3fn, recipe, None, gpu)
        ovhd = ref.get_float8_mem_sympy(M, K, N, recipe, None, fusion, gpu)
    else:
        dtype = torch.float4_e2m1fn_x2 if recipe == "mxfp4_cutlass" else torch.float8_e4m3fn
        gemm = ref.get_gemm_time_sympy(M, K, N, dtype, None, recipe, gpu)
        ovhd = ref.get_float8_mem_sympy(M, K, N, None, recipe, fusion, gpu)
    return Expressions(bf16, gemm, ovhd, None)


def inference_expressions(
    ref: ModuleType, recipe: str, fusion: bool, gpu: str, syms: tuple[sympy.Symbol, ...]
) -> Expressions:
    """Inference expressions as float8_inference_roofline.py builds them."""
    M, K, N = syms
    ovhd = ref.get_inference_float8_mem_sympy(M, K, N, recipe, gpu)
    bf16 = ref.get_inference_gemm_time_sympy(M, K, N, torch.bfloat16, None, gpu)
    # without fusion the script uses `M * 0` ("to ensure we get a sympy symbol")
    bf16_ovhd = ref.get_inference_bf16_activation_mem_sympy(M, K, N, gpu) if fusion else M * 0
    if recipe.startswith(("nvfp4", "mxfp4")):
        gemm = ref.get_inference_gemm_time_sympy(M, K, N, torch.float4_e2m1fn_x2, recipe, gpu)
    else:
        gemm_recipe = "mxfp8" if recipe.startswith("mxfp8") else None
        gemm = ref.get_inference_gemm_time_sympy(M, K, N, torch.float8_e4m3fn, gemm_recipe, gpu)
    return Expressions(bf16, gemm, ovhd, bf16_ovhd)


def evaluate(expr: sympy.Expr, syms: tuple[sympy.Symbol, ...], shape: Shape) -> float:
    """Evaluate like the benchmark scripts: chained ``subs`` then ``float``."""
    M, K, N = syms
    m, k, n = shape
    return float(expr.subs(M, m).subs(K, k).subs(N, n))


def case_columns(
    exprs: Expressions, syms: tuple[sympy.Symbol, ...], shapes: list[Shape], mode: str
) -> dict[str, list[float]]:
    """Compute the CLI columns for every shape of one case."""
    names = TRAINING_COLUMNS if mode == "training" else INFERENCE_COLUMNS
    cols: dict[str, list[float]] = {name: [] for name in names}
    for shape in shapes:
        bf16 = evaluate(exprs.bf16_gemm, syms, shape)
        gemm = evaluate(exprs.lowp_gemm, syms, shape)
        ovhd = evaluate(exprs.lowp_ovhd, syms, shape)
        row = {
            "fwd_M": float(shape[0]),
            "fwd_K": float(shape[1]),
            "fwd_N": float(shape[2]),
            "r_bf16_gemm_s": bf16,
            "r_fp8_gemm_s": gemm,
            "r_fp8_ovhd_s": ovhd,
            "r_fp8_gemm_and_ovhd_s": gemm + ovhd,
        }
        if exprs.bf16_ovhd is None:
            row["r_fp8_gemm_and_ovhd_spdp"] = bf16 / (gemm + ovhd)
        else:
            bf16_ovhd = evaluate(exprs.bf16_ovhd, syms, shape)
            row["r_bf16_ovhd_s"] = bf16_ovhd
            row["r_fp8_gemm_and_ovhd_spdp"] = (bf16 + bf16_ovhd) / (gemm + ovhd)
        for name in names:
            cols[name].append(row[name])
    return cols


def case_id(source: str, gpu: str, mode: str, recipe: str, fusion: bool) -> str:
    """Stable identifier, also used as the test id and to seed the case's RNG."""
    return "-".join(
        (source, gpu.replace(" ", "_"), mode, recipe, "fusion" if fusion else "nofusion")
    )


def iter_combos(source: str, gpus: list[str]) -> Iterator[tuple[str, str, str, bool]]:
    """All (gpu, mode, recipe, fusion) combinations to try for one reference."""
    for gpu in gpus:
        for recipe in TRAINING_RECIPES:
            for fusion in (False, True):
                yield gpu, "training", recipe, fusion
        inference_fusions = (False,) if source == "seed" else (False, True)
        for recipe in INFERENCE_RECIPES[source]:
            for fusion in inference_fusions:
                yield gpu, "inference", recipe, fusion


_WORKER_REFS: dict[str, ModuleType] = {}


def _init_worker() -> None:
    """Load both references once per worker process."""
    _WORKER_REFS.update(load_refs())


def load_refs() -> dict[str, ModuleType]:
    """Both references, keyed by source name."""
    return {"seed": load_seed(), "torchao018": load_torchao()}


def build_case(source: str, gpu: str, mode: str, recipe: str, fusion: bool) -> dict[str, Any]:
    """Build one case, or ``{"case": id, "reason": ...}`` if the reference rejects it."""
    ref = _WORKER_REFS[source]
    syms = sympy.symbols("M K N")
    cid = case_id(source, gpu, mode, recipe, fusion)
    build = training_expressions if mode == "training" else inference_expressions
    try:
        exprs = build(ref, recipe, fusion, gpu, syms)
    except REJECTIONS as exc:
        return {"case": cid, "reason": f"{type(exc).__name__}: {exc}"}
    shapes = case_shapes(cid, blockwise=recipe == "blockwise")
    case: dict[str, Any] = {
        "source": source,
        "gpu": gpu,
        "mode": mode,
        "recipe": recipe,
        "fusion": fusion,
    }
    if source == "seed" and mode == "inference" and recipe.startswith("nvfp4"):
        case["deviation"] = NVFP4_DEVIATION
    case["shapes"] = [list(s) for s in shapes]
    case["columns"] = case_columns(exprs, syms, shapes, mode)
    print(f"  {cid}: {len(shapes)} shapes", file=sys.stderr, flush=True)
    return case


def build_cases(
    source: str, gpus: list[str], pool: ProcessPoolExecutor
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Build every case a reference accepts; return (cases, skipped combos with reasons).

    ``subs`` is slow (seconds per case), so cases are spread over worker processes;
    the output order is the deterministic combination order.
    """
    combos = list(iter_combos(source, gpus))
    results = pool.map(build_case, *zip(*((source, *c) for c in combos), strict=True))
    cases: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for result in results:
        (skipped if "reason" in result else cases).append(result)
    return cases, skipped


def probe_rejections(ref: ModuleType, gpu: str) -> dict[str, dict[str, str]]:
    """Which recipe names a reference refuses to build, per mode, on a GPU with every peak."""
    syms = sympy.symbols("M K N")
    out: dict[str, dict[str, str]] = {"training": {}, "inference": {}}
    for mode, names in PROBE_NAMES.items():
        build = training_expressions if mode == "training" else inference_expressions
        for recipe in names:
            try:
                build(ref, recipe, False, gpu, syms)
            except REJECTIONS as exc:
                out[mode][recipe] = f"{type(exc).__name__}: {exc}"
    return out


def dump_cases(cases: list[dict[str, Any]]) -> str:
    """Compact JSON, one case per line (floats via repr, so they round-trip exactly)."""
    body = ",\n".join(json.dumps(case, separators=(",", ":")) for case in cases)
    return "[\n" + body + "\n]\n"


def check_round_trip(path: Path, cases: list[dict[str, Any]]) -> None:
    """Re-read a written file and require bit-identical floats."""
    assert json.loads(path.read_text()) == cases, f"{path} does not round-trip"


def generation_date() -> str:
    """Today's date, or the date of ``SOURCE_DATE_EPOCH`` when set (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is None:
        return dt.date.today().isoformat()
    return dt.datetime.fromtimestamp(int(epoch), tz=dt.UTC).date().isoformat()


def main() -> None:
    """Generate every file under tests/data/ and print a short summary."""
    import torchao

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    refs = load_refs()
    pool = ProcessPoolExecutor(max_workers=os.cpu_count(), initializer=_init_worker)
    meta: dict[str, Any] = {
        "generator": "tools/make_parity_goldens.py",
        "generated_on": generation_date(),
        "torchao_version": torchao.__version__,
        "sympy_version": sympy.__version__,
        "seed_file": "shared/reference/seed_model.py",
        "seed_sha256": hashlib.sha256(SEED_PATH.read_bytes()).hexdigest(),
        "rng_seed": RNG_SEED,
        "evaluation": "float(expr.subs(M, m).subs(K, k).subs(N, n)) per shape",
        "nvfp4_deviation": NVFP4_DEVIATION,
        "sources": {},
    }
    for source, ref in refs.items():
        table = ref.gpu_name_to_specs
        specs_file = (
            TORCHAO_SPECS_PATH if source == "torchao018" else DATA_DIR / f"{source}_specs.toml"
        )
        specs_file.write_text(specs_toml(table, source))
        cases, skipped = build_cases(source, list(complete_specs(table)), pool)
        path = DATA_DIR / f"parity_{source}.json"
        path.write_text(dump_cases(cases))
        check_round_trip(path, cases)
        counts: dict[str, int] = {}
        for case in cases:
            counts[case["mode"]] = counts.get(case["mode"], 0) + 1
        meta["sources"][source] = {
            "specs_file": (
                "roofline/data/torchao018_specs.toml"
                if source == "torchao018"
                else f"tests/data/{source}_specs.toml"
            ),
            "cases_file": f"tests/data/parity_{source}.json",
            "gpus": list(complete_specs(table)),
            "gpus_dropped_incomplete": [g for g in table if g not in complete_specs(table)],
            "case_counts": counts,
            "rejected_recipes": probe_rejections(ref, "NVIDIA B200"),
            "skipped_combos": skipped,
        }
        print(f"{source}: {counts}, {path.stat().st_size} bytes", file=sys.stderr)
    pool.shutdown()
    (DATA_DIR / "parity_meta.json").write_text(json.dumps(meta, indent=2) + "\n")


if __name__ == "__main__":
    main()
