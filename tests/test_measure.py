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
from roofline.measure import (
    Environment,
    Job,
    MeasureError,
    measurement_text,
    run_jobs,
    summarize,
)
from roofline.measurements import SetRole, parse_measurements

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
    results = run_jobs([_job(calls=calls)], timer, warmup=4, repeats=3,
                       progress=lambda done, total, job: seen.append((done, total)))  # fmt: skip
    assert len(calls) == 4 + 3 and timer.calls == 3
    assert results[0].stats.median_s == 2e-6
    assert seen == [(0, 1), (1, 1)]


def _results(kinds):
    timer = PlantedTimer([10e-6, 12e-6, 11e-6])
    jobs = [_job(kind, recipe, shape) for kind, recipe in kinds
            for shape in ((1024, 1024, 1024), (4096, 4096, 4096))]  # fmt: skip
    return run_jobs(jobs, timer, warmup=1, repeats=3)


def test_cpu_file_is_labelled_and_loads():
    env = Environment("cpu", "x86_64", "torch 2.13.0+cpu; torchao not installed", ["CPU: x"])
    text = measurement_text(_results([("bf16_gemm", "tensorwise")]), env, "NVIDIA H100 SXM",
                            prefix="t", command="roofline measure --device cpu", warmup=1,
                            read_on=dt.date(2026, 12, 2))  # fmt: skip
    (mset,) = parse_measurements(text, "m.toml").sets
    assert mset.role is SetRole.CONTEXT and mset.title.startswith("CPU, not a GPU")
    assert "CPU TIMINGS, NOT A GPU MEASUREMENT" in mset.notes
    assert [p.value for p in mset.points] == [11.0, 11.0]  # the median, in microseconds
    assert [p.shapes[0] for p in mset.points] == [(1024, 1024, 1024), (4096, 4096, 4096)]
    assert mset.points[0].label == "n=3 p10-p90 10.2-11.8 us (min 10)"
    assert mset.terms == ("gemm.output.bf16",)


def test_gpu_file_has_a_set_per_kernel_kind_and_recipe():
    env = Environment("cuda", "NVIDIA H100 80GB HBM3", "torch 2.13.0; CUDA 12.8",
                      ["driver 580.1, SM clock 1980 MHz, power limit 700 W"])  # fmt: skip
    kinds = [("bf16_gemm", "tensorwise"), ("lowp_gemm", "tensorwise"), ("cast", "tensorwise"),
             ("lowp_gemm", "rowwise"), ("cast", "rowwise")]  # fmt: skip
    text = measurement_text(_results(kinds), env, "NVIDIA H100 SXM", prefix="h100-run",
                            command="roofline measure --shape-gen llama", warmup=1,
                            max_mean_error=0.3)  # fmt: skip
    sets = {s.id: s for s in parse_measurements(text, "m.toml").sets}
    assert sorted(sets) == ["h100-run-bf16-gemm", "h100-run-cast-rowwise",
                            "h100-run-cast-tensorwise", "h100-run-lowp-gemm-rowwise",
                            "h100-run-lowp-gemm-tensorwise"]  # fmt: skip
    assert all(s.role is SetRole.FIT and s.max_mean_error == 0.3 for s in sets.values())
    assert sets["h100-run-cast-tensorwise"].terms == ("cast.input.1", "cast.input.2")
    assert sets["h100-run-cast-rowwise"].terms == ("cast.input.1",)
    assert sets["h100-run-lowp-gemm-rowwise"].terms == ("gemm.output.lowp",)
    assert "power limit 700 W" in sets["h100-run-bf16-gemm"].notes
    assert "CUDA events" in sets["h100-run-bf16-gemm"].notes


def _args(**kw):
    base = {"shape": None, "shape_gen": None, "hf_config": None, "tokens": "64"}
    return argparse.Namespace(**{**base, **kw})


def test_shapes_from_every_source(capsys):
    assert _shapes(_args(shape=["1,2,3", "1,2,3", "4,5,6"])) == [(1, 2, 3), (4, 5, 6)]
    assert (16384, 8192, 1280) in _shapes(_args(shape_gen="llama"))
    dense = _shapes(_args(hf_config=str(DATA / "qwen3-8b.json")))
    assert dense == [(64, 4096, 4096), (64, 4096, 1024), (64, 4096, 12288),
                     (64, 12288, 4096), (64, 4096, 151936)]  # fmt: skip
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
    argv = ["measure", "--device", "cpu", "--shape", "128,256,64", "--shape", "64,64,64",
            "--repeats", "3", "--warmup", "1", "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "[measure] wrote 2 points" in err and "CPU timings" in err
    (mset,) = parse_measurements(out.read_text(), str(out)).sets
    assert mset.role is SetRole.CONTEXT and all(p.value > 0 for p in mset.points)
    assert main(["validate", "--measurements", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s["id"] for s in report["sets"]] == [mset.id]
    assert main(["measure", "--device", "cpu", "--shape", "8,8,8", "--recipes", "rowwise",
                 "-o", str(out)]) == 2  # fmt: skip


def test_calibrate_one_gpu_on_a_measured_file_writes_a_calibration(capsys, tmp_path):
    pytest.importorskip("scipy")
    from roofline.calibration.data import bundled_set_ids, load_calibration

    env = Environment("cuda", "NVIDIA H100 80GB HBM3", "torch 2.13.0; CUDA 12.8", ["x"])
    kinds = [("bf16_gemm", "tensorwise"), ("lowp_gemm", "tensorwise"), ("cast", "tensorwise")]
    measured = tmp_path / "h100.toml"
    measured.write_text(measurement_text(_results(kinds), env, "NVIDIA H100 SXM",
                                         prefix="mine", command="roofline measure", warmup=1))  # fmt: skip
    out = tmp_path / "calibration.toml"
    argv = ["calibrate", "--measurements", str(measured), "--gpu", "NVIDIA H100 SXM",
            "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "wrote 1 refit values" in printed and "NVIDIA B200" not in printed
    bundled = Path(__file__).resolve().parent.parent / "roofline" / "data" / "calibration.toml"
    old, new = bundled.read_text().splitlines(), out.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert [b.split(" = ")[0] for _, b in changed] == ["value", "sets"]
    assert changed[1][1] == 'sets = ["mine-bf16-gemm", "mine-lowp-gemm-tensorwise", "mine-cast-tensorwise"]'
    ids = bundled_set_ids() | {"mine-bf16-gemm", "mine-lowp-gemm-tensorwise", "mine-cast-tensorwise"}
    load_calibration(out, set_ids=ids)
    assert main(["validate", "--measurements", str(measured), "--calibration", str(out)]) in (0, 1)
    capsys.readouterr()
    assert main([*argv[:-1], str(measured)]) == 2  # -o onto its own input is refused
    assert main(["calibrate", "--measurements", str(measured), "--gpu", "NVIDIA B200"]) == 2
    assert "no set has role 'fit' measured on NVIDIA B200" in capsys.readouterr().err
