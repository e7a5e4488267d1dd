"""Capability in three parts (issue #12): the hardware format, the software stack that
runs the recipe's kernels, and emulation; four states, each with its reason."""

from __future__ import annotations

import dataclasses
import json
import textwrap
import warnings
from pathlib import Path

import pytest

from roofline import (
    CapabilityWarning,
    EmulatedWarning,
    HypotheticalWarning,
    Support,
    UnsupportedError,
    classify,
    evaluate,
    get_recipe,
    load_specs,
)
from roofline.analysis.guidance import best_recipe, native_recipes
from roofline.capability import matrix, platform_of
from roofline.cli import main
from roofline.recipes import RECIPE_LIST, Mode, Platform
from roofline.specs import SpecDatabase
from site_gen.markup import safe
from site_gen.pages.rows.capability import capability_table, reasons_table

FP8_RECIPES = ("tensorwise", "rowwise", "rowwise_with_gw_hp", "blockwise")
RTX_GAP = (
    "Per-row FP8 torch._scaled_mm fails with CUBLAS_STATUS_NOT_SUPPORTED on sm_120 "
    "(pytorch/pytorch issue #192707)."
)

# Representative GPUs, figures as in the bundled database; one per capability pattern.
SPECS_TOML = textwrap.dedent(
    f"""\
    schema_version = 1

    [[gpu]]
    name = "Cap H100"
    vendor = "NVIDIA"
    bf16_peak_tops = 989e12
    fp8_peak_tops = 1979e12
    peak_mem_bw_bytes_sec = 3.35e12
    native_formats = ["fp8"]

    [[gpu]]
    name = "Cap B200"
    vendor = "NVIDIA"
    bf16_peak_tops = 2250e12
    fp8_peak_tops = 4500e12
    fp4_peak_tops = 9000e12
    peak_mem_bw_bytes_sec = 8e12
    native_formats = ["fp8", "mxfp8", "mxfp4", "nvfp4"]

    [[gpu]]
    name = "Cap MI355X"
    vendor = "AMD"
    bf16_peak_tops = 2516.6e12
    fp8_peak_tops = 5033.2e12
    fp4_peak_tops = 10066.4e12
    peak_mem_bw_bytes_sec = 8e12
    native_formats = ["fp8", "mxfp8", "mxfp4"]

    [[gpu]]
    name = "Cap A100"
    vendor = "NVIDIA"
    bf16_peak_tops = 312e12
    peak_mem_bw_bytes_sec = 2.039e12
    native_formats = []

    [[gpu]]
    name = "Cap RTX 5090"
    vendor = "NVIDIA"
    bf16_peak_tops = 209.5e12
    fp8_peak_tops = 419e12
    fp4_peak_tops = 1676e12
    peak_mem_bw_bytes_sec = 1.792e12
    native_formats = ["fp8", "mxfp8", "mxfp4", "nvfp4"]
    software_gaps = {{ rowwise = "{RTX_GAP}", rowwise_with_gw_hp = "{RTX_GAP}" }}

    [[gpu]]
    name = "Cap Unknown Vendor"
    bf16_peak_tops = 989e12
    fp8_peak_tops = 1979e12
    peak_mem_bw_bytes_sec = 3.35e12
    native_formats = ["fp8"]

    [[gpu]]
    name = "Cap NVIDIA On ROCm"
    vendor = "NVIDIA"
    platform = "rocm"
    bf16_peak_tops = 2250e12
    fp8_peak_tops = 4500e12
    fp4_peak_tops = 9000e12
    peak_mem_bw_bytes_sec = 8e12
    native_formats = ["fp8", "mxfp8", "mxfp4", "nvfp4"]
    """
)


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> SpecDatabase:
    path = tmp_path_factory.mktemp("cap") / "cap.toml"
    path.write_text(SPECS_TOML)
    return load_specs(path)


def verdict(specs: SpecDatabase, gpu: str, recipe: str, mode: str | None = None):
    return classify(specs[gpu], get_recipe(recipe), Mode.parse(mode) if mode else None)


# -- the four states on representative GPUs ------------------------------------------------


