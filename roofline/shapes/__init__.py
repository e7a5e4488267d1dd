"""Shape sources: torchao's benchmark generators, ``M,K,N`` text and user CSV files.

Every dimension is an integer from 1 to :data:`MAX_DIM` (2**31 - 1): cuBLAS, cuBLASLt
and most GEMM libraries take int32 dimensions, so a larger GEMM cannot be run as one call
and its roofline would describe nothing. The rule lives here (:func:`dim_in_range`,
:func:`dim_error`) and serves ``--shape``, ``--shapes-file`` and
:func:`roofline.evaluate.evaluate` alike.

The package: :mod:`.core` (one shape, the rule, the generators), :mod:`.table` (many
shapes as columns) and :mod:`.csvfile` (shape files, read as a stream: never held whole
as text, so a 10**6-row file costs tens of megabytes, not gigabytes).
"""

from __future__ import annotations

from roofline.shapes.core import (
    DIM_RULE,
    DIMS,
    GENERATORS,
    LLAMA_KN,
    LLAMA_M,
    MAX_DIM,
    POW2_EXTENDED_SIZES,
    POW2_SIZES,
    SWEEP_SIZES,
    Shape,
    dim_error,
    dim_in_range,
    generate,
    llama,
    parse_dim,
    parse_shape,
    pow2,
    pow2_extended,
    sweep,
)
from roofline.shapes.csvfile import (
    BLOCK_BYTES,
    MAX_LINE_BYTES,
    ShapesFileError,
    parse_shapes_csv,
    read_shapes_file,
)
from roofline.shapes.table import Names, ShapeTable

__all__ = [
    "BLOCK_BYTES",
    "DIMS",
    "DIM_RULE",
    "GENERATORS",
    "LLAMA_KN",
    "LLAMA_M",
    "MAX_DIM",
    "MAX_LINE_BYTES",
    "POW2_EXTENDED_SIZES",
    "POW2_SIZES",
    "SWEEP_SIZES",
    "Names",
    "Shape",
    "ShapeTable",
    "ShapesFileError",
    "dim_error",
    "dim_in_range",
    "generate",
    "llama",
    "parse_dim",
    "parse_shape",
    "parse_shapes_csv",
    "pow2",
    "pow2_extended",
    "read_shapes_file",
    "sweep",
]
