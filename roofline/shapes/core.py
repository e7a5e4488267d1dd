"""One shape: the dimension rule, torchao's generators and ``M,K,N`` text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofline.errors import ShapeError, unknown

#: The largest GEMM dimension: int32, what cuBLAS and most GEMM libraries take.
MAX_DIM = 2**31 - 1
#: How messages state the rule.
DIM_RULE = f"a positive integer up to {MAX_DIM} (int32, the limit of GEMM libraries)"
DIMS = ("M", "K", "N")


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


# -- the dimension rule ------------------------------------------------------------


def dim_in_range(values: Any) -> Any:
    """True where ``values`` (a number or a numpy array) lies in 1 ... MAX_DIM.

    Whether a value is an integer at all is the caller's check (text must be digits,
    arrays are checked by :func:`roofline.evaluate.as_shape_array`)."""
    return (values >= 1) & (values <= MAX_DIM)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."  # a 10 MB cell stays one line


def dim_error(subject: str, value: object) -> ShapeError:
    """The error for a bad dimension: ``<subject> must be <DIM_RULE>, got <value>``.

    ``subject`` names the input and the column: ``shape '1e30,1,1': M``,
    ``shapes.csv: line 3: column K`` or ``shape dimension N``."""
    return ShapeError(f"{subject} must be {DIM_RULE}, got {_shown(value)}")


def parse_dim(text: str, subject: str) -> int:
    """A dimension from text: ASCII digits (spaces around allowed) within the rule."""
    digits = text.strip()
    # isdigit alone accepts '²' and Arabic digits; more than 10 digits never fits int32.
    if digits.isascii() and digits.isdigit() and len(digits.lstrip("0")) <= 10:
        value = int(digits)
        if dim_in_range(value):
            return value
    raise dim_error(subject, digits)


def parse_shape(text: str) -> Shape:
    """``"M,K,N"`` (commas or x) as a Shape; errors name the shape and the dimension."""
    parts = text.replace("x", ",").split(",")
    if len(parts) != 3:
        raise ShapeError(f"shape {_shown(text)}: expected M,K,N (three positive integers)")
    m, k, n = (parse_dim(p, f"shape {_shown(text)}: {d}") for p, d in zip(parts, DIMS, strict=True))
    return Shape(m, k, n)
