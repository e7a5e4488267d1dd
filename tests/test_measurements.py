"""The measurement database: the bundled file lints clean, and every lint rule fires.

Each bad file is what a careless contributor (or an attacker) could propose; the lint must
refuse it with a message naming the file, the set and the field, collect every problem
before raising, and never echo a raw control character to the terminal that prints it.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline import RooflineError, UnknownNameError, load_specs
from roofline.measurements import (
    KernelLibrary,
    L2State,
    MeasuredQuantity,
    MeasurementDatabase,
    MeasurementError,
    MeasurementSet,
    SetRole,
    TimedRegion,
    Timer,
    load_measurements,
    parse_measurements,
)
from roofline.model.build import build_model
from roofline.model.terms import LOWP_SIDE

SPECS = load_specs()
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # newline joins message lines
READ_ON = dt.date(2026, 11, 30)

RELU = {
    "id": "base-relu",
    "title": "Base ReLU to Linear",
    "gpu": "NVIDIA B200",
    "mode": "inference",
    "recipe": "mxfp8_cublas",
    "fusion": True,
    "timed_region": "relu_linear",
    "quantity": "speedup",
    "role": "fit",
    "max_mean_error": 0.15,
    "software": "torch 2.12",
    "command": "bench.py --recipe_name mxfp8_cublas",
    "notes": "ReLU -> Linear, markup allowed in notes: <b>",
    "source": {"url": "https://example.org/table", "read_on": READ_ON, "commit": "36027d82d1ad"},
    "points": [{"shape": [1024, 1024, 1024], "value": 0.96, "label": "small"}],
}
CAST = {
    **RELU,
    "id": "base-cast",
    "mode": "training",
    "fusion": False,
    "timed_region": "cast_kernel",
    "quantity": "time_us",
    "terms": ["cast.input.1"],
    "points": [{"shape": [16384, 16384, 16384], "value": 125.92}],
}


# -- writing TOML -------------------------------------------------------------------------


def toml_value(value: Any) -> str:
    """``value`` as TOML; strings escaped as JSON does (a subset of TOML basic strings)."""
    if isinstance(value, str):  # JSON leaves DEL and C1 raw, which TOML refuses: escape them
        text = json.dumps(value, ensure_ascii=False)
        return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{toml_value(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + ", ".join(pairs) + " }"
    return repr(value)


def document(*sets: dict[str, Any], top: dict[str, Any] | None = None) -> str:
    """A measurement file holding ``sets``; ``top`` replaces the top-level keys."""
    header = {"schema_version": 1} if top is None else top
    lines = [f"{toml_value(k)} = {toml_value(v)}" for k, v in header.items()]
    for entry in sets:
        lines.append("[[set]]")
        lines += [f"{toml_value(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def variant(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with ``changes``; a value of ``...`` deletes the key."""
    entry = copy.deepcopy(base)
    for key, value in changes.items():
        if value is ...:
            entry.pop(key, None)
        else:
            entry[key] = value
    return entry


