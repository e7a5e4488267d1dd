"""A model compiled for numbers: its terms as one numpy function (``sympy.lambdify`` with
common subexpressions shared), the hardware parameters as arguments, so one compiled model
serves every GPU and a call evaluates millions of shapes at numpy speed
(:mod:`roofline.evaluate` runs it). Never ``subs`` per shape: that is the slow path the
benchmark compares against.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy
from sympy.core.parameters import evaluate

from roofline.calibration.params import CalibratedParameters
from roofline.calibration.stack import ParameterStack
from roofline.model.build import build_model
from roofline.model.terms import QUANTITY_SYMBOLS, Quantity, RooflineModel, Term
from roofline.recipes import Mode, Recipe, get_recipe
from roofline.specs import GpuSpec
from roofline.symbols import (
    CALIBRATION_SYMBOLS,
    GROUPED_SHAPE_SYMBOLS,
    HARDWARE_SYMBOLS,
    N_SM,
    SHAPE_SYMBOLS,
)


@dataclass(frozen=True)
class CompiledModel:
    """A model whose terms are compiled to one numpy function, and its speedup to another.

    The speedup function is lambdified from :attr:`RooflineModel.structured_speedup`, the
    expression :mod:`roofline.publish.jscode` prints for the calculator, so Python and the page
    compute the speedup from the same formula.
    """

    model: RooflineModel
    _fn: Any
    _speedup_fn: Any

    def term_times(
        self,
        gpu: GpuSpec,
        m: np.ndarray,
        k: np.ndarray,
        n: np.ndarray,
        calibration: CalibratedParameters | ParameterStack | None = None,
        groups: np.ndarray | None = None,
        keys: tuple[str, ...] | None = None,
    ) -> dict[str, np.ndarray]:
        """Seconds per term (GEMM or kernel), keyed by the term's stable key.

        A calibrated model needs ``calibration``: the GPU's calibrated parameters, or a
        :class:`~roofline.calibration.stack.ParameterStack` of several (one-dimensional
        shapes only: each time then has a row per calibration); a grouped model needs
        ``groups``, the expert count G per shape. ``keys``: only these terms (a function of
        their own, compiled once; a fit evaluates one kernel's term of a training model
        hundreds of times).
        """
        if isinstance(calibration, ParameterStack) and np.ndim(m) != 1:
            raise ValueError("a parameter stack is evaluated over one-dimensional shapes")
        hardware = gpu.hardware_values()
        # A parameter the model does not use may be absent (fp4 on an fp8-only GPU).
        args = [hardware.get(hw.spec_key, np.nan) for hw in HARDWARE_SYMBOLS]
        if self.model.calibrated:
            if calibration is None:
                raise ValueError("a calibrated model needs the GPU's calibrated parameters")
            numbers = calibration.numbers()
            args += [numbers[hw.spec_key] for hw in CALIBRATION_SYMBOLS]
        rows = len(calibration) if isinstance(calibration, ParameterStack) else None
        return self._evaluate(args, m, k, n, groups, keys, rows)

    def traffic_bytes(
        self,
        m: np.ndarray,
        k: np.ndarray,
        n: np.ndarray,
        groups: np.ndarray | None = None,
        keys: tuple[str, ...] | None = None,
    ) -> dict[str, np.ndarray]:
        """The bytes each term's kernel moves (reads + writes), keyed like
        :meth:`term_times`: its time on a machine that moves one byte a second, computes
        without limit, runs every kernel at full efficiency and launches it in no time.
        Every term is fixed latencies plus the longest of FLOPs / rate and bytes /
        (efficiency x bandwidth), so on that machine only the bytes are left (tests check
        it against the traffic rule, and that every term of every model is finite)."""
        args = [_UNIT_MACHINE[hw.unit] for hw in HARDWARE_SYMBOLS]
        if self.model.calibrated:
            args += [_UNIT_MACHINE[hw.unit] for hw in CALIBRATION_SYMBOLS]
        return self._evaluate(args, m, k, n, groups, keys, rows=None)

    def _evaluate(
        self,
        args: list[Any],
        m: np.ndarray,
        k: np.ndarray,
        n: np.ndarray,
        groups: np.ndarray | None,
        keys: tuple[str, ...] | None,
        rows: int | None,
    ) -> dict[str, np.ndarray]:
        dims = [m, k, n]
        if self.model.grouped:
            if groups is None:
                raise ValueError("a grouped model needs the group count G")
            dims.append(groups)
        terms = self.model.terms if keys is None else self._subset(keys)
        fn = self._fn if keys is None else _terms_function(self, keys)
        results = fn(*dims, *args)
        shape = np.broadcast(*dims).shape
        if rows is not None:  # a row per calibration of a stack
            shape = (rows, *shape)
        return {
            term.key: _read_only(value, shape, dims)
            for term, value in zip(terms, results, strict=True)
        }

    def _subset(self, keys: tuple[str, ...]) -> list[Term]:
        by_key = {term.key: term for term in self.model.terms}
        missing = [key for key in keys if key not in by_key]
        if missing:
            raise KeyError(f"no term {missing[0]!r} in this model")
        return [by_key[key] for key in keys]

    def totals(self, times: dict[str, np.ndarray]) -> dict[Quantity, np.ndarray]:
        """Sum the term times into the model's quantities, speedup included."""
        totals: dict[Quantity, np.ndarray] = {}
        for term in self.model.terms:
            value = times[term.key]
            totals[term.quantity] = (
                totals[term.quantity] + value if term.quantity in totals else value.copy()
            )
        totals.setdefault(Quantity.BF16_OVERHEAD, np.zeros_like(totals[Quantity.BF16_GEMM]))
        totals[Quantity.SPEEDUP] = self._speedup_fn(*(totals[q] for q in QUANTITY_SYMBOLS))
        return totals


