"""Shape sources: torchao's benchmark generators and user CSV files."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from roofline.errors import RooflineError, ShapeError, unknown


@dataclass(frozen=True)
class Shape:
    """One GEMM shape of a linear layer, optionally named (e.g. ``attn.wqkv``)."""

    M: int
    K: int
    N: int
    name: str = ""


LLAMA_M = 16384
# torchao's llama shapes (Llama 3 70B-like layers at M = 16384 tokens).
LLAMA_KN: dict[str, tuple[int, int]] = {
    "attn.wqkv": (8192, 1280),
    "attn.w0": (1024, 8192),
    "ffn.w13": (8192, 7168),
    "ffn.w2": (3584, 8192),
}
POW2_SIZES = tuple(2**i for i in range(10, 15))  # 1024 ... 16384
POW2_EXTENDED_SIZES = tuple(sorted({*POW2_SIZES, *(s * 3 // 2 for s in POW2_SIZES)}))
SWEEP_SIZES = tuple(2**i for i in range(8, 16))  # 256 ... 32768


def llama() -> list[Shape]:
    """torchao's four llama GEMMs at M = 16384."""
    return [Shape(LLAMA_M, k, n, name) for name, (k, n) in LLAMA_KN.items()]


def pow2() -> list[Shape]:
    """M = K = N over powers of two 1024 ... 16384."""
    return [Shape(s, s, s) for s in POW2_SIZES]


def pow2_extended() -> list[Shape]:
    """pow2 plus the 1.5x points (1536 ... 24576)."""
    return [Shape(s, s, s) for s in POW2_EXTENDED_SIZES]


def sweep() -> list[Shape]:
    """M, K, N each over powers of two 256 ... 32768 (512 shapes)."""
    return [Shape(m, k, n) for m in SWEEP_SIZES for k in SWEEP_SIZES for n in SWEEP_SIZES]


GENERATORS = {"llama": llama, "pow2": pow2, "pow2_extended": pow2_extended, "sweep": sweep}


def generate(name: str) -> list[Shape]:
    """The shapes of generator ``name``; errors list the generators."""
    try:
        return GENERATORS[name]()
    except KeyError:
        raise unknown("shape generator", name, GENERATORS) from None


def parse_dim(text: str, what: str) -> int:
    """A positive integer dimension, or ShapeError naming ``what``."""
    try:
        value = int(text.strip())
    except ValueError:
        raise ShapeError(f"{what}: expected a positive integer, got {text.strip()!r}") from None
    if value <= 0:
        raise ShapeError(f"{what}: expected a positive integer, got {value}")
    return value


def parse_shape(text: str) -> Shape:
    """``"M,K,N"`` (commas or x) as a Shape; errors name the shape."""
    parts = text.replace("x", ",").split(",")
    if len(parts) != 3:
        raise ShapeError(f"shape {text!r}: expected M,K,N (three positive integers)")
    m, k, n = (parse_dim(p, f"shape {text!r}") for p in parts)
    return Shape(m, k, n)


def parse_shapes_csv(text: str, origin: str) -> list[Shape]:
    """Shapes from CSV text with header ``M,K,N`` and an optional ``name`` column."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("M", "K", "N") if c not in header]
    if missing:
        raise RooflineError(
            f"{origin}: line 1: expected a header with columns M,K,N (optional name), "
            f"got {','.join(header) or 'nothing'}"
        )
    shapes = []
    for row in reader:
        row = {k.strip(): (v or "") for k, v in row.items() if k is not None}
        line = reader.line_num
        dims = [parse_dim(row[c], f"{origin}: line {line}: column {c}") for c in ("M", "K", "N")]
        shapes.append(Shape(*dims, name=row.get("name", "").strip()))
    if not shapes:
        raise RooflineError(f"{origin}: expected at least one shape row after the header")
    return shapes