def test_h100_mxfp8_cublas_is_hypothetical_and_emulated_is_emulated(specs):
    cublas = verdict(specs, "Cap H100", "mxfp8_cublas")
    assert cublas.support is Support.HYPOTHETICAL
    assert cublas.hardware == "has no native mxfp8 support"
    assert "cuBLAS" in cublas.software  # CUDA has the kernel; the hardware lacks the format
    emulated = verdict(specs, "Cap H100", "mxfp8_emulated")
    assert emulated.support is Support.EMULATED
    assert "bf16 GEMMs" in emulated.reason and "cuBLAS" in emulated.software


def test_b200_runs_mx_natively_with_the_library_named(specs):
    cublas = verdict(specs, "Cap B200", "mxfp8_cublas")
    assert cublas.support is Support.NATIVE
    assert cublas.reason == "Cap B200 runs mxfp8 natively; on CUDA, its GEMMs run on cuBLAS"
    assert "CUTLASS" in verdict(specs, "Cap B200", "mxfp4_cutlass").software
    # The emulated recipe never becomes native, even on hardware with MX tensor cores.
    emulated = verdict(specs, "Cap B200", "mxfp8_emulated")
    assert emulated.support is Support.EMULATED
    assert emulated.hardware == "runs mxfp8 natively, but this recipe does not use it"


@pytest.mark.parametrize(
    ("recipe", "missing"), [("mxfp8_cublas", "cuBLAS"), ("mxfp4_cutlass", "CUTLASS")]
)
def test_mi355x_has_the_format_but_rocm_lacks_the_kernel(specs, recipe, missing):
    cap = verdict(specs, "Cap MI355X", recipe)
    assert cap.support is Support.HYPOTHETICAL
    assert cap.hardware.startswith("runs mx")  # the hardware is not the reason
    assert cap.software.startswith("on ROCm, there is no " + missing)
    assert "hipBLASLt" in cap.software  # what ROCm has instead is named
    assert "ROCm" in cap.reason and "no kernel runs recipe" in cap.reason


def test_mi355x_float8_runs_on_hipblaslt_and_blockwise_has_no_rocm_kernel(specs):
    tensorwise = verdict(specs, "Cap MI355X", "tensorwise")
    assert tensorwise.support is Support.NATIVE and "hipBLASLt" in tensorwise.software
    blockwise = verdict(specs, "Cap MI355X", "blockwise")
    assert blockwise.support is Support.HYPOTHETICAL and "SM90" in blockwise.software
    nvfp4 = verdict(specs, "Cap MI355X", "nvfp4")  # neither format nor kernel
    assert nvfp4.support is Support.HYPOTHETICAL
    assert "no native nvfp4" in nvfp4.reason and "no kernel runs it either" in nvfp4.reason


def test_a100_cannot_compute_fp8_recipes_nor_torchaos_emulated_estimate(specs):
    for recipe in FP8_RECIPES:
        cap = verdict(specs, "Cap A100", recipe)
        assert cap.support is Support.IMPOSSIBLE and "fp8_peak_tops" in cap.reason
    # It would run emulated, but torchao's model times those GEMMs at the fp8 peak, which
    # A100 lacks: no estimate, and the reason says why.
    emulated = verdict(specs, "Cap A100", "mxfp8_emulated")
    assert emulated.support is Support.IMPOSSIBLE
    assert "emulated" in emulated.reason and "fp8_peak_tops" in emulated.reason


def test_a_software_gap_makes_a_hardware_format_hypothetical(specs):
    for recipe in ("rowwise", "rowwise_with_gw_hp"):
        cap = verdict(specs, "Cap RTX 5090", recipe)
        assert cap.support is Support.HYPOTHETICAL
        assert cap.hardware == "runs fp8 natively"
        assert cap.software == RTX_GAP.rstrip(".")  # the spec's sentence, with its source
        assert "#192707" in cap.reason
    assert verdict(specs, "Cap RTX 5090", "tensorwise").support is Support.NATIVE


def test_unknown_platform_is_judged_by_hardware_formats_only_and_says_so(specs):
    gpu = specs["Cap Unknown Vendor"]
    assert platform_of(gpu) is None
    native = classify(gpu, get_recipe("rowwise"))
    assert native.support is Support.NATIVE and "software stack is unknown" in native.reason
    assert classify(gpu, get_recipe("mxfp8_cublas")).support is Support.HYPOTHETICAL


def test_the_platform_key_overrides_the_vendor(specs):
    gpu = specs["Cap NVIDIA On ROCm"]
    assert platform_of(gpu) is Platform.ROCM
    assert classify(gpu, get_recipe("mxfp8_cublas")).support is Support.HYPOTHETICAL
    assert classify(gpu, get_recipe("tensorwise")).support is Support.NATIVE


