"""The types of the measurement database: sets of published, sourced measurements.

A :class:`MeasurementSet` is one table (or one column of a table) of a public benchmark:
where it was read, what the timed region contains, which model (mode, recipe, fusion) it
is compared with, and its points. The lint (:mod:`roofline.measurements.lint`) builds these
values only from files that passed every rule, so consumers can trust every field.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from roofline.datafiles.sources import Source
from roofline.errors import DataFileError, Problem, unknown
from roofline.recipes import Mode


class TimedRegion(enum.StrEnum):
    """What the published timer wrapped."""

    GEMM = "gemm"  # GEMM kernels only, operands already quantized
    GEMM_QUANTIZE = "gemm_quantize"  # GEMMs plus the quantization of their operands
    RELU_LINEAR = "relu_linear"  # torch.compile'd ReLU -> Linear, inference
    LN_LINEAR_ACT = "ln_linear_act"  # LayerNorm -> Linear -> activation, forward + backward
    LINEAR_FWD_BWD = "linear_fwd_bwd"  # one nn.Linear, forward + backward
    CAST_KERNEL = "cast_kernel"  # one quantization kernel
    END_TO_END = "end_to_end"  # a whole training or inference step (attention included)


class MeasuredQuantity(enum.StrEnum):
    """What a point's ``value`` is."""

    SPEEDUP = "speedup"  # bf16 time / low-precision time of the whole timed region
    GEMM_SPEEDUP = "gemm_speedup"  # bf16 GEMM time / low-precision GEMM time (GEMM-only runs)
    TIME_US = "time_us"  # microseconds: the sum of the model terms the set names


class Timer(enum.StrEnum):
    """How the published numbers were timed (what one sample can contain)."""

    CUDA_GRAPH = "cuda_graph"  # device time of CUDA-graph replays: no host launch gaps
    CUDA_EVENTS = "cuda_events"  # CUDA events around eager calls: host gaps can show
    PROFILER = "profiler"  # a profiler's kernel durations (torch.profiler, CUPTI, nsys)
    WALL_CLOCK = "wall_clock"  # a host clock around calls and a synchronize
    UNKNOWN = "unknown"  # the source does not say


class L2State(enum.StrEnum):
    """Whether the timer evicted the GPU's L2 cache before each timed call."""

    COLD = "cold"  # a write larger than L2 before every call: L2 full of dirty lines
    # Each call on the next of many operand copies that together exceed L2: operands come
    # from DRAM, but no flush left the cache full of dirty lines to write back first.
    ROTATING = "rotating"
    WARM = "warm"  # calls back to back on the same operands, nothing evicted
    UNKNOWN = "unknown"  # the source does not say


class KernelLibrary(enum.StrEnum):
    """Whose kernel a set times: the low-precision GEMM's library in a set with GEMMs
    (a speedup's numerator is that GEMM's bf16 counterpart), the cast kernel's in a cast
    set. The model knows no library: this says which library its errors are measured on
    (where one table times several libraries at the same shapes, they differ by 1.5 to
    2x, a spread no library-blind model can follow)."""

    CUBLAS = "cublas"  # cuBLAS / cuBLASLt: torch.mm, F.linear, torch._scaled_mm, TE
    HIPBLASLT = "hipblaslt"  # hipBLASLt: the same torch calls on ROCm
    CUTLASS = "cutlass"  # CUTLASS C++ templates (vLLM's, FlashInfer's, torchao's)
    CUTE_DSL = "cute_dsl"  # the CuTe / CUTLASS Python DSL (FlashInfer, quack, b12x)
    CUTILE = "cutile"  # NVIDIA cuTile Python kernels (FlashInfer's Cake backend)
    TRTLLM = "trtllm"  # TensorRT-LLM's kernels
    DEEPGEMM = "deepgemm"  # DeepGEMM's JIT-compiled kernels
    TRITON = "triton"  # Triton kernels (torchao's, torch.compile's, FBGEMM's)
    CUDA = "cuda"  # hand-written CUDA / HIP C++ kernels (PyTorch's, vLLM's, torchao's)
    AITER = "aiter"  # AMD aiter's tuned kernels (the fastest of asm, CK, FlyDSL, ...)
    CK = "ck"  # AMD Composable Kernel
    FLYDSL = "flydsl"  # AMD FlyDSL
    UNKNOWN = "unknown"  # the source does not say


class SetRole(enum.StrEnum):
    """How calibration and validation use a set."""

    FIT = "fit"  # used to fit the calibrated model
    HOLDOUT = "holdout"  # never fitted on; scored against its threshold
    CONTEXT = "context"  # shown beside the models, not scored


