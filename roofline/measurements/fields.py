"""Field checks shared by every part of a measurement file: the problem list, keys, text,
enum values and points (shapes and values). :mod:`roofline.measurements.lint` adds the
set-level rules on top."""

from __future__ import annotations

from typing import Any

from roofline.datafiles.problems import Collector
from roofline.datafiles.text import length_problem, unknown_key
from roofline.errors import nearest
from roofline.measurements.model import (
    SIDE_DIMS,
    MeasuredQuantity,
    MeasurementError,
    MeasurementProblem,
    Point,
    SideKernel,
)
from roofline.measurements.rules import (
    MAX_POINTS,
    MAX_SHAPES_PER_POINT,
    MAX_SIDE_BYTES,
    MAX_SIDE_KERNELS,
    POINT_KEYS,
    SIDE_KERNEL_KEYS,
    SPEEDUP_RANGE,
    TEXT_LIMITS,
    TIME_US_RANGE,
)
from roofline.recipes import Recipe
from roofline.shapes import MAX_DIM
from roofline.specs.text import describe, is_finite, text_problems


class FieldLinter(Collector):
    """Collects the problems of one file; checks single fields and points."""

    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.set_index: int | None = None  # the set being linted; None at the top level

    def make(
        self,
        entry: str | None,
        key: str | None,
        expected: str,
        received: str,
        severity: str = "error",
        hint: str = "",
    ) -> MeasurementProblem:
        """A measurement problem names its entry by the set (``set 'id' (#n)``)."""
        index = self.set_index if entry is not None and not entry.startswith("#") else None
        return MeasurementProblem(self.file, entry, key, expected, received, hint, index)

    def exception(self) -> MeasurementError:
        return MeasurementError(self.problems, self.unlisted)

    def keys(
        self, where: str | None, prefix: str, table: dict[str, Any], known: dict[str, bool]
    ) -> None:
        """Unknown keys of ``table`` (named ``prefix.key``), and the missing required ones."""
        for key in table:
            if key not in known:
                problem = unknown_key(f"{prefix}{key}", [f"{prefix}{k}" for k in known])
                self.error(where, *problem)
        for key, needed in known.items():
            if needed and key not in table:
                self.error(where, f"{prefix}{key}", "a value (the key is required)", "nothing")

    def text(self, where: str, field: str, value: Any, plain: bool, limit: int) -> str | None:
        """A non-empty string without control characters (nor markup when ``plain``)."""
        if not isinstance(value, str):
            self.error(where, field, "a string", describe(value))
            return None
        count = self.count()
        self.key_problems(where, text_problems(field, value, plain))
        if not value.strip():
            self.error(where, field, "a non-empty string", describe(value))
        elif value != value.strip():
            self.error(where, field, "text without leading or trailing whitespace", describe(value))
        too_long = length_problem(field, value, limit)
        if too_long:
            self.key_problems(where, [too_long])
        return value if self.count() == count else None

    def choice(self, where: str, field: str, value: Any, kind: type[Any]) -> Any:
        """The member of the StrEnum ``kind`` named ``value``, or None (recorded)."""
        valid = [m.value for m in kind]
        if isinstance(value, str) and value in valid:
            return kind(value)
        guess = nearest(value, valid) if isinstance(value, str) else None
        hint = f"did you mean {guess!r}?" if guess else ""
        self.error(where, field, f"one of {', '.join(valid)}", describe(value), hint)
        return None

    def side_kernels(
        self, where: str, value: Any, quantity: MeasuredQuantity | None, grouped: bool
    ) -> tuple[SideKernel, ...]:
        """A time_us set's ``[[set.side_kernels]]``: kernels its timed call runs that no
        model term has, each with its bytes per element and the dimensions it spans."""
        if not isinstance(value, list) or not all(isinstance(k, dict) for k in value):
            self.error(
                where, "side_kernels", "an array of [[set.side_kernels]] tables", describe(value)
            )
            return ()
        if quantity is not None and quantity is not MeasuredQuantity.TIME_US and value:
            expected = "no side kernels unless quantity is time_us (they add to its sum)"
            self.error(where, "side_kernels", expected, f"quantity {quantity}")
        if len(value) > MAX_SIDE_KERNELS:
            expected = f"at most {MAX_SIDE_KERNELS} side kernels"
            self.error(where, "side_kernels", expected, f"{len(value)} tables")
            return ()
        kernels = [self._side_kernel(where, i, k, grouped) for i, k in enumerate(value)]
        return tuple(k for k in kernels if k is not None)

    def _side_kernel(
        self, where: str, index: int, entry: dict[str, Any], grouped: bool
    ) -> SideKernel | None:
        prefix = f"side_kernels[{index}]."
        before = self.count()
        self.keys(where, prefix, entry, SIDE_KERNEL_KEYS)
        what = entry.get("what")
        if "what" in entry:
            what = self.text(where, f"{prefix}what", what, True, TEXT_LIMITS["what"])
        sizes = [
            self._side_bytes(where, f"{prefix}{key}", entry.get(key, 0))
            for key in ("read_bytes", "write_bytes")
        ]
        if all(s == 0 for s in sizes):
            expected = "read_bytes or write_bytes above 0 (a kernel that moves nothing)"
            self.error(where, f"{prefix}write_bytes", expected, "0 and 0")
        elements = entry.get("elements")
        allowed = SIDE_DIMS if grouped else SIDE_DIMS[:3]
        if "elements" in entry and (
            not isinstance(elements, list)
            or any(e not in allowed for e in elements)
            or len(set(elements)) != len(elements)
        ):
            expected = f"an array of distinct names among {', '.join(allowed)} ([] for a scalar)"
            self.error(where, f"{prefix}elements", expected, describe(elements))
        if self.count() > before:
            return None
        return SideKernel(what, float(sizes[0]), float(sizes[1]), tuple(elements))

    def _side_bytes(self, where: str, field: str, value: Any) -> float:
        if isinstance(value, bool) or not is_finite(value) or not 0 <= value <= MAX_SIDE_BYTES:
            self.error(
                where,
                field,
                f"bytes per element, a number from 0 to {MAX_SIDE_BYTES:g}",
                describe(value),
            )
            return 0.0
        return float(value)

    def _points(
        self, where: str, value: Any, recipe: Recipe | None, quantity: MeasuredQuantity | None
    ) -> tuple[Point, ...]:
        if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
            self.error(where, "points", "an array of [[set.points]] tables", describe(value))
            return ()
        if not value:
            self.error(where, "points", "at least one [[set.points]] table", "an empty array")
        if len(value) > MAX_POINTS:
            self.error(where, "points", f"at most {MAX_POINTS} points", f"{len(value)} points")
            return ()
        points = [self._point(where, i, p, recipe, quantity) for i, p in enumerate(value)]
        return tuple(p for p in points if p is not None)

    def _point(
        self,
        where: str,
        index: int,
        entry: dict[str, Any],
        recipe: Recipe | None,
        quantity: MeasuredQuantity | None,
    ) -> Point | None:
        prefix = f"points[{index}]."
        before = self.count()
        self.keys(where, prefix, entry, POINT_KEYS)
        if ("shape" in entry) == ("shapes" in entry):
            expected = "exactly one of shape = [M, K, N] or shapes = [[M, K, N], ...]"
            self.error(where, f"{prefix}shape", expected, f"keys {sorted(entry)}")
        shapes: list[tuple[int, int, int]] = []
        if "shape" in entry:
            shapes = [self._shape(where, f"{prefix}shape", entry["shape"], recipe)]
        elif "shapes" in entry:
            shapes = self._shapes(where, f"{prefix}shapes", entry["shapes"], recipe)
        value = self._value(where, f"{prefix}value", entry, quantity)
        label = entry.get("label", "")
        if label != "":
            label = self.text(where, f"{prefix}label", label, True, TEXT_LIMITS["label"])
        if self.count() > before:
            return None
        return Point(tuple(shapes), value, label)

    def _shapes(
        self, where: str, field: str, value: Any, recipe: Recipe | None
    ) -> list[tuple[int, int, int]]:
        if not isinstance(value, list) or not 1 <= len(value) <= MAX_SHAPES_PER_POINT:
            expected = f"an array of 1 to {MAX_SHAPES_PER_POINT} shapes [M, K, N]"
            self.error(where, field, expected, describe(value))
            return []
        return [self._shape(where, f"{field}[{i}]", s, recipe) for i, s in enumerate(value)]

    def _shape(
        self, where: str, field: str, value: Any, recipe: Recipe | None
    ) -> tuple[int, int, int]:
        if not isinstance(value, list) or len(value) != 3:
            self.error(where, field, "an array [M, K, N] of three integers", describe(value))
            return (0, 0, 0)
        for name, dim in zip("MKN", value, strict=True):
            if type(dim) is not int or not 1 <= dim <= MAX_DIM:
                expected = f"{name}: an integer from 1 to {MAX_DIM}"
                self.error(where, field, expected, describe(dim))
                return (0, 0, 0)
        dims = dict(zip("MKN", value, strict=True))
        for name, multiple in recipe.divisibility if recipe is not None else ():
            if dims[name] % multiple:
                expected = f"{name} a multiple of {multiple} (recipe {recipe.name})"
                self.error(where, field, expected, f"{name}={dims[name]}")
        return (value[0], value[1], value[2])

    def _value(
        self, where: str, field: str, entry: dict[str, Any], quantity: MeasuredQuantity | None
    ) -> float:
        if "value" not in entry:
            return 0.0  # reported as a missing key
        value = entry["value"]
        time = quantity is MeasuredQuantity.TIME_US
        low, high = TIME_US_RANGE if time else SPEEDUP_RANGE
        if not is_finite(value) or not low <= value <= high:
            unit = "microseconds" if time else "a ratio"
            expected = f"a finite number from {low:g} to {high:g} ({unit})"
            self.error(where, field, expected, describe(value))
            return 0.0
        return float(value)