def test_32x32_layouts_are_hypothetical_everywhere(specs):
    for gpu in specs.values():
        for recipe in ("mxfp8_32x32_flexible_gemm_layout", "mxfp8_32x32_weight"):
            assert verdict(specs, gpu.name, recipe).support in (
                Support.HYPOTHETICAL,
                Support.IMPOSSIBLE,
            ), (gpu.name, recipe)


def test_modes_agree_where_the_recipe_has_both(specs):
    for gpu in specs.values():
        for recipe in RECIPE_LIST:
            states = {classify(gpu, recipe, m).support for m in recipe.modes}
            assert states == {classify(gpu, recipe).support}, (gpu.name, recipe.name)


def test_parts_never_name_the_gpu_so_tables_can_group_by_them(specs):
    # A GPU named like a format or a library must not leak into the shared parts.
    odd = dataclasses.replace(specs["Cap MI355X"], name="cuBLAS mxfp8")
    for recipe in RECIPE_LIST:
        cap = classify(odd, recipe)
        twin = classify(specs["Cap MI355X"], recipe)
        assert (cap.support, cap.hardware, cap.software) == (
            twin.support,
            twin.hardware,
            twin.software,
        )
        assert cap.reason == twin.reason.replace("Cap MI355X", "cuBLAS mxfp8")


# -- the recipe data ------------------------------------------------------------------------


def test_every_recipe_names_a_library_or_a_reason_on_every_platform():
    for recipe in RECIPE_LIST:
        for platform in Platform:
            has = recipe.kernels.get(platform) or recipe.kernel_gaps.get(platform)
            assert has, (recipe.name, platform)
            assert not (recipe.kernels.get(platform) and recipe.kernel_gaps.get(platform))


def test_only_the_emulated_recipe_is_emulated():
    assert [r.name for r in RECIPE_LIST if r.emulated] == ["mxfp8_emulated"]


# -- the bundled database: the GPUs the issue names ----------------------------------------


@pytest.mark.parametrize(
    ("gpu", "recipe", "state"),
    [
        ("NVIDIA H100", "mxfp8_cublas", Support.HYPOTHETICAL),
        ("NVIDIA H100", "mxfp8_emulated", Support.EMULATED),
        ("NVIDIA H100", "rowwise", Support.NATIVE),
        ("NVIDIA B200", "mxfp8_cublas", Support.NATIVE),
        ("NVIDIA B200", "mxfp8_emulated", Support.EMULATED),
        ("AMD Instinct MI355X", "mxfp8_cublas", Support.HYPOTHETICAL),
        ("AMD Instinct MI355X", "mxfp4_cutlass", Support.HYPOTHETICAL),
        ("AMD Instinct MI355X", "tensorwise", Support.NATIVE),
        ("NVIDIA A100 SXM", "rowwise", Support.IMPOSSIBLE),
    ],
)
def test_bundled_database(gpu, recipe, state):
    assert classify(load_specs().find(gpu), get_recipe(recipe)).support is state


# -- consumers: evaluate's warnings, guidance, the CLI -------------------------------------