@pytest.fixture()
def write(tmp_path: Path):
    """Write a measurement file and return its path."""

    def _write(text: str, name: str = "measurements.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write


def problems_of(path: Path, specs: Any = SPECS) -> MeasurementError:
    with pytest.raises(MeasurementError) as info:
        load_measurements(path, specs=specs)
    message = str(info.value)
    assert not RAW_CONTROL.search(message), message
    return info.value


def assert_refused(path: Path, set_id: str | None, field: str) -> str:
    """The file is refused with a problem naming the file, ``set_id`` and ``field``."""
    error = problems_of(path)
    named = [
        p for p in error.problems if p.field == field and (set_id is None or p.set_id == set_id)
    ]
    assert named, f"no problem on {set_id!r}/{field!r}:\n{error}"
    line = str(named[0])
    assert line.startswith(str(path))
    assert f"key {field!r}" in line
    if set_id is not None:
        assert f"set {set_id!r}" in line
    return line


# -- the bundled file ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled_db() -> MeasurementDatabase:
    return load_measurements(specs=SPECS)


def test_bundled_file_loads_without_problems(bundled_db: MeasurementDatabase) -> None:
    assert len(bundled_db) >= 30
    assert len(set(bundled_db.ids())) == len(bundled_db)
    assert all(isinstance(s, MeasurementSet) and s.points for s in bundled_db.sets)
    assert load_measurements().ids() == bundled_db.ids()  # default specs: the bundled ones


def test_bundled_sources_are_https_and_scored_sets_have_thresholds(
    bundled_db: MeasurementDatabase,
) -> None:
    for item in bundled_db.sets:
        assert item.source.url.startswith("https://"), item.id
        # Read when the set was added (the first sets on READ_ON), never in the future.
        assert item.source.read_on is not None, item.id
        assert READ_ON <= item.source.read_on <= dt.date.today(), item.id
        if item.role is SetRole.CONTEXT:
            assert item.max_mean_error is None, item.id
        else:
            assert item.max_mean_error is not None, item.id
            assert 0 < item.max_mean_error <= 1, item.id


def test_bundled_m1_is_fifteen_fitted_points(bundled_db: MeasurementDatabase) -> None:
    m1 = [s for s in bundled_db.sets if s.id.startswith("m1-")]
    assert [s.recipe for s in m1] == ["mxfp8_cublas", "nvfp4", "nvfp4_static"]
    assert sum(len(s.points) for s in m1) == 15
    assert all(s.role is SetRole.FIT and s.fusion for s in m1)
    mx = bundled_db.get("m1-b200-relu-linear-mxfp8-cublas")
    assert [p.value for p in mx.points] == [0.96, 1.22, 1.50, 1.76, 1.81]
    assert [p.shape for p in mx.points] == [(n, n, n) for n in (1024, 2048, 4096, 8192, 16384)]


def test_bundled_roles_keep_sets_out_of_the_fit(bundled_db: MeasurementDatabase) -> None:
    fit, holdout, context = (bundled_db.by_role(r) for r in SetRole)
    assert fit and holdout and context
    assert len(fit) + len(holdout) + len(context) == len(bundled_db)
    assert all(s.timed_region is TimedRegion.END_TO_END for s in context if s.id.startswith("m6"))
    # training per-layer speedups on Blackwell and Hopper at large shapes are held out
    held = {(s.gpu, s.mode) for s in holdout if s.quantity is not MeasuredQuantity.TIME_US}
    assert ("NVIDIA B300 SXM6 AC", "training") in held
    assert ("NVIDIA H200 NVL", "training") in held
    assert bundled_db.by_role("holdout") == holdout


def test_bundled_time_sets_name_existing_model_terms(bundled_db: MeasurementDatabase) -> None:
    for item in bundled_db.sets:
        grouped = item.groups is not None
        model = build_model(item.mode, item.recipe, item.fusion, grouped=grouped)
        keys = {t.key for t in model.terms}
        lowp = {t.key for t in model.terms if t.quantity in LOWP_SIDE}
        if item.quantity is MeasuredQuantity.TIME_US:
            assert item.terms and set(item.terms) <= keys, item.id
        elif item.quantity is MeasuredQuantity.SPEEDUP:  # the low-precision side, if named
            assert set(item.terms) <= lowp, item.id
        else:
            assert item.terms == (), item.id


def test_bundled_sets_say_how_they_were_timed(bundled_db: MeasurementDatabase) -> None:
    # Read off each source's timing code (the notes cite it); "unknown" only where the
    # source does not say, never for a timer the calibrated model scores by.
    assert all(s.timer is not Timer.UNKNOWN for s in bundled_db.sets)
    cold = [s for s in bundled_db.sets if s.l2 is L2State.COLD]
    assert cold and all(s.timer is not Timer.WALL_CLOCK for s in cold)
    assert bundled_db.get("helion3073-b200-group-quant-vllm").l2 is L2State.COLD
    assert bundled_db.get("vllm43658-b200-nvfp4-quant").l2 is L2State.WARM


def test_timer_and_l2_are_optional_and_named(write) -> None:
    unstated = load_measurements(write(document(RELU)), specs=SPECS).sets[0]
    assert (unstated.timer, unstated.l2) == (Timer.UNKNOWN, L2State.UNKNOWN)
    entry = variant(RELU, timer="cuda_graph", l2="cold")
    stated = load_measurements(write(document(entry)), specs=SPECS).sets[0]
    assert (stated.timer, stated.l2) == (Timer.CUDA_GRAPH, L2State.COLD)
    line = assert_refused(write(document(variant(RELU, l2="Cold"))), "base-relu", "l2")
    assert "one of cold, rotating, warm, unknown" in line and "'cold'" in line  # the near miss


def test_the_kernel_library_is_optional_and_named(write) -> None:
    unstated = load_measurements(write(document(RELU)), specs=SPECS).sets[0]
    assert unstated.library is KernelLibrary.UNKNOWN
    stated = load_measurements(write(document(variant(RELU, library="cute_dsl"))), specs=SPECS)
    assert stated.sets[0].library is KernelLibrary.CUTE_DSL
    line = assert_refused(write(document(variant(RELU, library="CUTLASS"))), "base-relu", "library")
    assert "'cutlass'" in line  # the near miss


def test_every_bundled_scored_set_names_its_kernel_library(bundled_db) -> None:
    # The Validation page groups the CV error by library: a scored set of no library
    # would fall out of that table's story.
    scored = [s for s in bundled_db.sets if s.role is not SetRole.CONTEXT]
    assert [s.id for s in scored if s.library is KernelLibrary.UNKNOWN] == []
    assert bundled_db.get("fi3948-b200-mxfp4-cutedsl-gemm").library is KernelLibrary.CUTE_DSL
    assert bundled_db.get("helion3377-b200-rowwise-gemm-cutlass").library is KernelLibrary.CUTLASS
    assert bundled_db.get("helion3377-b200-rowwise-gemm-torch").library is KernelLibrary.CUBLAS


def test_side_kernels_load_with_their_bytes(write) -> None:
    entry = variant(
        CAST,
        side_kernels=[
            {"what": "zero fill", "write_bytes": 0.5, "elements": ["K", "N"]},
            {"what": "scalar", "read_bytes": 4, "write_bytes": 4, "elements": []},
        ],
    )
    (mset,) = load_measurements(write(document(entry)), specs=SPECS).sets
    assert [(k.what, k.read_bytes, k.write_bytes, k.elements) for k in mset.side_kernels] == [
        ("zero fill", 0.0, 0.5, ("K", "N")),
        ("scalar", 4.0, 4.0, ()),
    ]


def test_multi_shape_points_keep_every_shape(bundled_db: MeasurementDatabase) -> None:
    te = bundled_db.get("te-b300-v2-autocast-mxfp8")
    (point,) = te.points
    assert len(point.shapes) == 4 and point.value == pytest.approx(12.227 / 8.507, abs=5e-4)
    with pytest.raises(ValueError):
        point.shape  # noqa: B018


def test_lookup_errors_name_the_choices(bundled_db: MeasurementDatabase) -> None:
    with pytest.raises(UnknownNameError, match="m1-b200-relu-linear-nvfp4"):
        bundled_db.get("m1-b200-relu-linear-nvfp")
    with pytest.raises(UnknownNameError, match="holdout"):
        bundled_db.by_role("heldout")


# -- a good crafted file ------------------------------------------------------------------


def test_crafted_file_loads_with_every_field(write) -> None:
    multi = variant(
        RELU,
        id="multi",
        mode="training",
        recipe="blockwise",
        fusion=False,
        timed_region="gemm",
        quantity="gemm_speedup",
        role="context",
        max_mean_error=...,
        gpu="NVIDIA H100 SXM",
        points=[{"shapes": [[128, 256, 384], [256, 128, 128]], "value": 1.5}],
    )
    db = load_measurements(write(document(RELU, CAST, multi)), specs=SPECS)
    relu, cast, other = db.sets
    assert relu.source.commit == "36027d82d1ad" and relu.points[0].label == "small"
    assert cast.terms == ("cast.input.1",) and cast.quantity is MeasuredQuantity.TIME_US
    assert other.max_mean_error is None and other.points[0].shapes[1] == (256, 128, 128)
    assert parse_measurements(document(RELU), "inline", SPECS).origin == "inline"


# -- every rule fires ---------------------------------------------------------------------

SET_CASES = [
    # (base, changes, field)
    (RELU, {"colour": "red"}, "colour"),
    (RELU, {"gpu": ...}, "gpu"),
    (RELU, {"software": ...}, "software"),
    (RELU, {"source": ...}, "source"),
    (RELU, {"mode": "inferance"}, "mode"),
    (RELU, {"timed_region": "relu"}, "timed_region"),
    (RELU, {"quantity": "speed"}, "quantity"),
    (RELU, {"role": "train"}, "role"),
    (RELU, {"fusion": "yes"}, "fusion"),
    (RELU, {"gpu": "NVIDIA B2000"}, "gpu"),
    (
        RELU,
        {"recipe": "nvfp4_static", "mode": "training", "timed_region": "gemm_quantize"},
        "recipe",
    ),
    (RELU, {"recipe": "mxfp4"}, "recipe"),  # an alias, not the registry name
    (RELU, {"recipe": 7}, "recipe"),
    (RELU, {"recipe": "nvfp4", "gpu": "NVIDIA H100 SXM"}, "gpu"),  # no fp4 peak
    (RELU, {"terms": ["gemm.output.bf16"]}, "terms[0]"),  # a speedup's terms: the lowp side
    (
        RELU,
        {"timed_region": "gemm", "quantity": "gemm_speedup", "terms": ["gemm.output.lowp"]},
        "terms",
    ),  # a GEMM speedup compares every GEMM: no terms
    (RELU, {"terms": "cast.input.1"}, "terms"),
    (CAST, {"terms": []}, "terms"),
    (CAST, {"terms": ["cast.input.9"]}, "terms[0]"),
    (CAST, {"terms": ["cast.input.1", "cast.input.1"]}, "terms"),
    (CAST, {"terms": ["cast.x"] * 33}, "terms"),
    (CAST, {"terms": ["gemm.output.lowp"]}, "terms[0]"),  # a GEMM term for a cast kernel
    (CAST, {"fusion": True}, "fusion"),
    (CAST, {"quantity": "speedup", "terms": []}, "quantity"),
    (RELU, {"quantity": "gemm_speedup"}, "quantity"),
    (RELU, {"mode": "training"}, "mode"),  # relu_linear exists only in inference
    (RELU, {"timed_region": "end_to_end", "mode": "training"}, "role"),
    (RELU, {"max_mean_error": ...}, "max_mean_error"),
    (RELU, {"role": "context"}, "max_mean_error"),
    (RELU, {"max_mean_error": 0}, "max_mean_error"),
    (RELU, {"max_mean_error": 1.5}, "max_mean_error"),
    (RELU, {"max_mean_error": math.nan}, "max_mean_error"),
    (RELU, {"max_mean_error": "0.15"}, "max_mean_error"),
    (RELU, {"max_mean_error": True}, "max_mean_error"),
    (RELU, {"points": []}, "points"),
    (RELU, {"points": [1, 2]}, "points"),
    (RELU, {"points": [{"value": 1.0}] * 1001}, "points"),
    (RELU, {"source": "https://example.org"}, "source"),
    (RELU, {"source": {"read_on": READ_ON}}, "source.url"),
    (RELU, {"source": {"url": "https://example.org"}}, "source.read_on"),
    (RELU, {"source": {"url": "https://example.org", "read_on": "2026-11-30"}}, "source.read_on"),
    (
        RELU,
        {"source": {"url": "https://e.org", "read_on": dt.datetime(2026, 11, 30, 10)}},
        "source.read_on",
    ),
    (RELU, {"source": {**RELU["source"], "commit": "XYZ"}}, "source.commit"),
    (RELU, {"source": {**RELU["source"], "commit": "36027D82D1AD"}}, "source.commit"),
    (RELU, {"source": {**RELU["source"], "page": 3}}, "source.page"),
    (RELU, {"source": {**RELU["source"], "note": "a\x1bb"}}, "source.note"),
    (RELU, {"title": ""}, "title"),
    (RELU, {"title": "  padded"}, "title"),
    (RELU, {"title": "x" * 201}, "title"),
    (RELU, {"notes": "n" * 4001}, "notes"),
    (RELU, {"software": 2.12}, "software"),
    (RELU, {"timer": "do_bench"}, "timer"),
    (RELU, {"timer": 1}, "timer"),
    (RELU, {"l2": "flushed"}, "l2"),
    (RELU, {"l2": True}, "l2"),
    (RELU, {"library": "cuBLAS"}, "library"),
    (RELU, {"library": ["cublas"]}, "library"),
    (
        RELU,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": ["M"]}]},
        "side_kernels",
    ),
    (CAST, {"side_kernels": {"what": "fill"}}, "side_kernels"),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": ["M"]}] * 9},
        "side_kernels",
    ),
    (CAST, {"side_kernels": [{"write_bytes": 4, "elements": ["M"]}]}, "side_kernels[0].what"),
    (
        CAST,
        {"side_kernels": [{"what": "<b>x</b>", "write_bytes": 4, "elements": []}]},
        "side_kernels[0].what",
    ),
    (CAST, {"side_kernels": [{"what": "fill", "elements": ["M"]}]}, "side_kernels[0].write_bytes"),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 65, "elements": []}]},
        "side_kernels[0].write_bytes",
    ),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "read_bytes": -1, "write_bytes": 1, "elements": []}]},
        "side_kernels[0].read_bytes",
    ),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": True, "elements": []}]},
        "side_kernels[0].write_bytes",
    ),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": ["G"]}]},
        "side_kernels[0].elements",
    ),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": ["M", "M"]}]},
        "side_kernels[0].elements",
    ),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": "M"}]},
        "side_kernels[0].elements",
    ),
    (CAST, {"side_kernels": [{"what": "fill", "write_bytes": 4}]}, "side_kernels[0].elements"),
    (
        CAST,
        {"side_kernels": [{"what": "fill", "write_bytes": 4, "elements": [], "x": 1}]},
        "side_kernels[0].x",
    ),
]


