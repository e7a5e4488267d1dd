"""Shape generators and parsing."""

from __future__ import annotations

import pytest

from roofline import RooflineError, ShapeError
from roofline.shapes import generate, parse_shape, parse_shapes_csv


def test_llama_shapes_as_torchao_defines_them():
    assert [(s.name, s.M, s.K, s.N) for s in generate("llama")] == [
        ("attn.wqkv", 16384, 8192, 1280),
        ("attn.w0", 16384, 1024, 8192),
        ("ffn.w13", 16384, 8192, 7168),
        ("ffn.w2", 16384, 3584, 8192),
    ]


def test_pow2_and_extended():
    assert [s.M for s in generate("pow2")] == [1024, 2048, 4096, 8192, 16384]
    sizes = [s.K for s in generate("pow2_extended")]
    assert sizes == [1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576]


def test_sweep():
    shapes = generate("sweep")
    assert len(shapes) == 512
    assert min(s.M for s in shapes) == 256 and max(s.N for s in shapes) == 32768


def test_unknown_generator():
    with pytest.raises(RooflineError, match="Did you mean 'pow2'"):
        generate("pow3")


def test_parse_shape():
    shape = parse_shape("1024,2048, 4096")
    assert (shape.M, shape.K, shape.N) == (1024, 2048, 4096)
    assert parse_shape("8x16x32").N == 32
    with pytest.raises(ShapeError, match="positive integer"):
        parse_shape("1,-2,3")


def test_csv_errors_name_origin_and_line():
    with pytest.raises(RooflineError, match=r"shapes\.csv: line 1: expected a header"):
        parse_shapes_csv("a,b,c\n1,2,3\n", "shapes.csv")
    with pytest.raises(ShapeError, match=r"shapes\.csv: line 2: column N"):
        parse_shapes_csv("M,K,N\n1,2,zero\n", "shapes.csv")


# -- the dimension rule and streamed files (issue #9) -----------------------------------

import csv  # noqa: E402
import io  # noqa: E402
import random  # noqa: E402

import numpy as np  # noqa: E402

from roofline.shapes import MAX_DIM, Names, ShapesFileError, read_shapes_file  # noqa: E402
from roofline.shapes import csvfile as shapes_csv  # noqa: E402


def test_max_dim_is_int32():
    assert MAX_DIM == 2**31 - 1 == np.iinfo(np.int32).max


@pytest.mark.parametrize(
    "text",
    [
        "2147483648,1,1",
        "1,9223372036854775807,1",
        "1,1,1" + "0" * 40,
        "1e3,1,1",
        "1.0,1,1",
        "+5,1,1",
        "1_000,1,1",
        "١٢,1,1",
        "²,1,1",
        " ,1,1",
        "nan,1,1",
        "inf,1,1",
        "-0,1,1",
    ],
)
def test_parse_shape_refuses_what_is_not_a_int32_dimension(text):
    with pytest.raises(ShapeError, match=r"must be a positive integer up to 2147483647 \(int32"):
        parse_shape(text)


def test_parse_shape_accepts_the_int32_limit_and_leading_zeros():
    assert parse_shape("2147483647, 0001 ,1") == parse_shape("2147483647,1,1")


def test_a_huge_shape_gives_a_short_message():
    with pytest.raises(ShapeError) as err:
        parse_shape("9" * 100_000 + ",1,1")
    assert len(str(err.value)) < 300 and "..." in str(err.value)


def reference(text: str) -> list[tuple[int, int, int, str]]:
    """What the shapes file means, row by row through csv (the pre-streaming reader)."""
    rows = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    header = [h.strip() for h in next(rows)]
    out = []
    for row in rows:
        if not row:
            continue
        cell = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}
        dims = []
        for d in "MKN":
            value = cell[d]
            assert value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_DIM
            dims.append(int(value))
        out.append((*dims, cell.get("name", "")))
    return out


def random_file(rng: random.Random) -> str:
    header = rng.choice(["M,K,N", "M,K,N,name", "name,N,K,M", "K,M,extra,N,name"])
    names = [
        "",
        "a",
        "layer.7",
        " pad ",
        "naïve",
        "x,y",
        'q"t',
        "two\nlines",
        "\u3000wide",
        "=cmd|' /C calc'!A0",
        "tab\tin",
        "é" * 30,
    ]
    end = rng.choice(["\n", "\r\n"])
    plain = rng.random() < 0.5  # mostly rows the vectorized path takes
    if plain:
        names = [n for n in names if not any(c in n for c in ',"\n')]
    lines = [header]
    for _ in range(rng.randrange(1, 60)):
        row = []
        for column in header.split(","):
            if column in "MKN":
                value = str(rng.choice([1, 7, 128, 4096, MAX_DIM, rng.randrange(1, 10**6)]))
                if not plain:
                    value = rng.choice([value, value, value, f" {value}", f"00{value}"])
            else:
                value = rng.choice(names)
                if any(c in value for c in ',"\n') or rng.random() < 0.05 * (not plain):
                    value = '"' + value.replace('"', '""') + '"'
            row.append(value)
        lines.append(",".join(row))
        if rng.random() < 0.03 * (not plain):
            lines.append("")  # a blank line
    bom = "\ufeff" if rng.random() < 0.3 else ""
    tail = end if rng.random() < 0.8 else ""
    return bom + end.join(lines) + tail


