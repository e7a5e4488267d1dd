"""Exports: every table as CSV and JSON beside its page, and the data/ folder."""

from __future__ import annotations

import io
import json
import re
import warnings
from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from roofline import evaluate  # noqa: E402
from roofline.specs import load_specs  # noqa: E402
from site_gen.markup import exports  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "tests" / "data" / "site_small_specs.toml"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The generated Markdown, CSV and JSON files (docs-relative path -> text) as the shared
    small build wrote them (the Changes page's tables included)."""
    from browser.site_fixtures import shared_small_build

    docs = shared_small_build(tmp_path_factory)["root"] / "docs"
    return {
        path.relative_to(docs).as_posix(): path.read_text("utf-8")
        for path in (docs / "generated").rglob("*")
        if path.is_file() and path.suffix in (".md", ".txt", ".csv", ".json")
    }


def _markdown_tables(text: str) -> list[list[list[str]]]:
    tables, current = [], []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("|") and line.endswith("|"):
            current.append(
                [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line[1:-1])]
            )
        elif current:
            tables.append([r for r in current if not set("".join(r)) <= set("-: ")])
            current = []
    return tables


def _plain(cell: str) -> str:
    """What a reader sees of a Markdown cell: rendered, tags dropped, entities decoded."""
    import html

    import markdown

    rendered = markdown.markdown(
        cell,
        extensions=["pymdownx.arithmatex"],
        extension_configs={"pymdownx.arithmatex": {"generic": True}},
    )
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()
    return text.removeprefix("\\(").removesuffix("\\)")


def test_every_table_has_csv_and_json_that_match_the_page(pages: dict[str, str]) -> None:
    link = re.compile(r"Download: \[CSV\]\(([^)]+)\) · \[JSON\]\(([^)]+)\)")
    checked = 0
    for path, text in pages.items():
        if not path.endswith((".md", ".md.txt")):
            continue
        page = {
            "generated/_snippets/home_matrix.md.txt": "index.md",
            "generated/_snippets/equations.md.txt": "equations.md",
        }.get(path, path)
        tables = _markdown_tables(text)
        links = link.findall(text)
        if path.endswith(".md.txt") and not links:
            continue
        assert len(links) == len(tables), path
        for (csv_rel, json_rel), table in zip(links, tables, strict=True):
            base = Path(page).parent
            csv_path = str((base / csv_rel).as_posix())
            json_path = str((base / json_rel).as_posix())
            import posixpath

            csv_text = pages[posixpath.normpath(csv_path)]
            data = json.loads(pages[posixpath.normpath(json_path)])
            frame = pd.read_csv(io.StringIO(csv_text), dtype=str, keep_default_na=False)
            split = pd.read_json(io.StringIO(pages[posixpath.normpath(json_path)]), orient="split")
            assert list(frame.columns) == data["columns"] == [_plain(h) for h in table[0]]
            assert len(frame) == len(data["data"]) == len(split) == len(table) - 1
            for row, shown in zip(data["data"], table[1:], strict=True):
                for value, cell in zip(row, shown, strict=True):
                    if isinstance(value, float):  # six digits; the page rounds further
                        assert float(re.sub(r"[^0-9.e+-]", "", cell)) == pytest.approx(
                            value, rel=1e-3
                        )
                    else:
                        assert str(value) == _plain(cell), (path, value, cell)
            checked += 1
    assert checked > 100


def _assert_six_digits(data: dict, want: dict) -> None:
    """Each exported number is the evaluation's to six significant digits, exactly."""
    for i, row in enumerate(data["data"]):
        record = dict(zip(data["columns"], row, strict=True))
        for column, values in want.items():
            value = values[i]
            expected = float(f"{value:.6g}") if isinstance(value, float) else value
            assert record[column] == expected, (column, i)
            if isinstance(value, float):
                assert record[column] == pytest.approx(value, rel=5e-6)


def test_export_float_keeps_six_significant_digits() -> None:
    assert exports.export_float(0.00020162131290544412) == 0.000201621
    assert exports.export_float(1.2419817685732737) == 1.24198
    assert exports.export_float(2.25e15) == 2.25e15
    assert repr(exports.export_float(123456789.0)) == "123457000.0"


def test_column_tables_carry_the_evaluation(pages: dict[str, str]) -> None:
    data = json.loads(pages["generated/gpus/test-b200/training-rowwise/llama.json"])
    want = evaluate(
        "Test B200",
        "training",
        "rowwise",
        16384,
        [8192, 1024, 8192, 3584],
        [1280, 8192, 7168, 8192],
        specs=str(SPECS),
    )
    _assert_six_digits(data, want)