@pytest.mark.parametrize(("base", "changes", "field"), SET_CASES)
def test_each_set_rule_fires(write, base, changes, field) -> None:
    entry = variant(base, **changes)
    assert_refused(write(document(entry)), entry["id"], field)


POINT_CASES = [
    ({"shape": [0, 1024, 1024]}, "points[0].shape"),
    ({"shape": [-1, 1024, 1024]}, "points[0].shape"),
    ({"shape": [2**31, 1024, 1024]}, "points[0].shape"),
    ({"shape": [1024, 1.5, 1024]}, "points[0].shape"),
    ({"shape": [1024, 1024.0, 1024]}, "points[0].shape"),
    ({"shape": [True, 1024, 1024]}, "points[0].shape"),
    ({"shape": ["1024", 1024, 1024]}, "points[0].shape"),
    ({"shape": [1024, 1024]}, "points[0].shape"),
    ({"shape": 1024}, "points[0].shape"),
    ({"shape": ..., "shapes": []}, "points[0].shapes"),
    ({"shape": ..., "shapes": [[1024, 1024, 1024], [1024, 0, 1024]]}, "points[0].shapes[1]"),
    ({"shape": ..., "shapes": [[8, 8, 8]] * 65}, "points[0].shapes"),
    ({"shape": ..., "shapes": [1024, 1024, 1024]}, "points[0].shapes[0]"),
    ({"shapes": [[8, 8, 8]]}, "points[0].shape"),  # both keys
    ({"shape": ...}, "points[0].shape"),
    ({"value": ...}, "points[0].value"),
    ({"value": math.nan}, "points[0].value"),
    ({"value": math.inf}, "points[0].value"),
    ({"value": 0.0}, "points[0].value"),
    ({"value": -1.2}, "points[0].value"),
    ({"value": 100.5}, "points[0].value"),  # a speedup above 100x is a unit mix-up
    ({"value": "1.2"}, "points[0].value"),
    ({"value": False}, "points[0].value"),
    ({"label": 3}, "points[0].label"),
    ({"label": " "}, "points[0].label"),
    ({"label": "x" * 65}, "points[0].label"),
    ({"speed": 1.0}, "points[0].speed"),
]


