"""How the build runs its stages: each one timed and printed, and a failure in any of them
turned into one BuildError that says the previous site was left as it was."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from roofline.errors import RooflineError
from site_gen.output.guard import BuildError


class StageTimer:
    """Prints ``[stage] ... seconds`` lines and keeps the totals."""

    def __init__(self, stream=None) -> None:
        # sys.stdout when the timer is made, not when this module was imported (a test
        # runner may have swapped it since).
        self.stream = stream if stream is not None else sys.stdout
        self.start = time.perf_counter()
        self.timings: dict[str, float] = {}

    @contextlib.contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        print(f"[build] {name:<8} {detail}", file=self.stream, flush=True)
        began = time.perf_counter()
        yield
        self.timings[name] = time.perf_counter() - began
        print(
            f"[build] {name:<8} done in {self.timings[name]:5.1f} s", file=self.stream, flush=True
        )

    def total(self) -> float:
        """Seconds since the build began."""
        return time.perf_counter() - self.start


@contextlib.contextmanager
def failing_as(stage: str, site_dir: Path) -> Iterator[None]:
    """Turn any failure of ``stage`` into a BuildError that says the site is unchanged."""
    try:
        yield
    except RooflineError:
        raise
    except Exception as exc:
        # One line (the CLI prints it as one): a multi-line detail is folded.
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise BuildError(
            f"build failed in stage {stage}: {detail}; "
            f"the previous site in {site_dir} was left exactly as it was"
        ) from exc