@dataclass(frozen=True)
class Point:
    """One measured value at one or more GEMM shapes ``(M, K, N)`` of the forward GEMM.

    Several shapes mean the value is a total over several layers (their times summed
    before the ratio was taken), e.g. the four linears of a transformer block.
    """

    shapes: tuple[tuple[int, int, int], ...]
    value: float
    label: str = ""

    @property
    def shape(self) -> tuple[int, int, int]:
        """The only shape of a single-shape point; raises ValueError for a multi-shape one."""
        if len(self.shapes) != 1:
            raise ValueError(f"point {self.label or self.shapes!r} has {len(self.shapes)} shapes")
        return self.shapes[0]


#: The dimensions a side kernel's element count multiplies: the point's shape and the
#: set's expert count.
SIDE_DIMS = ("M", "K", "N", "G")


@dataclass(frozen=True)
class SideKernel:
    """A memory-bound kernel the timed call runs besides the model's terms (a zero fill
    of an output buffer, a cast of a result to another dtype), read off the benchmarked
    code: ``read_bytes`` and ``write_bytes`` per element, over the product of
    ``elements`` (names among :data:`SIDE_DIMS`; none: one element, a scalar). It is
    predicted as a pointwise kernel (:mod:`roofline.analysis.harness`)."""

    what: str
    read_bytes: float
    write_bytes: float
    elements: tuple[str, ...]


@dataclass(frozen=True)
class MeasurementSet:
    """One published table (or column) of measurements, with what it is compared with."""

    id: str
    title: str
    gpu: str
    mode: Mode
    recipe: str
    fusion: bool
    timed_region: TimedRegion
    quantity: MeasuredQuantity
    terms: tuple[str, ...]
    role: SetRole
    max_mean_error: float | None
    software: str
    command: str
    notes: str
    source: Source
    points: tuple[Point, ...]
    # Experts of a grouped (MoE) layer measured; None for a dense layer.
    groups: int | None = None
    # How the numbers were timed: the calibrated model's prediction of a set whose L2
    # was evicted before each call adds a cold start to every kernel it times.
    timer: Timer = Timer.UNKNOWN
    l2: L2State = L2State.UNKNOWN
    # Whose kernel it times (the model has no library: this groups its errors).
    library: KernelLibrary = KernelLibrary.UNKNOWN
    # Kernels of the timed call that no model term has (time_us sets only).
    side_kernels: tuple[SideKernel, ...] = ()


@dataclass(frozen=True)
class MeasurementDatabase:
    """Every set of a measurement file, in file order; ``origin`` names the file."""

    sets: tuple[MeasurementSet, ...]
    origin: str = ""

    def get(self, set_id: str) -> MeasurementSet:
        """The set called ``set_id``; UnknownNameError lists the ids otherwise."""
        for item in self.sets:
            if item.id == set_id:
                return item
        raise unknown("measurement set", set_id, [s.id for s in self.sets])

    def by_role(self, role: SetRole | str) -> tuple[MeasurementSet, ...]:
        """The sets with ``role`` (a SetRole or its value), in file order."""
        try:
            wanted = SetRole(role)
        except ValueError:
            raise unknown("set role", str(role), [r.value for r in SetRole]) from None
        return tuple(s for s in self.sets if s.role is wanted)

    def ids(self) -> tuple[str, ...]:
        """Every set id, in file order."""
        return tuple(s.id for s in self.sets)

    def __len__(self) -> int:
        return len(self.sets)


class MeasurementProblem(Problem):
    """A problem of a measurement file: :class:`roofline.errors.Problem` with the entry
    named by its set (``set 'id' (#n)``). ``set_id`` is the set's id as written (cut
    short), or ``#n`` without one; ``set_index`` its 0-based position in the file."""

    def __init__(
        self,
        file: str,
        set_id: str | None,
        field: str | None,
        expected: str,
        received: str,
        hint: str = "",
        set_index: int | None = None,
    ) -> None:
        entry = None
        if set_id:
            entry = f"set {set_id!r}" + (f" (#{set_index + 1})" if set_index is not None else "")
        super().__init__(file, entry, field, expected, received, "error", hint, set_id)
        object.__setattr__(self, "set_index", set_index)

    set_index: int | None

    @property
    def set_id(self) -> str | None:
        """The set's id as written (or ``#n``), None at the top level."""
        return self.name


class MeasurementError(DataFileError):
    """A measurement file with errors; carries every problem found, reported together."""

    def __init__(self, problems: Iterable[MeasurementProblem], unlisted: int = 0) -> None:
        super().__init__("measurement file", problems, unlisted)  # type: ignore[arg-type]