@pytest.mark.parametrize(("changes", "field"), POINT_CASES)
def test_each_point_rule_fires(write, changes, field) -> None:
    point = variant(RELU["points"][0], **changes)
    assert_refused(write(document(variant(RELU, points=[point]))), "base-relu", field)


def test_time_values_have_their_own_range(write) -> None:
    ok = variant(CAST, points=[{"shape": [16384, 16384, 16384], "value": 5e7}])
    assert load_measurements(write(document(ok)), specs=SPECS).sets[0].points[0].value == 5e7
    for value in (1e9, 0.001):
        bad = variant(CAST, points=[{"shape": [16384, 16384, 16384], "value": value}])
        assert_refused(write(document(bad)), "base-cast", "points[0].value")


def test_shapes_must_divide_as_the_recipe_requires(write) -> None:
    blockwise = variant(CAST, gpu="NVIDIA H100 SXM", recipe="blockwise")
    ok = variant(blockwise, points=[{"shape": [100, 128, 256], "value": 10.0}])
    load_measurements(write(document(ok)), specs=SPECS)  # M is free
    for shape in ([128, 100, 256], [128, 256, 200]):
        bad = variant(blockwise, points=[{"shape": shape, "value": 10.0}])
        line = assert_refused(write(document(bad)), "base-cast", "points[0].shape")
        assert "multiple of 128" in line


