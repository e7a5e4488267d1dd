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
