"""Architecture families and market segments: how the calibrated model pools the values
of GPUs without data of their own (:mod:`roofline.calibration.params`)."""

from __future__ import annotations

from collections.abc import Iterable

from roofline.specs import GpuSpec
from roofline.symbols import OMEGA_STORE, T_KSTEP

#: Architecture (spec ``architecture``, lower case) -> family; GeForce / RTX PRO Blackwell
#: parts (sm_120) are told apart from datacenter Blackwell (sm_100) by name.
ARCHITECTURE_FAMILIES: dict[str, str] = {
    "hopper": "Hopper",
    "blackwell": "Blackwell datacenter",
    "blackwell ultra": "Blackwell datacenter",
    "cdna3": "CDNA3",
    "cdna4": "CDNA4",
    "ada lovelace": "Ada",
    "ada": "Ada",
    "ampere": "Ampere",
}
_CONSUMER_MARKERS = ("geforce", "rtx")


def segment_of(gpu: GpuSpec) -> str:
    """The GPU's market segment: GDDR workstation and consumer cards (GeForce, RTX PRO,
    Ada) or HBM datacenter parts. Small kernels launch about twice as fast on the former
    (0.9-1 us against about 1.8 us per tiny cast in CUDA graphs), so a GPU without data
    of its own family pools its own segment's before every GPU's."""
    consumer = family_of(gpu) in ("Blackwell consumer", "Ada") or any(
        m in gpu.name.lower() for m in _CONSUMER_MARKERS
    )
    return "GDDR workstation/consumer" if consumer else "HBM datacenter"


def family_of(gpu: GpuSpec) -> str:
    """The GPU's architecture family (its ``architecture`` when no family is known)."""
    arch = gpu.architecture.strip().lower()
    family = ARCHITECTURE_FAMILIES.get(arch, gpu.architecture.strip() or "unknown")
    if family == "Blackwell datacenter" and any(m in gpu.name.lower() for m in _CONSUMER_MARKERS):
        return "Blackwell consumer"
    return family


#: Display names of the software platforms (spec ``platform``, or derived from the vendor).
_PLATFORM_NAMES = {"cuda": "CUDA", "rocm": "ROCm"}


def platform_of(gpu: GpuSpec) -> str | None:
    """The GPU's software platform by name (CUDA, ROCm), whose libraries run the kernels a
    benchmark times; None when the spec database does not say (it then pools no platform)."""
    platform = gpu.platform
    return _PLATFORM_NAMES.get(platform, platform) if platform else None


def same_platform(a: GpuSpec, b: GpuSpec) -> bool:
    """Whether two GPUs run the same software platform's kernels (both known)."""
    return platform_of(a) is not None and platform_of(a) == platform_of(b)


#: Parameters of a software platform's kernels rather than of one GPU -> (value, source) on
#: a platform none of whose GPUs has one: pooled over the GPUs of the same platform only,
#: not counted in a number's basis (the default would mark every GPU of a platform without
#: data), and not added to one owner's refit (a few shapes cannot tell them from the
#: efficiencies). On a platform without data, the share of a GEMM's output store hidden
#: behind its main loop is all of it, as CUTLASS 3's persistent warp-specialized kernels
#: store one tile while computing the next; a K step's latency is off the critical path,
#: as the libraries split K over SMs a small GEMM leaves idle.
PLATFORM_PARAMS: dict[str, tuple[float, str]] = {
    OMEGA_STORE.spec_key: (
        1.0,
        "assumed: 1, the store hidden (no GPU on this software platform has a fitted value; "
        "CUTLASS 3's persistent warp-specialized GEMMs on Hopper and Blackwell store one "
        "output tile while computing the next: "
        "https://pytorch.org/blog/cutlass-ping-pong-gemm-kernel/)",
    ),
    T_KSTEP.spec_key: (
        0.0,
        "assumed: 0, the K loop off the critical path (no GPU on this software platform has a "
        "fitted value; cuBLAS and CUTLASS split K over idle SMs when a GEMM has fewer output "
        "tiles than SMs: split-K and stream-K, https://arxiv.org/abs/2301.03598; fitted on B200 "
        "it comes out at 0.002 us)",
    ),
}


#: A kind of group of GPUs the calibrated model pools: (kind, how its mean is named (a
#: format string of the group), GPU name -> its group); kind "family" or a wider one.
Pool = tuple[str, str, dict[str, object]]


def pools(gpus: Iterable[GpuSpec]) -> tuple[Pool, ...]:
    """The groups a GPU without a value of its own pools, nearest first: its family, its
    segment (:func:`segment_of`) on its software platform (:func:`platform_of`: the
    libraries whose kernels are timed), its segment, its platform."""
    gpus = list(gpus)
    return (
        ("family", "the {} family's mean", {g.name: family_of(g) for g in gpus}),
        (
            "segment on platform",
            "the mean over every {0[0]} GPU on {0[1]} with data",
            {g.name: (segment_of(g), platform_of(g)) for g in gpus},
        ),
        (
            "segment",
            "the mean over every {} GPU with data",
            {g.name: segment_of(g) for g in gpus},
        ),
        (
            "platform",
            "the mean over every GPU on {} with data",
            {g.name: platform_of(g) for g in gpus},
        ),
    )


def unknown_group(group: object) -> bool:
    """A group naming no platform (the spec database does not say): it pools nothing."""
    return group is None or (isinstance(group, tuple) and None in group)