@pytest.mark.parametrize(
    "set_id", ["Upper", "has space", "under_score", "-lead", "trail-", "a--b", "x" * 65, 7, ""]
)
def test_ids_are_slugs(write, set_id) -> None:
    error = problems_of(write(document(variant(RELU, id=set_id))))
    assert any(p.field == "id" for p in error.problems), str(error)


def test_duplicate_ids_are_refused(write) -> None:
    path = write(document(RELU, variant(CAST, id="base-relu")))
    line = assert_refused(path, "base-relu", "id")
    assert "(#2)" in line and "also the id of set #1" in line


def test_top_level_rules(write) -> None:
    assert_refused(write(document(RELU, top={"schema_version": 2})), None, "schema_version")
    assert_refused(write(document(RELU, top={"schema_version": "1"})), None, "schema_version")
    assert_refused(write(document(RELU, top={})), None, "schema_version")
    path = write(document(RELU, top={"schema_version": 1, "gpus": []}))
    assert_refused(path, None, "gpus")
    assert_refused(write("schema_version = 1\n"), None, "set")
    assert_refused(write("schema_version = 1\nset = []\n"), None, "set")
    assert_refused(write("schema_version = 1\nset = 3\n"), None, "set")


def test_every_problem_is_reported_at_once(write) -> None:
    bad_relu = variant(RELU, gpu="Nope", mode="x", points=[])
    bad_cast = variant(CAST, terms=["cast.nope"], source={"url": "ftp://x", "read_on": READ_ON})
    error = problems_of(write(document(bad_relu, bad_cast)))
    found = {(p.set_id, p.field) for p in error.problems}
    assert {("base-relu", "gpu"), ("base-relu", "mode"), ("base-relu", "points")} <= found
    assert {("base-cast", "terms[0]"), ("base-cast", "source.url")} <= found
    assert str(error).startswith(f"{len(error.problems)} problem(s) in measurement file")


