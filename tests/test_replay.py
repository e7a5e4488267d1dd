"""Replayed legends and axes (site_gen.charts.draw.replay) give matplotlib's own charts.

The curves, breakdown and model-time charts of the small spec file's GPUs (five recipes,
both modes, every model preset) are drawn three times: with nothing replayed (the
reference), then with replay in page order and in reverse, each run starting from empty
figures and recordings. Every chart must be the same bytes as the reference, and most
legends must have been replayed (else the check would prove nothing).

The Validation page's and the model-time charts are drawn on one figure per process (and
size), emptied after each chart: every chart of the bundled site's sets and the model
charts above, in page order and in reverse, must be the same bytes as the chart drawn on
a new figure with nothing replayed.
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import pytest
from browser.site_fixtures import SMALL_SPECS

from roofline.calibration.params import calibration_for
from roofline.recipes import RECIPE_LIST, Mode, get_recipe
from roofline.specs import load_specs
from site_gen import pool
from site_gen.charts.draw import models, plots, replay
from site_gen.charts.draw import validation as validation_charts
from site_gen.charts.draw.style import compact_svg
from site_gen.charts.jobs import PlotJob, result_charts
from site_gen.charts.models import time_chart
from site_gen.charts.validation import validation_chart
from site_gen.gather.dense import gather_one
from site_gen.gather.models import gather_models
from site_gen.gather.validation import gather_validation
from site_gen.inputs import bundled_inputs
from site_gen.keys import calibration_digest


@pytest.fixture(scope="module")
def jobs() -> list[PlotJob]:
    specs = load_specs(SMALL_SPECS)
    calibrations = {
        name: calibration_for(gpu, specs, bundled_inputs().calibration)
        for name, gpu in specs.items()
    }
    found: list[PlotJob] = []
    for gpu in specs.values():
        for recipe in RECIPE_LIST[:5]:
            for mode in (m for m in (Mode.TRAINING, Mode.INFERENCE) if m in recipe.modes):
                result = gather_one(
                    gpu, mode, get_recipe(recipe.name, mode), calibrations[gpu.name]
                )
                result.reference = gather_one(gpu, mode, get_recipe(recipe.name, mode))
                charts = result_charts(result, recipe.name)
                found += [job for job in charts if job.kind in ("curves", "breakdown")]
    keys = {name: calibration_digest(c) for name, c in calibrations.items()}
    atlas = gather_models(specs, calibrations, keys)
    found += [time_chart(run, "time.svg") for run in atlas.runs.values()]
    return found


def _fresh() -> None:
    """No figure reused, nothing recorded: as a new worker starts."""
    for cached in plots._CACHE.values():
        plt.close(cached["fig"])
    plots._CACHE.clear()
    replay._RECORDINGS.clear()
    replay.COUNTS.clear()


def _draw(jobs: list[PlotJob]) -> list[str]:
    return [pool.draw(job)[0][1] for job in jobs]


def test_replayed_charts_are_matplotlibs_own(jobs, monkeypatch) -> None:
    assert {job.kind for job in jobs} == {"curves", "breakdown", "model_time"}
    with monkeypatch.context() as patch:
        for module in (plots, models):
            patch.setattr(module, "replay", lambda artist, key: artist)
        _fresh()
        reference = _draw(jobs)
    _fresh()
    assert _draw(jobs) == reference
    drawn = sum(replay.COUNTS.values())
    assert drawn >= len(jobs) and replay.COUNTS["replayed"] > drawn // 2, replay.COUNTS
    _fresh()
    assert _draw(jobs[::-1])[::-1] == reference
    _fresh()


def test_a_raster_renderer_draws_in_full() -> None:
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="line")
    replay.replay(ax.legend(), ("raster test", "legend"))
    png = io.BytesIO()
    fig.savefig(png, format="png")
    plt.close(fig)
    assert png.getvalue().startswith(b"\x89PNG")
    assert ("raster test", "legend") not in replay._RECORDINGS


def test_a_marker_defined_before_is_not_defined_again() -> None:
    """A replayed legend whose marker the document already defined (a plotted line
    with the same marker, drawn first) must not carry the definition with it."""

    def chart(with_line: bool) -> str:
        fig, ax = plt.subplots()
        if with_line:
            ax.plot([0, 1], [0, 1], marker="D", color="black", linestyle="none")
        handle = plt.Line2D([], [], marker="D", color="black", linestyle="none", label="d")
        replay.replay(ax.legend(handles=[handle], loc="upper left"), ("marker test", "legend"))
        svg = io.StringIO()
        fig.savefig(svg, format="svg", metadata={"Date": None})
        plt.close(fig)
        return svg.getvalue()

    _fresh()
    alone = chart(with_line=False)  # recorded: the legend defines the marker
    after_line = chart(with_line=True)  # the line defined it first: drawn in full
    assert alone.count("<defs>") == after_line.count("<defs>")
    assert replay.COUNTS == {"recorded": 2}
    _fresh()


def test_what_a_replayed_artist_adds_reaches_the_document() -> None:
    """An axis whose grid lines are the first clipped artist defines the clip path the
    document writes at its end: replayed, it must still be written."""

    def chart(replayed: bool) -> str:
        fig, ax = plt.subplots()
        ax.grid(False)
        ax.grid(True, axis="x")  # the only clipped artist: the x axis's grid lines
        ax.set_xlim(0, 10)
        if replayed:
            replay.replay(ax.xaxis, ("clip test", "x axis"))
        svg = io.StringIO()
        fig.savefig(svg, format="svg", metadata={"Date": None})
        plt.close(fig)
        return compact_svg(svg.getvalue())

    _fresh()
    full = chart(replayed=False)
    assert "<clipPath" in full
    assert chart(replayed=True) == full  # recorded
    assert chart(replayed=True) == full  # replayed
    assert replay.COUNTS == {"recorded": 1, "replayed": 1}
    _fresh()


@pytest.fixture(scope="module")
def validation_jobs() -> list[PlotJob]:
    report = gather_validation(load_specs(None), bundled_inputs()).report
    return [validation_chart(r, f"img/{r.set.id}.svg") for r in report.sets]


def _forget_figures() -> None:
    """No validation or model-time figure made yet, as in a new worker."""
    validation_charts._FIGURE.clear()
    models._FIGURES.clear()
    plt.close("all")


def _new_figure_each(jobs: list[PlotJob], monkeypatch) -> list[str]:
    """Each chart on a figure of its own, nothing replayed: the reference."""
    out = []
    with monkeypatch.context() as patch:
        for module in (validation_charts, models):
            patch.setattr(module, "replay", lambda artist, key: artist)
        for job in jobs:
            _forget_figures()
            out.append(pool.draw(job)[0][1])
    _forget_figures()
    return out


def test_charts_on_a_reused_figure_are_new_figures(jobs, validation_jobs, monkeypatch):
    timed = [job for job in jobs if job.kind == "model_time"]
    sizes = {len(job.kwargs["bars"]) for job in timed}
    kinds = {(job.kwargs["log2_m"], job.kwargs["break_even"]) for job in validation_jobs}
    # both axes, with and without the break-even line; model charts of several sizes
    assert len(kinds) >= 3 and len(sizes) >= 2, (kinds, sizes)
    for charts, replayed in ((validation_jobs, len(validation_jobs) // 2), (timed, 1)):
        reference = _new_figure_each(charts, monkeypatch)
        _fresh()
        assert _draw(charts) == reference
        assert replay.COUNTS["replayed"] >= replayed, replay.COUNTS
        _fresh()
        _forget_figures()
        assert _draw(charts[::-1])[::-1] == reference
