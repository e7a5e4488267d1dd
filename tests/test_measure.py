"""``roofline measure`` (issue #22): statistics, the measurement file, and the CPU plumbing.

A planted timer returns known times, so the median, the spread and the written file are
checked exactly; the file is loaded by the measurement lint and ``roofline validate``.
The CPU run times real bf16 GEMMs (torch) and labels every set as CPU timings. The CUDA
path (CUDA events, L2 flush, ``torch._scaled_mm``) needs a GPU and is not run here.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
from pathlib import Path

import pytest

from roofline.cli import main
from roofline.cli.measure import _shapes
from roofline.errors import RooflineError
from roofline.measurements import KernelLibrary, SetRole, parse_measurements
from roofline.measurements.harness import (
    Environment,
    Job,
    MeasureError,
    measurement_text,
    run_jobs,
    summarize,
)

DATA = Path(__file__).resolve().parent / "data" / "hf"


class PlantedTimer:
    """Returns the given times in turn and counts the calls it timed."""

    device = "test"

    def __init__(self, times_s):
        self._times = itertools.cycle(times_s)
        self.calls = 0

    def time(self, fn):
        fn()
        self.calls += 1
        return next(self._times)


def _job(kind="bf16_gemm", recipe="tensorwise", shape=(1024, 1024, 1024), calls=None):
    def make():
        return lambda: calls.append(shape) if calls is not None else None

    return Job(kind, recipe, shape, make)


def test_summarize_median_and_spread():
    stats = summarize([5e-6, 1e-6, 3e-6, 2e-6, 4e-6])
    assert (stats.runs, stats.median_s, stats.min_s, stats.max_s) == (5, 3e-6, 1e-6, 5e-6)
    assert stats.p10_s == pytest.approx(1.4e-6) and stats.p90_s == pytest.approx(4.6e-6)
    assert stats.spread_label() == "n=5 p10-p90 1.4-4.6 us (min 1)"
    one = summarize([7e-6])
    assert one.median_s == one.p10_s == one.p90_s == 7e-6


@pytest.mark.parametrize("bad", [[], [0.0], [-1e-6], [float("nan")], [float("inf")]])
def test_summarize_refuses_nonsense_times(bad):
    with pytest.raises(MeasureError):
        summarize(bad)


def test_run_jobs_warms_up_then_times_each_run():
    calls: list = []
    timer = PlantedTimer([3e-6, 1e-6, 2e-6])
    seen = []
    results = run_jobs(
        [_job(calls=calls)],
        timer,
        warmup=4,
        repeats=3,
        progress=lambda done, total, job: seen.append((done, total)),
    )
    assert len(calls) == 4 + 3 and timer.calls == 3
    assert results[0].stats.median_s == 2e-6
    assert seen == [(0, 1), (1, 1)]


def _results(kinds):
    timer = PlantedTimer([10e-6, 12e-6, 11e-6])
    jobs = [
        _job(kind, recipe, shape)
        for kind, recipe in kinds
        for shape in ((1024, 1024, 1024), (4096, 4096, 4096))
    ]
    return run_jobs(jobs, timer, warmup=1, repeats=3)


def test_cpu_file_is_labelled_and_loads():
    env = Environment("cpu", "x86_64", "torch 2.13.0+cpu; torchao not installed", ["CPU: x"])
    text = measurement_text(
        _results([("bf16_gemm", "tensorwise")]),
        env,
        "NVIDIA H100 SXM",
        prefix="t",
        command="roofline measure --device cpu",
        warmup=1,
        read_on=dt.date(2026, 12, 2),
    )
    (mset,) = parse_measurements(text, "m.toml").sets
    assert mset.role is SetRole.CONTEXT and mset.title.startswith("CPU, not a GPU")
    assert mset.library is KernelLibrary.UNKNOWN  # a CPU's GEMM is no GPU library's
    assert "CPU TIMINGS, NOT A GPU MEASUREMENT" in mset.notes
    assert [p.value for p in mset.points] == [11.0, 11.0]  # the median, in microseconds
    assert [p.shapes[0] for p in mset.points] == [(1024, 1024, 1024), (4096, 4096, 4096)]
    assert mset.points[0].label == "n=3 p10-p90 10.2-11.8 us (min 10)"
    assert mset.terms == ("gemm.output.bf16",)


def test_gpu_file_has_a_set_per_kernel_kind_and_recipe():
    env = Environment(
        "cuda",
        "NVIDIA H100 80GB HBM3",
        "torch 2.13.0; CUDA 12.8",
        ["driver 580.1, SM clock 1980 MHz, power limit 700 W"],
        gemm_library="cublas",
    )
    kinds = [
        ("bf16_gemm", "tensorwise"),
        ("lowp_gemm", "tensorwise"),
        ("cast", "tensorwise"),
        ("lowp_gemm", "rowwise"),
        ("cast", "rowwise"),
    ]
    text = measurement_text(
        _results(kinds),
        env,
        "NVIDIA H100 SXM",
        prefix="h100-run",
        command="roofline measure --shape-gen llama",
        warmup=1,
        max_mean_error=0.3,
    )
    sets = {s.id: s for s in parse_measurements(text, "m.toml").sets}
    assert sorted(sets) == [
        "h100-run-bf16-gemm",
        "h100-run-cast-rowwise",
        "h100-run-cast-tensorwise",
        "h100-run-lowp-gemm-rowwise",
        "h100-run-lowp-gemm-tensorwise",
    ]
    assert all(s.role is SetRole.FIT and s.max_mean_error == 0.3 for s in sets.values())
    assert sets["h100-run-cast-tensorwise"].terms == ("cast.input.1", "cast.input.2")
    assert sets["h100-run-cast-rowwise"].terms == ("cast.input.1",)
    assert sets["h100-run-lowp-gemm-rowwise"].terms == ("gemm.output.lowp",)
    assert "power limit 700 W" in sets["h100-run-bf16-gemm"].notes
    # The casts are eager PyTorch (its own kernels), the GEMMs the platform's BLAS.
    assert sets["h100-run-cast-rowwise"].library is KernelLibrary.CUDA
    assert sets["h100-run-lowp-gemm-rowwise"].library is KernelLibrary.CUBLAS
    assert "CUDA events" in sets["h100-run-bf16-gemm"].notes


def _args(**kw):
    base = {"shape": None, "shape_gen": None, "hf_config": None, "tokens": "64"}
    return argparse.Namespace(**{**base, **kw})


def test_shapes_from_every_source(capsys):
    assert _shapes(_args(shape=["1,2,3", "1,2,3", "4,5,6"])) == [(1, 2, 3), (4, 5, 6)]
    assert (16384, 8192, 1280) in _shapes(_args(shape_gen="llama"))
    dense = _shapes(_args(hf_config=str(DATA / "qwen3-8b.json")))
    assert dense == [
        (64, 4096, 4096),
        (64, 4096, 1024),
        (64, 4096, 12288),
        (64, 12288, 4096),
        (64, 4096, 151936),
    ]
    _shapes(_args(hf_config=str(DATA / "mixtral-8x7b.json")))
    assert "grouped expert GEMMs are not timed: layers.expert_down_proj" in capsys.readouterr().err


def test_without_cuda_one_line_exit_2(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    out = tmp_path / "m.toml"
    assert main(["measure", "--shape", "64,64,64", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no CUDA device" in err and "--device cpu" in err
    assert not out.exists()


def test_cpu_run_writes_a_file_validate_loads(capsys, tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "m.toml"
    argv = [
        "measure",
        "--device",
        "cpu",
        "--shape",
        "128,256,64",
        "--shape",
        "64,64,64",
        "--repeats",
        "3",
        "--warmup",
        "1",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[measure] wrote 2 points" in err and "CPU timings" in err
    (mset,) = parse_measurements(out.read_text(), str(out)).sets
    assert mset.role is SetRole.CONTEXT and all(p.value > 0 for p in mset.points)
    assert main(["validate", "--measurements", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in report["sets"]] == [mset.id]
    assert (
        main(
            [
                "measure",
                "--device",
                "cpu",
                "--shape",
                "8,8,8",
                "--recipes",
                "rowwise",
                "-o",
                str(out),
            ]
        )
        == 2
    )


def test_calibrate_one_gpu_on_a_measured_file_writes_a_calibration(capsys, tmp_path):
    pytest.importorskip("scipy")
    from roofline.calibration.data import bundled_set_ids, load_calibration

    env = Environment("cuda", "NVIDIA H100 80GB HBM3", "torch 2.13.0; CUDA 12.8", ["x"])
    kinds = [("bf16_gemm", "tensorwise"), ("lowp_gemm", "tensorwise"), ("cast", "tensorwise")]
    measured = tmp_path / "h100.toml"
    measured.write_text(
        measurement_text(
            _results(kinds),
            env,
            "NVIDIA H100 SXM",
            prefix="mine",
            command="roofline measure",
            warmup=1,
        )
    )
    out = tmp_path / "calibration.toml"
    argv = [
        "calibrate",
        "--measurements",
        str(measured),
        "--gpu",
        "NVIDIA H100 SXM",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "wrote 3 refit values and 2 new parameters" in printed and "NVIDIA B200" not in printed
    ids = bundled_set_ids() | {
        "mine-bf16-gemm",
        "mine-lowp-gemm-tensorwise",
        "mine-cast-tensorwise",
    }
    bundled, written = load_calibration(), load_calibration(out, set_ids=ids)
    bundled_text = (
        Path(__file__).resolve().parent.parent / "roofline" / "data" / "calibration.toml"
    ).read_text()
    comments = [line for line in bundled_text.splitlines() if line.startswith("#")]
    assert comments == [line for line in out.read_text().splitlines() if line.startswith("#")]
    # Every other GPU's entries and the model-wide ones are exactly as stored.
    assert {g: e for g, e in written.entries() if g != "NVIDIA H100 SXM"} == {
        g: e for g, e in bundled.entries() if g != "NVIDIA H100 SXM"
    }
    old, new = bundled.gpus["NVIDIA H100 SXM"], written.gpus["NVIDIA H100 SXM"]
    # The stored cast efficiency, launch latency (which every set's model uses) and GEMM
    # latency are refit on the new sets that use each ...
    mine = ("mine-bf16-gemm", "mine-lowp-gemm-tensorwise", "mine-cast-tensorwise")
    refit = [k for k in old if old[k] != new[k]]
    assert sorted(refit) == ["cast_efficiency.row", "cast_fixed_latency_s", "gemm_fixed_latency_s"]
    for key in refit:
        assert new[key].basis == old[key].basis
    assert new["cast_efficiency.row"].sets == new["cast_fixed_latency_s"].sets == mine
    assert new["gemm_fixed_latency_s"].sets == mine[:2]
    # ... and the GEMM efficiencies it had none of join with the sets behind each.
    added = {k: new[k] for k in new.keys() - old.keys()}
    assert sorted(added) == ["gemm_efficiency.bf16", "gemm_efficiency.fp8"]
    assert added["gemm_efficiency.bf16"].sets == ("mine-bf16-gemm",)
    assert added["gemm_efficiency.fp8"].sets == ("mine-lowp-gemm-tensorwise",)
    assert all(e.basis == "fitted" for e in added.values())
    cv = written.cv["NVIDIA H100 SXM"]  # two shapes: one left out at a time
    assert (cv.points, cv.shapes, cv.method) == (6, 2, "leave one shape out")
    assert main(["validate", "--measurements", str(measured), "--calibration", str(out)]) in (0, 1)
    capsys.readouterr()
    assert main([*argv[:-1], str(measured)]) == 2  # -o onto its own input is refused
    assert main(["calibrate", "--measurements", str(measured), "--gpu", "NVIDIA B200"]) == 2
    assert "no set has role 'fit' measured on NVIDIA B200" in capsys.readouterr().err


# -- torchao's MX / NVFP4 kernels: operands and casts made by torchao (on the CPU here) ----


@pytest.mark.parametrize(
    ("recipe", "block", "scale_dtype", "packed"),
    [
        ("mxfp8_cublas", 32, "float8_e8m0fnu", 1),
        ("mxfp8_cublas_rceil", 32, "float8_e8m0fnu", 1),
        ("nvfp4", 16, "float8_e4m3fn", 2),
        ("nvfp4_static", 16, "float8_e4m3fn", 2),
        ("nvfp4_no_global_scale", 16, "float8_e4m3fn", 2),
    ],
)
def test_torchao_gemm_operands_are_laid_out_as_its_dispatch_passes_them(
    recipe, block, scale_dtype, packed
):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchao")
    from roofline.measurements.torch_jobs import torchao_operands

    M, K, N = 256, 512, 384
    a, b, scale_a, scale_b, rescale = torchao_operands((M, K, N), recipe, "cpu")
    # the output rescale by the per-tensor scales: only NVFP4 with per-tensor scales
    assert (rescale is not None) == (recipe in ("nvfp4", "nvfp4_static"))
    if rescale is not None:
        assert rescale.numel() == 1 and rescale.dtype == torch.bfloat16
    assert a.shape == (M, K // packed) and a.is_contiguous()
    assert b.shape == (K // packed, N) and b.t().is_contiguous()  # the weight, transposed
    for scale, rows in ((scale_a, M), (scale_b, N)):
        assert scale.dtype == getattr(torch, scale_dtype)
        # to_blocked pads rows to 128 and scale columns to 4
        assert scale.numel() == -(-rows // 128) * 128 * -(-(K // block) // 4) * 4


@pytest.mark.parametrize(
    "recipe",
    ["mxfp8_cublas", "mxfp8_cublas_rceil", "nvfp4", "nvfp4_static", "nvfp4_no_global_scale"],
)
def test_torchao_casts_run_and_quantize_the_activation(recipe):
    pytest.importorskip("torch")
    pytest.importorskip("torchao")
    from roofline.measurements.torch_jobs import torchao_cast

    out = torchao_cast((128, 256, 64), recipe, "cpu")()
    assert tuple(out.shape) == (128, 256)
    assert type(out).__name__ == ("MXTensor" if recipe.startswith("mxfp8") else "NVFP4Tensor")
    if recipe.startswith("nvfp4"):  # a per-tensor scale exactly where the recipe has one
        assert (out.per_tensor_scale is not None) == (recipe != "nvfp4_no_global_scale")


def test_torchao_sets_say_what_was_timed_and_load():
    env = Environment("cuda", "NVIDIA B200", "torch 2.13.0; torchao 0.18.0", ["x"])
    kinds = [
        ("lowp_gemm", "mxfp8_cublas"),
        ("cast", "mxfp8_cublas"),
        ("lowp_gemm", "nvfp4_no_global_scale"),
        ("cast", "nvfp4_no_global_scale"),
    ]
    text = measurement_text(_results(kinds), env, "NVIDIA B200", prefix="t", command="x", warmup=1)
    sets = {s.id: s for s in parse_measurements(text, "m.toml").sets}
    gemm, cast = sets["t-lowp-gemm-mxfp8-cublas"], sets["t-cast-mxfp8-cublas"]
    assert "torchao-quantized operands" in gemm.title and "e8m0 1 x 32" in gemm.notes
    assert "MXTensor.to_mx" in cast.title and cast.terms == ("cast.input.1",)
    assert "NVFP4Tensor.to_nvfp4" in sets["t-cast-nvfp4-no-global-scale"].title
    assert sets["t-lowp-gemm-nvfp4-no-global-scale"].terms == ("gemm.output.lowp",)


def test_default_recipes_add_torchaos_where_it_is_installed(monkeypatch):
    import importlib.util

    from roofline.cli.measure import _recipes
    from roofline.specs import load_specs

    specs = load_specs()
    args = argparse.Namespace(device="cuda", recipes=None)
    b200 = _recipes(args, "NVIDIA B200", specs)
    assert b200[:2] == ["tensorwise", "rowwise"]
    if importlib.util.find_spec("torchao") is not None:
        assert set(b200[2:]) == {
            "mxfp8_cublas",
            "mxfp8_cublas_rceil",
            "nvfp4",
            "nvfp4_static",
            "nvfp4_no_global_scale",
        }
    assert _recipes(args, "NVIDIA H100 SXM", specs) == ["tensorwise", "rowwise"]  # no MX
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert _recipes(args, "NVIDIA B200", specs) == ["tensorwise", "rowwise"]
    with pytest.raises(RooflineError, match="not native on NVIDIA H100 SXM"):
        _recipes(
            argparse.Namespace(device="cuda", recipes="mxfp8_cublas"), "NVIDIA H100 SXM", specs
        )