def test_a_set_without_an_id_is_named_by_position(write) -> None:
    error = problems_of(write(document(RELU, variant(CAST, id=...))))
    assert any(p.set_id == "#2" and p.field == "id" for p in error.problems)


def test_file_errors(write, tmp_path: Path) -> None:
    error = problems_of(write("schema_version = [\n"))
    assert isinstance(error, RooflineError)
    assert "valid TOML" in str(error)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    assert "UTF-8" in str(problems_of(binary))
    with pytest.raises(RooflineError, match="a readable measurement file"):
        load_measurements(tmp_path / "missing.toml", specs=SPECS)


def test_gpus_come_from_the_given_spec_database(write, tmp_path: Path) -> None:
    specs = tmp_path / "specs.toml"
    specs.write_text(
        'schema_version = 1\n[[gpu]]\nname = "Acme X1"\nbf16_peak_tops = 1e15\n'
        "fp8_peak_tops = 2e15\npeak_mem_bw_bytes_sec = 3e12\n",
        encoding="utf-8",
    )
    entry = variant(RELU, gpu="Acme X1", recipe="tensorwise")
    db = load_measurements(write(document(entry)), specs=specs)  # a spec path works too
    assert db.sets[0].gpu == "Acme X1"
    error = problems_of(write(document(RELU)), specs=load_specs(specs))
    assert any(p.field == "gpu" for p in error.problems)
    with pytest.raises(MeasurementError, match="'gpu'"):
        load_measurements(specs=load_specs(specs))  # the bundled sets need bundled GPUs