@pytest.mark.parametrize("block_bytes", [3, 17, 64, 1 << 20])
def test_streamed_parser_agrees_with_csv(monkeypatch, tmp_path, block_bytes):
    """Both paths (vectorized plain rows, csv for the rest) at every block boundary."""
    monkeypatch.setattr(shapes_csv, "BLOCK_BYTES", block_bytes)
    rng = random.Random(block_bytes)
    for case in range(150):
        text = random_file(rng)
        path = tmp_path / f"{case}.csv"
        path.write_bytes(text.encode("utf-8"))
        table = read_shapes_file(path)
        got = [(s.M, s.K, s.N, s.name) for s in table.shapes()]
        assert got == reference(text), text
        assert table.M.dtype == np.int64
        assert (table.names is None) == (not any(r[3] for r in got))


def test_big_plain_file_streams_into_int64_columns(tmp_path):
    rows = 200_000  # several 1 MiB blocks
    path = tmp_path / "big.csv"
    lines = (f"{i % 9000 + 1},{i % 77 + 1},{i + 1},n{i}\n" for i in range(rows))
    path.write_text("M,K,N,name\n" + "".join(lines))
    table = read_shapes_file(path)
    assert len(table) == rows and isinstance(table.names, Names)
    assert table.N[-1] == rows and table.names[-1] == f"n{rows - 1}"
    assert list(table.names[5:8]) == ["n5", "n6", "n7"]


def test_errors_after_the_first_block_name_the_right_line(tmp_path):
    path = tmp_path / "late.csv"
    good = "".join(f"{i + 1},2,3\n" for i in range(150_000))
    path.write_text("M,K,N\n" + good + "4,2147483648,6\n")
    with pytest.raises(ShapeError, match=r"late\.csv: line 150002: column K .* got '2147483648'"):
        read_shapes_file(path)


def test_lines_after_a_quoted_multiline_name_are_counted(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('M,K,N,name\n1,2,3,"a\nb"\n4,5,x,c\n')
    with pytest.raises(ShapeError, match=r"line 4: column N"):
        read_shapes_file(path)


def test_bom_and_crlf_as_spreadsheets_save(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfM,K,N,name\r\n1,2,3,a\r\n4,5,6,b\r\n")
    assert [(s.M, s.name) for s in read_shapes_file(path).shapes()] == [(1, "a"), (4, "b")]
    assert parse_shapes_csv("\ufeffM,K,N\r\n7,8,9\r\n", "x.csv")[0].N == 9


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00", r"not a UTF-8 text CSV file \(byte 0 on line 1 is 0x89\)"),
        (b"\xff\xfeM\x00,\x00K\x00", r"byte 0 on line 1 is 0xff, a UTF-16 byte-order mark"),
        (b"M,K,N\n1,2,3\n1,\x002,3\n", r"byte 14 on line 3 is a NUL"),
        (b"M,K,N,name\n1,2,3,caf\xe9\n", r"byte 20 on line 2 is 0xe9"),
        (b"\xef\xbb\xbfM,K,N\n\xc3", r"byte 9 on line 2 is 0xc3"),  # offsets count the BOM
        (b"", r"line 1: expected a header with columns M,K,N \(optional name\), got nothing"),
        (b"\xef\xbb\xbf", r"got nothing"),
        (b"\n1,2,3\n", r"got nothing"),
        (b"M,K,N\n", r"expected at least one shape row after the header"),
        (b"M,K,N\r\n\r\n", r"expected at least one shape row after the header"),
        (b"a,b,c\n1,2,3\n", r"line 1: expected a header .* got a,b,c"),
        (b"M,K,N,M\n1,2,3,4\n", r"line 1: column M appears twice"),
        (b"M,K,N\n1,2\n", r"line 2: column N must be .* got ''"),
        (b"M,K,N\n" + b"9" * (2 << 20), r"line 2 is longer than 1048576 bytes"),
        (b'M,K,N,name\n1,2,3,"' + b"x" * 200_000 + b'"\n', r"line 2: not valid CSV \(field larger"),
    ],
)
def test_unreadable_files_give_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "s.csv"
    path.write_bytes(content)
    with pytest.raises(RooflineError, match=message) as err:
        read_shapes_file(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_byte_offsets_are_file_offsets_across_blocks(monkeypatch, tmp_path):
    monkeypatch.setattr(shapes_csv, "BLOCK_BYTES", 10)
    path = tmp_path / "s.csv"
    path.write_bytes(b"M,K,N\n" + b"1,2,3\n" * 20 + b"4,5,\xff\n")
    with pytest.raises(ShapesFileError, match=r"byte 130 on line 22 is 0xff"):
        read_shapes_file(path)


@pytest.mark.parametrize("kind", ["missing", "folder", "through a file"])
def test_paths_that_are_not_files(tmp_path, kind):
    (tmp_path / "f").write_text("x")
    path = {
        "missing": tmp_path / "nope.csv",
        "folder": tmp_path,
        "through a file": tmp_path / "f" / "s.csv",
    }[kind]
    with pytest.raises(ShapesFileError, match=rf"cannot read shapes file '{path}': \w"):
        read_shapes_file(path)


def test_names_pickle_only_their_slice():
    import pickle

    names = Names.from_lengths(bytearray(b"abcdeXYZ"), [np.array([1, 2, 2]), np.array([3])])
    assert list(names) == ["a", "bc", "de", "XYZ"] and names[-1] == "XYZ" and len(names) == 4
    part = pickle.loads(pickle.dumps(names[1:3]))
    assert list(part) == ["bc", "de"] and part._blob == b"bcde"
    assert list(names[::2]) == ["a", "de"] and list(names[3:1]) == []
    with pytest.raises(IndexError):
        names[4]
