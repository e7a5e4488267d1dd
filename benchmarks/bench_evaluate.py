"""Benchmark: compiled, vectorized evaluation vs per-shape sympy ``subs``.

The slow path is what torchao's scripts do: substitute one shape into the model's
expressions (hardware numbers already in) and convert to float, shape by shape. Targets
(issue #2): >= 1e5 times faster per shape and >= 1e6 shapes/s on 2 cores.

    python benchmarks/bench_evaluate.py [--shapes 1000000] [--subs-shapes 10]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from roofline import build_model, evaluate, load_specs
from roofline.model.terms import Quantity
from roofline.symbols import HARDWARE_SYMBOLS, K, M, N

CASES = [
    ("NVIDIA H100", "training", "tensorwise"),
    ("NVIDIA B200", "training", "mxfp8_cublas"),
    ("NVIDIA B200", "inference", "nvfp4"),
]
TARGET_RATIO = 1e5
TARGET_SHAPES_PER_S = 1e6


def _shapes(count: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(16, 65536, count) for _ in range(3))


def subs_seconds_per_shape(gpu_name: str, mode: str, recipe: str, shapes) -> float:
    """Seconds per shape for subs-then-float of the speedup's parts (torchao's way)."""
    gpu = load_specs()[gpu_name]
    hw = gpu.hardware_values()
    numbers = {h.symbol: hw[h.spec_key] for h in HARDWARE_SYMBOLS if h.spec_key in hw}
    model = build_model(mode, recipe)
    exprs = [
        model.total(q).subs(numbers)
        for q in (Quantity.BF16_GEMM, Quantity.LOWP_GEMM, Quantity.OVERHEAD)
    ]
    start = time.perf_counter()
    for m, k, n in zip(*shapes, strict=True):
        point = {M: int(m), K: int(k), N: int(n)}
        [float(e.subs(point)) for e in exprs]
    return (time.perf_counter() - start) / len(shapes[0])


def vectorized_seconds_per_shape(gpu_name: str, mode: str, recipe: str, shapes) -> float:
    """Seconds per shape for one compiled evaluate() call over all shapes (best of 3)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate(gpu_name, mode, recipe, *shapes)  # compile outside the timing
        best = min(_timed(lambda: evaluate(gpu_name, mode, recipe, *shapes)) for _ in range(3))
    return best / len(shapes[0])


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    """Run every case, print the table, exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=1_000_000)
    parser.add_argument("--subs-shapes", type=int, default=10)
    args = parser.parse_args()
    shapes = _shapes(args.shapes)
    sample = tuple(a[: args.subs_shapes] for a in shapes)
    print(f"{'case':42} {'subs s/shape':>13} {'vector s/shape':>15} {'ratio':>10} {'shapes/s':>11}")
    ok = True
    for case in CASES:
        slow = subs_seconds_per_shape(*case, sample)
        fast = vectorized_seconds_per_shape(*case, shapes)
        ratio, rate = slow / fast, 1 / fast
        ok &= ratio >= TARGET_RATIO and rate >= TARGET_SHAPES_PER_S
        print(f"{' / '.join(case):42} {slow:13.3e} {fast:15.3e} {ratio:10.3g} {rate:11.3g}")
    verdict = "meets" if ok else "MISSES"
    print(
        f"\n{verdict} the targets: ratio >= {TARGET_RATIO:g}, >= {TARGET_SHAPES_PER_S:g} shapes/s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