#: Each parameter's value, by unit, on the machine :meth:`CompiledModel.traffic_bytes` times
#: terms on: one byte a second, unbounded peaks (FLOP/s), efficiencies and rate factors of
#: 1, no latency (seconds), and as many SMs as the no-waves default.
_UNIT_MACHINE: dict[str, float] = {
    "bytes/s": 1.0,
    "FLOP/s": np.inf,
    "1": 1.0,
    "s": 0.0,
    "SMs": N_SM.default,
}


def _read_only(value: Any, shape: tuple[int, ...], dims: list[np.ndarray]) -> np.ndarray:
    """A term's seconds as a read-only float64 array of ``shape``: the array the function
    made where it already is one (no broadcast view to make: most terms, most calls),
    else a broadcast view (a term that is a constant, or constant along some axis)."""
    if (
        type(value) is np.ndarray
        and value.dtype == np.float64
        and value.shape == shape
        and not any(value is dim for dim in dims)
    ):
        value.flags.writeable = False
        return value
    return np.broadcast_to(np.asarray(value, dtype=np.float64), shape)


def _arguments(model: RooflineModel) -> list[sympy.Symbol]:
    """The compiled function's parameters: the shape, then the hardware figures (and the
    calibration parameters of a calibrated model), in symbol order."""
    symbols = (*HARDWARE_SYMBOLS, *CALIBRATION_SYMBOLS) if model.calibrated else HARDWARE_SYMBOLS
    shape_symbols = GROUPED_SHAPE_SYMBOLS if model.grouped else SHAPE_SYMBOLS
    return [*shape_symbols, *(hw.symbol for hw in symbols)]


def _shared_subexpressions(exprs: list[sympy.Expr]) -> tuple[list, list]:
    """``sympy.cse`` for :func:`sympy.lambdify`, rebuilding the reduced expressions
    unevaluated: they only swap subexpressions for symbols, so nothing is left to
    simplify, and an evaluated rebuild re-compares every ``Max``'s arguments: about half
    of each compile. The printed function
    computes the same operations in the same order (checked bit for bit in the tests)."""
    with evaluate(False):
        return sympy.cse(exprs)


#: ``lambdify``'s ``docstring_limit``: no expression printed into the compiled function's
#: docstring (nothing reads it, and printing every model's expressions once more was a
#: fifth of a compile).
_NO_DOCSTRING = 0


@functools.cache
def _terms_function(compiled: CompiledModel, keys: tuple[str, ...]) -> Any:
    exprs = [term.expr for term in compiled._subset(keys)]
    return sympy.lambdify(
        _arguments(compiled.model),
        exprs,
        modules="numpy",
        cse=_shared_subexpressions,
        docstring_limit=_NO_DOCSTRING,
    )


@functools.cache
def _compile(
    mode: Mode, recipe: Recipe, fusion: bool, calibrated: bool = False, grouped: bool = False
) -> CompiledModel:
    model = build_model(mode, recipe, fusion, calibrated=calibrated, grouped=grouped)
    exprs = [term.expr for term in model.terms]
    fn = sympy.lambdify(
        _arguments(model),
        exprs,
        modules="numpy",
        cse=_shared_subexpressions,
        docstring_limit=_NO_DOCSTRING,
    )
    speedup = sympy.lambdify(
        list(QUANTITY_SYMBOLS.values()),
        model.structured_speedup,
        modules="numpy",
        docstring_limit=_NO_DOCSTRING,
    )
    return CompiledModel(model, fn, speedup)


def compile_model(
    mode: Mode | str,
    recipe: Recipe | str,
    fusion: bool = False,
    calibrated: bool = False,
    grouped: bool = False,
) -> CompiledModel:
    """The compiled model for (mode, recipe, fusion, calibrated, grouped); compiled once
    per process."""
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    return _compile(mode, recipe, bool(fusion), bool(calibrated), bool(grouped))