def test_calibrated_column_tables_carry_the_calibrated_evaluation(pages: dict[str, str]) -> None:
    """``llama-calibrated`` beside ``llama`` (whose URL and content stay torchao's)."""
    data = json.loads(pages["generated/gpus/test-b200/training-rowwise/llama-calibrated.json"])
    torchao = json.loads(pages["generated/gpus/test-b200/training-rowwise/llama.json"])
    assert data["columns"] == torchao["columns"]
    want = evaluate(
        "Test B200",
        "training",
        "rowwise",
        16384,
        [8192, 1024, 8192, 3584],
        [1280, 8192, 7168, 8192],
        specs=str(SPECS),
        calibrated=True,
    )
    _assert_six_digits(data, want)
    assert data["data"] != torchao["data"]


def test_summary_tables_name_both_models(pages: dict[str, str]) -> None:
    headline = json.loads(pages["generated/gpus/test-b200/training-rowwise/headline.json"])
    assert [row[0] for row in headline["data"][:2]] == ["calibrated model", "torchao model"]
    ranked = json.loads(pages["generated/gpus/test-b200/training-ranked.json"])
    assert "all four GEMMs (calibrated)" in ranked["columns"]
    assert "all four GEMMs (torchao)" in ranked["columns"]
    for mode in ("training", "inference"):
        for shape in ("canonical", "llama"):
            calibrated = json.loads(pages[f"generated/home/matrix-{mode}-{shape}.json"])
            torchao = json.loads(pages[f"generated/home/matrix-{mode}-{shape}-torchao.json"])
            # the calibrated matrix also carries each row's cross-validated error bands
            assert calibrated["columns"] == [*torchao["columns"], "CV error band"]
    breakdown = json.loads(pages["generated/gpus/test-b200/training-rowwise/breakdown.json"])
    assert breakdown["columns"][-2:] == [
        "M=16384, K=8192, N=8192, calibrated (µs)",
        "M=16384, K=8192, N=8192, torchao (µs)",
    ]
    assert all(isinstance(v, float) and v > 0 for row in breakdown["data"] for v in row[2:])


def test_data_folder(pages: dict[str, str]) -> None:
    index = json.loads(pages["generated/data/index.json"])
    specs = load_specs(SPECS)
    assert len(index["evaluations"]) == sum(
        2 * len(r.modes) for r in __import__("roofline.recipes").recipes.RECIPE_LIST
    ) * len(specs)
    checked = 0
    for entry in index["evaluations"]:
        if entry["json"] is None:
            assert entry["support"] == "impossible"
            continue
        run = json.loads(pages[f"generated/data/{entry['json']}"])
        frame = pd.read_csv(io.StringIO(pages[f"generated/data/{entry['csv']}"]))
        assert list(frame.columns) == run["columns"]
        assert run["fusion"] == entry["fusion"] and run["model_version"]
        rows = pd.DataFrame(run["rows"], columns=run["columns"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = evaluate(
                run["gpu"],
                run["mode"],
                run["recipe"],
                rows["fwd_M"],
                rows["fwd_K"],
                rows["fwd_N"],
                fusion=run["fusion"],
                specs=str(SPECS),
            )
        for column, values in want.items():
            assert list(rows[column]) == list(values), (entry, column)
            assert list(frame[column]) == list(values), (entry, column)
        assert "model" not in run  # torchao's files keep exactly their keys
        calibrated = json.loads(pages[f"generated/data/{entry['calibrated_json']}"])
        assert entry["calibrated_json"] == entry["json"].replace(".json", "-calibrated.json")
        assert calibrated["model"] == "calibrated" and calibrated["columns"] == run["columns"]
        frame = pd.read_csv(io.StringIO(pages[f"generated/data/{entry['calibrated_csv']}"]))
        rows = pd.DataFrame(calibrated["rows"], columns=calibrated["columns"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = evaluate(
                run["gpu"],
                run["mode"],
                run["recipe"],
                rows["fwd_M"],
                rows["fwd_K"],
                rows["fwd_N"],
                fusion=run["fusion"],
                specs=str(SPECS),
                calibrated=True,
            )
        for column, values in want.items():
            assert list(rows[column]) == list(values), (entry, column)
            assert list(frame[column]) == list(values), (entry, column)
        checked += 1
    assert checked > 50
    spec_json = json.loads(pages["generated/data/specs.json"])
    assert [g["name"] for g in spec_json["gpus"]] == list(specs)
    assert spec_json["gpus"][0]["source_records"]
    schema = json.loads(pages["generated/data/spec.schema.json"])
    assert schema.get("$schema") or schema.get("type")


def test_data_page_documents_the_files(pages: dict[str, str]) -> None:
    text = (ROOT / "docs" / "data.md").read_text("utf-8") + pages["generated/_snippets/data.md.txt"]
    for name in (
        "index.json",
        "specs.json",
        "spec.schema.json",
        "fwd_M",
        "r_fp8_gemm_and_ovhd_spdp",
        'orient="split"',
        "-fusion0.json",
        "-fusion1.csv",
    ):
        assert name in text, name