# -- hostile strings ----------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "`rm -rf`",
    "a > b",
    "\x1b[31mred\x1b[0m",
    "bell\x07",
    "csi\x9b31m",
    "del\x7f",
    "line\nbreak",
    "tab\there",
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("field", ["title", "gpu", "software", "command"])
def test_hostile_text_is_refused_in_plain_fields(write, field, text) -> None:
    assert_refused(write(document(variant(RELU, **{field: text}))), "base-relu", field)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_refused_in_ids_and_labels(write, text) -> None:
    error = problems_of(write(document(variant(RELU, id=text))))
    assert any(p.field == "id" for p in error.problems)
    point = {**RELU["points"][0], "label": text}
    assert_refused(write(document(variant(RELU, points=[point]))), "base-relu", "points[0].label")


@pytest.mark.parametrize("text", [t for t in HOSTILE if RAW_CONTROL.search(t) or "\n" in t])
def test_control_characters_are_refused_in_notes(write, text) -> None:
    assert_refused(write(document(variant(RELU, notes=text))), "base-relu", "notes")


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "ftp://example.org/file",
        "file:///etc/passwd",
        "http://",
        "https://exa mple.org",
        'https://example.org/"onmouseover=alert(1)',
        "https://example.org/\x1b[31m",
        "//example.org/path",
        "https://example.org/" + "a" * 2000,
        "",
    ],
)
def test_hostile_urls_are_refused(write, url) -> None:
    source = {**RELU["source"], "url": url}
    assert_refused(write(document(variant(RELU, source=source))), "base-relu", "source.url")


