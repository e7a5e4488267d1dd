"""How much data pins each stored calibration parameter: the points and distinct shapes of
the sets its entry lists. The Validation page marks a parameter with too little support as
weakly determined (issue #18)."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.calibration.data import CalibrationData
from roofline.measurements import MeasurementDatabase

#: A stored parameter is weakly determined when the sets it was fitted or read on hold
#: fewer points than this, or fewer distinct shapes than :data:`MIN_SUPPORT_SHAPES`.
MIN_SUPPORT_POINTS = 3
MIN_SUPPORT_SHAPES = 2


@dataclass(frozen=True)
class Support:
    """How much data pins one stored parameter."""

    gpu: str | None  # None: a model-wide parameter
    key: str
    points: int
    shapes: int

    @property
    def weak(self) -> bool:
        """Fewer than 3 points, or fewer than 2 distinct shapes."""
        return self.points < MIN_SUPPORT_POINTS or self.shapes < MIN_SUPPORT_SHAPES


def support(data: CalibrationData, measurements: MeasurementDatabase) -> tuple[Support, ...]:
    """Points and distinct shapes behind every stored parameter (its entry's sets)."""
    known = {s.id: s for s in measurements.sets}
    out = []
    for gpu, entry in data.entries():
        points = [p for set_id in entry.sets if set_id in known for p in known[set_id].points]
        shapes = {p.shapes for p in points}
        out.append(Support(gpu, entry.key, len(points), len(shapes)))
    return tuple(out)