def test_evaluate_warns_per_state(specs):
    shape = (1024, 1024, 1024)
    with pytest.warns(EmulatedWarning, match="bf16 GEMMs"):
        evaluate(specs["Cap H100"], "training", "mxfp8_emulated", *shape)
    with pytest.warns(HypotheticalWarning, match="ROCm"):
        evaluate(specs["Cap MI355X"], "training", "mxfp8_cublas", *shape)
    assert issubclass(EmulatedWarning, CapabilityWarning)
    assert not issubclass(EmulatedWarning, HypotheticalWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a native recipe is silent
        evaluate(specs["Cap B200"], "training", "mxfp8_cublas", *shape)
    with pytest.raises(UnsupportedError, match="fp8_peak_tops"):
        evaluate(specs["Cap A100"], "training", "mxfp8_emulated", *shape)


def test_only_native_recipes_compete_for_best(specs):
    b200 = [r.name for r in native_recipes(specs["Cap B200"], Mode.TRAINING)]
    assert "mxfp8_cublas" in b200 and "mxfp8_emulated" not in b200
    mi355x = [r.name for r in native_recipes(specs["Cap MI355X"], Mode.TRAINING)]
    assert mi355x == ["tensorwise", "rowwise", "rowwise_with_gw_hp"]
    name, _ = best_recipe(specs["Cap MI355X"], "training", 16384, 8192, 8192)
    assert name in mi355x


def test_matrix_covers_every_gpu_and_recipe(specs):
    table = matrix(specs)
    assert set(table) == set(specs)
    assert all(set(row) == {r.name for r in RECIPE_LIST} for row in table.values())
    assert {c.support for row in table.values() for c in row.values()} == set(Support)


def _spec_file(tmp_path: Path) -> str:
    path = tmp_path / "cap.toml"
    path.write_text(SPECS_TOML)
    return str(path)


def test_specs_list_shows_four_states_with_a_legend(capsys, tmp_path):
    assert main(["specs", "list", _spec_file(tmp_path)]) == 0
    out = capsys.readouterr().out
    for line in ("N = native", "e = emulated", "h = hypothetical", "- = impossible"):
        assert line in out
    rows = {
        line.split()[0]: line.split()[1:]
        for line in out.splitlines()
        if line.strip() and line.split()[0] in {r.name for r in RECIPE_LIST}
    }
    # Columns in file order: H100, B200, MI355X, A100, RTX 5090, unknown vendor, on ROCm.
    assert rows["mxfp8_cublas"] == ["h", "N", "h", "-", "N", "h", "h"]
    assert rows["mxfp8_emulated"] == ["e", "e", "e", "-", "e", "e", "e"]
    assert rows["rowwise"] == ["N", "N", "N", "-", "h", "N", "N"]


def test_specs_list_json_gives_each_reason(capsys, tmp_path):
    assert main(["specs", "list", _spec_file(tmp_path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["states"]) == {s.value for s in Support}
    mi355x = next(g for g in data["gpus"] if g["name"] == "Cap MI355X")
    assert mi355x["platform"] == "rocm"
    cublas = mi355x["capabilities"]["mxfp8_cublas"]
    assert cublas["support"] == "hypothetical" and "hipBLASLt" in cublas["software"]
    assert set(cublas) == {"support", "reason", "hardware", "software"}


def test_specs_show_lists_each_recipes_state_and_reason(capsys, tmp_path):
    code = main(["specs", "show", "Cap MI355X", "--specs", _spec_file(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "capabilities (platform: rocm):" in out
    line = next(r for r in out.splitlines() if r.strip().startswith("mxfp4_cutlass"))
    assert "hypothetical:" in line and "CUTLASS" in line


def test_eval_notes_emulation_in_one_stderr_line(capsys, tmp_path):
    argv = [
        "eval",
        "--gpu",
        "Cap H100",
        "--specs",
        _spec_file(tmp_path),
        "--recipe",
        "mxfp8_emulated",
        "--shape",
        "1024,1024,1024",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("note: recipe mxfp8_emulated emulates")
    assert captured.out


# -- the Specs page's tables (Markdown) ------------------------------------------------------


def test_specs_page_tables_show_four_states_and_every_reason(specs):
    page = "generated/specs.md"
    matrix_md = str(capability_table(specs, page).markdown())
    for word in ("✓ native", "≈ emulated", "hypothetical", "✗ impossible"):
        assert word in matrix_md
    reasons = reasons_table(specs, page)
    cells = [[str(safe.plain(c)) for c in row] for row in reasons.rows]
    # Every GPU x recipe appears once in the reasons table, beside its state.
    seen = {(row[0], gpu) for row in cells for gpu in row[2].split(", ")}
    assert seen == {(r.name, g) for r in RECIPE_LIST for g in specs}
    cublas = [row for row in cells if row[0] == "mxfp8_cublas" and "Cap MI355X" in row[2]]
    assert len(cublas) == 1 and "hipBLASLt" in cublas[0][4]


def test_hostile_software_gap_text_stays_text_on_the_specs_page(specs):
    hostile = "<script>alert(1)</script> [x](javascript:alert(1)) | cell"
    gpu = dataclasses.replace(specs["Cap RTX 5090"], software_gaps={"rowwise": hostile})
    md = str(reasons_table(SpecDatabase({gpu.name: gpu}, "test"), "generated/specs.md").markdown())
    assert "<script>" not in md and "](javascript:" not in md and "| cell" not in md