def test_plain_http_urls_are_accepted(write) -> None:
    source = {**RELU["source"], "url": "http://example.org/table"}
    db = load_measurements(write(document(variant(RELU, source=source))), specs=SPECS)
    assert db.sets[0].source.url == "http://example.org/table"


def test_a_hostile_id_is_quoted_in_messages(write) -> None:
    error = problems_of(write(document(variant(RELU, id="\x1b]0;pwned\x07", gpu="Nope"))))
    assert "\\x1b" in str(error)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80), st.text(max_size=80))
def test_any_accepted_id_and_title_are_safe(set_id: str, title: str) -> None:
    try:
        db = parse_measurements(document(variant(RELU, id=set_id, title=title)), "h", SPECS)
    except MeasurementError as error:
        assert not RAW_CONTROL.search(str(error))
        return
    (item,) = db.sets
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", item.id) and len(item.id) <= 64
    assert not re.search(r"[<>`\x00-\x1f\x7f-\x9f]", item.title) and item.title.strip()


# -- grouped (MoE) sets, issue #13 ----------------------------------------------------------

GROUPED_FWD_BWD = {
    # (model, G): (printed bf16 us, printed MXFP8 us, printed speedup)
    ("llama4", 1): (43140.20, 23867.00, 1.808),
    ("llama4", 2): (39487.60, 23359.00, 1.690),
    ("llama4", 4): (39189.20, 23945.50, 1.637),
    ("llama4", 8): (37700.70, 22170.60, 1.700),
    ("dsv3", 1): (13064.80, 10996.00, 1.188),
    ("dsv3", 2): (14900.20, 11283.40, 1.321),
    ("dsv3", 4): (15823.60, 9919.36, 1.595),
    ("dsv3", 8): (14966.80, 10397.20, 1.440),
}


def test_bundled_grouped_fwd_bwd_sets_copy_the_printed_table(
    bundled_db: MeasurementDatabase,
) -> None:
    shapes = {"llama4": (128000, 5120, 8192), "dsv3": (128000, 7168, 2048)}
    for (model, groups), (bf16_us, mxfp8_us, speedup) in GROUPED_FWD_BWD.items():
        item = bundled_db.get(f"b200-mxfp8-grouped-fwd-bwd-{model}-g{groups}")
        # G = 8 fits the bf16 grouped-GEMM factor; the other expert counts stay held out.
        role = SetRole.FIT if groups == 8 else SetRole.HOLDOUT
        assert item.groups == groups and item.role is role
        assert (item.gpu, item.mode, item.recipe) == ("NVIDIA B200", "training", "mxfp8_cublas")
        assert item.timed_region is TimedRegion.GEMM_QUANTIZE
        assert item.quantity is MeasuredQuantity.SPEEDUP and item.terms == ()
        assert item.source.commit == "0b1bb117287185f325161acd6a0bce8fb443936c"
        (point,) = item.points
        assert point.shape == shapes[model] and point.value == speedup
        # the printed speedup is the printed times' ratio, rounded to 3 decimals
        assert round(bf16_us / mxfp8_us, 3) == speedup
        assert f"{bf16_us:.2f}" in item.notes and f"{mxfp8_us:.2f}" in item.notes


@pytest.mark.parametrize("groups", [0, -8, 4097, 1.5, "8", True])
def test_groups_must_be_an_expert_count(write, groups) -> None:
    entry = variant(CAST, groups=groups)
    assert_refused(write(document(entry)), "base-cast", "groups")


def test_rearrangement_terms_exist_only_in_grouped_sets(write) -> None:
    dense = variant(CAST, terms=["rearrange.output.lhs"])
    assert_refused(write(document(dense)), "base-cast", "terms[0]")
    grouped = variant(CAST, terms=["rearrange.output.lhs"], groups=8)
    (loaded,) = load_measurements(write(document(grouped)), specs=SPECS).sets
    assert loaded.groups == 8 and loaded.terms == ("rearrange.output.lhs",)
