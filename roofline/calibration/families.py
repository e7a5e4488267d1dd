"""Architecture families and market segments: how the calibrated model pools the values
of GPUs without data of their own (:mod:`roofline.calibration.params`)."""

from __future__ import annotations

from roofline.specs import GpuSpec

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
